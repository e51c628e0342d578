#include "core/engine/event_log.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/support/clock.h"
#include "core/support/log.h"

namespace agentd::core {

namespace asio = boost::asio;
namespace log = support::log;
using support::Result;

EventLog::EventLog(EngineStore& store, asio::strand<asio::any_io_executor> strand, std::string session_id)
    : store_(store), strand_(std::move(strand)), session_id_(std::move(session_id)) {}

void EventLog::emit(EngineEvent event) {
  SequencedEvent sequenced{++seq_, turn_id_, std::move(event)};
  storage::EventRecord record;
  record.session_id = session_id_;
  record.seq = sequenced.seq;
  if (!turn_id_.empty()) record.turn_id = turn_id_;
  record.kind = std::string(event_kind(sequenced.event));
  record.payload_json = event_payload_json(sequenced.event);
  record.created_at_ms = support::unix_millis_now();
  undelivered_.push_back(std::move(sequenced));
  unwritten_.push_back(std::move(record));
  if (!write_scheduled_) {
    write_scheduled_ = true;
    asio::post(strand_, [self = shared_from_this()] { self->write(); });
  }
}

// Events kept for another try while the database fails. Past this many the oldest are dropped (logged):
// a turn stops at its next step once storage fails, so only a long stream in progress gets near it.
constexpr std::size_t kMaxUnstoredEvents = 20'000;

void EventLog::write() {
  write_scheduled_ = false;
  if (write_in_flight_ || unwritten_.empty()) return;
  write_in_flight_ = true;
  auto records = std::make_shared<std::vector<storage::EventRecord>>(std::move(unwritten_));
  unwritten_.clear();
  store_.write(
      [records](storage::Connection& db) -> Result<void> {
        storage::EventStore events(db);
        for (const auto& record : *records) {
          if (auto r = events.append(record); !r) return r;
        }
        return support::ok();
      },
      strand_,
      [self = shared_from_this(), records](const Result<void>& result) { self->written(std::move(*records), result); },
      storage::Durability::process);
}

void EventLog::written(std::vector<storage::EventRecord> records, const Result<void>& result) {
  write_in_flight_ = false;
  if (result) {
    if (failing_) log::info("session {}: events are being stored again", session_id_);
    failing_ = false;
    deliver_durable(records.back().seq);
    if (!unwritten_.empty()) write();  // what was emitted while this job was in flight
    return;
  }
  if (!failing_) {
    log::error("session {}: events {} to {} could not be stored, so they are not delivered; kept to try again: {}",
               session_id_, records.front().seq, records.back().seq, result.error().message());
  }
  failing_ = true;
  note_failure(result.error());
  // Back in front of what came since, in order; tried again with the next write (an emit or a flush).
  records.insert(records.end(), std::make_move_iterator(unwritten_.begin()), std::make_move_iterator(unwritten_.end()));
  unwritten_ = std::move(records);
  if (unwritten_.size() > kMaxUnstoredEvents) {
    const std::size_t dropped = unwritten_.size() - kMaxUnstoredEvents;
    log::error("session {}: dropping events {} to {}, which could not be stored and were never delivered", session_id_,
               unwritten_.front().seq, unwritten_[dropped - 1].seq);
    unwritten_.erase(unwritten_.begin(), unwritten_.begin() + static_cast<std::ptrdiff_t>(dropped));
    while (!undelivered_.empty() && undelivered_.front().seq < unwritten_.front().seq) undelivered_.pop_front();
  }
}

void EventLog::note_failure(const support::Error& error) {
  if (!storage_error_) storage_error_ = error;
}

void EventLog::store(storage::DbWorker::WriteJob job, std::string_view what) {
  store_.worker().write(
      std::move(job),
      [self = shared_from_this(), what = std::string(what)](Result<void> result) {
        if (result) return;
        log::error("session {}: {} could not be stored: {}", self->session_id_, what, result.error().message());
        asio::post(self->strand_,
                   [self, error = std::move(result).error().context("storing " + what)] { self->note_failure(error); });
      },
      storage::Durability::process, /*lazy=*/true);
}

void EventLog::deliver_durable(std::int64_t up_to) {
  durable_seq_ = std::max(durable_seq_, up_to);
  while (!undelivered_.empty() && undelivered_.front().seq <= durable_seq_) {
    if (frontend_) frontend_->deliver(session_id_, undelivered_.front());
    undelivered_.pop_front();
  }
}

// Writes what is queued and waits until it, and every write before it, has committed at `durability`.
// The events job's completion is posted to the strand before the barrier's, so after the barrier
// write_in_flight_ says whether more was emitted meanwhile.
asio::awaitable<Result<void>> EventLog::settle(storage::Durability durability) {
  auto self = shared_from_this();
  co_await asio::dispatch(strand_, asio::use_awaitable);
  for (;;) {
    write();
    auto committed = co_await store_.barrier(durability);
    co_await asio::dispatch(strand_, asio::use_awaitable);
    if (!committed) co_return committed;
    if (storage_error_) co_return *storage_error_;
    if (!write_in_flight_ && unwritten_.empty()) co_return support::ok();
  }
}

asio::awaitable<Result<void>> EventLog::deliver_pending() {
  auto delivered = co_await settle(storage::Durability::process);
  if (!delivered) log::warn("session {}: {}", session_id_, delivered.error().message());
  co_return delivered;
}

asio::awaitable<Result<void>> EventLog::flush() { co_return co_await settle(storage::Durability::disk); }

std::optional<support::Error> EventLog::take_storage_error() {
  std::optional<support::Error> error = std::move(storage_error_);
  storage_error_.reset();
  return error;
}

}  // namespace agentd::core
