// Time in the units agentd stores and reports: microseconds since the Unix epoch for records,
// a steady clock for durations.
#pragma once

#include <chrono>
#include <cstdint>

namespace agentd::support {

using SteadyClock = std::chrono::steady_clock;

inline std::int64_t unix_micros_now() noexcept {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline std::int64_t unix_millis_now() noexcept { return unix_micros_now() / 1000; }

}  // namespace agentd::support
