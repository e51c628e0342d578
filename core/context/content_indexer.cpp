#include "core/context/content_indexer.h"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/context/code_tokens.h"
#include "core/context/definitions.h"
#include "core/context/workspace_index.h"
#include "core/support/log.h"
#include "core/support/unique_fd.h"
#include "tools/path_guard.h"
#include "tools/sha256.h"

namespace agentd::core::context {

using support::Errc;
using support::Error;

namespace {

constexpr std::size_t kBinarySniffBytes = std::size_t{8} << 10;  // NUL in the first 8 KiB: binary

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// One file's fields. Reads at most `max_bytes` through `root_fd`, never following a symlink at the end
// (the walker never lists one, but the tree may change under it). A binary or unreadable file keeps only
// its path's tokens.
storage::IndexDocument tokenize_file(int root_fd, const storage::IndexedFile& file, std::size_t max_bytes,
                                     TokenSet& body, TokenSet& defs, std::string& buffer,
                                     std::vector<std::string_view>& names) {
  storage::IndexDocument doc{file, path_tokens(file.path), {}, {}};
  const support::UniqueFd fd(
      ::openat(root_fd, file.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) return doc;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return doc;
  const std::size_t want = std::min(static_cast<std::size_t>(st.st_size), max_bytes);
  buffer.resize(want);
  std::size_t got = 0;
  while (got < want) {
    const ssize_t n = ::read(fd.get(), buffer.data() + got, want - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  buffer.resize(got);
  const std::string_view text = buffer;
  if (text.substr(0, kBinarySniffBytes).find('\0') != std::string_view::npos) return doc;
  body.clear();
  body.add_text(text);
  defs.clear();
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    names.clear();
    defined_names(text.substr(start, end - start), names);
    for (const auto name : names) defs.add_identifier(name);
    start = end + 1;
  }
  doc.definitions = defs.joined();
  doc.body = body.joined();
  return doc;
}

}  // namespace

std::string ContentIndexer::database_path(const std::string& cache_directory, const std::string& root) {
  return fmt::format("{}/index/{}", cache_directory, tools::sha256_hex(root).substr(0, 24));
}

std::vector<std::string> ContentIndexer::database_files() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < std::max<std::size_t>(options_.shards, 1); ++i) {
    out.push_back(fmt::format("{}.{}.db", database_, i));
  }
  return out;
}

ContentIndexer::ContentIndexer(std::string root, std::string database, ContentIndexOptions options)
    : root_(std::move(root)), database_(std::move(database)), options_(std::move(options)) {
  thread_ = std::thread([this] { run(); });
}

ContentIndexer::~ContentIndexer() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void ContentIndexer::update(std::shared_ptr<const FileList> files) {
  {
    const std::lock_guard lock(mutex_);
    pending_ = std::move(files);
  }
  changed_.notify_all();
}

void ContentIndexer::wait_idle() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return stopping_ || (!busy_ && pending_ == nullptr); });
}

bool ContentIndexer::deny(std::span<const std::string> patterns) {
  const std::lock_guard lock(mutex_);
  bool grew = false;
  for (const auto& p : patterns) {
    if (std::find(options_.deny_paths.begin(), options_.deny_paths.end(), p) != options_.deny_paths.end()) continue;
    options_.deny_paths.push_back(p);
    grew = true;
  }
  return grew;
}

ContentIndexStatus ContentIndexer::status() const {
  const std::lock_guard lock(mutex_);
  return status_;
}

void ContentIndexer::run() {
  for (;;) {
    std::shared_ptr<const FileList> files;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return stopping_ || pending_ != nullptr; });
      if (stopping_) return;
      files = std::move(pending_);
      pending_ = nullptr;
      busy_ = true;
      status_.building = true;
    }
    const auto start = std::chrono::steady_clock::now();
    auto done = update_to(*files);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    {
      const std::lock_guard lock(mutex_);
      busy_ = false;
      status_.building = false;
      status_.last_update_ms = ms;
      if (!done && done.error().code() != Errc::cancelled) {
        status_.error = done.error().message();
        support::log::warn("content index of {}: {}", root_, done.error().message());
      }
    }
    changed_.notify_all();
  }
}

