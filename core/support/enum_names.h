// Names of enum values on the wire, in config files, in the database and in logs: one table per enum
// instead of a switch one way and a loop back. The table lives in the enum's .cpp file:
//
//   constexpr support::EnumName<StopReason> kStopReasonNames[] = {
//       {StopReason::end_turn, "end_turn"}, {StopReason::tool_use, "tool_use"}, ...};
//   static_assert(support::names_every_value(kStopReasonNames, StopReason::pause_turn));
//   std::span<const support::EnumName<StopReason>> enum_names(StopReason) noexcept { return kStopReasonNames; }
//
// With `enum_names(E)` declared next to the enum (its namespace: found by argument-dependent lookup),
// support::enum_name(value) and support::enum_from_name<E>(text) work for E anywhere. The first
// entry of a value is its name; later entries for the same value are accepted aliases. A table has no
// -Wswitch, hence the static_assert: it fails when a value of a dense enum (numbered 0, 1, 2, ...
// up to `last`) has no entry.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

namespace agentd::support {

template <typename E>
struct EnumName {
  static_assert(std::is_enum_v<E>);
  E value;
  std::string_view name;
};

// The name of `value` in `table`, or `fallback` when the table has none (a value cast from a number).
template <typename E>
constexpr std::string_view enum_name(std::span<const EnumName<E>> table, E value,
                                     std::string_view fallback = "unknown") noexcept {
  for (const EnumName<E>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return fallback;
}

// The value that `name` names in `table` (exact, case-sensitive), or nullopt.
template <typename E>
constexpr std::optional<E> enum_from_name(std::span<const EnumName<E>> table, std::string_view name) noexcept {
  for (const EnumName<E>& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

// The same through the enum's own table, `enum_names(E)`.
template <typename E>
std::string_view enum_name(E value, std::string_view fallback = "unknown") noexcept {
  return enum_name(enum_names(E{}), value, fallback);
}
template <typename E>
std::optional<E> enum_from_name(std::string_view name) noexcept {
  return enum_from_name(enum_names(E{}), name);
}

// True when every value from 0 to `last` has an entry in `table`.
template <typename E, std::size_t N>
constexpr bool names_every_value(const EnumName<E> (&table)[N], E last) noexcept {
  using U = std::underlying_type_t<E>;
  for (U v = 0; v <= static_cast<U>(last); ++v) {
    bool found = false;
    for (const EnumName<E>& entry : table) found = found || static_cast<U>(entry.value) == v;
    if (!found) return false;
  }
  return true;
}

}  // namespace agentd::support
