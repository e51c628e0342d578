#include "core/support/json_reader.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace agentd::support {

namespace {

// A key that is a plain identifier reads as `.key`; anything else as `["key"]`.
void append_key(std::string& path, std::string_view key) {
  bool plain = !key.empty();
  for (char c : key) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!alnum) plain = false;
  }
  if (plain) {
    if (!path.empty()) path += '.';
    path += key;
  } else {
    path += "[";
    path += Json(key).dump();
    path += "]";
  }
}

}  // namespace

JsonIn::JsonIn(const Json& value, std::string_view root_name)
    : value_(&value), base_(root_name), state_(std::make_shared<State>()) {}

JsonIn::JsonIn(const JsonIn* parent, std::string_view key, const Json* value)
    : value_(value != nullptr ? value : &null_json()),
      parent_(parent),
      key_(key),
      step_(Step::key),
      state_(parent->state_) {}

JsonIn::JsonIn(const JsonIn* parent, std::size_t index, const Json* value)
    : value_(value != nullptr ? value : &null_json()),
      parent_(parent),
      index_(index),
      step_(Step::index),
      state_(parent->state_) {}

const Json& JsonIn::null_json() {
  static const Json kNull;
  return kNull;
}

std::string JsonIn::path() const {
  std::string out = parent_ != nullptr ? parent_->path() : base_;
  switch (step_) {
    case Step::none: break;
    case Step::key: append_key(out, key_); break;
    case Step::index: fmt::format_to(std::back_inserter(out), "[{}]", index_); break;
  }
  return out;
}

bool JsonIn::fail(std::string_view message) const {
  if (state_->error.empty()) {
    const std::string where = path();
    state_->error = where.empty() ? std::string(message) : fmt::format("{}: {}", where, message);
  }
  return false;
}

bool JsonIn::expected(std::string_view what) const {
  return fail(fmt::format("expected {}, got {}", what, value_->type_name()));
}

JsonIn JsonIn::operator[](std::string_view key) const {
  JsonIn child(this, key, value_->find(key));
  child.base_ = child.path();
  child.parent_ = nullptr;
  child.step_ = Step::none;
  return child;
}

JsonIn JsonIn::at(std::size_t index) const {
  const Json* item = value_->is_array() && index < value_->size() ? &value_->as_array()[index] : nullptr;
  JsonIn child(this, index, item);
  child.base_ = child.path();
  child.parent_ = nullptr;
  child.step_ = Step::none;
  return child;
}

bool from_json(const JsonIn& in, bool& out) {
  if (!in.json().is_bool()) return in.expected("boolean");
  out = in.json().as_bool();
  return true;
}

namespace {

template <class I>
bool read_integer(const JsonIn& in, I& out, std::string_view what) {
  const Json& j = in.json();
  if (!j.is_integer()) {
    // 3.0 is an integer in JSON's eyes: accept whole doubles within the exactly representable range.
    if (j.is_number()) {
      const double d = j.as_double();
      constexpr double kExact = 9007199254740992.0;  // 2^53
      if (std::trunc(d) == d && d >= -kExact && d <= kExact) {
        const auto whole = static_cast<std::int64_t>(d);
        if (whole >= static_cast<std::int64_t>(std::numeric_limits<I>::min()) &&
            (whole <= 0 ||
             static_cast<std::uint64_t>(whole) <= static_cast<std::uint64_t>(std::numeric_limits<I>::max()))) {
          out = static_cast<I>(whole);
          return true;
        }
      }
    }
    return in.expected(what);
  }
  if (const auto* i = j.if_int64()) {
    if (*i < static_cast<std::int64_t>(std::numeric_limits<I>::min()) ||
        (*i > 0 && static_cast<std::uint64_t>(*i) > static_cast<std::uint64_t>(std::numeric_limits<I>::max()))) {
      return in.fail(fmt::format("integer {} is out of range for {}", *i, what));
    }
    out = static_cast<I>(*i);
    return true;
  }
  const auto u = *j.if_uint64();
  if (u > static_cast<std::uint64_t>(std::numeric_limits<I>::max())) {
    return in.fail(fmt::format("integer {} is out of range for {}", u, what));
  }
  out = static_cast<I>(u);
  return true;
}

}  // namespace

bool from_json(const JsonIn& in, std::int64_t& out) { return read_integer(in, out, "integer"); }
bool from_json(const JsonIn& in, std::int32_t& out) { return read_integer(in, out, "32-bit integer"); }
bool from_json(const JsonIn& in, std::uint64_t& out) { return read_integer(in, out, "non-negative integer"); }
bool from_json(const JsonIn& in, std::uint32_t& out) { return read_integer(in, out, "non-negative 32-bit integer"); }

bool from_json(const JsonIn& in, double& out) {
  if (!in.json().is_number()) return in.expected("number");
  out = in.json().as_double();
  return true;
}

bool from_json(const JsonIn& in, std::string& out) {
  if (!in.json().is_string()) return in.expected("string");
  out = in.json().as_string();
  return true;
}

bool from_json(const JsonIn& in, Json& out) {
  out = in.json();
  return true;
}

}  // namespace agentd::support
