// ACP v1 session lifecycle: session/new, load, list, resume, close, delete, set_mode,
// set_config_option, prompt and the session/cancel notification. Requests are read with from_json
// (the client sends them), responses written with to_json; both directions exist for every type so the
// `agent` CLI, which is a client, can use the same structs. Wire names live in session.cpp only.
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
#include "protocol/acp/content.h"

namespace agentd::protocol::acp {

// ---- MCP servers the client asks us to launch or connect to -------------------------------------

struct EnvVariable {
  std::string name{};
  std::string value{};
  support::Json meta{};
};

struct HttpHeader {
  std::string name{};
  std::string value{};
  support::Json meta{};
};

// Untagged on the wire (every agent must support it).
struct McpServerStdio {
  std::string name{};
  std::string command{};  // absolute path
  std::vector<std::string> args{};
  std::vector<EnvVariable> env{};
  support::Json meta{};
};

// {"type":"http"}: only when we advertise mcpCapabilities.http.
struct McpServerHttp {
  std::string name{};
  std::string url{};
  std::vector<HttpHeader> headers{};
  support::Json meta{};
};

// {"type":"sse"}: only when we advertise mcpCapabilities.sse.
struct McpServerSse {
  std::string name{};
  std::string url{};
  std::vector<HttpHeader> headers{};
  support::Json meta{};
};

using McpServer = std::variant<McpServerStdio, McpServerHttp, McpServerSse>;

// ---- modes and config options --------------------------------------------------------------------

struct SessionMode {
  std::string id{};
  std::string name{};
  std::optional<std::string> description{};
  support::Json meta{};
};

struct SessionModeState {
  std::string current_mode_id{};
  std::vector<SessionMode> available_modes{};
  support::Json meta{};
};

struct SessionConfigSelectOption {
  std::string value{};
  std::string name{};
  std::optional<std::string> description{};
  support::Json meta{};
};

// The "select" kind of SessionConfigOption (written with "type":"select"), with a flat option list.
// The schema also has a "boolean" kind (only for clients that advertise it) and grouped options; we
// neither send nor accept those.
struct SessionConfigOption {
  std::string id{};
  std::string name{};
  std::optional<std::string> description{};
  // Open set: "mode", "model", "model_config", "thought_level", or "_custom". UX only.
  std::optional<std::string> category{};
  std::string current_value{};
  std::vector<SessionConfigSelectOption> options{};
  support::Json meta{};
};

// ---- requests and responses ----------------------------------------------------------------------

struct NewSessionRequest {
  std::string cwd{};  // absolute
  std::vector<std::string> additional_directories{};
  std::vector<McpServer> mcp_servers{};
  support::Json meta{};
};

struct NewSessionResponse {
  std::string session_id{};
  std::optional<SessionModeState> modes{};
  std::optional<std::vector<SessionConfigOption>> config_options{};
  support::Json meta{};
};

// session/load: only when we advertise loadSession. We replay the history as session/update
// notifications before answering.
struct LoadSessionRequest {
  std::string session_id{};
  std::string cwd{};
  std::vector<std::string> additional_directories{};
  std::vector<McpServer> mcp_servers{};
  support::Json meta{};
};

struct LoadSessionResponse {
  std::optional<SessionModeState> modes{};
  std::optional<std::vector<SessionConfigOption>> config_options{};
  support::Json meta{};
};

// session/list: only with sessionCapabilities.list.
struct ListSessionsRequest {
  std::optional<std::string> cwd{};  // filter
  std::optional<std::string> cursor{};
  support::Json meta{};
};

struct SessionInfo {
  std::string session_id{};
  std::string cwd{};
  std::vector<std::string> additional_directories{};  // written only when non-empty
  std::optional<std::string> title{};
  std::optional<std::string> updated_at{};  // ISO 8601
  support::Json meta{};
};

struct ListSessionsResponse {
  std::vector<SessionInfo> sessions{};
  std::optional<std::string> next_cursor{};
  support::Json meta{};
};

// session/resume: like load, without replaying history. Only with sessionCapabilities.resume.
struct ResumeSessionRequest {
  std::string session_id{};
  std::string cwd{};
  std::vector<std::string> additional_directories{};
  std::vector<McpServer> mcp_servers{};  // optional here, unlike new and load
  support::Json meta{};
};

struct ResumeSessionResponse {
  std::optional<SessionModeState> modes{};
  std::optional<std::vector<SessionConfigOption>> config_options{};
  support::Json meta{};
};

// session/fork (unstable in v1, schema.unstable.json): a new session with the source's history. Only
// with sessionCapabilities.fork. additionalDirectories, when non-empty, is the fork's whole list.
struct ForkSessionRequest {
  std::string session_id{};
  std::string cwd{};
  std::vector<std::string> additional_directories{};
  std::vector<McpServer> mcp_servers{};
  support::Json meta{};
};

struct ForkSessionResponse {
  std::string session_id{};
  std::optional<SessionModeState> modes{};
  std::optional<std::vector<SessionConfigOption>> config_options{};
  support::Json meta{};
};

// session/close: cancel any ongoing work as session/cancel would, then free the session.
struct CloseSessionRequest {
  std::string session_id{};
  support::Json meta{};
};

struct CloseSessionResponse {
  support::Json meta{};
};

// session/delete: forget a session listed by session/list. Only with sessionCapabilities.delete.
struct DeleteSessionRequest {
  std::string session_id{};
  support::Json meta{};
};

struct DeleteSessionResponse {
  support::Json meta{};
};

struct SetSessionModeRequest {
  std::string session_id{};
  std::string mode_id{};
  support::Json meta{};
};

struct SetSessionModeResponse {
  support::Json meta{};
};

// `value` is a select option's value id (a string), or a boolean sent as {"type":"boolean","value":b}.
struct SetSessionConfigOptionRequest {
  std::string session_id{};
  std::string config_id{};
  std::variant<std::string, bool> value{};
  support::Json meta{};
};

struct SetSessionConfigOptionResponse {
  std::vector<SessionConfigOption> config_options{};  // the full set, after the change
  support::Json meta{};
};

struct PromptRequest {
  std::string session_id{};
  std::vector<ContentBlock> prompt{};
  support::Json meta{};
};

enum class StopReason { end_turn, max_tokens, max_turn_requests, refusal, cancelled };

// Token usage is not part of the stable 2.4.0 PromptResponse (only the unstable schema has `usage`):
// it travels in the usage_update notification and in `_meta`.
struct PromptResponse {
  StopReason stop_reason = StopReason::end_turn;
  support::Json meta{};
};

// session/cancel (a notification: no response).
struct CancelNotification {
  std::string session_id{};
  support::Json meta{};
};

std::string_view name(StopReason v) noexcept;
bool parse(std::string_view text, StopReason& out) noexcept;

bool from_json(const support::JsonIn& in, StopReason& out);
bool from_json(const support::JsonIn& in, EnvVariable& out);
bool from_json(const support::JsonIn& in, HttpHeader& out);
bool from_json(const support::JsonIn& in, McpServer& out);
bool from_json(const support::JsonIn& in, SessionMode& out);
bool from_json(const support::JsonIn& in, SessionModeState& out);
bool from_json(const support::JsonIn& in, SessionConfigSelectOption& out);
bool from_json(const support::JsonIn& in, SessionConfigOption& out);
bool from_json(const support::JsonIn& in, NewSessionRequest& out);
bool from_json(const support::JsonIn& in, NewSessionResponse& out);
bool from_json(const support::JsonIn& in, LoadSessionRequest& out);
bool from_json(const support::JsonIn& in, LoadSessionResponse& out);
bool from_json(const support::JsonIn& in, ListSessionsRequest& out);
bool from_json(const support::JsonIn& in, SessionInfo& out);
bool from_json(const support::JsonIn& in, ListSessionsResponse& out);
bool from_json(const support::JsonIn& in, ResumeSessionRequest& out);
bool from_json(const support::JsonIn& in, ResumeSessionResponse& out);
bool from_json(const support::JsonIn& in, ForkSessionRequest& out);
bool from_json(const support::JsonIn& in, ForkSessionResponse& out);
bool from_json(const support::JsonIn& in, CloseSessionRequest& out);
bool from_json(const support::JsonIn& in, CloseSessionResponse& out);
bool from_json(const support::JsonIn& in, DeleteSessionRequest& out);
bool from_json(const support::JsonIn& in, DeleteSessionResponse& out);
bool from_json(const support::JsonIn& in, SetSessionModeRequest& out);
bool from_json(const support::JsonIn& in, SetSessionModeResponse& out);
bool from_json(const support::JsonIn& in, SetSessionConfigOptionRequest& out);
bool from_json(const support::JsonIn& in, SetSessionConfigOptionResponse& out);
bool from_json(const support::JsonIn& in, PromptRequest& out);
bool from_json(const support::JsonIn& in, PromptResponse& out);
bool from_json(const support::JsonIn& in, CancelNotification& out);

void to_json(support::JsonWriter& w, StopReason v);
void to_json(support::JsonWriter& w, const EnvVariable& v);
void to_json(support::JsonWriter& w, const HttpHeader& v);
void to_json(support::JsonWriter& w, const McpServer& v);
void to_json(support::JsonWriter& w, const SessionMode& v);
void to_json(support::JsonWriter& w, const SessionModeState& v);
void to_json(support::JsonWriter& w, const SessionConfigSelectOption& v);
void to_json(support::JsonWriter& w, const SessionConfigOption& v);
void to_json(support::JsonWriter& w, const NewSessionRequest& v);
void to_json(support::JsonWriter& w, const NewSessionResponse& v);
void to_json(support::JsonWriter& w, const LoadSessionRequest& v);
void to_json(support::JsonWriter& w, const LoadSessionResponse& v);
void to_json(support::JsonWriter& w, const ListSessionsRequest& v);
void to_json(support::JsonWriter& w, const SessionInfo& v);
void to_json(support::JsonWriter& w, const ListSessionsResponse& v);
void to_json(support::JsonWriter& w, const ResumeSessionRequest& v);
void to_json(support::JsonWriter& w, const ResumeSessionResponse& v);
void to_json(support::JsonWriter& w, const ForkSessionRequest& v);
void to_json(support::JsonWriter& w, const ForkSessionResponse& v);
void to_json(support::JsonWriter& w, const CloseSessionRequest& v);
void to_json(support::JsonWriter& w, const CloseSessionResponse& v);
void to_json(support::JsonWriter& w, const DeleteSessionRequest& v);
void to_json(support::JsonWriter& w, const DeleteSessionResponse& v);
void to_json(support::JsonWriter& w, const SetSessionModeRequest& v);
void to_json(support::JsonWriter& w, const SetSessionModeResponse& v);
void to_json(support::JsonWriter& w, const SetSessionConfigOptionRequest& v);
void to_json(support::JsonWriter& w, const SetSessionConfigOptionResponse& v);
void to_json(support::JsonWriter& w, const PromptRequest& v);
void to_json(support::JsonWriter& w, const PromptResponse& v);
void to_json(support::JsonWriter& w, const CancelNotification& v);

}  // namespace agentd::protocol::acp
