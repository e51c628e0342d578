#include "storage/db_worker.h"

#include <algorithm>
#include <cassert>
#include <exception>
#include <filesystem>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <sqlite3.h>

#include "core/support/clock.h"
#include "core/support/log.h"
#include "storage/database.h"

namespace agentd::storage {

using support::Errc;

namespace {

template <class F>
Result<void> guarded(F&& f, std::string_view what) {
  try {
    return std::forward<F>(f)();
  } catch (const std::exception& e) {
    return Error(Errc::internal, fmt::format("{} threw: {}", what, e.what()));
  } catch (...) {
    return Error(Errc::internal, fmt::format("{} threw a non-standard exception", what));
  }
}

}  // namespace

DbWorker::DbWorker(std::unique_ptr<Connection> connection, Options options)
    : db_(std::move(connection)),
      path_(db_ ? db_->path() : std::string()),
      options_(options),
      thread_([this] { run(); }) {
  assert(db_ != nullptr);
  assert(options_.max_batch > 0);
  // Kept apart from thread_, which join() clears while other threads may still call flush().
  worker_id_ = thread_.get_id();
}

DbWorker::~DbWorker() {
  stop();
  thread_.join();
}

void DbWorker::stop() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
  work_ready_.notify_one();
}

void DbWorker::write(WriteJob job, Done done, Durability durability, bool lazy) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      // A `process` write nobody waits for does not wake the worker: it rides along with the next write
      // that is waited for (or a read, flush or stop), which saves a thread wake-up and usually a commit
      // per job. Its durability promise holds from that commit on.
      const bool wake = durability == Durability::disk || (done && !lazy);
      queue_.push_back(Item{next_ticket_++, false, durability, std::move(job), std::move(done), {}});
      if (wake) work_ready_.notify_one();
      return;
    }
  }
  if (done) done(Error(Errc::unavailable, "the database worker is shutting down; the write was dropped"));
}

bool DbWorker::read(ReadJob job) {
  std::lock_guard lock(mutex_);
  if (stopping_) return false;
  queue_.push_back(Item{next_ticket_++, true, Durability::disk, {}, {}, std::move(job)});
  work_ready_.notify_one();
  return true;
}

void DbWorker::flush() {
  if (std::this_thread::get_id() == worker_id_) {
    assert(false && "DbWorker::flush() on the worker thread waits for itself");
    support::log::error("DbWorker::flush() called on the worker thread; not waiting");
    return;
  }
  std::unique_lock lock(mutex_);
  const std::uint64_t target = next_ticket_ - 1;
  work_ready_.notify_one();  // lazy writes may be queued with nobody having woken the worker
  progressed_.wait(lock, [&] { return completed_ >= target; });
}

DbWorker::Stats DbWorker::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

DbWorker::Health DbWorker::health() const {
  std::lock_guard lock(mutex_);
  return health_;
}

void DbWorker::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    work_ready_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, and everything queued has run

    // A read runs alone; otherwise take the writes at the front, up to the first read (which must see
    // them committed) or the batch limit.
    std::vector<Item> batch;
    const bool is_read = queue_.front().is_read;
    do {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    } while (!is_read && !queue_.empty() && !queue_.front().is_read && batch.size() < options_.max_batch);

    lock.unlock();
    Stats delta;
    Health batch_health;
    if (is_read) {
      run_read(batch.front(), delta);
    } else {
      run_writes(batch, delta, batch_health);
    }
    // The jobs and callbacks go before the batch counts as done: they may hold executors, and a
    // caller that flush()es and then destroys its io_context must find none left here.
    const std::uint64_t last_ticket = batch.back().ticket;
    batch.clear();
    lock.lock();

    completed_ = last_ticket;
    stats_.transactions += delta.transactions;
    stats_.synced += delta.synced;
    stats_.writes += delta.writes;
    stats_.failed_writes += delta.failed_writes;
    stats_.reads += delta.reads;
    stats_.largest_batch = std::max(stats_.largest_batch, delta.largest_batch);
    if (!is_read) {
      health_.failing = batch_health.failing;
      health_.failed_writes += batch_health.failed_writes;
      if (batch_health.last_error) {
        health_.last_error = std::move(batch_health.last_error);
        health_.last_error_at_ms = batch_health.last_error_at_ms;
      }
    }
    progressed_.notify_all();
  }
}

void DbWorker::run_read(Item& item, Stats& stats) {
  auto r = guarded(
      [&]() -> Result<void> {
        item.read(*db_);
        return support::ok();
      },
      "a database read job");
  if (!r) support::log::error("{}", r.error().message());
  // A read job that left a transaction open would turn the next batch's COMMIT into a mere RELEASE.
  if (db_->in_transaction()) {
    support::log::error("a database read job left a transaction open; rolling it back");
    if (auto rolled_back = db_->exec("ROLLBACK"); !rolled_back)
      support::log::error("{}", rolled_back.error().message());
  }
  ++stats.reads;
}

Result<void> DbWorker::run_in_savepoint(const WriteJob& job) {
  {
    auto savepoint = db_->cached("SAVEPOINT agentd_job");
    if (!savepoint) return std::move(savepoint).error();
    AGENTD_TRY_VOID((*savepoint)->run());
  }
  Result<void> result = guarded([&] { return job(*db_); }, "a database write job");
  // The transaction is gone (an I/O error, or the job ended it): run_writes deals with that.
  if (!db_->in_transaction()) return result;
  if (result) {
    auto release = db_->cached("RELEASE agentd_job");
    auto released = release ? (*release)->run() : Result<void>(std::move(release).error());
    if (released) return result;
    // Not released: undo the job below rather than let its writes ride along in the COMMIT.
    result = std::move(released).error();
  }
  // ROLLBACK TO leaves the savepoint on the stack; RELEASE pops it without committing anything.
  if (auto r = db_->exec("ROLLBACK TO agentd_job; RELEASE agentd_job"); !r) {
    support::log::error("rolling back a failed write job: {}", r.error().message());
  }
  return result;
}

