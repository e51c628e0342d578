#include "core/engine/event_log.h"

#include <algorithm>

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

void EventLog::write() {
  write_scheduled_ = false;
  if (unwritten_.empty()) return;
  const std::int64_t last_seq = unwritten_.back().seq;
  store_.write(
      [records = std::move(unwritten_)](storage::Connection& db) -> Result<void> {
        storage::EventStore events(db);
        for (const auto& record : records) {
          if (auto r = events.append(record); !r) return r;
        }
        return support::ok();
      },
      strand_,
      [self = shared_from_this(), last_seq](const Result<void>& result) {
        if (!result) {
          log::error("session {}: events up to {} were not stored: {}", self->session_id_, last_seq,
                     result.error().message());
          if (!self->storage_error_) self->storage_error_ = result.error();
        }
        self->deliver_durable(last_seq);
      },
      storage::Durability::process);
  unwritten_.clear();
}

void EventLog::deliver_durable(std::int64_t up_to) {
  durable_seq_ = std::max(durable_seq_, up_to);
  while (!undelivered_.empty() && undelivered_.front().seq <= durable_seq_) {
    if (frontend_) frontend_->deliver(session_id_, undelivered_.front());
    undelivered_.pop_front();
  }
}

asio::awaitable<void> EventLog::deliver_pending() {
  auto self = shared_from_this();
  write();
  auto delivered = co_await store_.barrier(storage::Durability::process);
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!delivered) log::warn("session {}: {}", session_id_, delivered.error().message());
}

asio::awaitable<Result<void>> EventLog::flush() {
  auto self = shared_from_this();
  co_await asio::dispatch(strand_, asio::use_awaitable);
  write();
  auto result = co_await store_.barrier();
  co_await asio::dispatch(strand_, asio::use_awaitable);
  co_return result;
}

std::optional<support::Error> EventLog::take_storage_error() {
  std::optional<support::Error> error = std::move(storage_error_);
  storage_error_.reset();
  return error;
}

}  // namespace agentd::core
