#include "tools/file_transaction.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <mutex>
#include <utility>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/support/run_off_loop.h"
#include "tools/atomic_write.h"
#include "tools/disk_file_access.h"
#include "tools/sha256.h"
#include "tools/tool.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Error;

// Striped: commits to one path are serialized; commits to different paths rarely wait for each other.
std::mutex& lock_for(const fs::path& path) {
  static std::array<std::mutex, 64> stripes;
  return stripes[std::hash<std::string>{}(path.string()) % stripes.size()];
}

// The file's bytes now; nullopt when there is no file.
support::Result<std::optional<std::string>> current_bytes(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return std::optional<std::string>();
    return Error(Errc::io, fmt::format("cannot inspect {}: {}", path.string(), std::strerror(err)), err);
  }
  if (!S_ISREG(st.st_mode)) {
    return Error(Errc::invalid_argument, fmt::format("{} is not a regular file", path.string()));
  }
  auto bytes = read_disk_file(path);
  if (!bytes) return std::move(bytes).error();
  return std::optional<std::string>(std::move(*bytes));
}

std::string describe(const std::optional<std::string>& bytes) {
  return bytes ? fmt::format("{} bytes", bytes->size()) : std::string("no file");
}

// The check and the write, under the path's lock. Blocking.
CommitResult apply_locked(const FileCommit& commit) {
  CommitResult result;
  const std::lock_guard lock(lock_for(commit.path));
  auto now = current_bytes(commit.path);
  if (!now) {
    result.status = CommitStatus::failed;
    result.message = now.error().message();
    return result;
  }
  if (*now != commit.before) {
    result.status = CommitStatus::conflict;
    result.message = fmt::format("{} changed before the write could happen (expected {}, found {})",
                                 commit.path.string(), describe(commit.before), describe(*now));
    return result;
  }
  if (!commit.after) {
    if (::unlink(commit.path.c_str()) != 0) {
      const int err = errno;
      result.status = CommitStatus::failed;
      result.message = fmt::format("cannot remove {}: {}", commit.path.string(), std::strerror(err));
      return result;
    }
    // As for a rename: the removal is durable once the directory is.
    const int dir_fd = ::open(commit.path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
      ::fsync(dir_fd);
      ::close(dir_fd);
    }
    struct stat st {};
    result.read_back = result.text_found = ::lstat(commit.path.c_str(), &st) != 0 && errno == ENOENT;
    return result;
  }
  if (auto written = write_file_atomically(commit.path, *commit.after, commit.mode); !written) {
    result.status = CommitStatus::failed;
    result.message = written.error().message();
    return result;
  }
  // Read back what landed: a full disk, a filter driver or a writer outside this process shows up here and
  // not as a surprise on the next read.
  auto read_back = read_disk_file(commit.path);
  if (read_back) {
    const ReadBackCheck check = check_read_back(*read_back, *commit.after, commit.expected_text);
    result.read_back = check.read_back;
    result.text_found = check.text_found;
  } else {
    result.message = read_back.error().message();
  }
  return result;
}

// The check, the write and the read-back through the editor. The buffer is the truth, so `before` is
// compared with it, and what the editor holds afterwards (its format-on-save included) is what is checked.
boost::asio::awaitable<CommitResult> commit_through_editor(const FileCommit& commit,
                                                           const support::CancelToken& cancel) {
  CommitResult result;
  const std::string path = commit.path.string();
  auto now = co_await commit.editor->read_text(path, cancel);
  if (!now) {
    result.status = CommitStatus::failed;
    result.message = fmt::format("the editor could not read it: {}", now.error().message());
    co_return result;
  }
  if (*now != commit.before) {
    result.status = CommitStatus::conflict;
    result.message = fmt::format("{} changed in the editor before the write could happen (expected {}, found {})", path,
                                 describe(commit.before), describe(*now));
    co_return result;
  }
  if (cancel.cancelled()) {
    result.status = CommitStatus::failed;
    result.message = "cancelled before the write";
    co_return result;
  }
  std::string text = commit.after.value_or(std::string());
  auto written = co_await commit.editor->write_text(path, std::move(text), cancel);
  if (!written) {
    result.status = CommitStatus::failed;
    result.message = fmt::format("the editor did not write it: {}", written.error().message());
    co_return result;
  }
  auto read_back = co_await commit.editor->read_text(path, cancel);
  if (read_back) {
    const ReadBackCheck check = check_read_back(*read_back, commit.after.value_or(std::string()), commit.expected_text);
    result.read_back = check.read_back;
    result.text_found = check.text_found;
  } else {
    result.message = fmt::format("the editor could not read it back: {}", read_back.error().message());
  }
  co_return result;
}

}  // namespace

ReadBackCheck check_read_back(std::string_view on_disk, std::string_view written, std::string_view expected_text) {
  ReadBackCheck check;
  check.read_back = on_disk == written;
  // An empty expected_text stands for the whole of what was written.
  const std::string_view expected = expected_text.empty() ? written : expected_text;
  check.text_found = check.read_back || on_disk.find(expected) != std::string_view::npos;
  return check;
}

boost::asio::awaitable<support::Result<CommitResult>> commit_file(FileCommit commit, ChangeJournal* journal,
                                                                  support::CancelToken cancel) {
  if (cancel.cancelled()) co_return Error(Errc::cancelled, "the file change was cancelled before it started");
  std::optional<std::int64_t> id;
  if (journal != nullptr) {
    // The journal's copy of the pre-image and the new bytes' hash: tens of MiB to copy and hash, and tens
    // of ms, so not on the loop every session's stream shares (which reads nothing of `commit` meanwhile).
    auto prepare = [path = commit.path.string(), before = &commit.before, after = &commit.after,
                    mode = commit.before_mode] {
      FileChange change;
      change.path = path;
      change.before = *before;
      change.mode = mode;
      if (*after) change.after_hash = sha256_hex(**after);
      return change;
    };
    const bool large = (commit.before ? commit.before->size() : 0) + (commit.after ? commit.after->size() : 0) >=
                       support::kOffLoopBytes;
    FileChange change = co_await support::run_off_loop(std::move(prepare), large);
    auto recorded = co_await journal->record(std::move(change));
    if (!recorded) co_return std::move(recorded).error();
    id = *recorded;
  }
  if (cancel.cancelled()) {
    if (id) journal->abandon(*id);
    co_return Error(Errc::cancelled, "the file change was cancelled before the write");
  }
  CommitResult result;
  support::Span write = commit.spans != nullptr ? commit.spans->start("fs.atomic_write") : support::Span();
  write.set_attribute("path", commit.path.string());
  write.set_attribute("bytes", static_cast<std::uint64_t>(commit.after ? commit.after->size() : 0));
  write.set_attribute("through", commit.editor != nullptr ? "editor" : "disk");
  if (commit.editor != nullptr) {
    result = co_await commit_through_editor(commit, cancel);
  } else {
    auto apply = [commit = std::move(commit)] { return apply_locked(commit); };
    result = co_await support::run_off_loop(std::move(apply));
  }
  if (result.status != CommitStatus::committed) {
    write.set_status(support::SpanStatus::error, result.message);
  } else {
    write.set_attribute("readBack", result.read_back);
  }
  write.end();
  result.journal_id = id;
  if (result.status != CommitStatus::committed && id) journal->abandon(*id);
  co_return result;
}

}  // namespace agentd::tools
