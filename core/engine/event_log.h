// EventLog: a session's event stream (DESIGN.md section 3). emit() numbers an event, queues it for the
// events table and delivers it to the attached frontend once it is durable there, in sequence order:
// nothing reaches a client that a crash could lose. The events of one burst (every delta of a network
// read) share one database job and commit. Lives on its session's strand.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
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
  // tool_call before it is asked about it, or asked for a file for it. Failures are logged.
  boost::asio::awaitable<void> deliver_pending();
  // Every write queued so far (events and everything else) is durable on disk; back on the strand.
  boost::asio::awaitable<support::Result<void>> flush();

  // The last sequence number handed out; restore() continues after the stored log's last.
  std::int64_t last_seq() const noexcept { return seq_; }
  void restore(std::int64_t max_seq) { seq_ = durable_seq_ = max_seq; }
  // The first error storing events met since the last call, if any (the turn then reports it).
  std::optional<support::Error> take_storage_error();

 private:
  void deliver_durable(std::int64_t up_to);

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
  std::optional<support::Error> storage_error_;
};

}  // namespace agentd::core
