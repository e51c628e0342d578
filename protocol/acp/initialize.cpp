#include "protocol/acp/initialize.h"

namespace agentd::protocol::acp {

using support::JsonIn;
using support::JsonWriter;

std::uint32_t negotiate_version(std::uint32_t client_version) noexcept {
  return client_version == kProtocolVersion ? client_version : kProtocolVersion;
}

bool from_json(const JsonIn& in, Implementation& out) {
  return in.required("name", out.name) && in.optional("title", out.title) && in.required("version", out.version);
}

namespace {

// The schema marks client capabilities "default on error": a client that sends a malformed flag loses
// that flag, not the whole session. Read each one leniently.
bool lenient_bool(const JsonIn& in, std::string_view key) {
  const support::Json* v = in.json().find(key);
  return v != nullptr && v->is_bool() && v->as_bool();
}

}  // namespace

bool from_json(const JsonIn& in, ClientCapabilities& out) {
  out = ClientCapabilities{};
  if (!in.json().is_object()) return true;
  if (const support::Json* fs = in.json().find("fs"); fs != nullptr && fs->is_object()) {
    const JsonIn fs_in(*fs, "fs");
    out.fs.read_text_file = lenient_bool(fs_in, "readTextFile");
    out.fs.write_text_file = lenient_bool(fs_in, "writeTextFile");
  }
  out.terminal = lenient_bool(in, "terminal");
  return true;
}

bool from_json(const JsonIn& in, InitializeRequest& out) {
  if (!in.required("protocolVersion", out.protocol_version)) return false;
  if (out.protocol_version > 65535) return in["protocolVersion"].fail("protocol version must fit in 16 bits");
  from_json(in["clientCapabilities"], out.client_capabilities);
  // clientInfo is also "default on error": a bad one is ignored rather than fatal.
  Implementation info;
  const JsonIn info_in = in["clientInfo"];
  if (info_in.json().is_object() && info_in.json().find("name") != nullptr) {
    const support::Json* name = info_in.json().find("name");
    const support::Json* version = info_in.json().find("version");
    if (name->is_string()) {
      info.name = name->as_string();
      if (version != nullptr && version->is_string()) info.version = version->as_string();
      if (const support::Json* title = info_in.json().find("title"); title != nullptr && title->is_string()) {
        info.title = title->as_string();
      }
      out.client_info = std::move(info);
    }
  }
  return true;
}

void to_json(JsonWriter& w, const Implementation& v) {
  w.begin_object().member("name", v.name);
  w.optional_member("title", v.title);
  w.member("version", v.version).end_object();
}

void to_json(JsonWriter& w, const AgentCapabilities& v) {
  w.begin_object().member("loadSession", v.load_session);
  w.key("promptCapabilities").begin_object();
  w.member("image", v.prompt.image)
      .member("audio", v.prompt.audio)
      .member("embeddedContext", v.prompt.embedded_context);
  w.end_object();
  w.key("mcpCapabilities").begin_object().member("http", v.mcp.http).member("sse", v.mcp.sse).end_object();
  // Omitted while empty, so an agent without optional session methods says exactly what it did before.
  const SessionCapabilities& s = v.session;
  if (s.list || s.resume || s.close || s.delete_session || s.additional_directories || s.fork) {
    w.key("sessionCapabilities").begin_object();
    const auto flag = [&w](std::string_view name, bool on) {
      if (on) w.key(name).begin_object().end_object();
    };
    flag("list", s.list);
    flag("delete", s.delete_session);
    flag("additionalDirectories", s.additional_directories);
    flag("resume", s.resume);
    flag("close", s.close);
    flag("fork", s.fork);
    w.end_object();
  }
  if (v.logout) w.key("auth").begin_object().key("logout").begin_object().end_object().end_object();
  w.end_object();
}

bool from_json(const JsonIn& in, AuthMethod& out) {
  // An unknown `type` (terminal, or a future one) is still read: the client skips what it cannot use.
  return in.require_object() && in.required("id", out.id) && in.required("name", out.name) &&
         in.optional("description", out.description) && in.optional("_meta", out.meta);
}

void to_json(JsonWriter& w, const AuthMethod& v) {
  w.begin_object().member("id", v.id).member("name", v.name);
  w.optional_member("description", v.description);
  if (v.meta.is_object()) w.member("_meta", v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, AuthenticateRequest& out) {
  return in.require_object() && in.required("methodId", out.method_id) && in.optional("_meta", out.meta);
}

void to_json(JsonWriter& w, const AuthenticateRequest& v) {
  w.begin_object().member("methodId", v.method_id);
  if (v.meta.is_object()) w.member("_meta", v.meta);
  w.end_object();
}

void to_json(JsonWriter& w, const LogoutRequest& v) {
  w.begin_object();
  if (v.meta.is_object()) w.member("_meta", v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, LogoutRequest& out) {
  if (in.json().is_null()) return true;
  return in.require_object() && in.optional("_meta", out.meta);
}

void to_json(JsonWriter& w, const InitializeResponse& v) {
  w.begin_object();
  w.member("protocolVersion", v.protocol_version);
  w.member("agentCapabilities", v.agent_capabilities);
  w.member("agentInfo", v.agent_info);
  w.key("authMethods").begin_array();
  for (const auto& method : v.auth_methods) w.value(method);
  w.end_array();
  if (v.meta.is_object()) w.member("_meta", v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, Empty&) { return in.json().is_null() || in.require_object(); }

void to_json(JsonWriter& w, const Empty&) { w.begin_object().end_object(); }

}  // namespace agentd::protocol::acp
