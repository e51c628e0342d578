#include "tools/safe_open.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>

namespace agentd::tools {
namespace {

using support::Errc;
using support::Error;

// `dir_fd` is the directory `reached` was opened in, to tell a symlink (the path changed) from a file in
// the way (the path never existed).
Error component_error(int err, int dir_fd, const std::filesystem::path& reached, const std::filesystem::path& whole) {
  if (err == ENOTDIR && dir_fd >= 0) {
    struct stat st {};
    const std::string name = reached.filename().string();
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK(st.st_mode)) err = ENOENT;
  }
  if (err == ENOENT) return Error(Errc::not_found, fmt::format("no such file or directory: {}", reached.string()), err);
  if (err == ELOOP || err == ENOTDIR) {
    return Error(Errc::conflict,
                 fmt::format("{} changed while it was being opened: {} is now a symlink or not a directory, and "
                             "agentd does not follow a path that changed after it was checked",
                             whole.string(), reached.string()),
                 err);
  }
  return Error(Errc::io, fmt::format("cannot open {}: {}", reached.string(), std::strerror(err)), err);
}

}  // namespace

support::Result<FileDescriptor> open_directory_nofollow(const std::filesystem::path& absolute) {
  if (!absolute.is_absolute()) {
    return support::make_error(Errc::invalid_argument, "{} is not an absolute path", absolute.string());
  }
  // O_PATH for the way down: it needs no read permission on the directories passed through (as a normal
  // path lookup needs only search permission); the last one is opened for real, for fsync and *at calls.
  FileDescriptor dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return component_error(errno, -1, "/", absolute);
  std::filesystem::path reached = "/";
  std::vector<std::string> parts;
  for (const auto& part : absolute.relative_path()) {
    if (!part.empty() && part != ".") parts.push_back(part.string());
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == "..") {
      return support::make_error(Errc::invalid_argument, "{} is not a resolved path (it holds ..)", absolute.string());
    }
    reached /= parts[i];
    const int flags = (i + 1 == parts.size() ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    FileDescriptor next(::openat(dir.get(), parts[i].c_str(), flags));
    if (!next.valid()) return component_error(errno, dir.get(), reached, absolute);
    dir = std::move(next);
  }
  if (parts.empty()) {
    FileDescriptor root(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root.valid()) return component_error(errno, -1, "/", absolute);
    return root;
  }
  return dir;
}

support::Result<FileDescriptor> open_file_nofollow(const std::filesystem::path& absolute, int flags, unsigned mode) {
  auto dir = open_directory_nofollow(absolute.parent_path());
  if (!dir) return std::move(dir).error();
  const std::string name = absolute.filename().string();
  FileDescriptor fd(::openat(dir->get(), name.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, mode));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ELOOP) return component_error(err, dir->get(), absolute, absolute);
    // The caller words the rest (not found, is a directory, permission) for its own context.
    return Error(err == ENOENT ? Errc::not_found : Errc::io,
                 fmt::format("cannot open {}: {}", absolute.string(), std::strerror(err)), err);
  }
  return fd;
}

}  // namespace agentd::tools
