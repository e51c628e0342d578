#include "protocol/acp/session.h"

#include <array>

#include "protocol/acp/wire_util.h"

namespace agentd::protocol::acp {

using support::Json;
using support::JsonIn;
using support::JsonWriter;

namespace {

constexpr std::array<std::string_view, 5> kStopReasons = {"end_turn", "max_tokens", "max_turn_requests", "refusal",
                                                          "cancelled"};

// The three responses that describe a session's state (new without the id, load, resume).
template <class T>
bool read_session_state(const JsonIn& in, T& out) {
  if (!in.require_object()) return false;
  detail::read_lenient(in, "modes", out.modes);
  detail::read_lenient_items(in, "configOptions", out.config_options);
  detail::read_meta(in, out.meta);
  return true;
}

template <class T>
void write_session_state(JsonWriter& w, const T& v) {
  w.optional_member("modes", v.modes);
  w.optional_member("configOptions", v.config_options);
  detail::write_meta(w, v.meta);
}

// Responses with nothing but `_meta`.
template <class T>
bool read_meta_only(const JsonIn& in, T& out) {
  if (!in.json().is_null() && !in.require_object()) return false;
  detail::read_meta(in, out.meta);
  return true;
}

template <class T>
void write_meta_only(JsonWriter& w, const T& v) {
  w.begin_object();
  detail::write_meta(w, v.meta);
  w.end_object();
}

// Requests that name a session and nothing else.
template <class T>
bool read_session_id_only(const JsonIn& in, T& out) {
  if (!in.required("sessionId", out.session_id)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

template <class T>
void write_session_id_only(JsonWriter& w, const T& v) {
  w.begin_object().member("sessionId", v.session_id);
  detail::write_meta(w, v.meta);
  w.end_object();
}

template <class T>
bool read_mcp_http(const JsonIn& in, T& out) {
  if (!in.required("name", out.name) || !in.required("url", out.url)) return false;
  if (!detail::read_array_null_empty(in, "headers", out.headers)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

template <class T>
void write_mcp_http(JsonWriter& w, std::string_view type, const T& v) {
  w.begin_object().member("type", type).member("name", v.name).member("url", v.url).member("headers", v.headers);
  detail::write_meta(w, v.meta);
  w.end_object();
}

}  // namespace

std::string_view name(StopReason v) noexcept { return detail::enum_name(v, kStopReasons); }
bool parse(std::string_view text, StopReason& out) noexcept { return detail::parse_enum(text, kStopReasons, out); }
bool from_json(const JsonIn& in, StopReason& out) { return detail::read_enum(in, kStopReasons, "stop reason", out); }
void to_json(JsonWriter& w, StopReason v) { w.value(name(v)); }

// ---- MCP servers ----------------------------------------------------------------------------------

bool from_json(const JsonIn& in, EnvVariable& out) {
  if (!in.required("name", out.name) || !in.required("value", out.value)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const EnvVariable& v) {
  w.begin_object().member("name", v.name).member("value", v.value);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, HttpHeader& out) {
  if (!in.required("name", out.name) || !in.required("value", out.value)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const HttpHeader& v) {
  w.begin_object().member("name", v.name).member("value", v.value);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, McpServer& out) {
  std::optional<std::string> type;
  if (!in.optional("type", type)) return false;
  if (type == "http" || type == "sse") {
    if (*type == "http") {
      McpServerHttp http;
      if (!read_mcp_http(in, http)) return false;
      out = std::move(http);
    } else {
      McpServerSse sse;
      if (!read_mcp_http(in, sse)) return false;
      out = std::move(sse);
    }
    return true;
  }
  // stdio carries no tag; "stdio" is accepted too, as some clients send it.
  if (type && *type != "stdio") return detail::unknown_tag(in["type"], "MCP server type", *type);
  McpServerStdio stdio;
  if (!in.required("name", stdio.name) || !in.required("command", stdio.command)) return false;
  if (!detail::read_array_null_empty(in, "args", stdio.args)) return false;
  if (!detail::read_array_null_empty(in, "env", stdio.env)) return false;
  detail::read_meta(in, stdio.meta);
  out = std::move(stdio);
  return true;
}

void to_json(JsonWriter& w, const McpServer& v) {
  if (const auto* stdio = std::get_if<McpServerStdio>(&v)) {
    w.begin_object().member("name", stdio->name).member("command", stdio->command);
    w.member("args", stdio->args).member("env", stdio->env);
    detail::write_meta(w, stdio->meta);
    w.end_object();
  } else if (const auto* http = std::get_if<McpServerHttp>(&v)) {
    write_mcp_http(w, "http", *http);
  } else {
    write_mcp_http(w, "sse", std::get<McpServerSse>(v));
  }
}

// ---- modes and config options ---------------------------------------------------------------------

bool from_json(const JsonIn& in, SessionMode& out) {
  if (!in.required("id", out.id) || !in.required("name", out.name)) return false;
  detail::read_lenient(in, "description", out.description);
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const SessionMode& v) {
  w.begin_object().member("id", v.id).member("name", v.name);
  w.optional_member("description", v.description);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, SessionModeState& out) {
  if (!in.required("currentModeId", out.current_mode_id)) return false;
  if (!in.json().contains("availableModes")) return in["availableModes"].fail("required field is missing");
  detail::read_lenient_items(in, "availableModes", out.available_modes);
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const SessionModeState& v) {
  w.begin_object().member("currentModeId", v.current_mode_id).member("availableModes", v.available_modes);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, SessionConfigSelectOption& out) {
  if (!in.required("value", out.value) || !in.required("name", out.name)) return false;
  detail::read_lenient(in, "description", out.description);
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const SessionConfigSelectOption& v) {
  w.begin_object().member("value", v.value).member("name", v.name);
  w.optional_member("description", v.description);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, SessionConfigOption& out) {
  std::string type;
  if (!in.required("type", type)) return false;
  if (type != "select") return detail::unknown_tag(in["type"], "config option type", type);
  if (!in.required("id", out.id) || !in.required("name", out.name)) return false;
  if (!in.required("currentValue", out.current_value) || !in.required("options", out.options)) return false;
  detail::read_lenient(in, "description", out.description);
  detail::read_lenient(in, "category", out.category);
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const SessionConfigOption& v) {
  w.begin_object().member("type", "select").member("id", v.id).member("name", v.name);
  w.optional_member("description", v.description);
  w.optional_member("category", v.category);
  w.member("currentValue", v.current_value).member("options", v.options);
  detail::write_meta(w, v.meta);
  w.end_object();
}

// ---- session/new, load, resume ----------------------------------------------------------------------

bool from_json(const JsonIn& in, NewSessionRequest& out) {
  if (!in.required("cwd", out.cwd)) return false;
  if (!detail::read_optional_array(in, "additionalDirectories", out.additional_directories)) return false;
  if (!detail::read_array_null_empty(in, "mcpServers", out.mcp_servers)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const NewSessionRequest& v) {
  w.begin_object().member("cwd", v.cwd);
  detail::write_nonempty(w, "additionalDirectories", v.additional_directories);
  w.member("mcpServers", v.mcp_servers);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, NewSessionResponse& out) {
  return in.required("sessionId", out.session_id) && read_session_state(in, out);
}

void to_json(JsonWriter& w, const NewSessionResponse& v) {
  w.begin_object().member("sessionId", v.session_id);
  write_session_state(w, v);
  w.end_object();
}

bool from_json(const JsonIn& in, LoadSessionRequest& out) {
  if (!in.required("sessionId", out.session_id) || !in.required("cwd", out.cwd)) return false;
  if (!detail::read_optional_array(in, "additionalDirectories", out.additional_directories)) return false;
  if (!detail::read_array_null_empty(in, "mcpServers", out.mcp_servers)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const LoadSessionRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("cwd", v.cwd);
  detail::write_nonempty(w, "additionalDirectories", v.additional_directories);
  w.member("mcpServers", v.mcp_servers);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, LoadSessionResponse& out) { return read_session_state(in, out); }

void to_json(JsonWriter& w, const LoadSessionResponse& v) {
  w.begin_object();
  write_session_state(w, v);
  w.end_object();
}

bool from_json(const JsonIn& in, ResumeSessionRequest& out) {
  if (!in.required("sessionId", out.session_id) || !in.required("cwd", out.cwd)) return false;
  if (!detail::read_optional_array(in, "additionalDirectories", out.additional_directories)) return false;
  if (!detail::read_optional_array(in, "mcpServers", out.mcp_servers)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const ResumeSessionRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("cwd", v.cwd);
  detail::write_nonempty(w, "additionalDirectories", v.additional_directories);
  detail::write_nonempty(w, "mcpServers", v.mcp_servers);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, ResumeSessionResponse& out) { return read_session_state(in, out); }

void to_json(JsonWriter& w, const ResumeSessionResponse& v) {
  w.begin_object();
  write_session_state(w, v);
  w.end_object();
}

// ---- session/fork (unstable) -------------------------------------------------------------------------

bool from_json(const JsonIn& in, ForkSessionRequest& out) {
  if (!in.required("sessionId", out.session_id) || !in.required("cwd", out.cwd)) return false;
  if (!detail::read_optional_array(in, "additionalDirectories", out.additional_directories)) return false;
  if (!detail::read_optional_array(in, "mcpServers", out.mcp_servers)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const ForkSessionRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("cwd", v.cwd);
  detail::write_nonempty(w, "additionalDirectories", v.additional_directories);
  detail::write_nonempty(w, "mcpServers", v.mcp_servers);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, ForkSessionResponse& out) {
  return in.required("sessionId", out.session_id) && read_session_state(in, out);
}

void to_json(JsonWriter& w, const ForkSessionResponse& v) {
  w.begin_object().member("sessionId", v.session_id);
  write_session_state(w, v);
  w.end_object();
}

// ---- session/list -------------------------------------------------------------------------------------

bool from_json(const JsonIn& in, ListSessionsRequest& out) {
  // Every field is optional, so absent params are an empty request.
  if (in.json().is_null()) return true;
  if (!in.optional("cwd", out.cwd) || !in.optional("cursor", out.cursor)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const ListSessionsRequest& v) {
  w.begin_object();
  w.optional_member("cwd", v.cwd);
  w.optional_member("cursor", v.cursor);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, SessionInfo& out) {
  if (!in.required("sessionId", out.session_id) || !in.required("cwd", out.cwd)) return false;
  detail::read_lenient_items(in, "additionalDirectories", out.additional_directories);
  detail::read_lenient(in, "title", out.title);
  detail::read_lenient(in, "updatedAt", out.updated_at);
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const SessionInfo& v) {
  w.begin_object().member("sessionId", v.session_id).member("cwd", v.cwd);
  detail::write_nonempty(w, "additionalDirectories", v.additional_directories);
  w.optional_member("title", v.title);
  w.optional_member("updatedAt", v.updated_at);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, ListSessionsResponse& out) {
  if (!in.required("sessions", out.sessions) || !in.optional("nextCursor", out.next_cursor)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const ListSessionsResponse& v) {
  w.begin_object().member("sessions", v.sessions);
  w.optional_member("nextCursor", v.next_cursor);
  detail::write_meta(w, v.meta);
  w.end_object();
}

// ---- close, delete, set_mode, set_config_option --------------------------------------------------------

bool from_json(const JsonIn& in, CloseSessionRequest& out) { return read_session_id_only(in, out); }
void to_json(JsonWriter& w, const CloseSessionRequest& v) { write_session_id_only(w, v); }
bool from_json(const JsonIn& in, CloseSessionResponse& out) { return read_meta_only(in, out); }
void to_json(JsonWriter& w, const CloseSessionResponse& v) { write_meta_only(w, v); }

bool from_json(const JsonIn& in, DeleteSessionRequest& out) { return read_session_id_only(in, out); }
void to_json(JsonWriter& w, const DeleteSessionRequest& v) { write_session_id_only(w, v); }
bool from_json(const JsonIn& in, DeleteSessionResponse& out) { return read_meta_only(in, out); }
void to_json(JsonWriter& w, const DeleteSessionResponse& v) { write_meta_only(w, v); }

bool from_json(const JsonIn& in, SetSessionModeRequest& out) {
  if (!in.required("sessionId", out.session_id) || !in.required("modeId", out.mode_id)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const SetSessionModeRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("modeId", v.mode_id);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, SetSessionModeResponse& out) { return read_meta_only(in, out); }
void to_json(JsonWriter& w, const SetSessionModeResponse& v) { write_meta_only(w, v); }

bool from_json(const JsonIn& in, SetSessionConfigOptionRequest& out) {
  if (!in.required("sessionId", out.session_id) || !in.required("configId", out.config_id)) return false;
  std::optional<std::string> type;
  if (!in.optional("type", type)) return false;
  if (type == "boolean") {
    bool value = false;
    if (!in.required("value", value)) return false;
    out.value = value;
  } else if (type) {
    return detail::unknown_tag(in["type"], "config value type", *type);
  } else {
    std::string value;
    if (!in.required("value", value)) return false;
    out.value = std::move(value);
  }
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const SetSessionConfigOptionRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("configId", v.config_id);
  if (const bool* flag = std::get_if<bool>(&v.value)) {
    w.member("type", "boolean").member("value", *flag);
  } else {
    w.member("value", std::get<std::string>(v.value));
  }
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, SetSessionConfigOptionResponse& out) {
  if (!in.required("configOptions", out.config_options)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const SetSessionConfigOptionResponse& v) {
  w.begin_object().member("configOptions", v.config_options);
  detail::write_meta(w, v.meta);
  w.end_object();
}

// ---- session/prompt and session/cancel -------------------------------------------------------------------

bool from_json(const JsonIn& in, PromptRequest& out) {
  if (!in.required("sessionId", out.session_id) || !in.required("prompt", out.prompt)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const PromptRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("prompt", v.prompt);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, PromptResponse& out) {
  if (!in.required("stopReason", out.stop_reason)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const PromptResponse& v) {
  w.begin_object().member("stopReason", v.stop_reason);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, CancelNotification& out) { return read_session_id_only(in, out); }
void to_json(JsonWriter& w, const CancelNotification& v) { write_session_id_only(w, v); }

}  // namespace agentd::protocol::acp
