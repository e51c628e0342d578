// Keeps one root's content index (storage/content_index.h) up to date, in the background: given the
// root's file list, it stats every file, re-reads those whose mtime or size changed since they were
// indexed, forgets those gone, and writes the tokens (code_tokens.h) and definitions (definitions.h) of
// each in batches. The index is split over `shards` databases by a hash of the path, each with its own
// writer thread (SQLite writes one transaction at a time per database, and writing is half the work),
// fed by the tokenizing threads. Searches run on their own connections and never wait for a build;
// until the first whole index is written, the index says it is not ready, and retrieval falls back to
// its focused search (and says so).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/support/result.h"
#include "storage/content_index.h"

namespace agentd::core::context {

class FileList;

struct ContentIndexOptions {
  // Where the per-root databases go (one file per root, named by a hash of its path); empty: no content
  // index at all.
  std::string cache_directory;
  std::size_t max_file_bytes = std::size_t{1} << 20;  // a file's first MiB is indexed
  std::size_t threads = 2;                            // tokenizing threads
  std::size_t shards = 2;                             // databases, each with its own writer thread
  std::size_t batch_files = 64;                       // files per tokenizing task
  // Tokens per write transaction (a commit makes FTS5 write its pending postings as a segment).
  std::size_t commit_bytes = std::size_t{16} << 20;
  // A changed or removed file leaves a garbage row (see storage/content_index.h): past this share of the
  // live rows, the next update rebuilds the index from scratch.
  double rebuild_garbage_share = 0.25;
  // Paths never indexed on top of the built-in deny-list (tools::denied_path): the configuration's
  // `permissions.denyPaths`, relative patterns as there. Their tokens would otherwise sit in the cache.
  std::vector<std::string> deny_paths;
};

struct ContentIndexStatus {
  bool ready = false;         // a whole index was written once; searches answer
  bool building = false;      // an update is running
  std::size_t indexed = 0;    // files written by the running (or last) update
  std::size_t to_index = 0;   // files that update had to (re)index
  std::size_t files = 0;      // live files in the index
  double last_update_ms = 0;  // wall time of the last finished update
  std::string error;          // why the index is unusable, when it is
};

class ContentIndexer {
 public:
  // `database` is the cache file for `root`; nothing is opened or read until the first update().
  ContentIndexer(std::string root, std::string database, ContentIndexOptions options);
  ~ContentIndexer();  // stops a running update and joins its thread
  ContentIndexer(const ContentIndexer&) = delete;
  ContentIndexer& operator=(const ContentIndexer&) = delete;

  // Brings the index to `files` in the background; returns at once. A newer list given while an update
  // runs is taken up when it ends (only the latest).
  void update(std::shared_ptr<const FileList> files);
  // Blocks until no update is running or pending (tests, benchmarks).
  void wait_idle();
  // Adds deny-paths (patterns as `permissions.denyPaths`) for every later update; the list only grows, so
  // sessions with different configurations for one root get the union. Returns true when it grew: the
  // caller then asks for an update, which starts over if a file already indexed is now denied (a
  // contentless index cannot drop a row's tokens, and a denied file's must not stay in the cache).
  bool deny(std::span<const std::string> patterns);

  ContentIndexStatus status() const;

  // The best files for `tokens` over every shard (see storage::ContentIndex::search); Errc::unavailable
  // until ready.
  support::Result<std::vector<storage::IndexMatch>> search(std::span<const std::string> tokens, std::size_t limit,
                                                           const storage::FieldWeights& weights = {});

  const std::string& root() const noexcept { return root_; }
  // The shards' database files.
  std::vector<std::string> database_files() const;

  // The prefix of the database files for `root` under `cache_directory` (a hash of the root's path).
  static std::string database_path(const std::string& cache_directory, const std::string& root);

 private:
  void run();
  support::Result<void> update_to(const FileList& files);
  support::Result<void> ensure_open();
  support::Result<void> count_totals();  // totals_ from the writers

  std::string root_;
  std::string database_;
  ContentIndexOptions options_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::shared_ptr<const FileList> pending_;
  bool busy_ = false;
  bool stopping_ = false;
  std::atomic<bool> stop_{false};
  ContentIndexStatus status_;

  std::vector<storage::ContentIndex> writers_;  // the update's, one per shard
  std::mutex reader_mutex_;
  std::vector<storage::ContentIndex> readers_;  // searches', one per shard
  storage::ContentIndex::Totals totals_;        // over every shard, as of the last update (counting is a scan)
  std::thread thread_;
};

}  // namespace agentd::core::context
