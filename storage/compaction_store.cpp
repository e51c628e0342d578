#include "storage/compaction_store.h"

#include <fmt/format.h>

namespace agentd::storage {

using support::Errc;

namespace {

constexpr std::string_view kCompactionColumns =
    "id, session_id, first_turn_id, last_turn_id, summary, tokens_before, tokens_after, created_at";

CompactionRecord read_compaction(const Statement& s) {
  CompactionRecord c;
  c.id = s.column_int64(0);
  c.session_id = s.column_string(1);
  c.first_turn_id = s.column_string(2);
  c.last_turn_id = s.column_string(3);
  c.summary_json = s.column_string(4);
  c.tokens_before = s.column_int64(5);
  c.tokens_after = s.column_int64(6);
  c.created_at_ms = s.column_int64(7);
  return c;
}

}  // namespace

Result<std::int64_t> CompactionStore::add(const CompactionRecord& record) {
  auto stmt = db_.cached(
      "INSERT INTO compactions (session_id, first_turn_id, last_turn_id, summary, tokens_before, tokens_after, "
      "created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind_all(record.session_id, record.first_turn_id, record.last_turn_id, record.summary_json, record.tokens_before,
             record.tokens_after, record.created_at_ms);
  auto row = s.step();
  if (!row) {
    switch (constraint_of(row.error())) {
      case Constraint::foreign_key:
        return Error(Errc::not_found, fmt::format("no session {} to record a compaction for", record.session_id));
      case Constraint::check:
        return Error(Errc::invalid_argument,
                     fmt::format("compaction record for session {}: the summary must be JSON and the token "
                                 "counts not negative",
                                 record.session_id));
      default: return std::move(row).error();
    }
  }
  if (!*row) return Error(Errc::internal, "INSERT ... RETURNING gave no row");
  return s.column_int64(0);
}

Result<std::vector<CompactionRecord>> CompactionStore::for_session(std::string_view session_id) {
  auto stmt =
      db_.cached(fmt::format("SELECT {} FROM compactions WHERE session_id = ? ORDER BY id", kCompactionColumns));
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, session_id);
  std::vector<CompactionRecord> out;
  while (true) {
    auto row = s.step();
    if (!row) return std::move(row).error();
    if (!*row) break;
    out.push_back(read_compaction(s));
  }
  return out;
}

Result<std::optional<CompactionRecord>> CompactionStore::latest(std::string_view session_id) {
  auto stmt = db_.cached(
      fmt::format("SELECT {} FROM compactions WHERE session_id = ? ORDER BY id DESC LIMIT 1", kCompactionColumns));
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, session_id);
  auto row = (*stmt)->step();
  if (!row) return std::move(row).error();
  if (!*row) return std::optional<CompactionRecord>();
  return std::optional<CompactionRecord>(read_compaction(**stmt));
}

}  // namespace agentd::storage
