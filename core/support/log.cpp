#include "core/support/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

#include "core/support/enum_names.h"

namespace agentd::support::log {

namespace {

std::atomic<Level> g_level{Level::info};
std::atomic<int> g_fd{STDERR_FILENO};
std::mutex g_file_mutex;  // guards swapping the file descriptor

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // nowhere left to report a logging failure
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

Result<Level> parse_level(std::string_view name) {
  // AGENTD_LOG's spelling: lower case, with aliases; the log lines use kLevelNames below.
  static constexpr EnumName<Level> kSettingNames[] = {
      {Level::trace, "trace"},  {Level::debug, "debug"}, {Level::info, "info"}, {Level::warn, "warn"},
      {Level::warn, "warning"}, {Level::error, "error"}, {Level::off, "off"},   {Level::off, "none"},
  };
  if (const auto level = enum_from_name<Level>(kSettingNames, name)) return *level;
  return make_error(Errc::invalid_argument, "unknown log level '{}' (use trace, debug, info, warn, error or off)",
                    name);
}

constexpr support::EnumName<Level> kLevelNames[] = {
    {Level::trace, "TRACE"}, {Level::debug, "DEBUG"}, {Level::info, "INFO"},
    {Level::warn, "WARN"},   {Level::error, "ERROR"}, {Level::off, "OFF"},
};
static_assert(support::names_every_value(kLevelNames, Level::off));

std::string_view level_name(Level level) noexcept { return support::enum_name<Level>(kLevelNames, level, "?"); }

void init_from_env() {
  const char* value = std::getenv("AGENTD_LOG");
  if (value == nullptr || *value == '\0') return;
  auto parsed = parse_level(value);
  if (!parsed) {
    write(Level::warn, fmt::format("AGENTD_LOG: {}", parsed.error().message()));
    return;
  }
  set_level(*parsed);
}

void set_level(Level level) noexcept { g_level.store(level, std::memory_order_relaxed); }
Level level() noexcept { return g_level.load(std::memory_order_relaxed); }

Result<void> set_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    return Error(Errc::io, fmt::format("cannot open log file {}: {}", path, std::strerror(err)), err);
  }
  std::lock_guard lock(g_file_mutex);
  const int old = g_fd.exchange(fd);
  if (old != STDERR_FILENO) ::close(old);
  return ok();
}

void write(Level at, std::string_view message) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t secs = system_clock::to_time_t(now);
  const auto millis = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&secs, &utc);
  std::string line =
      fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z agentd[{}] {} ", utc.tm_year + 1900, utc.tm_mon + 1,
                  utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis, ::getpid(), level_name(at));
  // Keep one record per line, whatever the message holds.
  for (char c : message) line += (c == '\n' || c == '\r') ? ' ' : c;
  line += '\n';
  std::lock_guard lock(g_file_mutex);
  write_all(g_fd.load(), line);
}

}  // namespace agentd::support::log
