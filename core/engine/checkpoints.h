// Checkpoints: the engine's side of file transactions (DESIGN.md section 5). A session's Checkpoints is the
// tools::ChangeJournal its tools write through: each file change is recorded, pre-image first, in the
// checkpoint of the turn that made it (storage/checkpoint_store.h), durably, before the file is touched.
// Restoring puts back the files a turn and every later one changed, without git; a file that no longer
// holds what the checkpoints say it should (someone else changed it since) is a conflict, reported and left
// alone. A restore is itself a checkpoint, so it can be undone in turn.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/engine/engine_store.h"
#include "core/support/cancel.h"
#include "core/support/enum_names.h"
#include "core/support/result.h"
#include "storage/checkpoint_store.h"
#include "tools/file_state.h"
#include "tools/file_transaction.h"

namespace agentd::core {

struct CheckpointFile {
  std::string path;
  std::optional<std::string> before_hash;  // empty: the change created the file
  std::optional<std::string> after_hash;   // empty: the change removed it
};

struct CheckpointInfo {
  std::string id;  // the turn's id; a restore made outside a turn has an "r_" id of its own
  std::int64_t seq = 0;
  storage::CheckpointKind kind = storage::CheckpointKind::turn;
  std::optional<std::string> restores;  // a restore: the checkpoint its files went back before
  bool undone = false;                  // a later restore (still in effect) put its files back
  std::int64_t created_at_ms = 0;
  std::vector<CheckpointFile> files;  // in the order they changed; a path may appear more than once
};

enum class RestoreAction {
  restored,   // back to its earlier content
  recreated,  // it had been removed; it is back
  removed,    // the turn created it; it is gone again
  unchanged,  // it already held its earlier content
  conflict,   // it changed since the checkpoint (someone else wrote it): left alone
  failed,     // the write failed: left as it was
};
std::string_view restore_action_name(RestoreAction action) noexcept;
std::span<const support::EnumName<RestoreAction>> enum_names(RestoreAction) noexcept;

struct RestoredFile {
  std::string path;
  RestoreAction action = RestoreAction::restored;
  std::string detail;  // conflict, failed: why
};

struct RestoreReport {
  std::string target;         // the checkpoint whose files went back (with every later one); empty: none
  std::string checkpoint_id;  // the restore's own checkpoint; empty when it wrote nothing
  std::vector<RestoredFile> files;
  std::size_t count(RestoreAction action) const;
};

// What /undo says about a restore.
std::string undo_text(const RestoreReport& report, const std::string& cwd);

class Checkpoints final : public tools::ChangeJournal {
 public:
  Checkpoints(EngineStore& store, std::string session_id, tools::FileState& file_state);

  // Changes recorded from now on belong to the checkpoint of this turn, until end_turn().
  void begin_turn(const std::string& turn_id);
  void end_turn();
  // The files changed so far in the turn being recorded (absolute, first change first, each once): what
  // the `verify` tool checks when the model names no files.
  std::vector<std::string> turn_changed_files() const;

  boost::asio::awaitable<support::Result<std::int64_t>> record(tools::FileChange change) override;
  void abandon(std::int64_t id) override;

  // Every checkpoint of the session, oldest first.
  boost::asio::awaitable<support::Result<std::vector<CheckpointInfo>>> list();
  // Puts back the files of checkpoint `target` and of every later one, newest first in effect (each file
  // goes to its content before `target`). The restore's own changes are recorded as checkpoint
  // `restore_id` (made by `turn_id`, when a turn made it). Errc::not_found for an unknown target.
  boost::asio::awaitable<support::Result<RestoreReport>> restore(std::string target, std::string restore_id,
                                                                 std::optional<std::string> turn_id,
                                                                 support::CancelToken cancel);
  // /undo: restores the newest turn that is not undone yet; a report without a target when there is none.
  boost::asio::awaitable<support::Result<RestoreReport>> undo(std::string restore_id,
                                                              std::optional<std::string> turn_id,
                                                              support::CancelToken cancel);

 private:
  struct Tag {
    std::string id;
    std::optional<std::string> turn_id;
    storage::CheckpointKind kind = storage::CheckpointKind::turn;
    std::optional<std::int64_t> restores_seq;
  };

  boost::asio::awaitable<support::Result<std::vector<storage::CheckpointRecord>>> load();
  boost::asio::awaitable<support::Result<RestoreReport>> restore_from(std::vector<storage::CheckpointRecord> records,
                                                                      std::size_t target, std::string restore_id,
                                                                      std::optional<std::string> turn_id,
                                                                      support::CancelToken cancel);

  EngineStore& store_;
  std::string session_id_;
  tools::FileState& file_state_;
  std::optional<Tag> tag_;                                          // whose changes are being recorded now
  std::vector<std::pair<std::int64_t, std::string>> turn_changes_;  // change id, path: of tag_'s turn
};

}  // namespace agentd::core
