#include "daemon/acp_server.h"

#include <variant>

#include <boost/asio/co_spawn.hpp>
#include <fmt/format.h>

#include "core/net/http_client.h"
#include "core/support/log.h"
#include "core/support/version.h"
#include "daemon/acp_frontend.h"
#include "daemon/acp_updates.h"
#include "protocol/acp/ext_methods.h"
#include "protocol/acp/methods.h"

namespace agentd::daemon {

namespace acp = protocol::acp;
namespace ext = protocol::acp::ext;
namespace asio = boost::asio;
namespace log = support::log;
using support::CancelToken;
using support::Errc;
using support::Error;
using support::Result;

// ---- the method table: client -> engine ------------------------------------------------------------

AcpServer::AcpServer(protocol::Peer& peer, core::SessionManager& sessions)
    : peer_(peer),
      sessions_(sessions),
      frontend_(std::make_shared<AcpFrontend>(peer, sessions)),
      prompts_(peer.executor()) {
  namespace method = acp::method;
  namespace ext_method = acp::ext::method;
  bind(method::kInitialize, &AcpServer::on_initialize);
  bind(method::kAuthenticate, &AcpServer::on_authenticate);
  bind(method::kLogout, &AcpServer::on_logout);
  bind(method::kSessionNew, &AcpServer::on_new_session);
  bind(method::kSessionLoad, &AcpServer::on_load_session);
  bind(method::kSessionResume, &AcpServer::on_resume_session);
  bind(method::kSessionFork, &AcpServer::on_fork_session);
  bind(method::kSessionList, &AcpServer::on_list_sessions);
  bind(method::kSessionClose, &AcpServer::on_close_session);
  bind(method::kSessionDelete, &AcpServer::on_delete_session);
  bind(method::kSessionSetMode, &AcpServer::on_set_mode);
  bind(method::kSessionSetConfigOption, &AcpServer::on_set_config_option);
  bind(method::kSessionPrompt, &AcpServer::on_prompt);
  bind_notification(method::kSessionCancel, &AcpServer::on_cancel);

  bind(ext_method::kPing, &AcpServer::on_ping);
  bind(ext_method::kStatus, &AcpServer::on_status);
  bind(ext_method::kTraceGet, &AcpServer::on_trace_get);
  bind(ext_method::kCostGet, &AcpServer::on_cost_get);
  bind(ext_method::kPermissionsList, &AcpServer::on_permissions_list);
  bind(ext_method::kPermissionsRevoke, &AcpServer::on_permissions_revoke);
  bind(ext_method::kPermissionsAudit, &AcpServer::on_permissions_audit);
  bind(ext_method::kEventsReplay, &AcpServer::on_events_replay);
  bind(ext_method::kContextPreview, &AcpServer::on_context_preview);
  bind(ext_method::kProjectTrust, &AcpServer::on_project_trust);
  bind(ext_method::kVerifyPlan, &AcpServer::on_verify_plan);
  bind(ext_method::kMemoryAdd, &AcpServer::on_memory_add);
  bind(ext_method::kMemoryList, &AcpServer::on_memory_list);
  bind(ext_method::kMemoryDelete, &AcpServer::on_memory_delete);
  bind(ext_method::kCheckpointsList, &AcpServer::on_checkpoints_list);
  bind(ext_method::kCheckpointsRestore, &AcpServer::on_checkpoints_restore);
  bind(ext_method::kSessionSetBudget, &AcpServer::on_session_set_budget);

  // ACP's handshake comes first: capabilities decide what the rest may use (fs/* through the editor,
  // the protocol version). A ping and a status request are allowed before it, for liveness checks.
  peer_.set_request_gate([this](std::string_view name) -> std::optional<protocol::RpcError> {
    if (client_ || name == method::kInitialize || name == ext_method::kPing || name == ext_method::kStatus) {
      return std::nullopt;
    }
    return protocol::RpcError{protocol::error_code::kInvalidRequest,
                              fmt::format("Invalid request: {} before initialize; send initialize first", name),
                              std::nullopt};
  });
}

AcpServer::~AcpServer() { frontend_->disconnect(); }

void AcpServer::cancel_all() {
  sessions_.cancel_all();
  prompts_.cancel_all();
}

asio::awaitable<void> AcpServer::join() { co_await prompts_.join(); }

// ---- binding -------------------------------------------------------------------------------------------
// Handlers that answer at once run synchronously; coroutine handlers run in the peer's task group, where
// $/cancel_request cancels their token (protocol/peer.h).

Result<AcpServer::SessionPtr> AcpServer::with_session(const std::string& id) const {
  if (auto session = sessions_.find(id)) return session;
  return Error(Errc::not_found,
               fmt::format("session \"{}\" is not open in this agentd; create it with session/new or open it with "
                           "session/load or session/resume",
                           id));
}

template <class P, class R>
void AcpServer::bind(std::string_view method, Result<R> (AcpServer::*handler)(const P&)) {
  peer_.on_request<P, R>(std::string(method), [this, handler](const P& p) { return (this->*handler)(p); });
}

template <class P, class R>
void AcpServer::bind(std::string_view method, Result<R> (AcpServer::*handler)(core::Session&, const P&)) {
  peer_.on_request<P, R>(std::string(method), [this, handler](const P& p) -> Result<R> {
    auto session = with_session(p.session_id);
    if (!session) return std::move(session).error();
    return (this->*handler)(**session, p);
  });
}

template <class P, class R>
void AcpServer::bind(std::string_view method, Async<R> (AcpServer::*handler)(P, CancelToken)) {
  peer_.on_request_async<P, R>(std::string(method), [this, handler](P p, CancelToken cancel) {
    return (this->*handler)(std::move(p), std::move(cancel));
  });
}

template <class P, class R>
void AcpServer::bind(std::string_view method, Async<R> (AcpServer::*handler)(SessionPtr, P, CancelToken)) {
  peer_.on_request_async<P, R>(std::string(method), [this, handler](P p, CancelToken cancel) -> Async<R> {
    auto session = with_session(p.session_id);
    if (!session) co_return std::move(session).error();
    co_return co_await (this->*handler)(std::move(*session), std::move(p), std::move(cancel));
  });
}

template <class P>
void AcpServer::bind(std::string_view method, void (AcpServer::*handler)(SessionPtr, const P&, protocol::Responder)) {
  peer_.on_request_raw(std::string(method), [this, handler](const support::Json& params,
                                                            protocol::Responder responder) {
    auto request = support::read_json<P>(params, "params");
    if (!request) {
      responder.fail(protocol::RpcError{protocol::error_code::kInvalidParams, request.error().message(), std::nullopt});
      return;
    }
    auto session = with_session(request->session_id);
    if (!session) {
      responder.fail(session.error());
      return;
    }
    (this->*handler)(std::move(*session), *request, std::move(responder));
  });
}

template <class P>
void AcpServer::bind_notification(std::string_view method, void (AcpServer::*handler)(const P&)) {
  peer_.on_notification<P>(std::string(method), [this, handler](const P& p) { (this->*handler)(p); });
}

// ---- ACP -----------------------------------------------------------------------------------------------

namespace {

Result<core::PromptInput> prompt_input(const std::vector<acp::ContentBlock>& blocks) {
  core::PromptInput input;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto& block = blocks[i];
    if (const auto* text = std::get_if<acp::TextContent>(&block)) {
      if (!input.text.empty()) input.text += "\n";
      input.text += text->text;
    } else if (const auto* image = std::get_if<acp::ImageContent>(&block)) {
      input.images.push_back(core::PromptImage{image->data, {}, image->mime_type, fmt::format("params.prompt[{}]", i)});
    } else if (const auto* link = std::get_if<acp::ResourceLink>(&block)) {
      // A link to an image in the workspace is the image (read like a tool's read); any other link is text.
      if (core::is_image_link(link->uri, link->mime_type.value_or(""))) {
        input.images.push_back(
            core::PromptImage{{}, link->uri, link->mime_type.value_or(""), fmt::format("params.prompt[{}]", i)});
        continue;
      }
      if (!input.text.empty()) input.text += "\n";
      input.text += fmt::format("[{}]({})", link->name, link->uri);
    } else if (const auto* resource = std::get_if<acp::EmbeddedResource>(&block)) {
      if (const auto* text_resource = std::get_if<acp::TextResourceContents>(&resource->resource)) {
        input.attachments.push_back(core::Attachment{text_resource->uri, text_resource->text});
      } else if (const auto& blob = std::get<acp::BlobResourceContents>(resource->resource);
                 blob.mime_type.value_or("").starts_with("image/")) {
        input.images.push_back(core::PromptImage{blob.blob, {}, *blob.mime_type, fmt::format("params.prompt[{}]", i)});
      } else {
        return Error(Errc::invalid_argument,
                     fmt::format("params.prompt[{}]: binary resources other than images are not supported; send "
                                 "text",
                                 i));
      }
    } else {
      return Error(Errc::invalid_argument,
                   fmt::format("params.prompt[{}]: {} content is not supported (see promptCapabilities)", i,
                               acp::content_type_name(block)));
    }
  }
  if (input.text.empty() && input.attachments.empty() && input.images.empty()) {
    return Error(Errc::invalid_argument, "params.prompt: the prompt is empty");
  }
  return input;
}

// The client's MCP servers as the MCP client takes them: stdio and Streamable HTTP ones (initialize says
// mcpCapabilities {http: true, sse: false}); an SSE one is the client's mistake and refused.
Result<std::vector<tools::mcp::ServerConfig>> mcp_configs(const std::vector<acp::McpServer>& servers) {
  std::vector<tools::mcp::ServerConfig> out;
  for (const auto& server : servers) {
    tools::mcp::ServerConfig config;
    if (const auto* sse = std::get_if<acp::McpServerSse>(&server)) {
      return Error(Errc::invalid_argument,
                   fmt::format("MCP server \"{}\": the old HTTP+SSE transport is not supported (agentd's initialize "
                               "answer says mcpCapabilities sse is false); use the server's Streamable HTTP endpoint "
                               "(type \"http\")",
                               sse->name));
    }
    if (const auto* http = std::get_if<acp::McpServerHttp>(&server)) {
      if (http->name.empty() || http->url.empty()) {
        return Error(Errc::invalid_argument, "an MCP server of type http needs a name and a url");
      }
      if (auto url = net::parse_url(http->url); !url) {
        return Error(Errc::invalid_argument, fmt::format("MCP server \"{}\": {}", http->name, url.error().message()));
      }
      config.name = http->name;
      config.url = http->url;
      for (const auto& h : http->headers) config.headers.emplace_back(h.name, h.value);
      out.push_back(std::move(config));
      continue;
    }
    const auto& stdio = std::get<acp::McpServerStdio>(server);
    if (stdio.name.empty() || stdio.command.empty()) {
      return Error(Errc::invalid_argument, "an MCP server needs a name and a command");
    }
    config.name = stdio.name;
    config.command = stdio.command;
    config.args = stdio.args;
    for (const auto& e : stdio.env) config.env.emplace_back(e.name, e.value);
    out.push_back(std::move(config));
  }
  return out;
}

// What session/new, load and resume answer about the session (ids aside).
template <class Response>
Response session_state(const core::Session& session) {
  Response response;
  response.modes = mode_state(session);
  response.config_options = config_options(session);
  response.meta = project_trust_meta(session);
  return response;
}

// Announces a session's commands once the current handler has answered (its strand runs it later).
void announce_later(const std::shared_ptr<core::Session>& session) {
  asio::co_spawn(session->strand(), session->announce_commands(),
                 [id = session->id()](const std::exception_ptr& thrown, const Result<void>& announced) {
                   if (thrown) {
                     log::error("session {}: announcing the commands threw", id);
                   } else if (!announced) {
                     log::warn("session {}: the command list could not be stored: {}", id, announced.error().message());
                   }
                 });
}

}  // namespace

