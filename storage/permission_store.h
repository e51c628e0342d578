// Permissions on disk: "always" approvals persisted per project, listable and revocable, and the audit
// trail with one row per decision (who or what decided, about which exact input).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sqlite.h"

namespace agentd::storage {

struct ApprovalRecord {
  std::int64_t id = 0;
  std::string project;  // absolute workspace path
  std::string rule;     // "shell(npm test)"
  std::string verdict;  // "allow" | "deny"
  std::optional<std::string> session_id;
  std::int64_t created_at_ms = 0;
};

struct PermissionAuditRecord {
  std::int64_t id = 0;
  std::string session_id;
  std::optional<std::string> turn_id;
  std::string tool_call_id;
  std::string tool;
  std::string input_digest;
  std::string decision;    // "allow" | "deny"
  std::string decided_by;  // "policy" | "user" | "no_client"
  std::string reason;
  std::int64_t created_at_ms = 0;
};

class PermissionStore {
 public:
  explicit PermissionStore(Connection& db) : db_(db) {}

  // Adds (or, for the same project and rule, replaces) an approval; returns its id.
  Result<std::int64_t> add_approval(const ApprovalRecord& approval);
  Result<std::vector<ApprovalRecord>> approvals(std::string_view project);
  // Errc::not_found when there is no approval `id` for `project`.
  Result<void> revoke(std::string_view project, std::int64_t id);

  Result<std::int64_t> record(const PermissionAuditRecord& entry);
  // The session's decisions, oldest first.
  Result<std::vector<PermissionAuditRecord>> audit(std::string_view session_id);

 private:
  Connection& db_;
};

}  // namespace agentd::storage
