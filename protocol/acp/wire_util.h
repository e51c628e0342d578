// Shapes every ACP type repeats, read and written one way: `_meta`, fields the schema marks
// "default on error" (a malformed optional field is dropped, not fatal), and string enums read through
// a name table. Used by the protocol/acp/*.cpp files only; callers see the typed structs.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/support/json.h"
#include "core/support/json_reader.h"
#include "core/support/json_writer.h"

namespace agentd::protocol::acp::detail {

// `_meta` is "default on error": an object is kept, anything else (null, a string) reads as absent.
void read_meta(const support::JsonIn& in, support::Json& out);
// Written only when it is a non-empty object, so an untouched `meta` never appears on the wire.
void write_meta(support::JsonWriter& w, const support::Json& meta);
// Annotations and other values we carry but never interpret: kept when they are objects.
void read_object_or_drop(const support::JsonIn& in, std::string_view key, support::Json& out);

// An optional field marked x-deserialize-default-on-error: a value that does not read as T is dropped
// instead of failing the whole message.
template <class T>
void read_lenient(const support::JsonIn& in, std::string_view key, std::optional<T>& out) {
  out.reset();
  const support::Json* member = in.json().find(key);
  if (member == nullptr || member->is_null()) return;
  const support::JsonIn scratch(*member, key);  // its own error state: a failure here stays here
  T value{};
  if (from_json(scratch, value)) out = std::move(value);
}

// An array field marked default-on-error + skip-invalid-items: items that do not read are skipped.
template <class T>
void read_lenient_items(const support::JsonIn& in, std::string_view key, std::vector<T>& out) {
  out.clear();
  const support::Json* member = in.json().find(key);
  if (member == nullptr || !member->is_array()) return;
  for (const support::Json& item : member->as_array()) {
    const support::JsonIn scratch(item, key);
    T value{};
    if (from_json(scratch, value)) out.push_back(std::move(value));
  }
}
template <class T>
void read_lenient_items(const support::JsonIn& in, std::string_view key, std::optional<std::vector<T>>& out) {
  out.reset();
  const support::Json* member = in.json().find(key);
  if (member == nullptr || !member->is_array()) return;
  out.emplace();
  read_lenient_items(in, key, *out);
}

// A required array the schema marks default-on-null: missing is an error, null reads as empty.
template <class T>
bool read_array_null_empty(const support::JsonIn& in, std::string_view key, std::vector<T>& out) {
  out.clear();
  if (!in.require_object()) return false;
  const support::Json* member = in.json().find(key);
  if (member == nullptr) return in[key].fail("required field is missing");
  if (member->is_null()) return true;
  return in.required(key, out);
}
// The same for an optional array: missing or null read as empty.
template <class T>
bool read_optional_array(const support::JsonIn& in, std::string_view key, std::vector<T>& out) {
  out.clear();
  return in.optional(key, out);
}

// Writes the array only when it has items (ACP omits optional collections that are empty).
template <class T>
void write_nonempty(support::JsonWriter& w, std::string_view key, const std::vector<T>& items) {
  if (!items.empty()) w.member(key, items);
}

// String enums. `names[i]` is the wire name of the enumerator with value i. An unknown name fails
// with "<path>: unknown <what> "x" (expected one of a, b, c)".
bool read_enum_index(const support::JsonIn& in, std::span<const std::string_view> names, std::string_view what,
                     std::size_t& index);
template <class E, std::size_t N>
bool read_enum(const support::JsonIn& in, const std::array<std::string_view, N>& names, std::string_view what, E& out) {
  std::size_t index = 0;
  if (!read_enum_index(in, names, what, index)) return false;
  out = static_cast<E>(index);
  return true;
}
template <class E, std::size_t N>
bool parse_enum(std::string_view text, const std::array<std::string_view, N>& names, E& out) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) {
      out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}
template <class E, std::size_t N>
std::string_view enum_name(E value, const std::array<std::string_view, N>& names) {
  const auto index = static_cast<std::size_t>(value);
  return index < N ? names[index] : std::string_view("unknown");
}

// For discriminated unions: "<path>.type: unknown <what> "x"".
bool unknown_tag(const support::JsonIn& tag, std::string_view what, std::string_view value);

}  // namespace agentd::protocol::acp::detail
