// The ACP binding: the one place where ACP meets the engine. The constructor binds every method
// agentd serves on a protocol::Peer in one visible table (acp_server.cpp), each row a method name and a
// named handler below; handlers turn ACP requests into SessionManager/Session calls. Handlers of the
// `_agentd/*` extensions live in acp_extensions.cpp; engine events reach the client through
// AcpFrontend (acp_frontend.h), which is also where permission prompts and editor file reads go.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "core/engine/session_manager.h"
#include "core/support/task_group.h"
#include "protocol/acp/ext.h"
#include "protocol/acp/initialize.h"
#include "protocol/acp/session.h"
#include "protocol/peer.h"

namespace agentd::daemon {

class AcpFrontend;

class AcpServer {
 public:
  AcpServer(protocol::Peer& peer, core::SessionManager& sessions);
  ~AcpServer();
  AcpServer(const AcpServer&) = delete;
  AcpServer& operator=(const AcpServer&) = delete;

  // What the client said about itself in `initialize`, once it has.
  const std::optional<protocol::acp::InitializeRequest>& client() const noexcept { return client_; }

  // Cancels running prompts and waits for their handlers (shutdown).
  void cancel_all();
  boost::asio::awaitable<void> join();

 private:
  using SessionPtr = std::shared_ptr<core::Session>;
  template <class R>
  using Async = boost::asio::awaitable<support::Result<R>>;

  // ---- binding (acp_server.cpp) ----
  // One overload per handler shape; a handler that takes a Session first gets the open session its
  // params' sessionId names (see with_session), so the look-up and its error are written once.
  template <class P, class R>
  void bind(std::string_view method, support::Result<R> (AcpServer::*handler)(const P&));
  template <class P, class R>
  void bind(std::string_view method, support::Result<R> (AcpServer::*handler)(core::Session&, const P&));
  template <class P, class R>
  void bind(std::string_view method, Async<R> (AcpServer::*handler)(P, support::CancelToken));
  template <class P, class R>
  void bind(std::string_view method, Async<R> (AcpServer::*handler)(SessionPtr, P, support::CancelToken));
  // Answered later, through the Responder (session/prompt).
  template <class P>
  void bind(std::string_view method, void (AcpServer::*handler)(SessionPtr, const P&, protocol::Responder));
  template <class P>
  void bind_notification(std::string_view method, void (AcpServer::*handler)(const P&));

  // The open session `id` names, or the error that says it is not open.
  support::Result<SessionPtr> with_session(const std::string& id) const;

  // ---- ACP (acp_server.cpp) ----
  support::Result<protocol::acp::InitializeResponse> on_initialize(const protocol::acp::InitializeRequest& request);
  support::Result<protocol::acp::Empty> on_authenticate(const protocol::acp::AuthenticateRequest& request);
  support::Result<protocol::acp::Empty> on_logout(const protocol::acp::LogoutRequest& request);
  Async<protocol::acp::NewSessionResponse> on_new_session(protocol::acp::NewSessionRequest r, support::CancelToken);
  Async<protocol::acp::LoadSessionResponse> on_load_session(protocol::acp::LoadSessionRequest r, support::CancelToken);
  Async<protocol::acp::ResumeSessionResponse> on_resume_session(protocol::acp::ResumeSessionRequest r,
                                                                support::CancelToken);
  Async<protocol::acp::ForkSessionResponse> on_fork_session(protocol::acp::ForkSessionRequest r,
                                                            support::CancelToken cancel);
  Async<protocol::acp::ListSessionsResponse> on_list_sessions(protocol::acp::ListSessionsRequest r,
                                                              support::CancelToken);
  support::Result<protocol::acp::CloseSessionResponse> on_close_session(const protocol::acp::CloseSessionRequest& r);
  Async<protocol::acp::DeleteSessionResponse> on_delete_session(protocol::acp::DeleteSessionRequest r,
                                                                support::CancelToken);
  Async<protocol::acp::SetSessionModeResponse> on_set_mode(SessionPtr session, protocol::acp::SetSessionModeRequest r,
                                                           support::CancelToken);
  Async<protocol::acp::SetSessionConfigOptionResponse> on_set_config_option(
      SessionPtr session, protocol::acp::SetSessionConfigOptionRequest r, support::CancelToken);
  void on_prompt(SessionPtr session, const protocol::acp::PromptRequest& r, protocol::Responder responder);
  void on_cancel(const protocol::acp::CancelNotification& n);

  // ---- agentd extensions, `_agentd/*` (acp_extensions.cpp) ----
  support::Result<protocol::acp::Empty> on_ping(const protocol::acp::Empty&);
  support::Result<protocol::acp::ext::StatusResult> on_status(const protocol::acp::Empty&);
  protocol::acp::ext::DatabaseStatus database_status() const;
  Async<protocol::acp::ext::TraceGetResult> on_trace_get(protocol::acp::ext::TraceGetRequest p, support::CancelToken);
  support::Result<protocol::acp::ext::CostGetResult> on_cost_get(core::Session& session,
                                                                 const protocol::acp::ext::SessionRequest&);
  Async<protocol::acp::ext::PermissionsListResult> on_permissions_list(SessionPtr session,
                                                                       protocol::acp::ext::SessionRequest,
                                                                       support::CancelToken);
  Async<protocol::acp::Empty> on_permissions_revoke(SessionPtr session, protocol::acp::ext::PermissionsRevokeRequest p,
                                                    support::CancelToken);
  Async<protocol::acp::ext::PermissionsAuditResult> on_permissions_audit(protocol::acp::ext::PermissionsAuditRequest p,
                                                                         support::CancelToken);
  Async<protocol::acp::ext::EventsReplayResult> on_events_replay(protocol::acp::ext::EventsReplayRequest p,
                                                                 support::CancelToken);
  Async<support::Json> on_context_preview(SessionPtr session, protocol::acp::ext::ContextPreviewRequest p,
                                          support::CancelToken cancel);
  support::Result<protocol::acp::ext::ProjectTrustResult> on_project_trust(
      const protocol::acp::ext::ProjectTrustRequest& p);
  Async<support::Json> on_verify_plan(SessionPtr session, protocol::acp::ext::VerifyPlanRequest p,
                                      support::CancelToken);
  Async<protocol::acp::ext::MemoryAddResult> on_memory_add(SessionPtr session, protocol::acp::ext::MemoryAddRequest p,
                                                           support::CancelToken);
  Async<protocol::acp::ext::MemoryListResult> on_memory_list(SessionPtr session, protocol::acp::ext::SessionRequest,
                                                             support::CancelToken);
  Async<protocol::acp::Empty> on_memory_delete(SessionPtr session, protocol::acp::ext::MemoryDeleteRequest p,
                                               support::CancelToken);
  Async<protocol::acp::ext::Budgets> on_session_set_budget(SessionPtr session, protocol::acp::ext::SetBudgetRequest p,
                                                           support::CancelToken);
  Async<protocol::acp::ext::CheckpointsListResult> on_checkpoints_list(SessionPtr session,
                                                                       protocol::acp::ext::SessionRequest,
                                                                       support::CancelToken);
  Async<protocol::acp::ext::CheckpointsRestoreResult> on_checkpoints_restore(
      SessionPtr session, protocol::acp::ext::CheckpointsRestoreRequest p, support::CancelToken);

  protocol::Peer& peer_;
  core::SessionManager& sessions_;
  std::shared_ptr<AcpFrontend> frontend_;
  std::optional<protocol::acp::InitializeRequest> client_;
  support::TaskGroup prompts_;
};

}  // namespace agentd::daemon
