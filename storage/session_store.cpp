#include "storage/session_store.h"

#include <charconv>

#include <fmt/format.h>

#include "core/support/clock.h"

namespace agentd::storage {

using support::Errc;

namespace {

SessionRecord read_session(const Statement& s) {
  SessionRecord r;
  r.id = s.column_string(0);
  r.cwd = s.column_string(1);
  if (!s.is_null(2)) r.title = s.column_string(2);
  r.created_at_ms = s.column_int64(3);
  r.updated_at_ms = s.column_int64(4);
  r.metadata_json = s.column_string(5);
  return r;
}

constexpr std::string_view kSessionColumns = "id, cwd, title, created_at, updated_at, metadata";

// "<updated_at>:<id>". The id may itself hold ':', so only the first one separates.
std::string make_cursor(const SessionRecord& last) { return fmt::format("{}:{}", last.updated_at_ms, last.id); }

Result<std::pair<std::int64_t, std::string>> parse_cursor(std::string_view cursor) {
  const auto colon = cursor.find(':');
  std::int64_t updated_at = 0;
  if (colon != std::string_view::npos && colon > 0) {
    const char* end = cursor.data() + colon;
    const auto [ptr, ec] = std::from_chars(cursor.data(), end, updated_at);
    if (ec == std::errc() && ptr == end) return std::pair(updated_at, std::string(cursor.substr(colon + 1)));
  }
  return Error(Errc::invalid_argument, fmt::format("malformed session list cursor '{}'", cursor));
}

Result<void> expect_one_change(Connection& db, std::string_view id) {
  if (db.changes() == 0) return Error(Errc::not_found, fmt::format("no session {}", id));
  return support::ok();
}

}  // namespace

Result<void> SessionStore::create(const SessionRecord& session) {
  auto stmt =
      db_.cached("INSERT INTO sessions (id, cwd, title, created_at, updated_at, metadata) VALUES (?, ?, ?, ?, ?, ?)");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, session.id).bind(2, session.cwd);
  if (session.title) {
    s.bind(3, *session.title);
  } else {
    s.bind_null(3);
  }
  s.bind(4, session.created_at_ms).bind(5, session.updated_at_ms).bind(6, session.metadata_json);
  if (auto r = s.run(); !r) {
    if (r.error().code() == Errc::conflict) {
      return Error(Errc::conflict,
                   fmt::format("session {} already exists or is invalid: {}", session.id, r.error().message()));
    }
    return r;
  }
  return support::ok();
}

Result<std::optional<SessionRecord>> SessionStore::get(std::string_view id) {
  auto stmt = db_.cached(fmt::format("SELECT {} FROM sessions WHERE id = ?", kSessionColumns));
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, id);
  auto row = s.step();
  if (!row) return std::move(row).error();
  if (!*row) return std::optional<SessionRecord>();
  return std::optional<SessionRecord>(read_session(s));
}

Result<std::vector<SessionRecord>> SessionStore::list(std::optional<std::string_view> cwd, int limit) {
  auto stmt = db_.cached(fmt::format(
      "SELECT {} FROM sessions WHERE (?1 IS NULL OR cwd = ?1) ORDER BY updated_at DESC, id LIMIT ?2", kSessionColumns));
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  if (cwd) {
    s.bind(1, *cwd);
  } else {
    s.bind_null(1);
  }
  s.bind(2, static_cast<std::int64_t>(limit));
  std::vector<SessionRecord> out;
  while (true) {
    auto row = s.step();
    if (!row) return std::move(row).error();
    if (!*row) break;
    out.push_back(read_session(s));
  }
  return out;
}

Result<SessionPage> SessionStore::list_page(const SessionListQuery& query) {
  if (query.limit < 1) return Error(Errc::invalid_argument, "session list limit must be at least 1");
  std::optional<std::pair<std::int64_t, std::string>> after;
  if (query.cursor) after = AGENTD_TRY(parse_cursor(*query.cursor));

  // Keyset paging: rows strictly after the cursor in (updated_at DESC, id ASC) order. One extra row
  // tells whether another page follows without a count(*).
  auto stmt =
      db_.cached(fmt::format("SELECT {} FROM sessions WHERE (?1 IS NULL OR cwd = ?1) "
                             "AND (?2 IS NULL OR updated_at < ?2 OR (updated_at = ?2 AND id > ?3)) "
                             "ORDER BY updated_at DESC, id LIMIT ?4",
                             kSessionColumns));
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  if (query.cwd) {
    s.bind(1, *query.cwd);
  } else {
    s.bind_null(1);
  }
  if (after) {
    s.bind(2, after->first).bind(3, after->second);
  } else {
    s.bind_null(2).bind_null(3);
  }
  s.bind(4, static_cast<std::int64_t>(query.limit) + 1);
  SessionPage page;
  while (true) {
    auto row = s.step();
    if (!row) return std::move(row).error();
    if (!*row) break;
    if (page.sessions.size() == static_cast<std::size_t>(query.limit)) {
      page.next_cursor = make_cursor(page.sessions.back());
      break;
    }
    page.sessions.push_back(read_session(s));
  }
  return page;
}

