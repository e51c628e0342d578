// Compaction records on disk (schema version 5): each summary that replaced a session's older turns in
// later model requests, with the range of turns it covers and the estimated tokens before and after.
// The summarized messages stay in the messages table; a record only changes what is sent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sqlite.h"

namespace agentd::storage {

struct CompactionRecord {
  std::int64_t id = 0;  // assigned by add
  std::string session_id;
  std::string first_turn_id;  // the oldest turn summarized
  std::string last_turn_id;   // the newest turn summarized (inclusive)
  std::string summary_json;   // core/memory/compaction.h's summary_to_json
  std::int64_t tokens_before = 0;
  std::int64_t tokens_after = 0;
  std::int64_t created_at_ms = 0;
};

class CompactionStore {
 public:
  explicit CompactionStore(Connection& db) : db_(db) {}

  // Stores a record; returns its id. Errc::not_found when the session does not exist,
  // Errc::invalid_argument when summary_json is not JSON or a token count is negative.
  Result<std::int64_t> add(const CompactionRecord& record);
  // The session's compactions, oldest first.
  Result<std::vector<CompactionRecord>> for_session(std::string_view session_id);
  // The newest compaction of the session: the one that defines what later requests send.
  Result<std::optional<CompactionRecord>> latest(std::string_view session_id);

 private:
  Connection& db_;
};

}  // namespace agentd::storage
