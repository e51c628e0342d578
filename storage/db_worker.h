// DbWorker: the one thread that does SQLite work, so the event loop never waits on a disk. Writes are
// group-committed: whatever queues while the worker is busy commits in one transaction, and each job
// hears back only after that COMMIT. How durable "committed" is, each write says (Durability): in the
// WAL file (survives the process being killed), or also fsync'ed (survives a power loss).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "storage/sqlite.h"

namespace agentd::storage {

// What a write's `done` promises. The WAL is append-only and replayed in order, so one `disk` commit
// makes every `process` commit before it durable on disk too: a stream of events can be written at
// `process` level (no fsync each) and made power-safe by one `disk` write where it is acknowledged.
enum class Durability {
  // COMMIT wrote the transaction into the WAL file (SQLite's synchronous=NORMAL): a crash or kill -9 of
  // this process keeps it; an OS crash or power loss may lose it.
  process,
  // COMMIT also fsync'ed the WAL (synchronous=FULL): it survives a power loss.
  disk,
};

class DbWorker {
 public:
  using WriteJob = std::function<Result<void>(Connection&)>;
  using Done = std::function<void(Result<void>)>;
  using ReadJob = std::function<void(Connection&)>;

  struct Options {
    // The most write jobs one transaction takes, so a burst never grows a single commit without bound
    // (nor holds SQLite's write lock for long against other processes).
    std::size_t max_batch = 512;
  };

  // Whether writes are landing, for a status a client can read (_agentd/status, initialize's _meta).
  struct Health {
    bool failing = false;               // the last batch had a write fail, and none has committed since
    std::uint64_t failed_writes = 0;    // write jobs that failed, ever
    std::optional<Error> last_error;    // the latest failure's cause
    std::int64_t last_error_at_ms = 0;  // Unix ms of it
  };

  struct Stats {
    std::uint64_t transactions = 0;   // batch transactions committed
    std::uint64_t synced = 0;         // of those, committed with an fsync (a `disk` write was in them)
    std::uint64_t writes = 0;         // write jobs run
    std::uint64_t failed_writes = 0;  // write jobs whose done got an error
    std::uint64_t reads = 0;          // read jobs run
    std::size_t largest_batch = 0;    // most write jobs taken at once
  };

  // Takes the connection (opened with open_database, so it is in WAL mode) and starts the thread. From
  // here on the connection is used on the worker thread only, which sets synchronous per batch.
  explicit DbWorker(std::unique_ptr<Connection> connection, Options options);
  explicit DbWorker(std::unique_ptr<Connection> connection) : DbWorker(std::move(connection), Options{}) {}
  // stop(), then waits until everything queued before it has run and committed.
  ~DbWorker();
  DbWorker(const DbWorker&) = delete;
  DbWorker& operator=(const DbWorker&) = delete;

  // Queues a write; callable from any thread. Writes queued while the worker is busy are committed
  // together in one transaction, each inside its own SAVEPOINT: a job that fails (or throws, which
  // becomes Errc::internal) rolls back only itself and gets its own error. `done` runs on the worker
  // thread after the COMMIT, with the job's error, or else the commit's error, which every job of the
  // batch then shares. Jobs may use the stores (their transactions nest as savepoints) but must not
  // COMMIT or ROLLBACK themselves. After stop() the job is dropped and `done` gets Errc::unavailable
  // at once, on the calling thread. A batch holding any `disk` write commits with an fsync. A `process`
  // write without `done` is lazy: it does not wake the worker, and runs with the next write that has a
  // `done` or is `disk`, or the next read, flush() or stop(); with `lazy`, a `process` write with a
  // `done` is lazy too (its `done` then runs after that later commit).
  void write(WriteJob job, Done done = {}, Durability durability = Durability::disk, bool lazy = false);
  // Queues a read: it runs in FIFO order after every write queued before it has committed
  // (read-your-writes), outside any transaction; an exception it throws is logged. Returns false, and
  // drops the job, after stop().
  bool read(ReadJob job);
  // Blocks until everything queued before the call has run, committed, and had its `done` called.
  // For shutdown and tests; never from the worker thread (a job or a done callback), which would
  // wait for itself.
  void flush();
  // Refuses work queued from now on; what is already queued still runs. Idempotent; the destructor
  // calls it.
  void stop();

  Stats stats() const;
  Health health() const;
  // The file the database lives in (":memory:" or empty for none); fixed for the worker's life.
  const std::string& path() const noexcept { return path_; }

 private:
  struct Item {
    std::uint64_t ticket = 0;  // FIFO position; flush() waits for the ticket it saw last
    bool is_read = false;
    Durability durability = Durability::disk;
    WriteJob write;
    Done done;
    ReadJob read;
  };

  void run();
  // Runs one batch of writes and calls their done callbacks; adds what it did to `stats`.
  void run_writes(std::vector<Item>& batch, Stats& stats, Health& health);
  void run_read(Item& item, Stats& stats);
  Result<void> run_in_savepoint(const WriteJob& job);
  // Before each batch of writes: when the database file was removed under us, puts it back (from this
  // connection, which still sees all of it) and reopens there. An error when it cannot, or when another
  // file now sits at the path: then no write may run, or it would land only in a file that is gone.
  Result<void> keep_file_in_place();
  // Sets PRAGMA synchronous for the next commit (FULL when it must reach the disk, else NORMAL).
  Result<void> set_synchronous(bool full);

  std::unique_ptr<Connection> db_;
  std::string path_;     // where db_ was opened; a restored database is reopened there
  bool reopen_ = false;  // the database was put back but could not be reopened: db_ is a stand-in
  const Options options_;
  std::optional<bool> synchronous_full_;  // what PRAGMA synchronous is set to; worker thread only

  mutable std::mutex mutex_;
  std::condition_variable work_ready_;  // the worker waits here for items or stop
  std::condition_variable progressed_;  // flush() waits here for `completed_`
  std::deque<Item> queue_;
  std::uint64_t next_ticket_ = 1;
  std::uint64_t completed_ = 0;  // every item up to this ticket is finished
  bool stopping_ = false;
  Stats stats_;
  Health health_;

  std::thread thread_;  // after everything the thread touches, so it starts once they exist
  std::thread::id worker_id_;
};

}  // namespace agentd::storage
