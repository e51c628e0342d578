// EventLog: a session's event stream (DESIGN.md section 3). emit() numbers an event, queues it for the
// events table and delivers it to the attached frontend once it is durable there, in sequence order:
// nothing reaches a client that a crash could lose, and nothing that was not stored. The events of one
// burst (every delta of a network read) share one database job and commit, one job in flight at a time;
// events whose write failed stay queued, undelivered, and go again with the next write (the log keeps no
// gap if the disk recovers). The session's other history (messages, usage, spans, turn and audit rows)
// is written through store(), so a failure there is seen too: storage_error() then ends the turn. Lives
// on its session's strand.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>

#include "core/engine/engine_store.h"
#include "core/engine/events.h"
#include "core/engine/frontend.h"
#include "core/support/result.h"
#include "storage/event_store.h"

namespace agentd::core {

class EventLog : public std::enable_shared_from_this<EventLog> {
 public:
  EventLog(EngineStore& store, boost::asio::strand<boost::asio::any_io_executor> strand, std::string session_id);

  // Where durable events go; may change (session/load, resume). Events emitted while none is attached
  // are stored, not delivered (a later client replays them from the log).
  void attach(std::shared_ptr<Frontend> frontend) { frontend_ = std::move(frontend); }
  void detach() { frontend_.reset(); }
  const std::shared_ptr<Frontend>& frontend() const noexcept { return frontend_; }

  // The turn later events belong to; empty between turns.
  void set_turn(std::string turn_id) { turn_id_ = std::move(turn_id); }
  const std::string& turn() const noexcept { return turn_id_; }

  void emit(EngineEvent event);
  // Hands the events emitted so far to the database as one job. emit() schedules it on the strand;
  // call it directly before a barrier that must come after them.
  void write();
  // Every event emitted so far is stored and delivered (process durability): a client must see a
  // tool_call before it is asked about it, or asked for a file for it. An error when they could not be
  // stored (then they were not delivered either).
  boost::asio::awaitable<support::Result<void>> deliver_pending();
  // Every write queued so far (events and everything else) is durable on disk, and every event
  // delivered; back on the strand. An error when a write of this session failed since the last
  // take_storage_error().
  boost::asio::awaitable<support::Result<void>> flush();
  // A write of the session's history that streams along with the events: lazy (it commits with the
  // next write someone waits for), at `process` durability. A failure is logged with `what` and its
  // cause, and kept for storage_error(). Callable from any thread.
  void store(storage::DbWorker::WriteJob job, std::string_view what);

  // Events wait to be stored again after a failed write.
  bool backlogged() const noexcept { return failing_; }

  // The last sequence number handed out; restore() continues after the stored log's last.
  std::int64_t last_seq() const noexcept { return seq_; }
  void restore(std::int64_t max_seq) { seq_ = durable_seq_ = max_seq; }
  // The first error storing the session's history met since the last take, if any: the turn stops at
  // its next step and reports it.
  const std::optional<support::Error>& storage_error() const noexcept { return storage_error_; }
  std::optional<support::Error> take_storage_error();

 private:
  void deliver_durable(std::int64_t up_to);
  void written(std::vector<storage::EventRecord> records, const support::Result<void>& result);
  void note_failure(const support::Error& error);
  boost::asio::awaitable<support::Result<void>> settle(storage::Durability durability);

  EngineStore& store_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  std::string session_id_;
  std::shared_ptr<Frontend> frontend_;
  std::string turn_id_;
  std::int64_t seq_ = 0;          // last seq handed out
  std::int64_t durable_seq_ = 0;  // events up to here are in the log
  std::deque<SequencedEvent> undelivered_;
  std::vector<storage::EventRecord> unwritten_;  // emitted, not yet handed to the database
  bool write_scheduled_ = false;
  bool write_in_flight_ = false;  // one events job at a time, so they land (or fail) in order
  bool failing_ = false;          // the last events job failed (logged once until one succeeds)
  std::optional<support::Error> storage_error_;
};

}  // namespace agentd::core
