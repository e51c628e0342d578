#include "storage/permission_store.h"

#include <algorithm>

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
  // An entry that does not say its cwd takes the session's, so the row names its project even after the
  // session is gone.
  auto stmt = db_.cached(
      "INSERT INTO permission_audit (session_id, turn_id, tool_call_id, tool, input_digest, decision, decided_by, "
      "reason, created_at, cwd, risk) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
      "COALESCE(?10, (SELECT cwd FROM sessions WHERE id = ?1)), ?11)");
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
  if (entry.cwd.empty()) {
    s.bind_null(10);
  } else {
    s.bind(10, entry.cwd);
  }
  s.bind(11, entry.risk);
  if (auto r = s.run(); !r) return std::move(r).error();
  return db_.last_insert_rowid();
}

Result<std::vector<PermissionAuditRecord>> PermissionStore::audit(const std::optional<std::string>& session_id,
                                                                  std::size_t limit) {
  // Two statements rather than "(?1 IS NULL OR session_id = ?1)", so the per-session one uses the index.
  auto stmt = session_id
                  ? db_.cached(
                        "SELECT id, session_id, turn_id, tool_call_id, tool, input_digest, decision, decided_by, "
                        "reason, created_at, cwd, risk FROM permission_audit WHERE session_id = ?1 "
                        "ORDER BY id DESC LIMIT ?2")
                  : db_.cached(
                        "SELECT id, session_id, turn_id, tool_call_id, tool, input_digest, decision, decided_by, "
                        "reason, created_at, cwd, risk FROM permission_audit ORDER BY id DESC LIMIT ?2");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  if (session_id) s.bind(1, *session_id);
  s.bind(2, static_cast<std::int64_t>(std::min(limit, kMaxAuditLimit)));
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
    if (!s.is_null(10)) r.cwd = s.column_string(10);
    r.risk = s.column_string(11);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace agentd::storage
