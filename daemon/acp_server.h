// The ACP binding: the one place where ACP meets the engine. It registers agentd's methods on a
// protocol::Peer (one visible table), turns ACP requests into SessionManager/Session calls, and turns
// engine events into session/update notifications (DESIGN.md section 1), each numbered with
// `_meta.agentd.seq`. It is also the engine's Frontend: permission prompts become
// session/request_permission, file reads become fs/read_text_file when the client offers it.
#pragma once

#include <memory>
#include <optional>

#include "core/engine/session_manager.h"
#include "core/support/task_group.h"
#include "protocol/acp/initialize.h"
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
  support::Result<protocol::acp::InitializeResponse> initialize(const protocol::acp::InitializeRequest& request);

  protocol::Peer& peer_;
  core::SessionManager& sessions_;
  std::shared_ptr<AcpFrontend> frontend_;
  std::optional<protocol::acp::InitializeRequest> client_;
  support::TaskGroup prompts_;
};

}  // namespace agentd::daemon
