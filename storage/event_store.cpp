#include "storage/event_store.h"

#include <fmt/format.h>

namespace agentd::storage {

using support::Errc;

Result<void> EventStore::append(const EventRecord& event) {
  auto stmt =
      db_.cached("INSERT INTO events (session_id, seq, turn_id, kind, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, event.session_id).bind(2, event.seq);
  if (event.turn_id) {
    s.bind(3, *event.turn_id);
  } else {
    s.bind_null(3);
  }
  s.bind(4, event.kind).bind(5, event.payload_json).bind(6, event.created_at_ms);
  auto r = s.run();
  if (r) return r;
  switch (constraint_of(r.error())) {
    case Constraint::unique:
      return Error(Errc::conflict, fmt::format("session {} already has event {}", event.session_id, event.seq));
    case Constraint::foreign_key:
      return Error(Errc::not_found, fmt::format("event {}: no session {}", event.seq, event.session_id));
    case Constraint::check:
      return Error(Errc::invalid_argument, fmt::format("event {} of session {}: seq must be positive and the "
                                                       "payload JSON: {}",
                                                       event.seq, event.session_id, r.error().message()));
    default: return r;
  }
}

Result<std::vector<EventRecord>> EventStore::since(std::string_view session_id, std::int64_t after_seq,
                                                   std::int64_t limit) {
  auto stmt = db_.cached(
      "SELECT session_id, seq, turn_id, kind, payload, created_at FROM events "
      "WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  // SQLite reads a negative LIMIT as "no limit".
  s.bind(1, session_id).bind(2, after_seq).bind(3, limit > 0 ? limit : std::int64_t{-1});
  std::vector<EventRecord> out;
  while (AGENTD_TRY(s.step())) {
    EventRecord e;
    e.session_id = s.column_string(0);
    e.seq = s.column_int64(1);
    if (!s.is_null(2)) e.turn_id = s.column_string(2);
    e.kind = s.column_string(3);
    e.payload_json = s.column_string(4);
    e.created_at_ms = s.column_int64(5);
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::int64_t> EventStore::max_seq(std::string_view session_id) {
  auto stmt = db_.cached("SELECT coalesce(max(seq), 0) FROM events WHERE session_id = ?");
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, session_id);
  if (!AGENTD_TRY((*stmt)->step())) return Error(Errc::internal, "SELECT max(seq) gave no row");
  return (*stmt)->column_int64(0);
}

}  // namespace agentd::storage