Result<void> SessionStore::update_metadata(std::string_view id, std::string_view metadata_json) {
  auto stmt = db_.cached("UPDATE sessions SET metadata = ? WHERE id = ?");
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, metadata_json).bind(2, id);
  if (auto r = (*stmt)->run(); !r) {
    if (constraint_of(r.error()) == Constraint::check) {
      return Error(Errc::invalid_argument, fmt::format("metadata of session {} is not valid JSON", id));
    }
    return r;
  }
  return expect_one_change(db_, id);
}

Result<void> SessionStore::set_title(std::string_view id, std::optional<std::string_view> title) {
  auto stmt = db_.cached("UPDATE sessions SET title = ? WHERE id = ?");
  if (!stmt) return std::move(stmt).error();
  if (title) {
    (*stmt)->bind(1, *title);
  } else {
    (*stmt)->bind_null(1);
  }
  (*stmt)->bind(2, id);
  AGENTD_TRY_VOID((*stmt)->run());
  return expect_one_change(db_, id);
}

Result<void> SessionStore::touch(std::string_view id, std::int64_t at_ms) {
  auto stmt = db_.cached("UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?");
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, at_ms).bind(2, id);
  AGENTD_TRY_VOID((*stmt)->run());
  return expect_one_change(db_, id);
}

Result<void> SessionStore::remove(std::string_view id) {
  auto stmt = db_.cached("DELETE FROM sessions WHERE id = ?");
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, id);
  if (auto r = (*stmt)->run(); !r) return r;
  if (db_.changes() == 0) return Error(Errc::not_found, fmt::format("no session {}", id));
  return support::ok();
}

Result<std::int64_t> SessionStore::append_message(std::string_view session_id, std::string_view role,
                                                  std::string_view content_json) {
  auto tx = Transaction::begin(db_);
  if (!tx) return std::move(tx).error();
  const std::int64_t now = support::unix_millis_now();

  auto touch = db_.cached("UPDATE sessions SET updated_at = ? WHERE id = ?");
  if (!touch) return std::move(touch).error();
  (*touch)->bind(1, now).bind(2, session_id);
  if (auto r = (*touch)->run(); !r) return std::move(r).error();
  if (db_.changes() == 0) return Error(Errc::not_found, fmt::format("no session {}", session_id));

  std::int64_t seq = 0;
  {
    // The lease resets the RETURNING statement at the end of this block: it must finish before COMMIT.
    auto insert = db_.cached(
        "INSERT INTO messages (session_id, seq, role, content, created_at) "
        "VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session_id = ?1), ?2, ?3, ?4) "
        "RETURNING seq");
    if (!insert) return std::move(insert).error();
    Statement& s = **insert;
    s.bind(1, session_id).bind(2, role).bind(3, content_json).bind(4, now);
    auto row = s.step();
    if (!row) return std::move(row).error();
    if (!*row) return Error(Errc::internal, "INSERT ... RETURNING gave no row");
    seq = s.column_int64(0);
  }
  if (auto r = tx->commit(); !r) return std::move(r).error();
  return seq;
}

Result<std::vector<MessageRecord>> SessionStore::messages(std::string_view session_id, std::int64_t after_seq) {
  auto stmt = db_.cached(
      "SELECT session_id, seq, role, content, created_at FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, session_id).bind(2, after_seq);
  std::vector<MessageRecord> out;
  while (true) {
    auto row = s.step();
    if (!row) return std::move(row).error();
    if (!*row) break;
    out.push_back(MessageRecord{s.column_string(0), s.column_int64(1), s.column_string(2), s.column_string(3),
                                s.column_int64(4)});
  }
  return out;
}

}  // namespace agentd::storage
