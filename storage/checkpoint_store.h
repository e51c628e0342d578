// File checkpoints in SQLite (schema version 3): the pre-images of files the tools changed, kept in the
// content-addressed blob table (blob_store.h), and the changes grouped by the turn (or restore) that made them. The
// engine records a change here, durably, before the file is touched, and reads it back to undo the turn.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/enum_names.h"
#include "storage/sqlite.h"

namespace agentd::storage {

enum class CheckpointKind { turn, restore };
std::string_view checkpoint_kind_name(CheckpointKind kind) noexcept;
std::span<const support::EnumName<CheckpointKind>> enum_names(CheckpointKind) noexcept;

struct FileChangeRecord {
  std::int64_t id = 0;  // assigned by add_change
  std::string checkpoint_id;
  std::string path;
  std::optional<std::string> before_hash;  // empty: the file did not exist before
  std::optional<std::string> after_hash;   // empty: the change removed the file
  std::uint32_t mode = 0;                  // permission bits before the change
  std::int64_t created_at_ms = 0;
};

struct CheckpointRecord {
  std::string id;
  std::string session_id;
  std::int64_t seq = 0;                // 1, 2, 3, ... within the session, in the order of first change
  std::optional<std::string> turn_id;  // empty for a restore made outside a turn
  CheckpointKind kind = CheckpointKind::turn;
  std::optional<std::int64_t> restores_seq;  // restore: files went back to before this checkpoint
  std::int64_t created_at_ms = 0;
  std::vector<FileChangeRecord> changes;  // in the order they were made
};

class CheckpointStore {
 public:
  explicit CheckpointStore(Connection& db) : db_(db) {}

  // The checkpoint `header.id`, created on first use with the session's next seq (the header's seq is
  // ignored then); returns its seq. Errc::not_found when the session does not exist, Errc::conflict when
  // the id belongs to another session or kind.
  Result<std::int64_t> open(const CheckpointRecord& header);
  // Adds a change to an open checkpoint; returns its id. Errc::not_found when the checkpoint does not
  // exist or the pre-image blob was not stored first.
  Result<std::int64_t> add_change(const FileChangeRecord& change);
  // Forgets a change that did not happen; a checkpoint left without changes goes too.
  Result<void> remove_change(std::int64_t id);

  // The session's checkpoints with their changes, by seq.
  Result<std::vector<CheckpointRecord>> for_session(std::string_view session_id);
  Result<std::optional<CheckpointRecord>> get(std::string_view id);

 private:
  Result<std::vector<FileChangeRecord>> changes_of(std::string_view checkpoint_id);
  Connection& db_;
};

}  // namespace agentd::storage
