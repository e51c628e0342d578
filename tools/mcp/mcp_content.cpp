#include "tools/mcp/mcp_content.h"

#include <array>
#include <cmath>

#include <fmt/format.h>

#include "core/support/base64.h"
#include "core/support/text.h"
#include "tools/process.h"

namespace agentd::tools::mcp {
namespace {

using support::Json;

constexpr std::array<std::string_view, 4> kSupportedVersions = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
constexpr std::size_t kMaxToolName = 64;
constexpr std::size_t kMaxSummary = 160;

const std::string* string_member(const Json& object, std::string_view key) {
  const Json* member = object.find(key);
  return member != nullptr && member->is_string() ? &member->as_string() : nullptr;
}

std::string format_number(const Json& number) {
  if (number.is_integer()) return number.dump();
  const double value = number.as_double();
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15) {
    return fmt::format("{}", static_cast<long long>(value));
  }
  return fmt::format("{}", value);
}

std::string one_line(std::string_view text) {
  const std::size_t end = text.find('\n');
  std::string line(text.substr(0, end));
  if (line.size() > kMaxSummary) {
    std::size_t cut = kMaxSummary;
    cut = support::utf8_floor(line, cut);  // keep UTF-8 whole
    line.resize(cut);
    line += "...";
  }
  return line;
}

// One content block as text for the model.
std::string block_text(const Json& block) {
  const std::string* type = string_member(block, "type");
  if (type == nullptr) return "[content block without a type]";
  if (*type == "text") {
    const std::string* text = string_member(block, "text");
    return text != nullptr ? *text : std::string();
  }
  if (*type == "image" || *type == "audio") {
    const std::string* mime = string_member(block, "mimeType");
    const std::string* data = string_member(block, "data");
    return fmt::format("[{}: {}, {} bytes]", *type, mime != nullptr ? *mime : "unknown type",
                       data != nullptr ? support::base64_decoded_size(*data) : 0);
  }
  if (*type == "resource") {
    const Json& resource = block["resource"];
    const std::string* uri = string_member(resource, "uri");
    std::string out = uri != nullptr ? *uri : "[embedded resource]";
    if (const std::string* text = string_member(resource, "text")) {
      out += "\n";
      out += *text;
    } else if (const std::string* blob = string_member(resource, "blob")) {
      const std::string* mime = string_member(resource, "mimeType");
      out += fmt::format("\n[{}, {} bytes]", mime != nullptr ? *mime : "binary", support::base64_decoded_size(*blob));
    }
    return out;
  }
  if (*type == "resource_link") {
    const std::string* uri = string_member(block, "uri");
    std::string out = uri != nullptr ? *uri : "[resource link]";
    if (const std::string* name = string_member(block, "name")) out += fmt::format(" ({})", *name);
    if (const std::string* description = string_member(block, "description")) {
      out += "\n";
      out += *description;
    }
    return out;
  }
  return fmt::format("[{} content]", *type);
}

}  // namespace

std::span<const std::string_view> supported_protocol_versions() noexcept { return kSupportedVersions; }

bool is_supported_protocol_version(std::string_view version) noexcept {
  for (std::string_view known : kSupportedVersions) {
    if (known == version) return true;
  }
  return false;
}

std::string mcp_tool_name(std::string_view server, std::string_view tool) {
  std::string name = fmt::format("mcp__{}__{}", server, tool);
  for (char& c : name) {
    const bool allowed =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!allowed) c = '_';
  }
  if (name.size() > kMaxToolName) name.resize(kMaxToolName);
  return name;
}

std::optional<ServerTool> read_server_tool(std::string_view server, const Json& tool) {
  const std::string* name = string_member(tool, "name");
  if (name == nullptr || name->empty()) return std::nullopt;
  ServerTool out;
  out.name = *name;
  out.spec.name = mcp_tool_name(server, *name);
  if (const std::string* description = string_member(tool, "description")) {
    out.spec.description = *description;
  } else if (const std::string* title = string_member(tool, "title")) {
    out.spec.description = *title;
  }
  const Json* schema = tool.find("inputSchema");
  out.spec.input_schema = schema != nullptr && schema->is_object() ? *schema : Json(Json::Object{{"type", "object"}});
  const Json* read_only = tool["annotations"].find("readOnlyHint");
  const bool is_read_only = read_only != nullptr && read_only->is_bool() && read_only->as_bool();
  out.spec.kind = is_read_only ? ToolKind::read : ToolKind::other;
  out.spec.base_risk = is_read_only ? Risk::read : Risk::execute;
  return out;
}

ToolResult tool_result_from_call(std::string_view server, std::string_view tool, const Json& result) {
  ToolResult out;
  // A server may answer with up to a frame's worth (64 MiB) of text: only the head and tail are kept.
  OutputCapture text(kResultHeadBytes, kResultTailBytes);
  if (const Json* content = result.find("content"); content != nullptr && content->is_array()) {
    for (const Json& block : content->as_array()) {
      const std::string piece = block_text(block);
      if (piece.empty()) continue;
      if (text.total_bytes() > 0) text.append("\n");
      text.append(piece);
    }
  }
  const Json* structured = result.find("structuredContent");
  if (structured != nullptr && !structured->is_null()) {
    const std::string dumped = structured->dump();
    if (dumped.size() <= kMaxStructuredBytes) {
      out.metadata.set("structuredContent", *structured);
    } else {
      out.metadata.set("structuredContentBytes", dumped.size());
    }
    // Servers should mirror structured content as text; when one does not, the model still sees it.
    if (text.total_bytes() == 0) text.append(dumped);
  }
  out.metadata.set("server", std::string(server));
  out.metadata.set("tool", std::string(tool));
  if (text.dropped_bytes() > 0) out.metadata.set("omittedBytes", text.dropped_bytes());
  const Json* is_error = result.find("isError");
  out.ok = !(is_error != nullptr && is_error->is_bool() && is_error->as_bool());
  std::string body = text.text();
  if (!out.ok) {
    if (body.empty()) body = fmt::format("MCP tool '{}' on server '{}' reported an error", tool, server);
    out.summary = one_line(body);
  } else {
    out.summary = body.empty() ? fmt::format("{}: {} done", server, tool) : one_line(body);
  }
  out.content = std::move(body);
  return out;
}

std::string format_progress(const Json& params) {
  std::string out = "progress";
  if (const Json* progress = params.find("progress"); progress != nullptr && progress->is_number()) {
    out += " " + format_number(*progress);
    if (const Json* total = params.find("total"); total != nullptr && total->is_number()) {
      out += "/" + format_number(*total);
    }
  }
  if (const std::string* message = string_member(params, "message"); message != nullptr && !message->empty()) {
    out += ": " + *message;
  }
  return out;
}

}  // namespace agentd::tools::mcp
