#include "storage/permission_store.h"

#include <fmt/format.h>

namespace agentd::storage {

using support::Errc;

Result<std::int64_t> PermissionStore::add_approval(const ApprovalRecord& approval) {
  auto stmt = db_.cached(
      "INSERT INTO approvals (project, rule, verdict, session_id, created_at) VALUES (?, ?, ?, ?, ?) "
      "ON CONFLICT (project, rule) DO UPDATE SET verdict = excluded.verdict, session_id = excluded.session_id, "
      "created_at = excluded.created_at RETURNING id");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, approval.project).bind(2, approval.rule).bind(3, approval.verdict);
  if (approval.session_id) {
    s.bind(4, *approval.session_id);
  } else {
    s.bind_null(4);
  }
  s.bind(5, approval.created_at_ms);
  auto row = s.step();
  if (!row) return std::move(row).error();
  if (!*row) return Error(Errc::internal, "INSERT ... RETURNING gave no row");
  return s.column_int64(0);
}

Result<std::vector<ApprovalRecord>> PermissionStore::approvals(std::string_view project) {
  auto stmt = db_.cached(
      "SELECT id, project, rule, verdict, session_id, created_at FROM approvals WHERE project = ? ORDER BY id");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, project);
  std::vector<ApprovalRecord> out;
  while (true) {
    auto row = s.step();
    if (!row) return std::move(row).error();
    if (!*row) break;
    ApprovalRecord r;
    r.id = s.column_int64(0);
    r.project = s.column_string(1);
    r.rule = s.column_string(2);
    r.verdict = s.column_string(3);
    if (!s.is_null(4)) r.session_id = s.column_string(4);
    r.created_at_ms = s.column_int64(5);
    out.push_back(std::move(r));
  }
  return out;
}

Result<void> PermissionStore::revoke(std::string_view project, std::int64_t id) {
  auto stmt = db_.cached("DELETE FROM approvals WHERE id = ? AND project = ?");
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, id).bind(2, project);
  if (auto r = (*stmt)->run(); !r) return r;
  if (db_.changes() == 0) {
    return Error(Errc::not_found, fmt::format("no approval {} for the project {}", id, project));
  }
  return support::ok();
}

Result<std::int64_t> PermissionStore::record(const PermissionAuditRecord& entry) {
  auto stmt = db_.cached(
      "INSERT INTO permission_audit (session_id, turn_id, tool_call_id, tool, input_digest, decision, decided_by, "
      "reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, entry.session_id);
  if (entry.turn_id) {
    s.bind(2, *entry.turn_id);
  } else {
    s.bind_null(2);
  }
  s.bind(3, entry.tool_call_id).bind(4, entry.tool).bind(5, entry.input_digest).bind(6, entry.decision);
  s.bind(7, entry.decided_by).bind(8, entry.reason).bind(9, entry.created_at_ms);
  if (auto r = s.run(); !r) return std::move(r).error();
  return db_.last_insert_rowid();
}

Result<std::vector<PermissionAuditRecord>> PermissionStore::audit(std::string_view session_id) {
  auto stmt = db_.cached(
      "SELECT id, session_id, turn_id, tool_call_id, tool, input_digest, decision, decided_by, reason, created_at "
      "FROM permission_audit WHERE session_id = ? ORDER BY id");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, session_id);
  std::vector<PermissionAuditRecord> out;
  while (true) {
    auto row = s.step();
    if (!row) return std::move(row).error();
    if (!*row) break;
    PermissionAuditRecord r;
    r.id = s.column_int64(0);
    r.session_id = s.column_string(1);
    if (!s.is_null(2)) r.turn_id = s.column_string(2);
    r.tool_call_id = s.column_string(3);
    r.tool = s.column_string(4);
    r.input_digest = s.column_string(5);
    r.decision = s.column_string(6);
    r.decided_by = s.column_string(7);
    r.reason = s.column_string(8);
    r.created_at_ms = s.column_int64(9);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace agentd::storage
