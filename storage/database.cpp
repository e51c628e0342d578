#include "storage/database.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "storage/migrations.h"

namespace agentd::storage {

using support::Errc;

Result<std::string> default_database_path() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && xdg[0] == '/') {
    return fmt::format("{}/agentd/agentd.db", xdg);
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    return fmt::format("{}/.local/share/agentd/agentd.db", home);
  }
  return Error(Errc::not_found, "neither XDG_DATA_HOME nor HOME is set; pass --db PATH");
}

Result<void> ensure_private_file(const std::string& path) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) {
    std::error_code ec;
    const auto parent = p.parent_path();
    if (!std::filesystem::exists(parent, ec)) {
      std::filesystem::create_directories(parent, ec);
      if (ec) {
        return Error(Errc::io, fmt::format("cannot create directory {}: {}", parent.string(), ec.message()),
                     ec.value());
      }
      // Only the user should see what it holds (session history, an index of their code).
      std::filesystem::permissions(parent, std::filesystem::perms::owner_all, ec);
    }
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    return Error(Errc::io, fmt::format("cannot open database {}: {}", path, std::strerror(err)), err);
  }
  ::close(fd);
  return support::ok();
}

namespace {

Result<void> fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    return Error(Errc::io, fmt::format("cannot sync {}: {}", path, std::strerror(err)), err);
  }
  ::close(fd);
  return support::ok();
}

}  // namespace

Result<void> copy_database_to_new_file(Connection& from, const std::string& path) {
  const std::string copy_path = fmt::format("{}.restoring-{}", path, ::getpid());
  ::unlink(copy_path.c_str());  // a leftover of an earlier try
  if (auto r = ensure_private_file(copy_path); !r) return r;
  auto copied = [&]() -> Result<void> {
    auto copy = Connection::open(copy_path, Connection::Mode::read_write);
    if (!copy) return std::move(copy).error();
    sqlite3_backup* backup = sqlite3_backup_init(copy->handle(), "main", from.handle(), "main");
    if (backup == nullptr) return copy->error("starting the copy", sqlite3_errcode(copy->handle()));
    const int stepped = sqlite3_backup_step(backup, -1);
    const int finished = sqlite3_backup_finish(backup);
    if (stepped != SQLITE_DONE) {
      return Error(Errc::storage, fmt::format("copying the database: {}", sqlite3_errstr(stepped)), stepped);
    }
    if (finished != SQLITE_OK) return copy->error("copying the database", finished);
    return support::ok();
  }();
  if (copied) copied = fsync_path(copy_path, O_RDONLY);
  if (copied && ::link(copy_path.c_str(), path.c_str()) != 0) {
    const int err = errno;
    copied = Error(err == EEXIST ? Errc::conflict : Errc::io,
                   fmt::format("cannot put the database at {}: {}", path, std::strerror(err)), err);
  }
  ::unlink(copy_path.c_str());
  if (!copied) return copied;
  const auto parent = std::filesystem::path(path).parent_path();
  return fsync_path(parent.empty() ? "." : parent.string(), O_RDONLY | O_DIRECTORY);
}

Result<Connection> open_database(const DatabaseOptions& options) {
  const bool in_memory = options.path == ":memory:" || options.path.empty();
  if (!in_memory) {
    if (auto r = ensure_private_file(options.path); !r) return std::move(r).error();
  }
  auto opened = Connection::open(in_memory ? ":memory:" : options.path, Connection::Mode::read_write);
  if (!opened) return opened;
  Connection db = std::move(*opened);
  if (auto r = db.exec(fmt::format("PRAGMA busy_timeout = {}", options.busy_timeout_ms)); !r) {
    return std::move(r).error();
  }
  // Check the version before anything writes to the file: a newer schema is left byte-for-byte alone.
  if (auto v = check_schema_version(db, schema_migrations()); !v) return std::move(v).error();
  // WAL: readers never block the writer. synchronous=FULL: a commit is on disk when it returns,
  // which is what "durable before acknowledged" means (NORMAL could lose the last commits on power loss).
  if (auto r = db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;"); !r) {
    return std::move(r).error();
  }
  if (auto v = migrate(db, schema_migrations()); !v) return std::move(v).error();
  return db;
}

}  // namespace agentd::storage
