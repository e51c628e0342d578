// Sessions and their messages in SQLite. Content is stored as the engine's JSON, opaque here.
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

class SessionStore {
 public:
  explicit SessionStore(Connection& db) : db_(db) {}

  // Fails with Errc::conflict when the id exists.
  Result<void> create(const SessionRecord& session);
  Result<std::optional<SessionRecord>> get(std::string_view id);
  // Most recently updated first; `cwd` filters when given.
  Result<std::vector<SessionRecord>> list(std::optional<std::string_view> cwd, int limit);
  // Deletes the session and its messages; Errc::not_found when there is no such session.
  Result<void> remove(std::string_view id);

  // Appends a message with the next sequence number and touches the session, in one transaction;
  // returns the sequence number. Durable when this returns.
  Result<std::int64_t> append_message(std::string_view session_id, std::string_view role,
                                      std::string_view content_json);
  // Messages with seq > after_seq, in order.
  Result<std::vector<MessageRecord>> messages(std::string_view session_id, std::int64_t after_seq = 0);

 private:
  Connection& db_;
};

}  // namespace agentd::storage