Result<acp::InitializeResponse> AcpServer::on_initialize(const acp::InitializeRequest& request) {
  client_ = request;
  frontend_->set_client(request.client_capabilities);
  if (request.client_info) {
    log::info("client {} {} (ACP version {})", request.client_info->name, request.client_info->version,
              request.protocol_version);
  }
  acp::InitializeResponse response;
  response.protocol_version = acp::negotiate_version(request.protocol_version);
  // Capabilities are what works today, nothing more: images but no audio, MCP over stdio and Streamable HTTP.
  response.agent_capabilities.load_session = true;
  response.agent_capabilities.prompt.embedded_context = true;
  response.agent_capabilities.prompt.image = true;
  response.agent_capabilities.session.list = true;
  response.agent_capabilities.session.resume = true;
  response.agent_capabilities.session.close = true;
  response.agent_capabilities.session.delete_session = true;
  response.agent_capabilities.session.additional_directories = true;
  response.agent_capabilities.session.fork = true;
  response.agent_capabilities.mcp.http = true;  // Streamable HTTP servers (tools/mcp/http_transport.h)
  response.agent_info = acp::Implementation{"agentd", "agentd", support::kVersion};
  // One API-key method per variable a model may read its key from (ACP's `agent` type: the client
  // calls authenticate, with the key in _meta or without to use agentd's environment).
  if (const auto& credentials = sessions_.credentials(); credentials && !credentials->key_vars().empty()) {
    for (const auto& var : credentials->key_vars()) {
      response.auth_methods.push_back(acp::AuthMethod{
          var, core::model::key_var_label(var),
          fmt::format("Uses {} from agentd's environment, or the key given as _meta.agentd.apiKey of authenticate "
                      "(kept in memory for this process only, never stored)",
                      var),
          ext::to_meta(ext::AuthMethodMeta{var})});
    }
    response.agent_capabilities.logout = true;
  }
  response.meta = ext::to_meta(ext::InitializeMeta{database_status()});
  return response;
}

