// The persistent content index of one workspace root (DESIGN.md section 3): an SQLite FTS5 table with
// three fields per file (its path's words, the names it defines, every identifier in it), ranked by BM25
// with a weight per field, in a cache database of its own (one file per root; losing it costs a rebuild,
// never data). Tokens arrive tokenized (core/context/code_tokens.h) and space-joined: this store neither
// reads files nor splits identifiers, it keeps and ranks what it is given.
//
// The FTS5 tables are contentless and store no positions (the body not even its column), so the index
// of a tree is its postings and nothing else (the kernel's: about 150 MB). A contentless table cannot
// delete a row without its old text, so a changed or removed file leaves its old rows behind as garbage:
// the `files` table names each path's live row, searches skip the rest, and the owner rebuilds once
// garbage passes a share of the rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/support/result.h"
#include "storage/sqlite.h"

namespace agentd::storage {

struct IndexedFile {
  std::string path;  // relative to the root, '/'-separated
  std::int64_t mtime_ns = 0;
  std::int64_t size = 0;
};

struct IndexDocument {
  IndexedFile file;
  std::string path_tokens;  // space-joined tokens of each field
  std::string definitions;
  std::string body;
};

struct IndexMatch {
  std::string path;
  double score = 0;       // BM25 with the field weights: higher is better
  std::int64_t size = 0;  // bytes, when indexed
};

struct FieldWeights {
  double path = 4;
  double definitions = 6;
  double body = 1;
};

struct IndexCounts {
  std::int64_t files = 0;    // live rows
  std::int64_t garbage = 0;  // rows of files since changed or removed
};

class ContentIndex {
 public:
  // Opens the cache database at `db_path` (creating it and its directory's file, not the directory) for
  // the tree at `root`. A database of another schema version, of another root, or that SQLite cannot read
  // is emptied and starts over: it is a cache.
  static Result<ContentIndex> open(const std::string& db_path, const std::string& root);

  // Every indexed file with the stamp it was indexed at, in path order.
  Result<std::vector<IndexedFile>> files();
  // One write transaction: add (or replace) and remove files, then commit. Dropped uncommitted, it rolls
  // back.
  class Batch {
   public:
    Result<void> add(const IndexDocument& document);
    Result<void> remove(const std::string& path);
    Result<void> commit();

   private:
    friend class ContentIndex;
    Batch(ContentIndex& owner, Transaction tx) : owner_(&owner), tx_(std::move(tx)) {}
    Result<void> forget(const std::string& path);
    ContentIndex* owner_;
    Transaction tx_;
    std::int64_t garbage_ = 0;
  };
  Result<Batch> begin();
  // Adds or replaces `documents` and forgets `removed`, in one transaction.
  Result<void> write(std::span<const IndexDocument> documents, std::span<const std::string> removed);
  // Drops every row, live or garbage (before a rebuild).
  Result<void> clear();
  Result<IndexCounts> counts();
  // Whether a whole first index was finished (written by the owner, read after a restart).
  Result<bool> complete();
  Result<void> set_complete(bool complete);
  // Bulk loading (a first build, a rebuild): while on, FTS5 merges no segments as commits add them, and
  // optimize() then merges them all into one, so each posting is written twice rather than once per merge
  // level. The setting is stored; an update that is no bulk load turns it off first.
  Result<void> set_bulk(bool bulk);
  Result<void> optimize();

  // Ranking across shards: an index may be split over several databases (written in parallel), so
  // BM25's statistics come from all of them and each shard ranks its own files with those.
  struct Totals {
    std::int64_t files = 0;   // live files
    std::int64_t tokens = 0;  // their body tokens, for the mean length
  };
  Result<Totals> totals();
  // A read transaction held across many reads (one search): without it every statement takes and drops
  // SQLite's file locks on its own, and a search's dozens of statements spend most of their time there.
  class ReadScope {
   public:
    ReadScope(ReadScope&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
    ReadScope& operator=(ReadScope&&) = delete;
    ReadScope(const ReadScope&) = delete;
    ReadScope& operator=(const ReadScope&) = delete;
    ~ReadScope();

   private:
    friend class ContentIndex;
    explicit ReadScope(Connection* db) : db_(db) {}
    Connection* db_;
  };
  Result<ReadScope> read_scope();
  // How many rows hold `token`, per field (garbage rows included: a slight overcount until the rebuild).
  struct Frequency {
    std::int64_t body = 0;
    std::int64_t path = 0;
    std::int64_t definitions = 0;
  };
  Result<Frequency> frequency(std::string_view token);
  struct QueryToken {
    std::string token;
    Frequency frequency;  // over every shard
  };
  // This shard's live files holding any of `tokens`, best first, at most `limit`: BM25F with a token
  // counted once per field (the index keeps which files hold a token, not how often), the body
  // normalised by its length, `all` and the tokens' frequencies taken over every shard. A token in more
  // than a tenth of the files (and 2000 of them) adds nothing from its body rows (they are not read).
  Result<std::vector<IndexMatch>> search(std::span<const QueryToken> tokens, std::size_t limit, const Totals& all,
                                         const FieldWeights& weights = {});

  const std::string& root() const noexcept { return root_; }

 private:
  ContentIndex(Connection connection, std::string root) : db_(std::move(connection)), root_(std::move(root)) {}
  Connection db_;
  std::string root_;
};

}  // namespace agentd::storage
