#include "tools/disk_file_access.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/support/preempt.h"
#include "core/support/run_off_loop.h"
#include "tools/safe_open.h"

namespace agentd::tools {
namespace {

using support::Errc;
using support::Error;

Error errno_error(int err, std::string_view what, const std::filesystem::path& path) {
  if (err == ENOENT || err == ENOTDIR)
    return Error(Errc::not_found, fmt::format("no such file: {}", path.string()), err);
  return Error(Errc::io, fmt::format("{} {}: {}", what, path.string(), std::strerror(err)), err);
}

}  // namespace

support::Result<std::string> read_disk_file(const std::filesystem::path& path, std::size_t max_bytes) {
  // O_NONBLOCK so that opening a FIFO does not wait for a writer; it changes nothing for regular files.
  // No symlink is followed: the path was resolved by the PathGuard, and one that changed since is refused.
  auto opened = open_file_nofollow(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
  if (!opened) {
    if (opened.error().code() == Errc::conflict) return std::move(opened).error();
    const int err = opened.error().native_code();
    if (err == EISDIR) return support::make_error(Errc::invalid_argument, "{} is a directory", path.string());
    return errno_error(err, "cannot open", path);
  }
  const FileDescriptor fd = std::move(*opened);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_error(errno, "cannot stat", path);
  if (S_ISDIR(st.st_mode)) return support::make_error(Errc::invalid_argument, "{} is a directory", path.string());
  if (!S_ISREG(st.st_mode)) {
    return support::make_error(Errc::invalid_argument, "{} is not a regular file (a device, socket or pipe)",
                               path.string());
  }
  const auto limit_error = [&](std::uint64_t size) {
    return support::make_error(Errc::limit_exceeded, "{} is {} bytes, over the {}-byte limit for reading a file",
                               path.string(), size, max_bytes);
  };
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return limit_error(static_cast<std::uint64_t>(st.st_size));

  std::string bytes;
  bytes.resize(static_cast<std::size_t>(st.st_size));
  std::size_t filled = 0;
  for (;;) {
    // The file may grow while we read: keep going to EOF, within the cap. A full buffer is probed with a
    // small read first, so the usual case (the size stat gave) never doubles and zeroes the buffer.
    if (filled == bytes.size()) {
      char probe[4096];
      const ssize_t more = ::read(fd.get(), probe, sizeof probe);
      if (more < 0) {
        if (errno == EINTR) continue;
        return errno_error(errno, "cannot read", path);
      }
      if (more == 0) break;
      if (bytes.size() + static_cast<std::size_t>(more) > max_bytes) {
        return limit_error(bytes.size() + static_cast<std::size_t>(more));
      }
      bytes.append(probe, static_cast<std::size_t>(more));
      filled = bytes.size();
      bytes.resize(std::min<std::size_t>(std::max<std::size_t>(bytes.size() * 2, 4096), max_bytes + 1));
      continue;
    }
    // At most a few slices per read(2), with a preemption point between: the kernel's copy of a 16 MiB
    // read holds the core as long as hashing it does (core/support/preempt.h).
    if (filled > 0) support::preemption_point();
    const ssize_t n =
        ::read(fd.get(), bytes.data() + filled, std::min(bytes.size() - filled, support::kPreemptSliceBytes * 4));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error(errno, "cannot read", path);
    }
    if (n == 0) break;
    filled += static_cast<std::size_t>(n);
  }
  if (filled > max_bytes) return limit_error(filled);
  bytes.resize(filled);
  return bytes;
}

boost::asio::awaitable<support::Result<std::string>> DiskFileAccess::read_text(std::string path,
                                                                               support::CancelToken cancel) {
  if (cancel.cancelled()) co_return Error(Errc::cancelled, "read cancelled");
  // A read of many MiB takes milliseconds (more on a cold cache): off the event loop. A small file is
  // read in place (what stat says may change before the read; the cap holds either way).
  struct stat st {};
  const bool large = ::stat(path.c_str(), &st) != 0 || static_cast<std::size_t>(st.st_size) >= support::kOffLoopBytes;
  auto read = [path = std::move(path), max_bytes = max_bytes_] { return read_disk_file(path, max_bytes); };
  co_return co_await support::run_off_loop(std::move(read), large);
}

}  // namespace agentd::tools
