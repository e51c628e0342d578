// Lenient field access for provider stream payloads. Providers add fields, send null for absent ones and
// local servers vary the shapes, so a decoder asks "is there a string here?" rather than validating a
// schema; a missing or mistyped field simply reads as absent. Used only by the decoders in core/model/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/support/json.h"

namespace agentd::core::model::detail {

inline const std::string* string_field(const support::Json& object, std::string_view key) noexcept {
  const support::Json* value = object.find(key);
  return value != nullptr && value->is_string() ? &value->as_string() : nullptr;
}

inline std::string_view string_or_empty(const support::Json& object, std::string_view key) noexcept {
  const std::string* value = string_field(object, key);
  return value != nullptr ? std::string_view(*value) : std::string_view();
}

inline const support::Json* object_field(const support::Json& object, std::string_view key) noexcept {
  const support::Json* value = object.find(key);
  return value != nullptr && value->is_object() ? value : nullptr;
}

inline const support::Json* array_field(const support::Json& object, std::string_view key) noexcept {
  const support::Json* value = object.find(key);
  return value != nullptr && value->is_array() ? value : nullptr;
}

// A non-negative integer (token counts, indexes). Floats, negatives and other types read as absent.
inline std::optional<std::uint64_t> uint_field(const support::Json& object, std::string_view key) noexcept {
  const support::Json* value = object.find(key);
  if (value == nullptr) return std::nullopt;
  if (const auto* u = value->if_uint64()) return *u;
  if (const auto* i = value->if_int64(); i != nullptr && *i >= 0) return static_cast<std::uint64_t>(*i);
  return std::nullopt;
}

// A small index (content block, output item): absent or absurd values are clamped rather than trusted.
inline std::uint32_t index_field(const support::Json& object, std::string_view key) noexcept {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(uint_field(object, key).value_or(0), UINT32_MAX));
}

}  // namespace agentd::core::model::detail
