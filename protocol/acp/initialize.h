// ACP v1 `initialize`: the request the client opens with and our answer. Wire names live here and in
// initialize.cpp only; the rest of agentd sees these structs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/support/json_reader.h"
#include "core/support/json_writer.h"

namespace agentd::protocol::acp {

// The wire protocol version of all of ACP v1 (schema package versions are not protocol versions).
inline constexpr std::uint32_t kProtocolVersion = 1;

struct Implementation {
  std::string name;
  std::optional<std::string> title;
  std::string version;
};

struct FileSystemCapabilities {
  bool read_text_file = false;
  bool write_text_file = false;
};

struct ClientCapabilities {
  FileSystemCapabilities fs;
  bool terminal = false;
};

struct InitializeRequest {
  std::uint32_t protocol_version = 0;
  ClientCapabilities client_capabilities;
  std::optional<Implementation> client_info;
};

struct PromptCapabilities {
  bool image = false;
  bool audio = false;
  bool embedded_context = false;
};

struct McpCapabilities {
  bool http = false;
  bool sse = false;
};

// sessionCapabilities: each flag is written as `{}` when set and omitted when not (the schema's way of
// saying "supported"). session/load stays under the top-level loadSession.
struct SessionCapabilities {
  bool list = false;
  bool resume = false;
  bool close = false;
  bool delete_session = false;
  bool additional_directories = false;
  bool fork = false;  // unstable in v1: schema.unstable.json
};

struct AgentCapabilities {
  bool load_session = false;
  PromptCapabilities prompt;
  McpCapabilities mcp;
  SessionCapabilities session;
  bool logout = false;  // auth.logout: written as `{}` when set
};

// An `agent` authentication method (the default type): the client calls `authenticate` with its id.
struct AuthMethod {
  std::string id;
  std::string name;
  std::optional<std::string> description;
  support::Json meta{};
};

struct InitializeResponse {
  std::uint32_t protocol_version = kProtocolVersion;
  AgentCapabilities agent_capabilities;
  Implementation agent_info;
  std::vector<AuthMethod> auth_methods;
  support::Json meta{};  // written as `_meta` when an object
};

// `authenticate {methodId}`; agentd reads a key from `_meta.agentd.apiKey` (protocol/acp/ext.h).
struct AuthenticateRequest {
  std::string method_id;
  support::Json meta{};
};
// `logout {}`.
struct LogoutRequest {
  support::Json meta{};
};

// The version we answer with: the client's when we speak it, else the latest we do (the client then
// decides whether to disconnect), as ACP's initialization section prescribes.
std::uint32_t negotiate_version(std::uint32_t client_version) noexcept;

bool from_json(const support::JsonIn& in, Implementation& out);
bool from_json(const support::JsonIn& in, ClientCapabilities& out);
bool from_json(const support::JsonIn& in, InitializeRequest& out);
bool from_json(const support::JsonIn& in, AuthMethod& out);
bool from_json(const support::JsonIn& in, AuthenticateRequest& out);
bool from_json(const support::JsonIn& in, LogoutRequest& out);
void to_json(support::JsonWriter& w, const AuthMethod& v);
void to_json(support::JsonWriter& w, const AuthenticateRequest& v);
void to_json(support::JsonWriter& w, const LogoutRequest& v);
void to_json(support::JsonWriter& w, const Implementation& v);
void to_json(support::JsonWriter& w, const AgentCapabilities& v);
void to_json(support::JsonWriter& w, const InitializeResponse& v);

// Params or results that carry nothing we read (e.g. `_agentd/ping`): any object, or none.
struct Empty {};
bool from_json(const support::JsonIn& in, Empty& out);
void to_json(support::JsonWriter& w, const Empty& v);

}  // namespace agentd::protocol::acp
