// DbWorker: group commit, per-job savepoints, durability before `done`, FIFO reads, flush, shutdown,
// and write() from several threads. Waits are on events with bounded timeouts, never sleeps.
#include "storage/db_worker.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "storage/database.h"
#include "storage/session_store.h"
#include "test/support/temp_dir.h"

namespace agentd::storage {
namespace {

using support::Errc;
using testing::TempDir;

constexpr auto kTimeout = std::chrono::seconds(30);

// A one-shot event that a thread can wait for, with a timeout so a broken test fails instead of hanging.
class Gate {
 public:
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, kTimeout, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

Result<void> insert(Connection& db, std::int64_t k, std::string_view v = "x") {
  auto stmt = db.cached("INSERT INTO t (k, v) VALUES (?, ?)");
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, k).bind(2, v);
  return (*stmt)->run();
}

class DbWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = open_database({path()});
    ASSERT_TRUE(opened) << opened.error().message();
    ASSERT_TRUE(opened->exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)"));
    db_ = std::make_unique<Connection>(std::move(*opened));
    auto reader = open_database({path()});
    ASSERT_TRUE(reader) << reader.error().message();
    reader_.emplace(std::move(*reader));
  }

  void start(DbWorker::Options options = {}) { worker_ = std::make_unique<DbWorker>(std::move(db_), options); }

  // Queues a job that holds the worker until `release_` opens, and returns once the worker is in it:
  // everything queued after this lands in the next batch.
  void block_worker() {
    worker_->write([this](Connection&) -> Result<void> {
      started_.open();
      if (!release_.wait()) return Error(Errc::timeout, "the test never released the worker");
      return support::ok();
    });
    ASSERT_TRUE(started_.wait());
  }

  std::int64_t rows() {
    auto n = reader_->query_int("SELECT count(*) FROM t");
    EXPECT_TRUE(n) << n.error().message();
    return n ? *n : -1;
  }

  std::string path() const { return dir_.file("w.db"); }

  TempDir dir_;
  std::unique_ptr<Connection> db_;
  std::optional<Connection> reader_;  // a second connection: sees only what was committed
  Gate started_;
  Gate release_;
  std::unique_ptr<DbWorker> worker_;
};

TEST_F(DbWorkerTest, WritesQueuedWhileBusyCommitInOneTransaction) {
  start();
  block_worker();
  int oks = 0;  // done runs on the worker thread; read after flush(), which orders it
  for (int i = 1; i <= 100; ++i) {
    worker_->write([i](Connection& db) { return insert(db, i); }, [&oks](Result<void> r) { oks += r ? 1 : 0; });
  }
  release_.open();
  worker_->flush();
  EXPECT_EQ(oks, 100);
  EXPECT_EQ(rows(), 100);
  const auto stats = worker_->stats();
  EXPECT_EQ(stats.transactions, 2u);  // the blocker's, then all 100 together
  EXPECT_EQ(stats.largest_batch, 100u);
  EXPECT_EQ(stats.writes, 101u);
  EXPECT_EQ(stats.failed_writes, 0u);
}

// A batch of `process` writes commits with synchronous=NORMAL (into the WAL, no fsync); one `disk` write
// makes its whole batch commit with synchronous=FULL, whose fsync also covers every earlier commit.
TEST_F(DbWorkerTest, DurabilityDecidesWhetherTheBatchCommitsWithAnFsync) {
  start();
  auto synchronous_seen = [](std::int64_t* seen) {
    return [seen](Connection& db) -> Result<void> {
      auto mode = db.query_int("PRAGMA synchronous");
      if (!mode) return std::move(mode).error();
      *seen = *mode;
      return support::ok();
    };
  };
  std::int64_t in_process_batch = -1;
  std::int64_t in_disk_batch = -1;
  std::int64_t after_disk_batch = -1;

  block_worker();  // a `disk` write (the default): synced
  for (int i = 1; i <= 10; ++i) worker_->write([i](Connection& db) { return insert(db, i); }, {}, Durability::process);
  worker_->write(synchronous_seen(&in_process_batch), {}, Durability::process);
  release_.open();
  worker_->flush();
  EXPECT_EQ(in_process_batch, 1);  // NORMAL
  EXPECT_EQ(rows(), 10);           // committed: another connection sees it
  auto stats = worker_->stats();
  EXPECT_EQ(stats.transactions, 2u);
  EXPECT_EQ(stats.synced, 1u);

  worker_->write([](Connection& db) { return insert(db, 11); }, {}, Durability::process);
  worker_->write(synchronous_seen(&in_disk_batch), {}, Durability::disk);
  worker_->flush();
  worker_->write(synchronous_seen(&after_disk_batch), {}, Durability::process);
  worker_->flush();
  EXPECT_EQ(in_disk_batch, 2);     // FULL
  EXPECT_EQ(after_disk_batch, 1);  // and back to NORMAL for the next batch
  stats = worker_->stats();
  EXPECT_GE(stats.synced, 2u);
  EXPECT_EQ(rows(), 11);
}

