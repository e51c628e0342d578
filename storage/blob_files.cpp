#include "storage/blob_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/support/unique_fd.h"

namespace agentd::storage {

namespace fs = std::filesystem;
using support::Errc;
using support::Error;
using support::Result;

namespace {

constexpr std::string_view kTemporaryPrefix = ".writing-";

Error errno_error(int err, std::string_view what, const fs::path& path) {
  return Error(Errc::storage, fmt::format("{} {}: {}", what, path.string(), std::strerror(err)), err);
}

bool valid_hash(std::string_view hash) {
  if (hash.size() != 64) return false;
  for (char c : hash) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

fs::path blob_path(const fs::path& dir, std::string_view hash) {
  return dir / std::string(hash.substr(0, 2)) / std::string(hash);
}

Result<void> make_private_directory(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return errno_error(errno, "cannot create", dir);
  return support::ok();
}

Result<void> fsync_directory(const fs::path& dir) {
  const support::UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return errno_error(errno, "cannot open", dir);
  if (::fsync(fd.get()) != 0) return errno_error(errno, "cannot fsync", dir);
  return support::ok();
}

}  // namespace

fs::path blob_directory(std::string_view database_path) {
  if (database_path.empty() || database_path == ":memory:") return {};
  return fs::path(std::string(database_path) + ".blobs");
}

Result<void> write_blob_file(const fs::path& dir, std::string_view hash, std::string_view bytes) {
  if (!valid_hash(hash)) return Error(Errc::invalid_argument, fmt::format("not a SHA-256 hex digest: {}", hash));
  const fs::path final_path = blob_path(dir, hash);
  struct stat st {};
  if (::stat(final_path.c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) == bytes.size()) {
    return support::ok();  // content-addressed: these bytes are there already
  }
  if (auto made = make_private_directory(dir); !made) return made;
  const fs::path sub = final_path.parent_path();
  if (auto made = make_private_directory(sub); !made) return made;

  static std::atomic<std::uint64_t> counter{0};
  const fs::path temporary =
      sub / fmt::format("{}{}-{}-{}", kTemporaryPrefix, hash.substr(0, 16), ::getpid(), counter.fetch_add(1));
  const support::UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (fd.get() < 0) return errno_error(errno, "cannot create", temporary);
  auto fail = [&](int err, std::string_view what) {
    ::unlink(temporary.c_str());
    return errno_error(err, what, temporary);
  };
  for (std::size_t written = 0; written < bytes.size();) {
    const ssize_t n = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno, "cannot write");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail(errno, "cannot fsync");
  if (::rename(temporary.c_str(), final_path.c_str()) != 0) return fail(errno, "cannot rename");
  if (auto synced = fsync_directory(sub); !synced) return synced;
  return fsync_directory(dir);
}

Result<std::optional<std::string>> read_blob_file(const fs::path& dir, std::string_view hash,
                                                  std::uint64_t expected_size) {
  if (!valid_hash(hash)) return Error(Errc::invalid_argument, fmt::format("not a SHA-256 hex digest: {}", hash));
  const fs::path path = blob_path(dir, hash);
  const support::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return errno_error(errno, "cannot open", path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_error(errno, "cannot stat", path);
  if (static_cast<std::uint64_t>(st.st_size) != expected_size) {
    return Error(Errc::storage, fmt::format("{} holds {} bytes, not the {} recorded for it: it was damaged",
                                            path.string(), st.st_size, expected_size));
  }
  std::string bytes(static_cast<std::size_t>(expected_size), '\0');
  for (std::size_t filled = 0; filled < bytes.size();) {
    const ssize_t n = ::read(fd.get(), bytes.data() + filled, bytes.size() - filled);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error(errno, "cannot read", path);
    }
    if (n == 0) return Error(Errc::storage, fmt::format("{} ended early: it was damaged", path.string()));
    filled += static_cast<std::size_t>(n);
  }
  return std::optional<std::string>(std::move(bytes));
}

Result<void> remove_blob_file(const fs::path& dir, std::string_view hash) {
  if (!valid_hash(hash)) return Error(Errc::invalid_argument, fmt::format("not a SHA-256 hex digest: {}", hash));
  const fs::path path = blob_path(dir, hash);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_error(errno, "cannot remove", path);
  return support::ok();
}

Result<std::int64_t> prune_blob_files(const fs::path& dir, const std::function<bool(std::string_view)>& referenced,
                                      std::chrono::seconds min_age) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::int64_t{0};
  const auto now = fs::file_time_type::clock::now();
  std::int64_t removed = 0;
  for (const auto& sub : fs::directory_iterator(dir, ec)) {
    if (!sub.is_directory(ec)) continue;
    for (const auto& entry : fs::directory_iterator(sub.path(), ec)) {
      const std::string name = entry.path().filename().string();
      const bool temporary = name.starts_with(kTemporaryPrefix);
      if (!temporary && (!valid_hash(name) || referenced(name))) continue;
      const auto written = entry.last_write_time(ec);
      if (ec || now - written < min_age) continue;
      if (fs::remove(entry.path(), ec)) ++removed;
    }
    if (ec) return Error(Errc::storage, fmt::format("cannot list {}: {}", sub.path().string(), ec.message()));
  }
  if (ec) return Error(Errc::storage, fmt::format("cannot list {}: {}", dir.string(), ec.message()));
  return removed;
}

}  // namespace agentd::storage
