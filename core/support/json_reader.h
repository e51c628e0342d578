// Typed reading of Json with error paths: `params.clientCapabilities.fs.readTextFile: expected boolean,
// got string`. A type T becomes readable by declaring `bool from_json(const JsonIn&, T&)` next to it
// (found by ADL); fields are read with required()/optional(), and the first failure is kept.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/json.h"
#include "core/support/result.h"

namespace agentd::support {

class JsonIn;

// Built-in readers. Each returns false after recording an error on `in`.
bool from_json(const JsonIn& in, bool& out);
bool from_json(const JsonIn& in, std::int64_t& out);
bool from_json(const JsonIn& in, std::int32_t& out);
bool from_json(const JsonIn& in, std::uint64_t& out);
bool from_json(const JsonIn& in, std::uint32_t& out);
bool from_json(const JsonIn& in, double& out);
bool from_json(const JsonIn& in, std::string& out);
bool from_json(const JsonIn& in, Json& out);

// A view of one value inside a document plus where it sits, for error messages. Cheap to copy; the
// path string is only built when an error is reported.
class JsonIn {
 public:
  // Root view. `root_name` starts every error path ("params").
  JsonIn(const Json& value, std::string_view root_name);

  const Json& json() const noexcept { return *value_; }
  std::string path() const;

  // Records "path: message" unless an error is already recorded, and returns false.
  bool fail(std::string_view message) const;
  // "expected <what>, got <type>"
  bool expected(std::string_view what) const;

  bool ok() const noexcept { return state_->error.empty(); }
  Error error() const { return Error(Errc::invalid_argument, state_->error); }

  // The member `key` of this object. Absent members read as null.
  JsonIn operator[](std::string_view key) const;
  JsonIn at(std::size_t index) const;

  // Reads member `key`; missing (or null) is an error.
  template <class T>
  bool required(std::string_view key, T& out) const {
    if (!require_object()) return false;
    const Json* member = value_->find(key);
    JsonIn child(this, key, member);
    if (member == nullptr) return child.fail("required field is missing");
    if (member->is_null()) return child.fail("required field is null");
    return from_json(child, out);
  }
  // Reads member `key` when present and not null; leaves `out` as it was otherwise.
  template <class T>
  bool optional(std::string_view key, T& out) const {
    if (!require_object()) return false;
    const Json* member = value_->find(key);
    if (member == nullptr || member->is_null()) return true;
    return from_json(JsonIn(this, key, member), out);
  }
  template <class T>
  bool optional(std::string_view key, std::optional<T>& out) const {
    if (!require_object()) return false;
    const Json* member = value_->find(key);
    if (member == nullptr || member->is_null()) {
      out.reset();
      return true;
    }
    T value{};
    if (!from_json(JsonIn(this, key, member), value)) return false;
    out = std::move(value);
    return true;
  }

  bool require_object() const { return value_->is_object() || expected("object"); }

 private:
  struct State {
    std::string error;
  };
  JsonIn(const JsonIn* parent, std::string_view key, const Json* value);
  JsonIn(const JsonIn* parent, std::size_t index, const Json* value);

  static const Json& null_json();

  const Json* value_;
  // Children made by required()/optional()/containers live on the stack below their parent and
  // point at it; views made by operator[]/at() may outlive it and carry their path in base_ instead.
  const JsonIn* parent_ = nullptr;
  std::string base_;
  std::string_view key_;
  std::size_t index_ = 0;
  enum class Step { none, key, index } step_ = Step::none;
  std::shared_ptr<State> state_;

  template <class T>
  friend bool from_json(const JsonIn& in, std::vector<T>& out);
  template <class T>
  friend bool from_json(const JsonIn& in, std::map<std::string, T>& out);
};

template <class T>
bool from_json(const JsonIn& in, std::optional<T>& out) {
  if (in.json().is_null()) {
    out.reset();
    return true;
  }
  T value{};
  if (!from_json(in, value)) return false;
  out = std::move(value);
  return true;
}

template <class T>
bool from_json(const JsonIn& in, std::vector<T>& out) {
  if (!in.json().is_array()) return in.expected("array");
  const auto& items = in.json().as_array();
  out.clear();
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    T value{};
    if (!from_json(JsonIn(&in, i, &items[i]), value)) return false;
    out.push_back(std::move(value));
  }
  return true;
}

template <class T>
bool from_json(const JsonIn& in, std::map<std::string, T>& out) {
  if (!in.require_object()) return false;
  out.clear();
  for (const auto& [key, member] : in.json().as_object()) {
    T value{};
    if (!from_json(JsonIn(&in, key, &member), value)) return false;
    out.emplace(key, std::move(value));
  }
  return true;
}

// Reads a whole value as T; the error names the path of the first bad field.
template <class T>
Result<T> read_json(const Json& json, std::string_view root_name = "params") {
  JsonIn in(json, root_name);
  T out{};
  if (!from_json(in, out)) return in.error();
  return out;
}

}  // namespace agentd::support