TEST_F(DbWorkerTest, ABatchIsBounded) {
  start(DbWorker::Options{16});
  block_worker();
  for (int i = 1; i <= 100; ++i) worker_->write([i](Connection& db) { return insert(db, i); });
  release_.open();
  worker_->flush();
  EXPECT_EQ(rows(), 100);
  const auto stats = worker_->stats();
  EXPECT_EQ(stats.largest_batch, 16u);
  EXPECT_EQ(stats.transactions, 1u + 7u);  // 100 = 6 * 16 + 4
}

TEST_F(DbWorkerTest, AFailingJobRollsBackOnlyItself) {
  start();
  block_worker();
  std::vector<std::optional<Result<void>>> results(5);
  auto record = [&results](std::size_t i) { return [&results, i](Result<void> r) { results[i] = std::move(r); }; };
  worker_->write([](Connection& db) { return insert(db, 1); }, record(0));
  worker_->write(
      [](Connection& db) -> Result<void> {
        AGENTD_TRY_VOID(insert(db, 2));
        return Error(Errc::invalid_argument, "changed my mind");
      },
      record(1));
  worker_->write(
      [](Connection& db) -> Result<void> {
        AGENTD_TRY_VOID(insert(db, 3));
        throw std::runtime_error("boom");
      },
      record(2));
  worker_->write([](Connection& db) { return insert(db, 1); }, record(3));  // duplicate key
  worker_->write([](Connection& db) { return insert(db, 5); }, record(4));
  release_.open();
  worker_->flush();

  for (const auto& r : results) ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(*results[0]);
  EXPECT_EQ(results[1]->error().code(), Errc::invalid_argument);
  EXPECT_EQ(results[2]->error().code(), Errc::internal);
  EXPECT_NE(results[2]->error().message().find("boom"), std::string::npos) << results[2]->error().message();
  EXPECT_EQ(results[3]->error().code(), Errc::conflict);
  EXPECT_TRUE(*results[4]);
  EXPECT_EQ(rows(), 2);
  EXPECT_EQ(*reader_->query_int("SELECT sum(k) FROM t"), 1 + 5);
  EXPECT_EQ(worker_->stats().transactions, 2u);
  EXPECT_EQ(worker_->stats().failed_writes, 3u);
}

TEST_F(DbWorkerTest, ACommitFailureReachesEveryJobOfTheBatch) {
  // A deferred foreign key is checked only at COMMIT: the one way to make a commit fail on demand.
  ASSERT_TRUE(
      db_->exec("CREATE TABLE parent (id INTEGER PRIMARY KEY); "
                "CREATE TABLE child (pid INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)"));
  start();
  block_worker();
  std::vector<std::optional<Result<void>>> results(3);
  auto record = [&results](std::size_t i) { return [&results, i](Result<void> r) { results[i] = std::move(r); }; };
  worker_->write([](Connection& db) { return insert(db, 1); }, record(0));
  worker_->write([](Connection& db) { return db.exec("INSERT INTO child VALUES (99)"); }, record(1));
  worker_->write([](Connection& db) { return insert(db, 3); }, record(2));
  release_.open();
  worker_->flush();
  for (const auto& r : results) {
    ASSERT_TRUE(r.has_value());
    ASSERT_FALSE(*r);
    EXPECT_EQ(r->error().code(), Errc::conflict);
    EXPECT_NE(r->error().message().find("committing the batch"), std::string::npos) << r->error().message();
  }
  EXPECT_EQ(rows(), 0);

  // The worker goes on, with no transaction left open behind it.
  std::optional<Result<void>> after;
  worker_->write([](Connection& db) { return insert(db, 7); }, [&after](Result<void> r) { after = std::move(r); });
  worker_->flush();
  ASSERT_TRUE(after && *after);
  EXPECT_EQ(rows(), 1);
}

