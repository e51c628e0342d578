// Permissions on disk: "always" approvals persisted per project, listable and revocable, and the audit
// trail with one row per decision (who or what decided, about which exact input), which outlives the
// session it was made in.
#pragma once

#include <cstddef>
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
  // The session's working directory. record() fills it from `sessions` when empty; read back empty
  // when nobody knew it.
  std::string cwd;
  std::string risk;  // risk names joined by '|': "execute|network"; empty when not assessed
};

class PermissionStore {
 public:
  explicit PermissionStore(Connection& db) : db_(db) {}

  // Adds (or, for the same project and rule, replaces) an approval; returns its id.
  Result<std::int64_t> add_approval(const ApprovalRecord& approval);
  Result<std::vector<ApprovalRecord>> approvals(std::string_view project);
  // Errc::not_found when there is no approval `id` for `project`.
  Result<void> revoke(std::string_view project, std::int64_t id);

  static constexpr std::size_t kDefaultAuditLimit = 100;
  static constexpr std::size_t kMaxAuditLimit = 1000;

  Result<std::int64_t> record(const PermissionAuditRecord& entry);
  // The recorded decisions, newest first (in the order they were recorded, so a clock that steps back
  // does not reorder them), of one session or, with no `session_id`, of every session, deleted ones
  // included. At most `limit` rows, and never more than kMaxAuditLimit; an unknown session has none.
  Result<std::vector<PermissionAuditRecord>> audit(const std::optional<std::string>& session_id,
                                                   std::size_t limit = kDefaultAuditLimit);

 private:
  Connection& db_;
};

}  // namespace agentd::storage
