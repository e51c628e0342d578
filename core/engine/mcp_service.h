// McpService: a session's MCP servers as the engine uses them. Starts them with the session, keeps the
// session's tool registry's mcp__ tools in step with the servers, waits for slow starters at the
// beginning of a turn, says when one failed, and reports them (/mcp). The protocol client itself is
// tools/mcp's; this is the part that knows about sessions and turns. Owned by the Session; used on its
// strand only.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>

#include "core/support/cancel.h"
#include "core/support/trace.h"
#include "tools/mcp/mcp_manager.h"
#include "tools/tool.h"

namespace agentd::core {

// How long a turn waits for MCP servers that are still starting before it goes on without their tools.
inline constexpr std::chrono::milliseconds kMcpReadyTimeout{15000};

class McpService {
 public:
  // `tools` is the session's registry, which this keeps the mcp__ tools of; it must outlive this.
  McpService(boost::asio::strand<boost::asio::any_io_executor> strand, tools::ToolRegistry& tools,
             std::string session_id);
  McpService(const McpService&) = delete;
  McpService& operator=(const McpService&) = delete;
  ~McpService();

  // Starts the project's servers (`configured`), then the client's (`from_client`), which win on a name
  // both use; a server without a cwd runs in `cwd`, a relative one is taken from it. Their tools join the
  // registry as each server becomes ready. Nothing to do when both lists are empty.
  void start(const std::vector<tools::mcp::ServerConfig>& configured, std::vector<tools::mcp::ServerConfig> from_client,
             const std::string& cwd);
  bool started() const noexcept { return manager_ != nullptr; }
  std::vector<tools::mcp::ServerStatus> status() const;
  // Stops the servers (their process groups, gracefully, then by force). Idempotent.
  boost::asio::awaitable<void> stop();

  // Before a model turn: waits for servers still starting (up to kMcpReadyTimeout), syncs their tools,
  // and returns a note for the model on servers that failed since the last turn, a line each ending in
  // "\n"; empty if none.
  boost::asio::awaitable<std::string> prepare_turn(support::CancelToken cancel, support::Span& span);

  // What /mcp answers: each server's state, protocol, restarts, error and tools.
  std::string report() const;

 private:
  // The registry's mcp__ tools replaced by the servers' current ones.
  void sync_tools();

  boost::asio::strand<boost::asio::any_io_executor> strand_;
  tools::ToolRegistry& tools_;
  std::string session_id_;
  std::shared_ptr<tools::mcp::McpManager> manager_;  // null until start() has servers
  std::set<std::string> failures_told_;              // failed servers the model was told of
  // The manager's tools-changed callback holds this weakly: a manager outliving us (its shutdown still
  // running) then calls nothing.
  std::shared_ptr<McpService*> self_ = std::make_shared<McpService*>(this);
};

}  // namespace agentd::core