Result<acp::Empty> AcpServer::on_authenticate(const acp::AuthenticateRequest& request) {
  const auto& credentials = sessions_.credentials();
  if (!credentials) return Error(Errc::invalid_argument, "agentd offers no authentication methods here");
  std::optional<std::string> key;
  if (request.meta.is_object() && request.meta.find("agentd") != nullptr) {
    auto meta = support::read_json<ext::AuthenticateMeta>(request.meta["agentd"], "params._meta.agentd");
    if (!meta) return std::move(meta).error();
    key = std::move(meta->api_key);
  }
  AGENTD_TRY_VOID(credentials->authenticate(request.method_id, std::move(key)));
  log::info("authenticated with {}", request.method_id);  // never the key
  return acp::Empty{};
}

Result<acp::Empty> AcpServer::on_logout(const acp::LogoutRequest&) {
  if (const auto& credentials = sessions_.credentials()) credentials->logout();
  log::info("logged out: keys given through authenticate are forgotten, the environment's are not used");
  return acp::Empty{};
}

AcpServer::Async<acp::NewSessionResponse> AcpServer::on_new_session(acp::NewSessionRequest r, CancelToken) {
  // Named, not a temporary: GCC 12 destroys class temporaries passed to a coroutine twice.
  auto servers = mcp_configs(r.mcp_servers);
  if (!servers) co_return std::move(servers).error();
  core::NewSessionParams params{r.cwd, r.additional_directories, std::move(*servers)};
  auto session = co_await sessions_.create(std::move(params));
  if (!session) co_return std::move(session).error();
  (*session)->attach(frontend_);
  // After the answer: a client cannot place an update for a session id it has not been told yet. (A
  // loaded session's id is known, so there they come before it.)
  announce_later(*session);
  auto response = session_state<acp::NewSessionResponse>(**session);
  response.session_id = (*session)->id();
  co_return response;
}

