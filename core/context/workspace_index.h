// The warm file index of a workspace, kept between turns: every file the shared walker (tools/walk.h)
// visits, honouring .gitignore, with lookups by file name and by path word. The first refresh walks the
// tree; later ones only stat the directories seen (a directory's mtime changes when an entry is added,
// removed or renamed) and re-list the few that changed, so a second turn in a big repository costs
// milliseconds. File-change notifications (notify_changed) force a re-list where mtimes may lag.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/context/content_indexer.h"
#include "core/support/cancel.h"
#include "core/support/result.h"

namespace agentd::core::context {

// One root's files at one moment: immutable, so a retrieval reads it without holding the index's lock.
class FileList {
 public:
  FileList(std::string root, std::vector<std::string> files, bool truncated, std::uint64_t generation);

  const std::string& root() const noexcept { return root_; }  // absolute, no trailing '/'
  // Relative to the root, '/'-separated, in path order (tools::path_less).
  const std::vector<std::string>& files() const noexcept { return files_; }
  // Indexes into files() of those whose last component is `name`; empty when none.
  const std::vector<std::uint32_t>& with_name(std::string_view name) const;
  // Indexes of files whose path holds `word` (lower case) among its words, its components split at
  // punctuation and camel humps ("fs/ext4/super.c": fs, ext4, super, c); empty when none.
  const std::vector<std::uint32_t>& with_word(std::string_view word) const;
  // The path words starting with `prefix` (itself included), at most `max` of them, in byte order:
  // "tokenize" finds "tokenizer", "config" finds "configs".
  std::vector<std::string_view> words_with_prefix(std::string_view prefix, std::size_t max) const;
  // The walk stopped at IndexOptions::max_files.
  bool truncated() const noexcept { return truncated_; }
  // Grows each time the list changes; equal generations of one index hold equal lists.
  std::uint64_t generation() const noexcept { return generation_; }

 private:
  std::string root_;
  std::vector<std::string> files_;
  bool truncated_ = false;
  std::uint64_t generation_ = 0;
  std::unordered_map<std::string_view, std::vector<std::uint32_t>> by_name_;
  std::unordered_map<std::string, std::vector<std::uint32_t>> by_word_;
  std::vector<std::string_view> words_;  // by_word_'s keys, sorted
};

struct IndexOptions {
  std::size_t max_files = 2'000'000;  // past this the walk stops and the list says it is truncated
  // A directory whose mtime is this close to when it was listed is listed again at the next refresh: file
  // systems stamp mtimes from a coarse clock, so a file created in the same tick would go unseen.
  std::int64_t racy_window_ns = 2'000'000'000;
  // The persistent content index (content_indexer.h): built in the background for a root with more
  // than `content_min_files` files when `content.cache_directory` is set. Smaller trees are searched
  // whole at every turn and need none.
  ContentIndexOptions content;
  std::size_t content_min_files = 5000;
  // Files edited in place leave their directory's mtime alone: besides the changes the index sees (and
  // those notify_changed() reports), the content index re-stats every file at most this often.
  std::int64_t content_recheck_ns = std::int64_t{60} * 1'000'000'000;
};

struct RefreshResult {
  std::shared_ptr<const FileList> files;
  bool walked = false;   // a whole walk (the first refresh, or ignore rules changed)
  bool changed = false;  // the list differs from the previous refresh
  std::size_t directories_checked = 0;
  std::size_t directories_relisted = 0;
  // The root's content index, when it has one (see IndexOptions::content); it may still be building.
  std::shared_ptr<ContentIndexer> content;
};

class WorkspaceIndex {
 public:
  explicit WorkspaceIndex(IndexOptions options = {});
  ~WorkspaceIndex();
  WorkspaceIndex(const WorkspaceIndex&) = delete;
  WorkspaceIndex& operator=(const WorkspaceIndex&) = delete;

  // Brings the list of `root` (an absolute directory) up to date and returns it. Blocking; the first call
  // for a root walks the whole tree. Errc::not_found when the root is not a directory, Errc::cancelled
  // when `cancel` fires (the root's state is then dropped and rebuilt by the next call). Thread-safe.
  // `deny_paths` (the configuration's `permissions.denyPaths`) are never put in the root's content index.
  support::Result<RefreshResult> refresh(const std::string& root, const support::CancelToken& cancel,
                                         std::span<const std::string> deny_paths = {});

  // A file or directory was created, changed or removed (a tool wrote it, a watcher saw it): the directory
  // holding it is re-listed at the next refresh, whatever its mtime says. Paths outside every root known
  // to this index are ignored.
  void notify_changed(const std::string& absolute_path);

  // Drops everything known about `root` (its content index stays on disk); its next refresh walks again.
  void forget(const std::string& root);

  struct RootState;  // workspace_index.cpp

 private:
  IndexOptions options_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<RootState>> roots_;
  std::uint64_t generation_ = 0;
};

}  // namespace agentd::core::context
