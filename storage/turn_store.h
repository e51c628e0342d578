// Turns in SQLite: one row per user prompt, numbered 1, 2, 3, ... within its session, opened when the
// prompt arrives and finished with its stop reason. A turn left unfinished was cut off by a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sqlite.h"

namespace agentd::storage {

struct TurnRecord {
  std::string id;
  std::string session_id;
  std::int64_t seq = 0;  // 1, 2, 3, ... within the session
  std::string input;     // the user's text
  std::int64_t started_at_ms = 0;
  std::optional<std::int64_t> ended_at_ms;  // empty while the turn runs
  std::optional<std::string> stop_reason;
  std::string metadata_json = "{}";
};

class TurnStore {
 public:
  explicit TurnStore(Connection& db) : db_(db) {}

  // The caller picks id and seq (see next_seq), so it can name the turn before the write is queued.
  // Errc::not_found when the session does not exist, Errc::conflict when the id or the session's seq
  // is taken, Errc::invalid_argument for metadata that is not JSON. Does not touch the session: call
  // SessionStore::touch in the same write job.
  Result<void> begin(const TurnRecord& turn);
  // 1 for a session without turns, else one past the highest.
  Result<std::int64_t> next_seq(std::string_view session_id);
  // Records the end of a running turn; `metadata_json` replaces the turn's metadata when given.
  // Errc::not_found for an unknown turn, Errc::conflict when it has already finished.
  Result<void> finish(std::string_view id, std::int64_t ended_at_ms, std::string_view stop_reason,
                      std::optional<std::string_view> metadata_json = std::nullopt);

  Result<std::optional<TurnRecord>> get(std::string_view id);
  // Every turn of the session, by seq.
  Result<std::vector<TurnRecord>> for_session(std::string_view session_id);
  // The turn with the highest seq, if any.
  Result<std::optional<TurnRecord>> latest(std::string_view session_id);

 private:
  Connection& db_;
};

}  // namespace agentd::storage