AcpServer::Async<acp::LoadSessionResponse> AcpServer::on_load_session(acp::LoadSessionRequest r, CancelToken) {
  auto servers = mcp_configs(r.mcp_servers);
  if (!servers) co_return std::move(servers).error();
  auto session = co_await sessions_.load(r.session_id, std::move(*servers));
  if (!session) co_return std::move(session).error();
  if ((*session)->info().cwd != r.cwd) {
    log::info("session {}: loaded with cwd {}, stored cwd {} is kept", r.session_id, r.cwd, (*session)->info().cwd);
  }
  // The whole stored history, as notifications, before the answer (ACP session/load).
  auto events = co_await sessions_.events(r.session_id, 0, 0);
  if (!events) co_return std::move(events).error();
  frontend_->replay(r.session_id, *events);
  (*session)->attach(frontend_);
  // The current commands too, stored and delivered before the answer: after it, nothing of the session
  // until the client prompts.
  // An event the database refuses stays queued (and undelivered) for the next write: the session works
  // without it, and the database's state is in initialize's _meta and the log.
  if (auto announced = co_await (*session)->announce_commands(); !announced) {
    log::warn("session {}: the command list could not be stored: {}", r.session_id, announced.error().message());
  }
  co_return session_state<acp::LoadSessionResponse>(**session);
}

