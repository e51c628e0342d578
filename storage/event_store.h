// The per-session log of what was streamed to the client: the engine's own event JSON (not ACP), in
// `seq` order. session/load replays it, and `_agentd/events/replay {since}` sends what a client missed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sqlite.h"

namespace agentd::storage {

struct EventRecord {
  std::string session_id;
  std::int64_t seq = 0;  // per session, from 1, only grows; the caller assigns it (see max_seq)
  std::optional<std::string> turn_id;
  std::string kind;  // the engine's event type, e.g. "text_delta"
  std::string payload_json;
  std::int64_t created_at_ms = 0;
};

class EventStore {
 public:
  explicit EventStore(Connection& db) : db_(db) {}

  // Errc::conflict when the session already has an event with this seq (a seq is never reused: a
  // client may have seen it), Errc::not_found when the session does not exist, Errc::invalid_argument
  // for a payload that is not JSON or a seq below 1.
  Result<void> append(const EventRecord& event);
  // Events with seq > after_seq, in order; at most `limit` of them (every one when limit <= 0).
  Result<std::vector<EventRecord>> since(std::string_view session_id, std::int64_t after_seq, std::int64_t limit = 0);
  // The highest seq of the session; 0 when it has none.
  Result<std::int64_t> max_seq(std::string_view session_id);

 private:
  Connection& db_;
};

}  // namespace agentd::storage
