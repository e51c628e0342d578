#include "storage/checkpoint_store.h"

#include <fmt/format.h>

namespace agentd::storage {

using support::Errc;

namespace {

constexpr std::string_view kCheckpointColumns = "id, session_id, seq, turn_id, kind, restores_seq, created_at";
constexpr std::string_view kChangeColumns = "id, checkpoint_id, path, before_hash, after_hash, mode, created_at";

CheckpointRecord read_checkpoint(const Statement& s) {
  CheckpointRecord c;
  c.id = s.column_string(0);
  c.session_id = s.column_string(1);
  c.seq = s.column_int64(2);
  if (!s.is_null(3)) c.turn_id = s.column_string(3);
  c.kind = support::enum_from_name<CheckpointKind>(s.column_text(4)).value_or(CheckpointKind::turn);
  if (!s.is_null(5)) c.restores_seq = s.column_int64(5);
  c.created_at_ms = s.column_int64(6);
  return c;
}

FileChangeRecord read_change(const Statement& s) {
  FileChangeRecord f;
  f.id = s.column_int64(0);
  f.checkpoint_id = s.column_string(1);
  f.path = s.column_string(2);
  if (!s.is_null(3)) f.before_hash = s.column_string(3);
  if (!s.is_null(4)) f.after_hash = s.column_string(4);
  f.mode = static_cast<std::uint32_t>(s.column_int64(5));
  f.created_at_ms = s.column_int64(6);
  return f;
}

void bind_optional(Statement& s, int index, const std::optional<std::string>& value) {
  if (value) {
    s.bind(index, *value);
  } else {
    s.bind_null(index);
  }
}

}  // namespace

constexpr support::EnumName<CheckpointKind> kCheckpointKindNames[] = {
    {CheckpointKind::turn, "turn"},
    {CheckpointKind::restore, "restore"},
};
static_assert(support::names_every_value(kCheckpointKindNames, CheckpointKind::restore));

std::span<const support::EnumName<CheckpointKind>> enum_names(CheckpointKind) noexcept { return kCheckpointKindNames; }

std::string_view checkpoint_kind_name(CheckpointKind kind) noexcept { return support::enum_name(kind, "turn"); }

Result<std::int64_t> CheckpointStore::open(const CheckpointRecord& header) {
  {
    auto existing = db_.cached("SELECT session_id, kind, seq FROM checkpoints WHERE id = ?");
    if (!existing) return std::move(existing).error();
    (*existing)->bind(1, header.id);
    if (AGENTD_TRY((*existing)->step())) {
      if ((*existing)->column_text(0) != header.session_id ||
          (*existing)->column_text(1) != checkpoint_kind_name(header.kind)) {
        return Error(Errc::conflict, fmt::format("checkpoint {} belongs to another session or kind", header.id));
      }
      return (*existing)->column_int64(2);
    }
  }
  auto stmt = db_.cached(
      "INSERT INTO checkpoints (id, session_id, seq, turn_id, kind, restores_seq, created_at) "
      "SELECT ?1, ?2, coalesce(max(seq), 0) + 1, ?3, ?4, ?5, ?6 FROM checkpoints WHERE session_id = ?2 "
      "RETURNING seq");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, header.id).bind(2, header.session_id);
  bind_optional(s, 3, header.turn_id);
  s.bind(4, checkpoint_kind_name(header.kind));
  if (header.restores_seq) {
    s.bind(5, *header.restores_seq);
  } else {
    s.bind_null(5);
  }
  s.bind(6, header.created_at_ms);
  auto row = s.step();
  if (!row) {
    switch (constraint_of(row.error())) {
      case Constraint::foreign_key:
        return Error(Errc::not_found, fmt::format("checkpoint {}: no session {}", header.id, header.session_id));
      case Constraint::check:
        return Error(Errc::invalid_argument,
                     fmt::format("checkpoint {}: a restore names the seq it restores, a turn does not", header.id));
      default: return std::move(row).error();
    }
  }
  if (!*row) return Error(Errc::internal, "INSERT ... RETURNING gave no row");
  const std::int64_t seq = s.column_int64(0);
  // Step to the end so the INSERT completes before the lease resets the statement.
  while (AGENTD_TRY(s.step())) {
  }
  return seq;
}

