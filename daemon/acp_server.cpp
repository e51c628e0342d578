#include "daemon/acp_server.h"

#include "core/support/log.h"
#include "core/support/version.h"

namespace agentd::daemon {

namespace acp = protocol::acp;
namespace log = support::log;

AcpServer::AcpServer(protocol::Peer& peer) : peer_(peer) {
  // The method table: every method agentd serves, in one place.
  peer_.on_request<acp::InitializeRequest, acp::InitializeResponse>(
      "initialize", [this](const acp::InitializeRequest& request) { return initialize(request); });
  peer_.on_request<acp::Empty, acp::Empty>("_agentd/ping", [](const acp::Empty&) { return acp::Empty{}; });
}

support::Result<acp::InitializeResponse> AcpServer::initialize(const acp::InitializeRequest& request) {
  client_ = request;
  if (request.client_info) {
    log::info("client {} {} (ACP version {})", request.client_info->name, request.client_info->version,
              request.protocol_version);
  }
  acp::InitializeResponse response;
  response.protocol_version = acp::negotiate_version(request.protocol_version);
  // Capabilities are what works today, nothing more: no session/load, no images, no MCP over HTTP.
  response.agent_capabilities = acp::AgentCapabilities{};
  response.agent_info = acp::Implementation{"agentd", "agentd", support::kVersion};
  return response;
}

}  // namespace agentd::daemon