// health() tells a status page whether writes land: failing while the latest batch had a write fail,
// with the count and the cause, and back to healthy once a batch commits; the count stays.
TEST_F(DbWorkerTest, HealthSaysWhetherWritesAreLanding) {
  // A full database, the way a full disk looks to SQLite: the page cap makes big inserts fail SQLITE_FULL.
  ASSERT_TRUE(db_->exec("PRAGMA max_page_count = 64"));
  start();
  EXPECT_FALSE(worker_->health().failing);
  const std::string big(64 * 4096, 'x');
  std::optional<Result<void>> full;
  worker_->write([&big](Connection& db) { return insert(db, 1, big); },
                 [&full](Result<void> r) { full = std::move(r); });
  worker_->write([&big](Connection& db) { return insert(db, 2, big); });  // no done: lost, and logged
  worker_->flush();
  ASSERT_TRUE(full.has_value());
  ASSERT_FALSE(*full);
  auto health = worker_->health();
  EXPECT_TRUE(health.failing);
  EXPECT_EQ(health.failed_writes, 2u);
  ASSERT_TRUE(health.last_error.has_value());
  EXPECT_NE(health.last_error->message().find("full"), std::string::npos) << health.last_error->message();
  EXPECT_GT(health.last_error_at_ms, 0);

  worker_->write([](Connection& db) { return insert(db, 3); });
  worker_->flush();
  health = worker_->health();
  EXPECT_FALSE(health.failing);
  EXPECT_EQ(health.failed_writes, 2u);
  EXPECT_TRUE(health.last_error.has_value());  // the last cause stays for the status page
  EXPECT_EQ(rows(), 1);
}

// A lazy `process` write with a `done` rides along with the next write that wakes the worker; its
// `done` runs after that commit, with its own result.
TEST_F(DbWorkerTest, ALazyWriteCommitsWithTheNextWakingWrite) {
  start();
  block_worker();
  std::optional<Result<void>> lazy;
  worker_->write([](Connection& db) { return insert(db, 1); }, [&lazy](Result<void> r) { lazy = std::move(r); },
                 Durability::process, /*lazy=*/true);
  worker_->write([](Connection& db) { return insert(db, 2); });
  release_.open();
  worker_->flush();
  ASSERT_TRUE(lazy.has_value());
  EXPECT_TRUE(*lazy);
  EXPECT_EQ(rows(), 2);
  EXPECT_EQ(worker_->stats().transactions, 2u);  // the blocker's, then both together
}