Result<std::int64_t> CheckpointStore::add_change(const FileChangeRecord& change) {
  auto stmt = db_.cached(
      "INSERT INTO file_changes (checkpoint_id, path, before_hash, after_hash, mode, created_at) "
      "VALUES (?, ?, ?, ?, ?, ?)");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, change.checkpoint_id).bind(2, change.path);
  bind_optional(s, 3, change.before_hash);
  bind_optional(s, 4, change.after_hash);
  s.bind(5, static_cast<std::int64_t>(change.mode)).bind(6, change.created_at_ms);
  if (auto r = s.run(); !r) {
    if (constraint_of(r.error()) == Constraint::foreign_key) {
      return Error(Errc::not_found, fmt::format("change of {}: no checkpoint {}, or its pre-image is not stored",
                                                change.path, change.checkpoint_id));
    }
    return std::move(r).error();
  }
  return db_.last_insert_rowid();
}

Result<void> CheckpointStore::remove_change(std::int64_t id) {
  auto tx = AGENTD_TRY(Transaction::begin(db_));
  std::string checkpoint;
  {
    auto find = db_.cached("SELECT checkpoint_id FROM file_changes WHERE id = ?");
    if (!find) return std::move(find).error();
    (*find)->bind(1, id);
    if (!AGENTD_TRY((*find)->step())) return support::ok();  // already gone
    checkpoint = (*find)->column_string(0);
  }
  auto remove = db_.cached("DELETE FROM file_changes WHERE id = ?");
  if (!remove) return std::move(remove).error();
  (*remove)->bind(1, id);
  AGENTD_TRY_VOID((*remove)->run());
  auto empty = db_.cached(
      "DELETE FROM checkpoints WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM file_changes WHERE checkpoint_id = ?1)");
  if (!empty) return std::move(empty).error();
  (*empty)->bind(1, checkpoint);
  AGENTD_TRY_VOID((*empty)->run());
  return tx.commit();
}

Result<std::vector<FileChangeRecord>> CheckpointStore::changes_of(std::string_view checkpoint_id) {
  auto stmt =
      db_.cached(fmt::format("SELECT {} FROM file_changes WHERE checkpoint_id = ? ORDER BY id", kChangeColumns));
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, checkpoint_id);
  std::vector<FileChangeRecord> out;
  while (AGENTD_TRY((*stmt)->step())) out.push_back(read_change(**stmt));
  return out;
}

Result<std::vector<CheckpointRecord>> CheckpointStore::for_session(std::string_view session_id) {
  std::vector<CheckpointRecord> out;
  {
    auto stmt =
        db_.cached(fmt::format("SELECT {} FROM checkpoints WHERE session_id = ? ORDER BY seq", kCheckpointColumns));
    if (!stmt) return std::move(stmt).error();
    (*stmt)->bind(1, session_id);
    while (AGENTD_TRY((*stmt)->step())) out.push_back(read_checkpoint(**stmt));
  }
  for (auto& c : out) c.changes = AGENTD_TRY(changes_of(c.id));
  return out;
}

Result<std::optional<CheckpointRecord>> CheckpointStore::get(std::string_view id) {
  std::optional<CheckpointRecord> out;
  {
    auto stmt = db_.cached(fmt::format("SELECT {} FROM checkpoints WHERE id = ?", kCheckpointColumns));
    if (!stmt) return std::move(stmt).error();
    (*stmt)->bind(1, id);
    if (!AGENTD_TRY((*stmt)->step())) return out;
    out = read_checkpoint(**stmt);
  }
  out->changes = AGENTD_TRY(changes_of(out->id));
  return out;
}

}  // namespace agentd::storage
