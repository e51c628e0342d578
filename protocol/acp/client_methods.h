// ACP v1 methods the client handles and we call: session/request_permission, fs/read_text_file and
// fs/write_text_file (the latter two only when the client offered them in initialize). We write the
// requests and read the responses; the other direction exists for tests and the `agent` CLI.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/support/json.h"
#include "core/support/json_reader.h"
#include "core/support/json_writer.h"
#include "protocol/acp/session_update.h"

namespace agentd::protocol::acp {

enum class PermissionOptionKind { allow_once, allow_always, reject_once, reject_always };

struct PermissionOption {
  std::string option_id{};
  std::string name{};  // the button label
  PermissionOptionKind kind = PermissionOptionKind::allow_once;
  support::Json meta{};
};

struct RequestPermissionRequest {
  std::string session_id{};
  ToolCallUpdate tool_call{};
  std::vector<PermissionOption> options{};
  support::Json meta{};  // agentd puts the input digest the approval is bound to here
};

// {"outcome":"cancelled"}: the prompt turn was cancelled before the user chose.
struct CancelledPermissionOutcome {};

// {"outcome":"selected","optionId":...}
struct SelectedPermissionOutcome {
  std::string option_id{};
  support::Json meta{};
};

using RequestPermissionOutcome = std::variant<CancelledPermissionOutcome, SelectedPermissionOutcome>;

struct RequestPermissionResponse {
  RequestPermissionOutcome outcome{};
  support::Json meta{};
};

struct ReadTextFileRequest {
  std::string session_id{};
  std::string path{};                    // absolute
  std::optional<std::uint32_t> line{};   // 1-based first line
  std::optional<std::uint32_t> limit{};  // at most this many lines
  support::Json meta{};
};

struct ReadTextFileResponse {
  std::string content{};
  support::Json meta{};
};

struct WriteTextFileRequest {
  std::string session_id{};
  std::string path{};  // absolute
  std::string content{};
  support::Json meta{};
};

struct WriteTextFileResponse {
  support::Json meta{};
};

std::string_view name(PermissionOptionKind v) noexcept;
bool parse(std::string_view text, PermissionOptionKind& out) noexcept;

bool from_json(const support::JsonIn& in, PermissionOptionKind& out);
bool from_json(const support::JsonIn& in, PermissionOption& out);
bool from_json(const support::JsonIn& in, RequestPermissionRequest& out);
bool from_json(const support::JsonIn& in, RequestPermissionOutcome& out);
bool from_json(const support::JsonIn& in, RequestPermissionResponse& out);
bool from_json(const support::JsonIn& in, ReadTextFileRequest& out);
bool from_json(const support::JsonIn& in, ReadTextFileResponse& out);
bool from_json(const support::JsonIn& in, WriteTextFileRequest& out);
bool from_json(const support::JsonIn& in, WriteTextFileResponse& out);

void to_json(support::JsonWriter& w, PermissionOptionKind v);
void to_json(support::JsonWriter& w, const PermissionOption& v);
void to_json(support::JsonWriter& w, const RequestPermissionRequest& v);
void to_json(support::JsonWriter& w, const RequestPermissionOutcome& v);
void to_json(support::JsonWriter& w, const RequestPermissionResponse& v);
void to_json(support::JsonWriter& w, const ReadTextFileRequest& v);
void to_json(support::JsonWriter& w, const ReadTextFileResponse& v);
void to_json(support::JsonWriter& w, const WriteTextFileRequest& v);
void to_json(support::JsonWriter& w, const WriteTextFileResponse& v);

}  // namespace agentd::protocol::acp
