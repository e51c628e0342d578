// The ACP binding: registers agentd's methods on a protocol::Peer and turns ACP messages into calls
// on the engine (and, later, engine events into session/update notifications). For now it answers
// `initialize` and the `_agentd/ping` extension; the peer rejects every other method with -32601.
#pragma once

#include <optional>

#include "protocol/acp/initialize.h"
#include "protocol/peer.h"

namespace agentd::daemon {

class AcpServer {
 public:
  explicit AcpServer(protocol::Peer& peer);

  // What the client said about itself in `initialize`, once it has.
  const std::optional<protocol::acp::InitializeRequest>& client() const noexcept { return client_; }

 private:
  support::Result<protocol::acp::InitializeResponse> initialize(const protocol::acp::InitializeRequest& request);

  protocol::Peer& peer_;
  std::optional<protocol::acp::InitializeRequest> client_;
};

}  // namespace agentd::daemon
