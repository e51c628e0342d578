#include "storage/turn_store.h"

#include <fmt/format.h>

namespace agentd::storage {

using support::Errc;

namespace {

constexpr std::string_view kTurnColumns = "id, session_id, seq, input, started_at, ended_at, stop_reason, metadata";

TurnRecord read_turn(const Statement& s) {
  TurnRecord t;
  t.id = s.column_string(0);
  t.session_id = s.column_string(1);
  t.seq = s.column_int64(2);
  t.input = s.column_string(3);
  t.started_at_ms = s.column_int64(4);
  if (!s.is_null(5)) t.ended_at_ms = s.column_int64(5);
  if (!s.is_null(6)) t.stop_reason = s.column_string(6);
  t.metadata_json = s.column_string(7);
  return t;
}

Result<std::vector<TurnRecord>> read_all(Statement& s) {
  std::vector<TurnRecord> out;
  while (AGENTD_TRY(s.step())) out.push_back(read_turn(s));
  return out;
}

Result<std::optional<TurnRecord>> read_one(Statement& s) {
  if (!AGENTD_TRY(s.step())) return std::optional<TurnRecord>();
  return std::optional<TurnRecord>(read_turn(s));
}

}  // namespace

Result<void> TurnStore::begin(const TurnRecord& turn) {
  auto stmt = db_.cached(
      "INSERT INTO turns (id, session_id, seq, input, started_at, ended_at, stop_reason, metadata) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, turn.id).bind(2, turn.session_id).bind(3, turn.seq).bind(4, turn.input).bind(5, turn.started_at_ms);
  if (turn.ended_at_ms) {
    s.bind(6, *turn.ended_at_ms);
  } else {
    s.bind_null(6);
  }
  if (turn.stop_reason) {
    s.bind(7, *turn.stop_reason);
  } else {
    s.bind_null(7);
  }
  s.bind(8, turn.metadata_json);
  auto r = s.run();
  if (r) return r;
  switch (constraint_of(r.error())) {
    case Constraint::foreign_key:
      return Error(Errc::not_found, fmt::format("turn {}: no session {}", turn.id, turn.session_id));
    case Constraint::unique:
      return Error(Errc::conflict,
                   fmt::format("turn {} (seq {} of session {}) already exists", turn.id, turn.seq, turn.session_id));
    case Constraint::check:
      return Error(Errc::invalid_argument,
                   fmt::format("turn {}: seq must be positive and metadata JSON: {}", turn.id, r.error().message()));
    default: return r;
  }
}

Result<std::int64_t> TurnStore::next_seq(std::string_view session_id) {
  auto stmt = db_.cached("SELECT coalesce(max(seq), 0) + 1 FROM turns WHERE session_id = ?");
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, session_id);
  if (!AGENTD_TRY((*stmt)->step())) return Error(Errc::internal, "SELECT max(seq) gave no row");
  return (*stmt)->column_int64(0);
}

Result<void> TurnStore::finish(std::string_view id, std::int64_t ended_at_ms, std::string_view stop_reason,
                               std::optional<std::string_view> metadata_json) {
  auto stmt = db_.cached(
      "UPDATE turns SET ended_at = ?1, stop_reason = ?2, metadata = coalesce(?3, metadata) "
      "WHERE id = ?4 AND ended_at IS NULL");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, ended_at_ms).bind(2, stop_reason);
  if (metadata_json) {
    s.bind(3, *metadata_json);
  } else {
    s.bind_null(3);
  }
  s.bind(4, id);
  if (auto r = s.run(); !r) {
    if (constraint_of(r.error()) == Constraint::check) {
      return Error(Errc::invalid_argument, fmt::format("metadata of turn {} is not valid JSON", id));
    }
    return r;
  }
  if (db_.changes() == 1) return support::ok();
  // Nothing matched: tell a missing turn from a finished one.
  auto existing = AGENTD_TRY(get(id));
  if (!existing) return Error(Errc::not_found, fmt::format("no turn {}", id));
  return Error(Errc::conflict,
               fmt::format("turn {} has already finished ({})", id, existing->stop_reason.value_or("no stop reason")));
}

Result<std::optional<TurnRecord>> TurnStore::get(std::string_view id) {
  auto stmt = db_.cached(fmt::format("SELECT {} FROM turns WHERE id = ?", kTurnColumns));
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, id);
  return read_one(**stmt);
}

Result<std::vector<TurnRecord>> TurnStore::for_session(std::string_view session_id) {
  auto stmt = db_.cached(fmt::format("SELECT {} FROM turns WHERE session_id = ? ORDER BY seq", kTurnColumns));
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, session_id);
  return read_all(**stmt);
}

Result<std::optional<TurnRecord>> TurnStore::latest(std::string_view session_id) {
  auto stmt =
      db_.cached(fmt::format("SELECT {} FROM turns WHERE session_id = ? ORDER BY seq DESC LIMIT 1", kTurnColumns));
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, session_id);
  return read_one(**stmt);
}

}  // namespace agentd::storage
