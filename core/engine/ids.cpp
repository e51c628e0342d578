#include "core/engine/ids.h"

#include <mutex>
#include <random>

#include <fmt/format.h>

#include "core/support/clock.h"

namespace agentd::core {

std::string new_id(std::string_view prefix) {
  static std::mutex mutex;
  static std::mt19937_64 rng{std::random_device{}()};
  std::uint64_t random = 0;
  {
    std::lock_guard lock(mutex);
    random = rng();
  }
  const auto ms = static_cast<std::uint64_t>(support::unix_millis_now());
  return fmt::format("{}_{:012x}_{:016x}", prefix, ms & 0xFFFFFFFFFFFFULL, random);
}

}  // namespace agentd::core
