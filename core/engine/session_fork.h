// session/fork in storage: a new session that starts with a stored session's history up to one of its
// turns. The copy is one write job (all of it or nothing), made from what the database holds when the
// job runs, after every write queued before it.
//
// What is copied: the session's settings (mode, model, budgets) and title; its turns up to the cut, under
// new turn ids; their messages; the event log up to the first event of a turn left out (so session/load
// of the fork replays what the source showed until then); the compactions whose range ends at or before
// the cut; the blobs (images) the session holds. What is not: checkpoints (they stay with the turns that
// made them, so /undo in the fork never puts back a file the source changed), the permission audit
// (decisions stay where they were made), usage and traces (the fork's cost and spans are its own).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/support/result.h"
#include "storage/sqlite.h"

namespace agentd::core {

struct ForkSpec {
  std::string source_id;
  std::string fork_id;                       // the new session's id
  std::string cwd;                           // canonical
  std::vector<std::string> additional_dirs;  // canonical; the fork's whole list
  // The last turn the fork keeps (inclusive); none: every turn except `running_turn` and later ones.
  std::optional<std::string> up_to_turn;
  // A turn of the source still running: its messages are not all written yet, so it and any later
  // turn are left out, and naming it as `up_to_turn` is refused.
  std::optional<std::string> running_turn;
  std::int64_t now_ms = 0;
};

struct ForkCopy {
  std::size_t turns = 0;
  std::size_t messages = 0;
  std::size_t events = 0;
  std::optional<std::string> last_turn;  // the source's id of the last turn kept
};

// Errors: Errc::not_found for an unknown source, Errc::invalid_argument for an `up_to_turn` that is not
// a finished turn of the source, Errc::storage for what the database refuses.
support::Result<ForkCopy> fork_session_history(storage::Connection& db, const ForkSpec& spec);

}  // namespace agentd::core