AcpServer::Async<acp::ResumeSessionResponse> AcpServer::on_resume_session(acp::ResumeSessionRequest r, CancelToken) {
  auto servers = mcp_configs(r.mcp_servers);
  if (!servers) co_return std::move(servers).error();
  auto session = co_await sessions_.load(r.session_id, std::move(*servers));
  if (!session) co_return std::move(session).error();
  (*session)->attach(frontend_);
  co_return session_state<acp::ResumeSessionResponse>(**session);
}

AcpServer::Async<acp::ForkSessionResponse> AcpServer::on_fork_session(acp::ForkSessionRequest r, CancelToken) {
  auto servers = mcp_configs(r.mcp_servers);
  if (!servers) co_return std::move(servers).error();
  core::ForkSessionParams params{r.session_id, r.cwd, r.additional_directories, std::move(*servers), {}};
  if (r.meta.is_object() && r.meta.find("agentd") != nullptr) {
    auto meta = support::read_json<ext::ForkSessionMeta>(r.meta["agentd"], "params._meta.agentd");
    if (!meta) co_return std::move(meta).error();
    params.up_to_turn = std::move(meta->turn_id);
  }
  auto session = co_await sessions_.fork(std::move(params));
  if (!session) co_return std::move(session).error();
  (*session)->attach(frontend_);
  // Like session/new: the client learns the fork's id from the answer, so its commands come after.
  announce_later(*session);
  auto response = session_state<acp::ForkSessionResponse>(**session);
  response.session_id = (*session)->id();
  co_return response;
}

AcpServer::Async<acp::ListSessionsResponse> AcpServer::on_list_sessions(acp::ListSessionsRequest r, CancelToken) {
  auto page = co_await sessions_.list(r.cwd, r.cursor);
  if (!page) co_return std::move(page).error();
  acp::ListSessionsResponse response;
  for (const auto& s : page->sessions) {
    acp::SessionInfo info;
    info.session_id = s.id;
    info.cwd = s.cwd;
    info.additional_directories = s.additional_dirs;
    info.title = s.title;
    info.updated_at = iso8601(s.updated_at_ms);
    response.sessions.push_back(std::move(info));
  }
  response.next_cursor = page->next_cursor;
  co_return response;
}

Result<acp::CloseSessionResponse> AcpServer::on_close_session(const acp::CloseSessionRequest& r) {
  if (auto closed = sessions_.close(r.session_id); !closed) return std::move(closed).error();
  return acp::CloseSessionResponse{};
}

AcpServer::Async<acp::DeleteSessionResponse> AcpServer::on_delete_session(acp::DeleteSessionRequest r, CancelToken) {
  auto removed = co_await sessions_.remove(r.session_id);
  // Deleting is idempotent: a session that is not there (never was, or already deleted) is what the
  // client asked for. Every other failure (the database) is the client's to see.
  if (!removed && removed.error().code() != Errc::not_found) co_return std::move(removed).error();
  co_return acp::DeleteSessionResponse{};
}