Result<void> DbWorker::set_synchronous(bool full) {
  if (synchronous_full_ == full) return support::ok();
  if (auto r = db_->exec(full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL"); !r) return r;
  synchronous_full_ = full;
  return support::ok();
}

// A user's `rm`, a cleanup script: the file is gone, but SQLite goes on writing into the unlinked inode,
// and everything from then on would vanish with this process. SQLITE_FCNTL_HAS_MOVED (one stat of the
// path) notices; the database is copied back to its path, and the worker goes on there.
Result<void> DbWorker::keep_file_in_place() {
  if (reopen_) {
    auto reopened = open_database(DatabaseOptions{path_});
    if (!reopened) return std::move(reopened).error().context("reopening the restored database");
    db_ = std::make_unique<Connection>(std::move(*reopened));
    synchronous_full_.reset();
    reopen_ = false;
    support::log::info("the database is open again at {}", path_);
    return support::ok();
  }
  int moved = 0;
  if (sqlite3_file_control(db_->handle(), "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK || moved == 0) {
    return support::ok();
  }
  std::error_code ec;
  if (std::filesystem::symlink_status(path_, ec).type() != std::filesystem::file_type::not_found) {
    return Error(Errc::storage,
                 fmt::format("the database file {} was replaced while agentd had it open; agentd does not write "
                             "over the new file, so nothing is stored until it restarts",
                             path_));
  }
  support::log::error("the database file {} was removed while agentd had it open; writing it back", path_);
  if (auto copied = copy_database_to_new_file(*db_, path_); !copied) {
    return std::move(copied).error().context(
        fmt::format("the database file {} was removed, and putting it back", path_));
  }
  // The old connection goes first: closing it removes its -wal and -shm files, which are named after
  // the path the restored file now has.
  db_.reset();
  auto reopened = open_database(DatabaseOptions{path_});
  if (!reopened) {
    // A stand-in so reads fail instead of waiting forever; writes stay refused until a reopen works.
    auto stand_in = Connection::open(":memory:");
    db_ = std::make_unique<Connection>(std::move(*stand_in));
    reopen_ = true;
    return std::move(reopened).error().context("reopening the restored database");
  }
  db_ = std::make_unique<Connection>(std::move(*reopened));
  synchronous_full_.reset();
  support::log::info("the database is back at {}, with everything it held", path_);
  return support::ok();
}

void DbWorker::run_writes(std::vector<Item>& batch, Stats& stats, Health& health) {
  std::vector<Result<void>> results(batch.size());
  std::optional<Transaction> tx;
  std::size_t tx_first = 0;  // the first job of the open transaction

  const bool sync =
      std::any_of(batch.begin(), batch.end(), [](const Item& item) { return item.durability == Durability::disk; });
  bool runnable = true;
  if (auto r = keep_file_in_place(); !r) {
    for (auto& result : results) result = r.error();
    runnable = false;
  } else if (auto r = set_synchronous(sync); !r) {
    // Not knowing whether COMMIT will fsync, no job may hear "ok" for a promise that might not hold.
    for (auto& result : results) result = Error(r.error()).context("setting the commit's durability");
    runnable = false;
  }

  for (std::size_t i = 0; runnable && i < batch.size(); ++i) {
    if (!tx) {
      auto begun = Transaction::begin(*db_);
      if (!begun) {
        // Most likely another process holding the write lock past busy_timeout: no job can run.
        for (std::size_t j = i; j < batch.size(); ++j) results[j] = Error(begun.error());
        break;
      }
      tx.emplace(std::move(*begun));
      tx_first = i;
    }
    results[i] = run_in_savepoint(batch[i].write);
    if (!db_->in_transaction()) {
      // SQLite rolled the transaction back on its own (I/O error, disk full), or the job ended it. The
      // jobs before this one in it are not durable, so they must not hear "ok"; the jobs after it get
      // a fresh transaction.
      const Error lost(Errc::storage, fmt::format("the batch transaction ended while running a later job: {}",
                                                  results[i] ? "the job committed or rolled back by itself"
                                                             : results[i].error().message()));
      for (std::size_t j = tx_first; j < i; ++j) {
        if (results[j]) results[j] = lost;
      }
      if (results[i]) results[i] = Error(Errc::internal, "a write job ended the batch transaction itself");
      tx.reset();
    }
  }
  if (tx) {
    if (auto committed = tx->commit(); !committed) {
      for (std::size_t j = tx_first; j < batch.size(); ++j) {
        if (results[j]) results[j] = Error(committed.error()).context("committing the batch");
      }
    } else {
      ++stats.transactions;
      if (sync) ++stats.synced;
    }
    tx.reset();  // rolls back if the commit failed
  }

  stats.writes += batch.size();
  stats.largest_batch = std::max(stats.largest_batch, batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (!results[i]) {
      ++stats.failed_writes;
      ++health.failed_writes;
      health.failing = true;
      health.last_error = results[i].error();
      health.last_error_at_ms = support::unix_millis_now();
      // Nobody hears about a write without `done`: its loss is at least logged, with the cause.
      if (!batch[i].done) support::log::error("a database write was lost: {}", results[i].error().message());
    }
    if (!batch[i].done) continue;
    auto r = guarded(
        [&]() -> Result<void> {
          batch[i].done(std::move(results[i]));
          return support::ok();
        },
        "a database write's done callback");
    if (!r) support::log::error("{}", r.error().message());
  }
}

}  // namespace agentd::storage
