// JsonWriter: the one JSON writer. Appends compact JSON to a string; every string goes through one
// escaper that escapes quotes, backslashes and all control characters, and replaces invalid UTF-8 with
// U+FFFD, so the output is always valid JSON on a single line.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/text.h"

namespace agentd::support {

class Json;

// Appends `text` to `out` as the body of a JSON string (without the surrounding quotes).
void append_json_escaped(std::string& out, std::string_view text);

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& null();
  JsonWriter& value(bool b);
  JsonWriter& value(std::int64_t i);
  JsonWriter& value(std::uint64_t u);
  JsonWriter& value(double d);  // NaN and infinities are written as null: JSON has no spelling for them
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const Json& j);
  template <std::integral I>
  requires(!std::same_as<I, bool> && !std::same_as<I, std::int64_t> &&
           !std::same_as<I, std::uint64_t>) JsonWriter& value(I i) {
    if constexpr (std::is_signed_v<I>) {
      return value(static_cast<std::int64_t>(i));
    } else {
      return value(static_cast<std::uint64_t>(i));
    }
  }
  // Writes text that is already valid compact JSON (e.g. a stored payload). The caller vouches for it.
  JsonWriter& raw(std::string_view json);

  // Typed values: anything with `void to_json(JsonWriter&, const T&)` found by ADL.
  template <class T>
  requires requires(JsonWriter& w, const T& t) { to_json(w, t); }
  JsonWriter& value(const T& t) {
    to_json(*this, t);
    return *this;
  }
  template <class T>
  JsonWriter& value(const std::optional<T>& t) {
    return t ? value(*t) : null();
  }
  template <class T>
  JsonWriter& value(const std::vector<T>& items) {
    begin_array();
    for (const auto& item : items) value(item);
    return end_array();
  }

  // key + value in one call: w.member("name", x).
  template <class T>
  JsonWriter& member(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }
  // Skips the member entirely when the optional is empty (ACP omits absent optional fields).
  template <class T>
  JsonWriter& optional_member(std::string_view name, const std::optional<T>& v) {
    if (v) member(name, *v);
    return *this;
  }

 private:
  void before_value();

  std::string& out_;
  // One entry per open container: true until its first element is written.
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace agentd::support
