// Logging to stderr (or a file given with --log-file), never stdout: stdout carries the protocol.
// The level comes from AGENTD_LOG (trace, debug, info, warn, error, off); the default is info.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/support/result.h"

namespace agentd::support::log {

enum class Level { trace, debug, info, warn, error, off };

Result<Level> parse_level(std::string_view name);
std::string_view level_name(Level level) noexcept;

// Reads AGENTD_LOG; an unknown value is reported on stderr and leaves the default.
void init_from_env();
void set_level(Level level) noexcept;
Level level() noexcept;
inline bool enabled(Level at) noexcept { return at >= level() && level() != Level::off; }

// Sends log lines to a file (appended, created 0600) instead of stderr.
Result<void> set_file(const std::string& path);

// Writes one line, with time, pid and level in front, in a single write(2).
void write(Level at, std::string_view message);

template <class... Args>
void emit(Level at, fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(at)) write(at, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args>
void trace(fmt::format_string<Args...> format, Args&&... args) {
  emit(Level::trace, format, std::forward<Args>(args)...);
}
template <class... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  emit(Level::debug, format, std::forward<Args>(args)...);
}
template <class... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  emit(Level::info, format, std::forward<Args>(args)...);
}
template <class... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  emit(Level::warn, format, std::forward<Args>(args)...);
}
template <class... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  emit(Level::error, format, std::forward<Args>(args)...);
}

}  // namespace agentd::support::log
