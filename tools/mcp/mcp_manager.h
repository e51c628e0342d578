// The MCP client: every configured server of one session, a stdio program or a Streamable HTTP endpoint
// (tools/mcp/http_transport.h), started in the background, spoken to through protocol::Peer (JSON-RPC),
// and offered to the engine as tools named mcp__<server>__<tool>. Handles the handshake, tool paging and
// list_changed, progress, cancellation, per-call timeouts, one restart after a crash or a lost session,
// and an orderly shutdown (process groups ended, HTTP sessions deleted).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "core/support/cancel.h"
#include "core/support/enum_names.h"
#include "core/support/task_group.h"
#include "tools/tool.h"

namespace agentd::tools::mcp {

// A stdio server (`command`), or a Streamable HTTP one (`url`).
struct ServerConfig {
  std::string name;
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // set on top of agentd's scrubbed environment
  std::string cwd;                                       // empty: agentd's
  std::string url;                                       // http: the server's endpoint
  // http: sent with every request; "${NAME}" in a value is agentd's variable NAME (a bearer token).
  std::vector<std::pair<std::string, std::string>> headers;
  bool http() const noexcept { return !url.empty(); }
};

struct ClientOptions {
  std::chrono::milliseconds call_timeout{60000};
  std::chrono::milliseconds init_timeout{30000};
  std::chrono::milliseconds restart_backoff{500};
  int max_restarts = 1;
  // At shutdown: from closing stdin to SIGTERM, and from SIGTERM to SIGKILL.
  std::chrono::milliseconds shutdown_grace{2000};
};

enum class ServerState { starting, ready, restarting, failed, stopped };
std::string_view server_state_name(ServerState state);
std::span<const support::EnumName<ServerState>> enum_names(ServerState) noexcept;

struct ServerStatus {
  std::string name;
  ServerState state = ServerState::starting;
  std::string protocol_version;
  std::string server_info;         // "name version" from the initialize answer
  std::string error;               // why it failed (or why it last restarted)
  std::vector<std::string> tools;  // mcp__ names
  int restarts = 0;
};

class ServerConnection;  // mcp_manager.cpp

// All servers of one session. Lives on one executor (the session's strand / the one-thread io_context):
// every member must be called there, and so are the callbacks.
class McpManager : public std::enable_shared_from_this<McpManager> {
 public:
  static std::shared_ptr<McpManager> create(boost::asio::any_io_executor executor, ClientOptions options);
  McpManager(const McpManager&) = delete;
  McpManager& operator=(const McpManager&) = delete;
  ~McpManager();

  // Non-blocking; each server starts in the background. Names must be unique (a duplicate is failed).
  void start(std::vector<ServerConfig> servers);
  // Until every server is ready or failed, the timeout passes, or `cancel` fires. Servers still
  // starting then are logged; their tools are absent until they are ready (on_tools_changed).
  boost::asio::awaitable<void> wait_ready(std::chrono::milliseconds timeout, support::CancelToken cancel);
  // One per tool of each ready server, in server then tool order, named mcp__<server>__<tool>.
  std::vector<std::shared_ptr<tools::Tool>> tools() const;
  std::vector<ServerStatus> status() const;
  // Called (on the executor) whenever the tools of a server change: it became ready, re-listed after
  // notifications/tools/list_changed, restarted, failed or stopped.
  void on_tools_changed(std::function<void()> callback);
  // Fails calls in progress, closes each server's stdin, SIGTERMs its group after the grace, SIGKILLs it
  // after a second grace, and reaps it; then cancels what is left of the client's coroutines and waits
  // for them, so none outlives the manager. The owner awaits it before letting go. Idempotent.
  boost::asio::awaitable<void> shutdown();
  // The client's coroutines still running (readers, watchers, writers, one per server): 0 after
  // shutdown().
  std::size_t running_tasks() const noexcept { return tasks_->size(); }

 private:
  McpManager(boost::asio::any_io_executor executor, ClientOptions options);
  void state_changed(bool tools_changed);

  boost::asio::any_io_executor executor_;
  ClientOptions options_;
  std::vector<std::shared_ptr<ServerConnection>> servers_;
  std::function<void()> on_tools_changed_;
  struct Waiters;
  std::shared_ptr<Waiters> waiters_;
  // Every coroutine of the client. Shared so that connections and links reach it through weak
  // references, and a manager that goes without shutdown() can leave it to a keeper (see the destructor).
  std::shared_ptr<support::TaskGroup> tasks_;
  bool shut_down_ = false;
};

}  // namespace agentd::tools::mcp
