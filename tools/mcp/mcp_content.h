// The pure parts of the MCP client: which protocol versions we speak, how a server's tool becomes a
// ToolSpec with an `mcp__<server>__<tool>` name, and how a tools/call result becomes a ToolResult.
// No I/O here, so every rule is tested on its own.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/support/json.h"
#include "tools/tool.h"

namespace agentd::tools::mcp {

// What we ask for in `initialize`, and what we accept back (newest first).
inline constexpr std::string_view kProtocolVersion = "2025-11-25";
// The stateless revision: no initialize; the client asks server/discover and every request carries the
// version and the client's capabilities in its _meta. Spoken with a server whose initialize fails.
inline constexpr std::string_view kStatelessProtocolVersion = "2026-07-28";
inline constexpr std::string_view kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kMetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
std::span<const std::string_view> supported_protocol_versions() noexcept;
bool is_supported_protocol_version(std::string_view version) noexcept;

// `mcp__<server>__<tool>`, characters outside [A-Za-z0-9_-] replaced by `_`, cut to 64 characters.
std::string mcp_tool_name(std::string_view server, std::string_view tool);

// One entry of a tools/list answer. Fails when the entry has no usable name.
struct ServerTool {
  std::string name;  // the server's own name, sent back in tools/call
  ToolSpec spec;     // spec.name is the mcp__ name
};
std::optional<ServerTool> read_server_tool(std::string_view server, const support::Json& tool);

// What of a tools/call result reaches the model, the history and the events: its text is cut to the
// first and last 16 KiB (as shell output is, the cut said in place and in metadata `omittedBytes`), and
// structuredContent larger than 64 KiB is left out of the metadata (`structuredContentBytes` says its
// size; the model still sees it as text, cut like the rest, when the server sent no text).
inline constexpr std::size_t kResultHeadBytes = std::size_t{16} << 10;
inline constexpr std::size_t kResultTailBytes = std::size_t{16} << 10;
inline constexpr std::size_t kMaxStructuredBytes = std::size_t{64} << 10;

// A tools/call result. isError results are ok=false with the server's text.
ToolResult tool_result_from_call(std::string_view server, std::string_view tool, const support::Json& result);

// A notifications/progress line: "progress 3/10: message", "progress 2", "progress 0.5: copying".
std::string format_progress(const support::Json& params);

}  // namespace agentd::tools::mcp