AcpServer::Async<acp::SetSessionModeResponse> AcpServer::on_set_mode(SessionPtr session, acp::SetSessionModeRequest r,
                                                                     CancelToken) {
  auto mode = core::parse_permission_mode(r.mode_id);
  if (!mode) {
    co_return Error(Errc::invalid_argument,
                    fmt::format("params.modeId: unknown mode \"{}\" (default, acceptEdits, plan, bypass)", r.mode_id));
  }
  if (auto set = co_await session->set_mode(*mode); !set) co_return std::move(set).error();
  co_return acp::SetSessionModeResponse{};
}

AcpServer::Async<acp::SetSessionConfigOptionResponse> AcpServer::on_set_config_option(
    SessionPtr session, acp::SetSessionConfigOptionRequest r, CancelToken) {
  if (r.config_id != "model") {
    co_return Error(Errc::invalid_argument,
                    fmt::format("params.configId: unknown option \"{}\" (agentd offers: model)", r.config_id));
  }
  const auto* value = std::get_if<std::string>(&r.value);
  if (value == nullptr) co_return Error(Errc::invalid_argument, "params.value: the model option takes a string");
  if (auto set = co_await session->set_model(*value); !set) co_return std::move(set).error();
  co_return acp::SetSessionConfigOptionResponse{config_options(*session), {}};
}

// session/prompt is answered when its turn ends, which may be long after: the turn runs in our task
// group, and a $/cancel_request for the prompt cancels the turn (answered `cancelled`, not an error).
// NOLINTNEXTLINE(performance-unnecessary-value-param): the method table's handler shape takes requests by value
namespace {
ext::TurnVerificationInfo verification_info(const core::TurnVerification& turn) {
  ext::TurnVerificationInfo info;
  info.changed_files = turn.changed_files;
  for (const auto& run : turn.runs) info.runs.push_back({run.command, run.status, run.narrowed});
  for (const auto& skipped : turn.not_run) info.not_run.push_back({skipped.command, skipped.reason});
  info.summary = core::verification_line(turn);
  return info;
}
}  // namespace

void AcpServer::on_prompt(SessionPtr session, const acp::PromptRequest& r, protocol::Responder responder) {
  auto input = prompt_input(r.prompt);
  // W3C trace context in _meta (ACP reserves traceparent there): the turn's spans join that trace.
  if (input && r.meta.is_object()) {
    if (const support::Json* traceparent = r.meta.find("traceparent")) {
      auto parent =
          traceparent->is_string()
              ? core::telemetry::parse_traceparent(traceparent->as_string())
              : Result<core::telemetry::TraceParent>(Error(Errc::invalid_argument, "traceparent: expected a string"));
      if (parent) {
        input->trace_parent = std::move(*parent);
      } else {
        input = Error(Errc::invalid_argument, "params._meta." + parent.error().message());
      }
    }
  }
  if (!input) {
    responder.fail(protocol::RpcError{protocol::error_code::kInvalidParams, input.error().message(), std::nullopt});
    return;
  }
  prompts_.spawn(
      [](SessionPtr s, core::PromptInput in, protocol::Responder reply) -> asio::awaitable<void> {
        support::CancelSource source(reply.cancel_token());
        CancelToken token = source.token();
        auto outcome = co_await s->prompt(std::move(in), std::move(token));
        if (!outcome) {
          reply.fail(outcome.error());
          co_return;
        }
        acp::PromptResponse response;
        acp::parse(core::stop_reason_id(outcome->stop_reason), response.stop_reason);
        ext::PromptMeta meta{outcome->turn_id, std::nullopt, std::nullopt};
        if (outcome->verification) meta.verification = verification_info(*outcome->verification);
        if (const auto& by = outcome->stopped_by) {
          meta.stopped_by =
              ext::StoppedByInfo{std::string(core::budget_kind_name(by->kind)), by->limit, by->spent, by->message()};
        }
        response.meta = ext::to_meta(meta);
        reply.answer(Result<acp::PromptResponse>(std::move(response)));
      }(std::move(session), std::move(*input), std::move(responder)),
      "session/prompt");
}

void AcpServer::on_cancel(const acp::CancelNotification& n) {
  if (auto session = sessions_.find(n.session_id)) {
    session->cancel();
  } else {
    log::warn("session/cancel for unknown session {}", n.session_id);
  }
}

}  // namespace agentd::daemon