// A database file removed under the running worker (a user's rm) is put back at its path with
// everything it held, before the next write lands; writes go on there, and survive a restart.
TEST_F(DbWorkerTest, ADatabaseFileRemovedUnderTheWorkerIsPutBack) {
  start();
  for (int i = 1; i <= 50; ++i) worker_->write([i](Connection& db) { return insert(db, i); }, {}, Durability::process);
  worker_->flush();
  reader_.reset();
  ASSERT_EQ(::unlink(path().c_str()), 0);

  std::optional<Result<void>> after;
  worker_->write([](Connection& db) { return insert(db, 51); }, [&after](Result<void> r) { after = std::move(r); });
  worker_->flush();
  ASSERT_TRUE(after.has_value());
  EXPECT_TRUE(*after) << after->error().message();
  EXPECT_FALSE(worker_->health().failing);
  worker_.reset();  // as at exit

  auto reopened = open_database({path()});
  ASSERT_TRUE(reopened) << reopened.error().message();
  EXPECT_EQ(*reopened->query_int("SELECT count(*) FROM t"), 51);
  struct stat st {};
  ASSERT_EQ(::stat(path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
}

// When another file now sits at the path, agentd does not write over it, and does not pretend to
// store anything either: writes fail with the reason, and the new file is left as it was.
TEST_F(DbWorkerTest, ADatabaseFileReplacedUnderTheWorkerIsLeftAloneAndWritesFail) {
  start();
  worker_->write([](Connection& db) { return insert(db, 1); });
  worker_->flush();
  reader_.reset();
  ASSERT_EQ(::unlink(path().c_str()), 0);
  { std::ofstream(path()) << "someone else's file"; }

  std::optional<Result<void>> after;
  worker_->write([](Connection& db) { return insert(db, 2); }, [&after](Result<void> r) { after = std::move(r); });
  worker_->flush();
  ASSERT_TRUE(after.has_value());
  ASSERT_FALSE(*after);
  EXPECT_NE(after->error().message().find("was replaced"), std::string::npos) << after->error().message();
  EXPECT_TRUE(worker_->health().failing);
  std::ifstream in(path());
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "someone else's file");
}

TEST_F(DbWorkerTest, AJobThatEndsTheTransactionDoesNotLeaveItsBatchClaimingSuccess) {
  start();
  block_worker();
  std::vector<std::optional<Result<void>>> results(3);
  auto record = [&results](std::size_t i) { return [&results, i](Result<void> r) { results[i] = std::move(r); }; };
  worker_->write([](Connection& db) { return insert(db, 1); }, record(0));
  worker_->write([](Connection& db) { return db.exec("ROLLBACK"); }, record(1));
  worker_->write([](Connection& db) { return insert(db, 3); }, record(2));
  release_.open();
  worker_->flush();
  EXPECT_EQ(results[0]->error().code(), Errc::storage);
  EXPECT_EQ(results[1]->error().code(), Errc::internal);
  EXPECT_TRUE(*results[2]);  // ran in a fresh transaction
  EXPECT_EQ(*reader_->query_int("SELECT group_concat(k) FROM t"), 3);
}

TEST_F(DbWorkerTest, DoneRunsOnlyOnceTheWriteIsCommitted) {
  start();
  block_worker();
  std::vector<std::int64_t> seen_in_job;
  std::vector<std::int64_t> seen_in_done;
  // reader_ is used on the worker thread only until flush() returns.
  for (int i = 1; i <= 5; ++i) {
    worker_->write(
        [&, i](Connection& db) -> Result<void> {
          AGENTD_TRY_VOID(insert(db, i));
          seen_in_job.push_back(*reader_->query_int(fmt::format("SELECT count(*) FROM t WHERE k = {}", i)));
          return support::ok();
        },
        [&, i](Result<void> r) {
          EXPECT_TRUE(r);
          seen_in_done.push_back(*reader_->query_int(fmt::format("SELECT count(*) FROM t WHERE k = {}", i)));
        });
  }
  release_.open();
  worker_->flush();
  EXPECT_EQ(seen_in_job, std::vector<std::int64_t>(5, 0));   // written, not yet committed
  EXPECT_EQ(seen_in_done, std::vector<std::int64_t>(5, 1));  // committed: another connection sees it
}

TEST_F(DbWorkerTest, ReadsRunInOrderAndSeeEarlierWrites) {
  start();
  std::vector<std::string> log;  // touched on the worker thread only, read after flush()
  for (int i = 1; i <= 3; ++i) {
    worker_->write([&log, i](Connection& db) {
      log.push_back(fmt::format("w{}", i));
      return insert(db, i);
    });
    ASSERT_TRUE(worker_->read([&log, i](Connection& db) {
      log.push_back(fmt::format("r{}={}", i, *db.query_int("SELECT count(*) FROM t")));
    }));
  }
  worker_->flush();
  EXPECT_EQ(log, (std::vector<std::string>{"w1", "r1=1", "w2", "r2=2", "w3", "r3=3"}));
  EXPECT_EQ(worker_->stats().reads, 3u);
}

TEST_F(DbWorkerTest, FlushWaitsForEverythingQueuedBeforeIt) {
  start();
  for (int i = 1; i <= 200; ++i) worker_->write([i](Connection& db) { return insert(db, i); });
  worker_->flush();
  EXPECT_EQ(rows(), 200);
  worker_->flush();  // nothing queued: returns at once
}

TEST_F(DbWorkerTest, ExceptionsInReadsAndCallbacksDoNotStopTheWorker) {
  start();
  ASSERT_TRUE(worker_->read([](Connection&) { throw std::runtime_error("read failed"); }));
  worker_->write([](Connection& db) { return insert(db, 1); }, [](Result<void>) { throw std::logic_error("bad"); });
  // A read job that forgets to end its transaction must not swallow the next batch's COMMIT.
  ASSERT_TRUE(worker_->read([](Connection& db) { ASSERT_TRUE(db.exec("BEGIN")); }));
  std::optional<Result<void>> empty;
  worker_->write({}, [&empty](Result<void> r) { empty = std::move(r); });
  std::optional<Result<void>> last;
  worker_->write([](Connection& db) { return insert(db, 2); }, [&last](Result<void> r) { last = std::move(r); });
  worker_->flush();
  ASSERT_TRUE(empty && !*empty);
  EXPECT_EQ(empty->error().code(), Errc::internal);
  ASSERT_TRUE(last && *last);
  EXPECT_EQ(rows(), 2);
}

TEST_F(DbWorkerTest, StoresNestTheirTransactionsInsideAJob) {
  ASSERT_TRUE(db_->exec("INSERT INTO sessions (id, cwd, created_at, updated_at) VALUES ('s1', '/w', 1, 1)"));
  start();
  std::optional<Result<void>> ok_result;
  std::optional<Result<void>> failed;
  worker_->write(
      [](Connection& db) -> Result<void> {
        SessionStore sessions(db);
        AGENTD_TRY_VOID(sessions.append_message("s1", "user", R"({"text":"hi"})"));
        // Fails inside its own nested transaction; the job goes on and its first write stays.
        auto bad = sessions.append_message("s1", "user", "{not json");
        if (bad) return Error(Errc::internal, "bad JSON was accepted");
        return support::ok();
      },
      [&ok_result](Result<void> r) { ok_result = std::move(r); });
  worker_->write(
      [](Connection& db) -> Result<void> {
        auto appended = SessionStore(db).append_message("nope", "user", "{}");
        if (appended) return Error(Errc::internal, "appended to a missing session");
        return std::move(appended).error();
      },
      [&failed](Result<void> r) { failed = std::move(r); });
  worker_->flush();
  ASSERT_TRUE(ok_result);
  EXPECT_TRUE(*ok_result) << ok_result->error().message();
  ASSERT_TRUE(failed && !*failed);
  EXPECT_EQ(failed->error().code(), Errc::not_found);
  EXPECT_EQ(*reader_->query_int("SELECT count(*) FROM messages"), 1);
  EXPECT_EQ(*reader_->query_int("SELECT updated_at > 1 FROM sessions"), 1);
}

TEST_F(DbWorkerTest, TheDestructorDrainsTheQueue) {
  start();
  block_worker();
  std::atomic<int> oks{0};
  for (int i = 1; i <= 50; ++i) {
    worker_->write([i](Connection& db) { return insert(db, i); }, [&oks](Result<void> r) { oks += r ? 1 : 0; });
  }
  worker_->stop();  // the 50 are already queued, so they still run
  release_.open();
  worker_.reset();
  EXPECT_EQ(oks.load(), 50);
  EXPECT_EQ(rows(), 50);
}

TEST_F(DbWorkerTest, WorkQueuedAfterStopIsRefused) {
  start();
  block_worker();
  std::optional<Result<void>> late_write;
  std::optional<bool> late_read;
  bool late_job_ran = false;
  // A done callback that queues follow-up work while the worker drains. It holds the raw pointer:
  // worker_ itself is already null while the destructor runs.
  DbWorker* worker = worker_.get();
  worker_->write([](Connection& db) { return insert(db, 1); },
                 [&, worker](Result<void>) {
                   worker->write(
                       [&late_job_ran](Connection&) {
                         late_job_ran = true;
                         return support::ok();
                       },
                       [&late_write](Result<void> r) { late_write = std::move(r); });
                   late_read = worker->read([&late_job_ran](Connection&) { late_job_ran = true; });
                 });
  worker_->stop();
  std::optional<Result<void>> refused;
  worker_->write([](Connection& db) { return insert(db, 2); }, [&refused](Result<void> r) { refused = std::move(r); });
  ASSERT_TRUE(refused);  // answered at once, on this thread
  EXPECT_EQ(refused->error().code(), Errc::unavailable);
  release_.open();
  worker_.reset();
  ASSERT_TRUE(late_write && !*late_write);
  EXPECT_EQ(late_write->error().code(), Errc::unavailable);
  EXPECT_EQ(late_read, false);
  EXPECT_FALSE(late_job_ran);
  EXPECT_EQ(rows(), 1);
}

TEST_F(DbWorkerTest, WriteIsSafeFromManyThreadsAndKeepsEachThreadsOrder) {
  ASSERT_TRUE(db_->exec("CREATE TABLE u (n INTEGER PRIMARY KEY, thread INTEGER NOT NULL, i INTEGER NOT NULL)"));
  start();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 250;
  std::atomic<int> oks{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t, &oks] {
      for (int i = 0; i < kPerThread; ++i) {
        worker_->write(
            [t, i](Connection& db) -> Result<void> {
              auto stmt = db.cached("INSERT INTO u (thread, i) VALUES (?, ?)");
              if (!stmt) return std::move(stmt).error();
              (*stmt)->bind(1, t).bind(2, i);
              return (*stmt)->run();
            },
            [&oks](Result<void> r) { oks += r ? 1 : 0; });
      }
    });
  }
  for (auto& th : threads) th.join();
  worker_->flush();
  EXPECT_EQ(oks.load(), kThreads * kPerThread);
  EXPECT_EQ(*reader_->query_int("SELECT count(*) FROM u"), kThreads * kPerThread);
  // Rows are numbered in commit order; each thread's own writes must come out in the order it queued them.
  EXPECT_EQ(*reader_->query_int("SELECT count(*) FROM u a JOIN u b ON a.thread = b.thread AND a.n < b.n AND a.i > b.i"),
            0);
}

}  // namespace
}  // namespace agentd::storage
