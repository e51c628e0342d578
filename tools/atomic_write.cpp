#include "tools/atomic_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/support/preempt.h"
#include "tools/safe_open.h"

namespace agentd::tools {
namespace {

using support::Errc;
using support::Error;

Error io_error(int err, std::string_view what) {
  return Error(Errc::io, fmt::format("{}: {}", what, std::strerror(err)), err);
}

// ".name.agentd-1a2b3c4d5e6f7a8b.tmp": hidden, recognizably ours, and within NAME_MAX however long
// the target's name is.
std::string temp_name(const std::string& name) {
  static constexpr std::size_t kMaxStem = 200;
  std::random_device random;
  const std::uint64_t suffix = (std::uint64_t{random()} << 32) | random();
  return fmt::format(".{}.agentd-{:016x}.tmp", name.substr(0, kMaxStem), suffix);
}

support::Result<void> write_all(int fd, std::string_view bytes, const std::filesystem::path& temp) {
  while (!bytes.empty()) {
    // A few slices per write(2), with a preemption point between (core/support/preempt.h).
    const ssize_t n = ::write(fd, bytes.data(), std::min(bytes.size(), support::kPreemptSliceBytes * 4));
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      return io_error(err, fmt::format("cannot write {}", temp.string()));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
    if (!bytes.empty()) support::preemption_point();
  }
  return support::ok();
}

}  // namespace

support::Result<void> write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                                            std::optional<std::uint32_t> mode) {
  const std::filesystem::path directory = path.parent_path();
  // Everything below happens relative to this descriptor, opened without following a symlink: a directory
  // swapped for a link after the PathGuard's check cannot redirect the write.
  auto dir = open_directory_nofollow(directory);
  if (!dir) {
    if (dir.error().code() == Errc::conflict) return std::move(dir).error();
    return io_error(dir.error().native_code(), fmt::format("cannot open the directory {}", directory.string()));
  }
  const std::string name = path.filename().string();
  std::string temp;
  int fd = -1;
  int err = 0;
  // O_EXCL: a name collision (astronomically unlikely, or a leftover) picks another name, never shares.
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    temp = temp_name(name);
    fd = ::openat(dir->get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    err = errno;
    if (fd < 0 && err != EEXIST) break;
  }
  if (fd < 0) return io_error(err, fmt::format("cannot create a temporary file in {}", directory.string()));
  const std::filesystem::path temp_path = directory / temp;

  // Each failure below reads errno first: formatting the message may clobber it.
  const auto fail = [&](Error error) {
    if (fd >= 0) ::close(fd);
    ::unlinkat(dir->get(), temp.c_str(), 0);
    return error;
  };
  if (mode && ::fchmod(fd, static_cast<mode_t>(*mode)) != 0) {
    err = errno;
    return fail(io_error(err, fmt::format("cannot set the mode of {}", temp_path.string())));
  }
  if (auto written = write_all(fd, bytes, temp_path); !written) return fail(std::move(written).error());
  if (::fsync(fd) != 0) {
    err = errno;
    return fail(io_error(err, fmt::format("cannot flush {} to disk", temp_path.string())));
  }
  const int closed = ::close(fd);
  err = errno;
  fd = -1;
  if (closed != 0) return fail(io_error(err, fmt::format("cannot close {}", temp_path.string())));
  // rename replaces a symlink at `name` itself rather than writing through it.
  if (::renameat(dir->get(), temp.c_str(), dir->get(), name.c_str()) != 0) {
    err = errno;
    return fail(io_error(err, fmt::format("cannot rename {} to {}", temp_path.string(), path.string())));
  }

  // The rename is durable once the directory is. Some file systems refuse fsync on a directory
  // (EINVAL); the data is safe either way, so that is not a failure.
  ::fsync(dir->get());
  return support::ok();
}

}  // namespace agentd::tools
