// libFuzzer target: what an MCP server can send, as the client reads it: bytes -> newline framing ->
// JSON -> a tools/list entry, a tools/call result, a progress notification. Checks that nothing crashes
// or hangs, that how the bytes are split does not change the frames, that a tool's name is always a
// valid mcp__ name, and that a result's text stays within its cap and is valid UTF-8.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/json.h"
#include "core/support/text.h"
#include "protocol/framing.h"
#include "test/fuzz/fuzz_support.h"
#include "tools/mcp/mcp_content.h"

namespace {

namespace support = agentd::support;
namespace mcp = agentd::tools::mcp;
using agentd::protocol::FrameEvent;

using agentd::fuzz::check;
constexpr std::size_t kMaxFrame = std::size_t{64} << 10;

bool valid_tool_name(std::string_view name) {
  if (!name.starts_with("mcp__") || name.size() > 64) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void read_message(const support::Json& message) {
  if (auto tool = mcp::read_server_tool("server", message)) check(valid_tool_name(tool->spec.name));
  const support::Json* result = message.find("result");
  const support::Json& call = result != nullptr ? *result : message;
  const agentd::tools::ToolResult out = mcp::tool_result_from_call("server", "tool", call);
  // The cut keeps a head and a tail and says what it left out in a line between them.
  check(out.content.size() <= mcp::kResultHeadBytes + mcp::kResultTailBytes + 512);
  check(support::is_valid_utf8(out.content));
  (void)mcp::format_progress(message.find("params") != nullptr ? *message.find("params") : message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto whole = agentd::fuzz::frames_of(bytes, bytes.size() + 1, kMaxFrame);
  check(agentd::fuzz::same_frames(agentd::fuzz::frames_of(bytes, chunk, kMaxFrame), whole));
  for (const auto& frame : whole) {
    if (frame.kind != FrameEvent::Kind::message) continue;
    if (auto message = support::parse_json(frame.payload)) read_message(*message);
  }
  return 0;
}
