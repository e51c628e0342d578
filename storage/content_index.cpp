#include "storage/content_index.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "storage/database.h"

namespace agentd::storage {

using support::Errc;

namespace {

constexpr int kSchemaVersion = 2;

// The files table names each path's live FTS row; AUTOINCREMENT so a row id is never reused (a reused
// id would bring a garbage row back to life). `names` holds the small fields with their column (path
// words, defined names); `body` only which rows hold a token (detail=none: the biggest table, kept
// lean). SQLite's bm25() answers 0 on contentless tables, so search() ranks in C++ instead.
constexpr std::string_view kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files(
  row INTEGER PRIMARY KEY AUTOINCREMENT,
  path TEXT NOT NULL UNIQUE,
  mtime_ns INTEGER NOT NULL,
  size INTEGER NOT NULL,
  tokens INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS names USING fts5(
  path, defs, content='', detail=column, tokenize="ascii tokenchars '_'");
CREATE VIRTUAL TABLE IF NOT EXISTS body USING fts5(
  tokens, content='', detail=none, tokenize="ascii tokenchars '_'");
CREATE VIRTUAL TABLE IF NOT EXISTS body_vocab USING fts5vocab(body, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS names_vocab USING fts5vocab(names, 'col');
)sql";

constexpr double kK1 = 1.2;
constexpr double kB = 0.75;  // length normalisation of the body: a big file holds every common word
// A token in more rows than this share of the files (and than kCommonRows) weighs next to nothing and
// costs a long row list: its body rows are not read (its path and definition rows still are).
constexpr double kCommonShare = 0.01;
constexpr double kCommonRows = 500;
constexpr std::size_t kRescored = 3;  // candidates re-scored with their length: this many times the limit

// Only what the ascii tokenizer reads back as one token may go into a MATCH expression.
bool plain_token(std::string_view token) {
  if (token.empty()) return false;
  for (const char c : token) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

Result<void> prepare_schema(Connection& db, const std::string& root) {
  if (auto r = db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;"); !r) {
    return r.error();
  }
  auto version = db.query_int("PRAGMA user_version");
  if (!version) return version.error();
  bool fresh = *version != kSchemaVersion;
  if (!fresh) {
    auto stmt = db.prepare("SELECT value FROM meta WHERE key = 'root'");
    if (!stmt) return stmt.error();
    auto row = stmt->step();
    if (!row) return row.error();
    fresh = !*row || stmt->column_text(0) != root;
  }
  if (fresh) {
    // Another version's or another root's index: start over.
    if (auto r =
            db.exec("DROP TABLE IF EXISTS vocab; DROP TABLE IF EXISTS fts; DROP TABLE IF EXISTS body_vocab; "
                    "DROP TABLE IF EXISTS names_vocab; DROP TABLE IF EXISTS body; DROP TABLE IF EXISTS names; "
                    "DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS sqlite_sequence; DROP TABLE IF EXISTS meta;");
        !r) {
      return r.error();
    }
  }
  if (auto r = db.exec(kSchema); !r) return r.error();
  if (fresh) {
    auto stmt = db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES('root', ?)");
    if (!stmt) return stmt.error();
    if (auto r = stmt->bind(1, root).run(); !r) return r.error();
    if (auto r = db.exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion)); !r) return r.error();
  }
  return support::ok();
}

Result<std::int64_t> meta_int(Connection& db, std::string_view key) {
  auto stmt = db.cached("SELECT value FROM meta WHERE key = ?");
  if (!stmt) return stmt.error();
  (*stmt)->bind(1, key);
  auto row = (*stmt)->step();
  if (!row) return row.error();
  return *row ? (*stmt)->column_int64(0) : 0;
}

Result<void> set_meta_int(Connection& db, std::string_view key, std::int64_t value) {
  auto stmt = db.cached("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)");
  if (!stmt) return stmt.error();
  return (*stmt)->bind(1, key).bind(2, value).run();
}

}  // namespace

Result<ContentIndex> ContentIndex::open(const std::string& db_path, const std::string& root) {
  if (auto r = ensure_private_file(db_path); !r) return r.error();
  for (int attempt = 0;; ++attempt) {
    auto db = Connection::open(db_path);
    if (db) {
      auto ready = prepare_schema(*db, root);
      if (ready) return ContentIndex(std::move(*db), root);
      if (attempt > 0) return ready.error();
    } else if (attempt > 0) {
      return db.error();
    }
    // Unreadable (corrupt, not a database, a schema SQLite refuses): it is a cache, so remove and retry.
    for (const char* suffix : {"", "-wal", "-shm"}) ::unlink((db_path + suffix).c_str());
    if (auto r = ensure_private_file(db_path); !r) return r.error();
  }
}

Result<std::vector<IndexedFile>> ContentIndex::files() {
  auto stmt = db_.cached("SELECT path, mtime_ns, size FROM files ORDER BY path");
  if (!stmt) return stmt.error();
  std::vector<IndexedFile> out;
  for (;;) {
    auto row = (*stmt)->step();
    if (!row) return row.error();
    if (!*row) break;
    out.push_back(IndexedFile{(*stmt)->column_string(0), (*stmt)->column_int64(1), (*stmt)->column_int64(2)});
  }
  return out;
}

Result<ContentIndex::Batch> ContentIndex::begin() {
  auto tx = Transaction::begin(db_);
  if (!tx) return tx.error();
  return Batch(*this, std::move(*tx));
}

Result<void> ContentIndex::Batch::forget(const std::string& path) {
  auto stmt = owner_->db_.cached("DELETE FROM files WHERE path = ?");
  if (!stmt) return stmt.error();
  if (auto r = (*stmt)->bind(1, path).run(); !r) return r.error();
  garbage_ += owner_->db_.changes();
  return support::ok();
}

Result<void> ContentIndex::Batch::remove(const std::string& path) { return forget(path); }

Result<void> ContentIndex::Batch::add(const IndexDocument& doc) {
  Connection& db = owner_->db_;
  if (auto r = forget(doc.file.path); !r) return r.error();
  {
    auto stmt = db.cached("INSERT INTO files(path, mtime_ns, size, tokens) VALUES(?, ?, ?, ?)");
    if (!stmt) return stmt.error();
    (*stmt)->bind(1, doc.file.path).bind(2, doc.file.mtime_ns).bind(3, doc.file.size);
    (*stmt)->bind(4, static_cast<std::int64_t>(std::count(doc.body.begin(), doc.body.end(), ' ') + 1));
    if (auto r = (*stmt)->run(); !r) return r.error();
  }
  const std::int64_t row = db.last_insert_rowid();
  {
    auto stmt = db.cached("INSERT INTO names(rowid, path, defs) VALUES(?, ?, ?)");
    if (!stmt) return stmt.error();
    if (auto r = (*stmt)->bind(1, row).bind(2, doc.path_tokens).bind(3, doc.definitions).run(); !r) return r.error();
  }
  if (doc.body.empty()) return support::ok();
  auto stmt = db.cached("INSERT INTO body(rowid, tokens) VALUES(?, ?)");
  if (!stmt) return stmt.error();
  return (*stmt)->bind(1, row).bind(2, doc.body).run();
}

Result<void> ContentIndex::Batch::commit() {
  if (garbage_ > 0) {
    auto before = meta_int(owner_->db_, "garbage");
    if (!before) return before.error();
    if (auto r = set_meta_int(owner_->db_, "garbage", *before + garbage_); !r) return r.error();
    garbage_ = 0;
  }
  return tx_.commit();
}

Result<void> ContentIndex::write(std::span<const IndexDocument> documents, std::span<const std::string> removed) {
  auto batch = begin();
  if (!batch) return batch.error();
  for (const auto& path : removed) {
    if (auto r = batch->remove(path); !r) return r;
  }
  for (const auto& doc : documents) {
    if (auto r = batch->add(doc); !r) return r;
  }
  return batch->commit();
}

Result<void> ContentIndex::clear() {
  auto tx = Transaction::begin(db_);
  if (!tx) return tx.error();
  if (auto r = db_.exec("DELETE FROM files; INSERT INTO names(names) VALUES('delete-all'); "
                        "INSERT INTO body(body) VALUES('delete-all'); "
                        "DELETE FROM meta WHERE key IN ('garbage', 'complete');");
      !r) {
    return r.error();
  }
  return tx->commit();
}

Result<IndexCounts> ContentIndex::counts() {
  auto files = db_.query_int("SELECT count(*) FROM files");
  if (!files) return files.error();
  auto garbage = meta_int(db_, "garbage");
  if (!garbage) return garbage.error();
  return IndexCounts{*files, *garbage};
}

Result<bool> ContentIndex::complete() {
  auto value = meta_int(db_, "complete");
  if (!value) return value.error();
  return *value != 0;
}

Result<void> ContentIndex::set_complete(bool complete) { return set_meta_int(db_, "complete", complete ? 1 : 0); }

Result<void> ContentIndex::set_bulk(bool bulk) {
  // FTS5's default automerge is 4: merge once four segments of a level exist.
  const int automerge = bulk ? 0 : 4;
  return db_.exec(
      fmt::format("INSERT INTO names(names, rank) VALUES('automerge', {0}); "
                  "INSERT INTO body(body, rank) VALUES('automerge', {0});",
                  automerge));
}

Result<void> ContentIndex::optimize() {
  if (auto r = db_.exec("INSERT INTO names(names) VALUES('optimize'); INSERT INTO body(body) VALUES('optimize');");
      !r) {
    return r;
  }
  // The merge wrote the whole index again through the WAL: copy it in and give the WAL's space back.
  return db_.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

Result<ContentIndex::Totals> ContentIndex::totals() {
  auto stmt = db_.cached("SELECT count(*), coalesce(sum(tokens), 0) FROM files");
  if (!stmt) return stmt.error();
  auto row = (*stmt)->step();
  if (!row) return row.error();
  return Totals{(*stmt)->column_int64(0), (*stmt)->column_int64(1)};
}

ContentIndex::ReadScope::~ReadScope() {
  if (db_ != nullptr) (void)db_->exec("COMMIT");
}

Result<ContentIndex::ReadScope> ContentIndex::read_scope() {
  if (auto r = db_.exec("BEGIN"); !r) return r.error();
  return ReadScope(&db_);
}

Result<ContentIndex::Frequency> ContentIndex::frequency(std::string_view token) {
  Frequency out;
  {
    auto stmt = db_.cached("SELECT doc FROM body_vocab WHERE term = ?");
    if (!stmt) return stmt.error();
    auto row = (*stmt)->bind(1, token).step();
    if (!row) return row.error();
    if (*row) out.body = (*stmt)->column_int64(0);
  }
  auto stmt = db_.cached("SELECT col, doc FROM names_vocab WHERE term = ?");
  if (!stmt) return stmt.error();
  (*stmt)->bind(1, token);
  for (;;) {
    auto row = (*stmt)->step();
    if (!row) return row.error();
    if (!*row) break;
    ((*stmt)->column_text(0) == "path" ? out.path : out.definitions) = (*stmt)->column_int64(1);
  }
  return out;
}

Result<std::vector<IndexMatch>> ContentIndex::search(std::span<const QueryToken> tokens, std::size_t limit,
                                                     const Totals& all, const FieldWeights& weights) {
  std::vector<IndexMatch> out;
  if (limit == 0) return out;
  const double n = static_cast<double>(std::max<std::int64_t>(all.files, 1));
  const double avg_tokens = std::max(1.0, static_cast<double>(all.tokens) / n);
  const auto idf = [n](std::int64_t df) {
    const auto d = static_cast<double>(df);
    return std::log(1.0 + (n - d + 0.5) / (d + 0.5));
  };
  // Per row: the body's share (normalised by length later) and the fields' (not normalised: a path or
  // a definition list is short whatever the file).
  struct Parts {
    double body = 0;
    double names = 0;
  };
  std::unordered_map<std::int64_t, Parts> rows;
  const auto collect = [&](std::string_view table, const std::string& query, auto&& add) -> Result<void> {
    auto stmt = db_.cached(fmt::format("SELECT rowid FROM {0} WHERE {0} MATCH ?", table));
    if (!stmt) return stmt.error();
    (*stmt)->bind(1, query);
    for (;;) {
      auto row = (*stmt)->step();
      if (!row) return row.error();
      if (!*row) return support::ok();
      add(rows[(*stmt)->column_int64(0)]);
    }
  };
  std::unordered_set<std::string_view> done;
  for (const auto& [token, df] : tokens) {
    if (!plain_token(token) || !done.insert(token).second) continue;
    const std::string phrase = fmt::format("\"{}\"", token);
    const auto body_df = static_cast<double>(df.body);
    if (df.body > 0 && (body_df <= kCommonShare * n || body_df <= kCommonRows)) {
      const double w = weights.body * idf(df.body);
      if (auto r = collect("body", phrase, [w](Parts& p) { p.body += w; }); !r) return r.error();
    }
    if (df.path > 0) {
      const double w = weights.path * idf(df.path);
      if (auto r = collect("names", "{path}: " + phrase, [w](Parts& p) { p.names += w; }); !r) return r.error();
    }
    if (df.definitions > 0) {
      const double w = weights.definitions * idf(df.definitions);
      if (auto r = collect("names", "{defs}: " + phrase, [w](Parts& p) { p.names += w; }); !r) return r.error();
    }
  }
  // The best candidates by their unnormalised score, then BM25's length normalisation (tf is 1: a token is
  // in a file or not) on those, and garbage rows dropped.
  std::vector<std::pair<double, std::int64_t>> ranked;
  ranked.reserve(rows.size());
  for (const auto& [row, parts] : rows) ranked.emplace_back(parts.body + parts.names, row);
  const std::size_t keep = std::min(ranked.size(), limit * kRescored);
  std::partial_sort(
      ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end(),
      [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  ranked.resize(keep);
  auto lookup = db_.cached("SELECT path, tokens, size FROM files WHERE row = ?");
  if (!lookup) return lookup.error();
  for (const auto& [unused, row] : ranked) {
    (*lookup)->bind(1, row);
    auto found = (*lookup)->step();
    if (!found) return found.error();
    if (*found) {
      const double length = static_cast<double>((*lookup)->column_int64(1));
      const double norm = (kK1 + 1) / (1 + kK1 * (1 - kB + kB * length / avg_tokens));
      const Parts& parts = rows[row];
      out.push_back(
          IndexMatch{(*lookup)->column_string(0), parts.body * norm + parts.names, (*lookup)->column_int64(2)});
    }
    (*lookup)->reset();
  }
  std::stable_sort(out.begin(), out.end(), [](const IndexMatch& a, const IndexMatch& b) { return a.score > b.score; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace agentd::storage
