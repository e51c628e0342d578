// Engine state and events in ACP terms: the one place engine types become protocol/acp types
// (session/update payloads, modes, config options, the session-start `_meta`). Used by the ACP binding
// (acp_server.cpp, acp_extensions.cpp) and the frontend that streams events (acp_frontend.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/events.h"
#include "core/engine/session.h"
#include "protocol/acp/session.h"
#include "protocol/acp/session_update.h"

namespace agentd::daemon {

protocol::acp::ToolKind acp_kind(tools::ToolKind kind);
std::vector<protocol::acp::ToolCallContent> tool_content(const std::optional<std::string>& text,
                                                         const std::vector<tools::ToolDiff>& diffs);
std::vector<protocol::acp::ToolCallLocation> tool_locations(const std::vector<std::string>& paths);

std::vector<protocol::acp::SessionConfigOption> config_options(const core::Session& session);
protocol::acp::SessionModeState mode_state(const core::Session& session);
// `_meta.agentd.projectTrust` for a session whose project's loosening settings were ignored; null
// otherwise.
support::Json project_trust_meta(const core::Session& session);

// Every engine event, in ACP terms; nullopt for events a client is not shown. `replay` includes the
// user's own messages (a live client already shows what it sent). `session` may be null (not open).
std::optional<protocol::acp::SessionUpdate> to_update(const core::EngineEvent& event, const core::Session* session,
                                                      bool replay);
// The session/update params for one logged event, numbered with `_meta.agentd.seq`.
protocol::acp::SessionNotification notification(const std::string& session_id, std::int64_t seq,
                                                protocol::acp::SessionUpdate update);

// "2026-12-05T07:20:38.123Z"
std::string iso8601(std::int64_t unix_ms);

}  // namespace agentd::daemon