support::Result<void> ContentIndexer::ensure_open() {
  if (!writers_.empty()) return support::ok();
  std::vector<storage::ContentIndex> writers;
  std::vector<storage::ContentIndex> readers;
  bool complete = true;
  std::int64_t files = 0;
  for (const auto& path : database_files()) {
    auto writer = storage::ContentIndex::open(path, root_);
    if (!writer) return writer.error();
    auto reader = storage::ContentIndex::open(path, root_);
    if (!reader) return reader.error();
    auto done = writer->complete();
    if (!done) return done.error();
    auto counts = writer->counts();
    if (!counts) return counts.error();
    complete = complete && *done;
    files += counts->files;
    writers.push_back(std::move(*writer));
    readers.push_back(std::move(*reader));
  }
  writers_ = std::move(writers);
  {
    const std::lock_guard lock(reader_mutex_);
    readers_ = std::move(readers);
  }
  if (auto r = count_totals(); !r) return r;
  const std::lock_guard lock(mutex_);
  status_.ready = complete;  // an index finished before a restart answers at once, then catches up
  status_.files = static_cast<std::size_t>(files);
  return support::ok();
}

support::Result<void> ContentIndexer::count_totals() {
  storage::ContentIndex::Totals all;
  for (auto& w : writers_) {
    auto t = w.totals();
    if (!t) return t.error();
    all.files += t->files;
    all.tokens += t->tokens;
  }
  const std::lock_guard lock(reader_mutex_);
  totals_ = all;
  return support::ok();
}

namespace {

// The shard of a path: FNV-1a, stable across builds and runs (the shards outlive the process).
std::size_t shard_of(std::string_view path, std::size_t shards) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const char c : path) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return static_cast<std::size_t>(h % shards);
}

// Tokenized documents on their way to one shard's writer.
struct ShardQueue {
  std::deque<storage::IndexDocument> docs;
  std::vector<std::string> removed;
};

}  // namespace

