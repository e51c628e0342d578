#include "core/context/content_indexer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
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
constexpr std::size_t kQueuedBatches = 4;                        // tokenized batches waiting for the writer

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
  return fmt::format("{}/index/{}.db", cache_directory, tools::sha256_hex(root).substr(0, 24));
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
  if (writer_) return support::ok();
  auto writer = storage::ContentIndex::open(database_, root_);
  if (!writer) return writer.error();
  writer_.emplace(std::move(*writer));
  auto reader = storage::ContentIndex::open(database_, root_);
  if (!reader) return reader.error();
  auto complete = writer_->complete();
  if (!complete) return complete.error();
  auto counts = writer_->counts();
  if (!counts) return counts.error();
  {
    const std::lock_guard lock(reader_mutex_);
    reader_.emplace(std::move(*reader));
  }
  const std::lock_guard lock(mutex_);
  status_.ready = *complete;  // an index finished before a restart answers at once, then catches up
  status_.files = static_cast<std::size_t>(counts->files);
  return support::ok();
}

support::Result<void> ContentIndexer::update_to(const FileList& list) {
  if (auto r = ensure_open(); !r) return r;
  const support::UniqueFd root_fd(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) return Error(Errc::not_found, fmt::format("cannot open {}", root_));

  // What is stored against what is on disk: stat everything, (re)index what differs.
  auto stored = writer_->files();
  if (!stored) return stored.error();
  std::unordered_map<std::string_view, const storage::IndexedFile*> known;
  known.reserve(stored->size());
  for (const auto& f : *stored) known.emplace(f.path, &f);
  std::vector<storage::IndexedFile> to_index;
  std::vector<std::string> removed;
  std::unordered_map<std::string_view, bool> listed;
  listed.reserve(list.files().size());
  for (const auto& path : list.files()) {
    if (stop_) return Error(Errc::cancelled, "stopped");
    if (tools::denied_path(std::filesystem::path(path), tools::PathAccess::read, options_.deny_paths)) continue;
    struct stat st {};
    if (::fstatat(root_fd.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    listed.emplace(path, true);
    const storage::IndexedFile now{path, mtime_ns(st), static_cast<std::int64_t>(st.st_size)};
    const auto it = known.find(path);
    if (it == known.end() || it->second->mtime_ns != now.mtime_ns || it->second->size != now.size) {
      to_index.push_back(now);
    }
  }
  for (const auto& f : *stored) {
    if (!listed.contains(f.path)) removed.push_back(f.path);
  }
  auto counts = writer_->counts();
  if (!counts) return counts.error();
  const auto live = static_cast<double>(std::max<std::int64_t>(counts->files, 1));
  const auto churn = static_cast<double>(counts->garbage) +
                     static_cast<double>(removed.size() + std::min(to_index.size(), stored->size()));
  if (counts->files > 0 && churn > options_.rebuild_garbage_share * live) {
    // Too much garbage: start over with every listed file. Searches wait for the new index.
    {
      const std::lock_guard lock(mutex_);
      status_.ready = false;
    }
    if (auto r = writer_->clear(); !r) return r;
    to_index.clear();
    removed.clear();
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
  if (to_index.empty() && removed.empty()) {
    auto complete = writer_->complete();
    if (!complete) return complete.error();
    if (!*complete) {
      if (auto r = writer_->set_complete(true); !r) return r;
    }
    const std::lock_guard lock(mutex_);
    status_.ready = true;
    return support::ok();
  }

  // Tokenizing threads take batches by index; this thread writes them in order of completion. At most
  // kQueuedBatches wait, so memory stays bounded on a kernel-sized tree.
  const std::size_t batch = std::max<std::size_t>(options_.batch_files, 1);
  const std::size_t batches = (to_index.size() + batch - 1) / batch;
  std::mutex queue_mutex;
  std::condition_variable queue_changed;
  std::deque<std::vector<storage::IndexDocument>> queue;
  std::size_t next_batch = 0;
  std::size_t finished_workers = 0;
  const std::size_t workers = std::max<std::size_t>(options_.threads, 1);
  const auto work = [&] {
    TokenSet body;
    TokenSet defs;
    std::string buffer;
    std::vector<std::string_view> names;
    for (;;) {
      std::size_t b = 0;
      {
        std::unique_lock lock(queue_mutex);
        queue_changed.wait(lock, [&] { return stop_ || queue.size() < kQueuedBatches; });
        if (stop_ || next_batch >= batches) break;
        b = next_batch++;
      }
      std::vector<storage::IndexDocument> docs;
      const std::size_t end = std::min(to_index.size(), (b + 1) * batch);
      docs.reserve(end - b * batch);
      for (std::size_t i = b * batch; i < end && !stop_; ++i) {
        docs.push_back(tokenize_file(root_fd.get(), to_index[i], options_.max_file_bytes, body, defs, buffer, names));
      }
      {
        const std::lock_guard lock(queue_mutex);
        queue.push_back(std::move(docs));
      }
      queue_changed.notify_all();
    }
    {
      const std::lock_guard lock(queue_mutex);
      ++finished_workers;
    }
    queue_changed.notify_all();
  };
  std::vector<std::thread> threads;
  threads.reserve(workers);
  for (std::size_t i = 0; i < workers; ++i) threads.emplace_back(work);
  // One transaction per commit_bytes of tokens: FTS5 holds a transaction's postings in memory and writes
  // them as one segment at the commit, so fewer, bigger commits mean less merging.
  support::Result<void> result = support::ok();
  std::optional<storage::ContentIndex::Batch> open_batch;
  std::size_t batch_bytes = 0;
  const auto begin = [&]() -> support::Result<void> {
    auto b = writer_->begin();
    if (!b) return b.error();
    open_batch.emplace(std::move(*b));
    batch_bytes = 0;
    return support::ok();
  };
  result = begin();
  for (std::size_t i = 0; result && i < removed.size(); ++i) result = open_batch->remove(removed[i]);
  for (;;) {
    std::vector<storage::IndexDocument> docs;
    {
      std::unique_lock lock(queue_mutex);
      queue_changed.wait(lock, [&] { return !queue.empty() || finished_workers == workers; });
      if (queue.empty()) break;
      docs = std::move(queue.front());
      queue.pop_front();
    }
    queue_changed.notify_all();
    if (!result) continue;  // drain so the workers can finish
    if (stop_) {
      result = Error(Errc::cancelled, "stopped");
      continue;
    }
    for (const auto& doc : docs) {
      if (result = open_batch->add(doc); !result) break;
      batch_bytes += doc.path_tokens.size() + doc.definitions.size() + doc.body.size();
    }
    if (result && batch_bytes >= options_.commit_bytes) {
      result = open_batch->commit();
      open_batch.reset();
      if (result) result = begin();
    }
    const std::lock_guard lock(mutex_);
    status_.indexed += docs.size();
  }
  {
    const std::lock_guard lock(queue_mutex);
    stop_ = stop_ || !result;
  }
  queue_changed.notify_all();
  for (auto& t : threads) t.join();
  if (result && !stop_) result = open_batch->commit();
  open_batch.reset();
  if (!result) return result;
  if (stop_) return Error(Errc::cancelled, "stopped");
  if (auto r = writer_->set_complete(true); !r) return r;
  auto after = writer_->counts();
  if (!after) return after.error();
  const std::lock_guard lock(mutex_);
  status_.ready = true;
  status_.files = static_cast<std::size_t>(after->files);
  return support::ok();
}

support::Result<std::vector<storage::IndexMatch>> ContentIndexer::search(std::span<const std::string> tokens,
                                                                         std::size_t limit,
                                                                         const storage::FieldWeights& weights) {
  if (!status().ready) return Error(Errc::unavailable, "the content index is not built yet");
  const std::lock_guard lock(reader_mutex_);
  if (!reader_) return Error(Errc::unavailable, "the content index is not open");
  return reader_->search(tokens, limit, weights);
}

support::Result<std::int64_t> ContentIndexer::document_frequency(std::string_view token) {
  if (!status().ready) return Error(Errc::unavailable, "the content index is not built yet");
  const std::lock_guard lock(reader_mutex_);
  if (!reader_) return Error(Errc::unavailable, "the content index is not open");
  return reader_->document_frequency(token);
}

}  // namespace agentd::core::context
