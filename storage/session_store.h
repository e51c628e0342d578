// Sessions and their messages in SQLite. Content is stored as the engine's JSON, opaque here.
// Turns, events, spans and usage of a session have their own stores (turn_store.h, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sqlite.h"

namespace agentd::storage {

struct SessionRecord {
  std::string id;
  std::string cwd;
  std::optional<std::string> title;
  std::int64_t created_at_ms = 0;
  std::int64_t updated_at_ms = 0;
  std::string metadata_json = "{}";
};

struct MessageRecord {
  std::string session_id;
  std::int64_t seq = 0;
  std::string role;  // user, assistant, tool, system
  std::string content_json;
  std::int64_t created_at_ms = 0;
};

// One page of session/list. `next_cursor` is set only when more sessions follow; it is opaque to
// clients and only meaningful to list_page().
struct SessionPage {
  std::vector<SessionRecord> sessions;
  std::optional<std::string> next_cursor;
};

struct SessionListQuery {
  std::optional<std::string> cwd;     // only sessions in this directory
  std::optional<std::string> cursor;  // a next_cursor from the previous page; none for the first page
  int limit = 50;                     // sessions per page; at least 1
};

class SessionStore {
 public:
  explicit SessionStore(Connection& db) : db_(db) {}

  // Fails with Errc::conflict when the id exists.
  Result<void> create(const SessionRecord& session);
  Result<std::optional<SessionRecord>> get(std::string_view id);
  // Most recently updated first; `cwd` filters when given.
  Result<std::vector<SessionRecord>> list(std::optional<std::string_view> cwd, int limit);
  // The same order, a page at a time. The cursor is the last row's (updated_at, id), so pages neither
  // repeat nor skip sessions that stay put; a session touched while paging may move to the front and be
  // seen again on a later listing, which is what "most recent first" means. A malformed cursor is
  // Errc::invalid_argument.
  Result<SessionPage> list_page(const SessionListQuery& query);
  // Deletes the session and everything recorded for it (messages, turns, events, spans, usage);
  // Errc::not_found when there is no such session.
  Result<void> remove(std::string_view id);

  // These fail with Errc::not_found when there is no such session. Metadata and title edits do not
  // count as activity, so they leave updated_at (and the session's place in the list) alone.
  Result<void> update_metadata(std::string_view id, std::string_view metadata_json);
  Result<void> set_title(std::string_view id, std::optional<std::string_view> title);
  // Marks activity at `at_ms`; updated_at never moves backwards, even if the clock does.
  Result<void> touch(std::string_view id, std::int64_t at_ms);

  // Appends a message with the next sequence number and touches the session, in one transaction;
  // returns the sequence number. Durable when this returns (inside a DbWorker write job: once its done
  // callback says ok).
  Result<std::int64_t> append_message(std::string_view session_id, std::string_view role,
                                      std::string_view content_json);
  // Messages with seq > after_seq, in order.
  Result<std::vector<MessageRecord>> messages(std::string_view session_id, std::int64_t after_seq = 0);

 private:
  Connection& db_;
};

}  // namespace agentd::storage