support::Result<void> ContentIndexer::update_to(const FileList& list) {
  if (auto r = ensure_open(); !r) return r;
  std::vector<std::string> deny_paths;
  {
    const std::lock_guard lock(mutex_);
    deny_paths = options_.deny_paths;
  }
  const std::size_t shards = writers_.size();
  const support::UniqueFd root_fd(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) return Error(Errc::not_found, fmt::format("cannot open {}", root_));

  // What is stored against what is on disk: stat everything, (re)index what differs.
  std::vector<std::vector<storage::IndexedFile>> stored(shards);
  std::unordered_map<std::string_view, std::pair<const storage::IndexedFile*, std::size_t>> known;
  std::int64_t live = 0;
  std::int64_t garbage = 0;
  for (std::size_t s = 0; s < shards; ++s) {
    auto files = writers_[s].files();
    if (!files) return files.error();
    stored[s] = std::move(*files);
    auto counts = writers_[s].counts();
    if (!counts) return counts.error();
    live += counts->files;
    garbage += counts->garbage;
  }
  for (std::size_t s = 0; s < shards; ++s) {
    for (const auto& f : stored[s]) known.emplace(f.path, std::make_pair(&f, s));
  }
  std::vector<storage::IndexedFile> to_index;
  std::vector<ShardQueue> queues(shards);
  std::unordered_map<std::string_view, bool> listed;
  listed.reserve(list.files().size());
  std::size_t newly_denied = 0;
  for (const auto& path : list.files()) {
    if (stop_) return Error(Errc::cancelled, "stopped");
    if (tools::denied_path(std::filesystem::path(path), tools::PathAccess::read, deny_paths)) {
      // Indexed before it was denied: its tokens are in the postings, and only a rebuild takes them out.
      newly_denied += known.contains(path) ? 1 : 0;
      continue;
    }
    struct stat st {};
    if (::fstatat(root_fd.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    listed.emplace(path, true);
    const storage::IndexedFile now{path, mtime_ns(st), static_cast<std::int64_t>(st.st_size)};
    const auto it = known.find(path);
    if (it == known.end() || it->second.first->mtime_ns != now.mtime_ns || it->second.first->size != now.size) {
      // A file kept in another shard than its hash names (a different shard count) moves.
      if (it != known.end() && it->second.second != shard_of(path, shards)) {
        queues[it->second.second].removed.push_back(path);
      }
      to_index.push_back(now);
    }
  }
  std::size_t removed_total = 0;
  for (const auto& [path, where] : known) {
    if (!listed.contains(path)) {
      queues[where.second].removed.emplace_back(path);
      ++removed_total;
    }
  }
  const auto churn = static_cast<double>(garbage) +
                     static_cast<double>(removed_total + std::min<std::size_t>(to_index.size(), known.size()));
  if (live > 0 && (newly_denied > 0 || churn > options_.rebuild_garbage_share * static_cast<double>(live))) {
    // Too much garbage: start over with every listed file. Searches wait for the new index.
    {
      const std::lock_guard lock(mutex_);
      status_.ready = false;
    }
    for (auto& w : writers_) {
      if (auto r = w.clear(); !r) return r;
    }
    to_index.clear();
    for (auto& q : queues) q.removed.clear();
    removed_total = 0;
    for (const auto& path : list.files()) {
      if (!listed.contains(path)) continue;
      struct stat st {};
      if (::fstatat(root_fd.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      to_index.push_back(storage::IndexedFile{path, mtime_ns(st), static_cast<std::int64_t>(st.st_size)});
    }
  }
  {
    const std::lock_guard lock(mutex_);
    status_.indexed = 0;
    status_.to_index = to_index.size();
  }
  if (to_index.empty() && removed_total == 0) {
    for (auto& w : writers_) {
      auto complete = w.complete();
      if (!complete) return complete.error();
      if (!*complete) {
        if (auto r = w.set_complete(true); !r) return r;
      }
    }
    const std::lock_guard lock(mutex_);
    status_.ready = true;
    return support::ok();
  }

  // A first build or a rebuild loads in bulk: segments merged once at the end, not level by level.
  bool bulk = true;
  for (auto& w : writers_) {
    auto counts = w.counts();
    if (!counts) return counts.error();
    bulk = bulk && counts->files == 0 && counts->garbage == 0;
  }
  for (auto& w : writers_) {
    if (auto r = w.set_bulk(bulk); !r) return r;
  }

  // Tokenizing threads take batches of files by index and hand each document to its shard's queue; one
  // writer thread per shard commits every commit_bytes of tokens (a commit makes FTS5 write its pending
  // postings as one segment). Queues hold at most kQueuedDocs documents, so memory stays bounded.
  constexpr std::size_t kQueuedDocs = 256;
  const std::size_t batch = std::max<std::size_t>(options_.batch_files, 1);
  const std::size_t batches = (to_index.size() + batch - 1) / batch;
  std::mutex queue_mutex;
  std::condition_variable queue_changed;
  std::size_t next_batch = 0;
  std::size_t producing = std::max<std::size_t>(options_.threads, 1);
  bool failed = false;
  // stop_ is set without queue_mutex (by the destructor), so a waiting thread also looks again by itself.
  const auto wait = [&](std::unique_lock<std::mutex>& lock, auto&& ready) {
    while (!ready()) queue_changed.wait_for(lock, std::chrono::milliseconds(50));
  };
  const auto tokenize = [&] {
    TokenSet body;
    TokenSet defs;
    std::string buffer;
    std::vector<std::string_view> names;
    for (;;) {
      std::size_t b = 0;
      {
        const std::lock_guard lock(queue_mutex);
        if (stop_ || failed || next_batch >= batches) break;
        b = next_batch++;
      }
      const std::size_t end = std::min(to_index.size(), (b + 1) * batch);
      for (std::size_t i = b * batch; i < end; ++i) {
        auto doc = tokenize_file(root_fd.get(), to_index[i], options_.max_file_bytes, body, defs, buffer, names);
        ShardQueue& q = queues[shard_of(doc.file.path, shards)];
        std::unique_lock lock(queue_mutex);
        wait(lock, [&] { return stop_ || failed || q.docs.size() < kQueuedDocs; });
        if (stop_ || failed) break;
        q.docs.push_back(std::move(doc));
        lock.unlock();
        queue_changed.notify_all();
      }
    }
    {
      const std::lock_guard lock(queue_mutex);
      --producing;
    }
    queue_changed.notify_all();
  };
  std::vector<support::Result<void>> results(shards, support::ok());
  const auto write = [&](std::size_t s) {
    storage::ContentIndex& index = writers_[s];
    ShardQueue& q = queues[s];
    support::Result<void> result = support::ok();
    std::size_t pending_bytes = 0;
    std::optional<storage::ContentIndex::Batch> open_batch;
    const auto begin = [&]() -> support::Result<void> {
      auto b = index.begin();
      if (!b) return b.error();
      open_batch.emplace(std::move(*b));
      return support::ok();
    };
    result = begin();
    for (std::size_t i = 0; result && i < q.removed.size(); ++i) result = open_batch->remove(q.removed[i]);
    while (result) {
      storage::IndexDocument doc;
      {
        std::unique_lock lock(queue_mutex);
        wait(lock, [&] { return stop_ || !q.docs.empty() || producing == 0; });
        if (stop_) {
          result = Error(Errc::cancelled, "stopped");
          break;
        }
        if (q.docs.empty()) break;  // producers done, queue drained
        doc = std::move(q.docs.front());
        q.docs.pop_front();
      }
      queue_changed.notify_all();
      result = open_batch->add(doc);
      pending_bytes += doc.path_tokens.size() + doc.definitions.size() + doc.body.size();
      {
        const std::lock_guard lock(mutex_);
        ++status_.indexed;
      }
      if (result && pending_bytes >= options_.commit_bytes) {
        result = open_batch->commit();
        pending_bytes = 0;
        open_batch.reset();
        if (result) result = begin();
      }
    }
    if (result) result = open_batch->commit();
    open_batch.reset();
    if (!result) {
      const std::lock_guard lock(queue_mutex);
      failed = true;
    }
    queue_changed.notify_all();
    results[s] = std::move(result);
  };
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < std::max<std::size_t>(options_.threads, 1); ++i) threads.emplace_back(tokenize);
  for (std::size_t s = 0; s < shards; ++s) threads.emplace_back(write, s);
  for (auto& t : threads) t.join();
  for (auto& r : results) {
    if (!r) return r;
  }
  if (stop_) return Error(Errc::cancelled, "stopped");
  if (bulk) {
    // One thread per shard, as the writers were.
    std::vector<support::Result<void>> merged(shards, support::ok());
    std::vector<std::thread> mergers;
    for (std::size_t s = 0; s < shards; ++s) {
      mergers.emplace_back([&, s] {
        merged[s] = writers_[s].optimize();
        if (merged[s]) merged[s] = writers_[s].set_bulk(false);
      });
    }
    for (auto& t : mergers) t.join();
    for (auto& r : merged) {
      if (!r) return r;
    }
  }
  std::int64_t files = 0;
  for (auto& w : writers_) {
    if (auto r = w.set_complete(true); !r) return r;
    auto counts = w.counts();
    if (!counts) return counts.error();
    files += counts->files;
  }
  if (auto r = count_totals(); !r) return r;
  // The tokenizers' buffers were freed; hand the pages back rather than keep them for the next build.
  ::malloc_trim(0);
  const std::lock_guard lock(mutex_);
  status_.ready = true;
  status_.files = static_cast<std::size_t>(files);
  return support::ok();
}

support::Result<std::vector<storage::IndexMatch>> ContentIndexer::search(std::span<const std::string> tokens,
                                                                         std::size_t limit,
                                                                         const storage::FieldWeights& weights) {
  if (!status().ready) return Error(Errc::unavailable, "the content index is not built yet");
  const std::lock_guard lock(reader_mutex_);
  if (readers_.empty()) return Error(Errc::unavailable, "the content index is not open");
  std::vector<storage::ContentIndex::ReadScope> scopes;
  for (auto& reader : readers_) {
    auto scope = reader.read_scope();
    if (!scope) return scope.error();
    scopes.push_back(std::move(*scope));
  }
  // BM25's statistics over every shard, then each shard ranks its files with them.
  std::vector<storage::ContentIndex::QueryToken> query;
  for (const auto& token : tokens) query.push_back({token, {}});
  for (auto& reader : readers_) {
    for (auto& q : query) {
      auto f = reader.frequency(q.token);
      if (!f) return f.error();
      q.frequency.body += f->body;
      q.frequency.path += f->path;
      q.frequency.definitions += f->definitions;
    }
  }
  std::vector<storage::IndexMatch> out;
  for (auto& reader : readers_) {
    auto found = reader.search(query, limit, totals_, weights);
    if (!found) return found.error();
    for (auto& m : *found) out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const storage::IndexMatch& a, const storage::IndexMatch& b) { return a.score > b.score; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace agentd::core::context
