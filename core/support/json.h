// Json: an owned, immutable-by-convention JSON value, and parse_json() which builds it with simdjson.
// Values outlive the buffer they came from, so handlers can keep params across co_await, and tests can
// compare whole objects. simdjson stays inside json.cpp: its 1.2 MB header costs seconds per TU.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/support/result.h"

namespace agentd::support {

class Json {
 public:
  using Array = std::vector<Json>;
  // Object members keep their order (what a person expects to read back); lookups are linear, which
  // beats hashing for the handful of keys protocol objects have.
  using Member = std::pair<std::string, Json>;
  using Object = std::vector<Member>;

  enum class Type { null, boolean, integer, number, string, array, object };

  Json() noexcept = default;
  Json(std::nullptr_t) noexcept {}  // NOLINT(google-explicit-constructor)
  Json(bool b) noexcept : v_(b) {}  // NOLINT
  template <std::integral I>
  requires(!std::same_as<I, bool>) Json(I i)
  noexcept {  // NOLINT
    if constexpr (std::is_signed_v<I>) {
      v_ = static_cast<std::int64_t>(i);
    } else if (static_cast<std::uint64_t>(i) <= static_cast<std::uint64_t>(INT64_MAX)) {
      v_ = static_cast<std::int64_t>(i);
    } else {
      v_ = static_cast<std::uint64_t>(i);
    }
  }
  Json(double d) noexcept : v_(d) {}                  // NOLINT
  Json(std::string s) noexcept : v_(std::move(s)) {}  // NOLINT
  Json(std::string_view s) : v_(std::string(s)) {}    // NOLINT
  Json(const char* s) : v_(std::string(s)) {}         // NOLINT
  Json(Array a) noexcept : v_(std::move(a)) {}        // NOLINT
  Json(Object o) noexcept : v_(std::move(o)) {}       // NOLINT

  static Json object() { return Json(Object{}); }
  static Json array() { return Json(Array{}); }

  Type type() const noexcept;
  static std::string_view type_name(Type t) noexcept;
  std::string_view type_name() const noexcept { return type_name(type()); }

  bool is_null() const noexcept { return v_.index() == 0; }
  bool is_bool() const noexcept { return v_.index() == 1; }
  // Integers that fit int64 or uint64; JSON has one number type but we keep exactness when we can.
  bool is_integer() const noexcept { return v_.index() == 2 || v_.index() == 3; }
  bool is_number() const noexcept { return v_.index() >= 2 && v_.index() <= 4; }
  bool is_string() const noexcept { return v_.index() == 5; }
  bool is_array() const noexcept { return v_.index() == 6; }
  bool is_object() const noexcept { return v_.index() == 7; }

  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int64() const;  // asserts is_integer and in range
  std::uint64_t as_uint64() const;
  double as_double() const;  // any number
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Array& as_array() const { return std::get<Array>(v_); }
  Array& as_array() { return std::get<Array>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }
  Object& as_object() { return std::get<Object>(v_); }

  // Exact integer access for the int64 / uint64 representations.
  const std::int64_t* if_int64() const noexcept { return std::get_if<std::int64_t>(&v_); }
  const std::uint64_t* if_uint64() const noexcept { return std::get_if<std::uint64_t>(&v_); }

  // Object access. find() returns null when this is not an object or lacks the key.
  const Json* find(std::string_view key) const noexcept;
  Json* find(std::string_view key) noexcept;
  bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }
  // Inserts (or replaces) a member; turns a null into an object first.
  Json& set(std::string_view key, Json value);
  // Builder sugar: j["a"]["b"] = 1. Creates members (and objects from null) as needed.
  Json& operator[](std::string_view key);
  // Read-only lookup: a missing member (or a non-object) reads as null.
  const Json& operator[](std::string_view key) const noexcept;
  // Array append; turns a null into an array first.
  Json& push_back(Json value);
  std::size_t size() const noexcept;  // members, elements, or 0

  // Compact serialization through JsonWriter (the one writer).
  std::string dump() const;

  // Structural equality. Numbers compare by value (1 == 1.0); object members compare as sets.
  friend bool operator==(const Json& a, const Json& b) noexcept;

 private:
  std::variant<std::nullptr_t, bool, std::int64_t, std::uint64_t, double, std::string, Array, Object> v_;
};

// Parses one JSON text. Rejects invalid UTF-8, trailing garbage, and nesting deeper than max_depth.
// Errors are Errc::parse_error with a short reason.
Result<Json> parse_json(std::string_view text, std::size_t max_depth = 256);

}  // namespace agentd::support
