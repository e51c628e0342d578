// agentd's extension method names, `_agentd/<resource>/<verb>` (DESIGN.md section 1): what ACP lacks
// (trace, cost, permissions, event replay, context, trust, verification, memory, checkpoints). Like
// methods.h, the dispatch table and every caller (the `agent` CLI too) spell them through these constants.
#pragma once

#include <string_view>

namespace agentd::protocol::acp::ext::method {

// Handled by the agent (us). Params and results are in protocol/acp/ext.h.
inline constexpr std::string_view kPing = "_agentd/ping";      // allowed before initialize
inline constexpr std::string_view kStatus = "_agentd/status";  // allowed before initialize
inline constexpr std::string_view kTraceGet = "_agentd/trace/get";
inline constexpr std::string_view kCostGet = "_agentd/cost/get";
inline constexpr std::string_view kPermissionsList = "_agentd/permissions/list";
inline constexpr std::string_view kPermissionsRevoke = "_agentd/permissions/revoke";
inline constexpr std::string_view kPermissionsAudit = "_agentd/permissions/audit";
inline constexpr std::string_view kEventsReplay = "_agentd/events/replay";
inline constexpr std::string_view kContextPreview = "_agentd/context/preview";
inline constexpr std::string_view kProjectTrust = "_agentd/project/trust";
inline constexpr std::string_view kVerifyPlan = "_agentd/verify/plan";
inline constexpr std::string_view kMemoryAdd = "_agentd/memory/add";
inline constexpr std::string_view kMemoryList = "_agentd/memory/list";
inline constexpr std::string_view kMemoryDelete = "_agentd/memory/delete";
inline constexpr std::string_view kCheckpointsList = "_agentd/checkpoints/list";
inline constexpr std::string_view kCheckpointsRestore = "_agentd/checkpoints/restore";
inline constexpr std::string_view kSessionSetBudget = "_agentd/session/set_budget";

}  // namespace agentd::protocol::acp::ext::method
