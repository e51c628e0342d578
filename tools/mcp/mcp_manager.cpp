// One file for one server's life (launch, handshake, tool paging, calls, restart, shutdown): the states
// and the coroutines that move between them are easier to check side by side. The pure parts (names,
// results, progress) are in mcp_content.cpp.
#include "tools/mcp/mcp_manager.h"

#include <algorithm>
#include <csignal>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "core/support/log.h"
#include "core/support/version.h"
#include "protocol/framing.h"
#include "protocol/jsonrpc.h"
#include "protocol/peer.h"
#include "tools/mcp/http_transport.h"
#include "tools/mcp/mcp_content.h"
#include "tools/mcp/server_process.h"

namespace agentd::tools::mcp {

namespace asio = boost::asio;
namespace log = support::log;
using support::Errc;
using support::Error;
using support::Json;
using support::Result;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kStderrTailLines = 10;     // kept for a crash report
constexpr std::size_t kMaxStderrLine = 4096;     // longer lines are logged in pieces
constexpr std::size_t kMaxStderrTailLine = 400;  // and kept shorter still in the report
constexpr std::size_t kReadChunk = std::size_t{64} << 10;
// After a server's stdout closes, how long it may take to exit before we kill it.
constexpr auto kExitAfterStdoutClosed = 1000ms;
// After it exited, how long a leftover holding its stderr may delay the crash report.
constexpr auto kDrainStderr = 200ms;
// Bounds on a shutdown that SIGKILL should already have ended.
constexpr auto kStopSlack = 10s;
constexpr int kMaxListPages = 1000;

// Starts a coroutine of the client in the manager's TaskGroup. Connections and links hold it with a weak
// reference: the group lives as long as any task in it (see ~McpManager), so only a task started after
// everything ended could find it gone.
class Spawner {
 public:
  explicit Spawner(std::weak_ptr<support::TaskGroup> group) : group_(std::move(group)) {}
  void operator()(asio::awaitable<void> task, std::string name) const {
    if (auto group = group_.lock()) {
      group->spawn(std::move(task), std::move(name));
    } else {
      log::debug("{} not started: the MCP client is gone", name);
    }
  }

 private:
  std::weak_ptr<support::TaskGroup> group_;
};

// Whether the awaiting coroutine was cancelled through Asio (its waits then abort at once).
asio::awaitable<bool> asio_cancelled() {
  const asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
  co_return state.cancelled() != asio::cancellation_type::none;
}

// Wakes coroutines waiting for "something changed"; each waits on its own timer, with its own
// deadline. Callers re-check their condition after every wake (and before the first wait).
class Notifier {
 public:
  explicit Notifier(asio::any_io_executor executor) : executor_(std::move(executor)) {}
  void notify_all() {
    for (auto& timer : waiting_) timer->cancel();
  }
  // False when the awaiting coroutine was cancelled through Asio: stop waiting then.
  asio::awaitable<bool> wait_until(Clock::time_point deadline) {
    auto timer = std::make_shared<asio::steady_timer>(executor_, deadline);
    waiting_.push_back(timer);
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    std::erase(waiting_, timer);
    const bool cancelled = co_await asio_cancelled();
    co_return !cancelled;
  }

 private:
  asio::any_io_executor executor_;
  std::vector<std::shared_ptr<asio::steady_timer>> waiting_;
};

// One run of a server process: its pipes, its Peer, and what we saw of its end. A restart makes a
// new Link, so late events from the old process can never reach the new one.
struct Link : std::enable_shared_from_this<Link> {
  Link(const asio::any_io_executor& executor, Spawner spawner) : changed(executor), spawn(std::move(spawner)) {}

  std::string server;
  std::unique_ptr<ServerProcess> process;  // a stdio server's
  std::shared_ptr<HttpTransport> http;     // a Streamable HTTP server's
  std::unique_ptr<protocol::Peer> peer;
  Notifier changed;  // any flag below changed
  Spawner spawn;

  std::string out_buffer;
  bool writing = false;
  bool write_failed = false;

  std::deque<std::string> stderr_tail;
  bool stdout_closed = false;
  bool stderr_closed = false;
  bool exited = false;
  bool initialized = false;  // notifications/initialized sent: other requests may follow
  bool stateless = false;    // the 2026-07-28 revision: every request carries the version in its _meta
  bool closing = false;      // the end is being processed: pending calls are failing
  bool ended = false;
  std::string end_reason;  // "exit code 1; last stderr: ..."
  // The reason sent with the next notifications/cancelled (set right before a call is cancelled).
  std::string cancel_reason = "cancelled";

  void send(std::string message);
  std::string stderr_summary() const;
};

asio::awaitable<void> write_loop(std::shared_ptr<Link> link) {
  while (!link->out_buffer.empty() && !link->write_failed) {
    std::string chunk = std::move(link->out_buffer);
    link->out_buffer.clear();
    boost::system::error_code ec;
    co_await asio::async_write(link->process->stdin_pipe(), asio::buffer(chunk),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      // The server closed its stdin or is gone: its end shows on stdout and in its exit.
      log::debug("MCP server '{}': writing to its stdin failed: {}", link->server, ec.message());
      link->write_failed = true;
      link->out_buffer.clear();
    }
  }
  link->writing = false;
}

void Link::send(std::string message) {
  if (write_failed || ended) return;
  // protocol::Peer cancels an outgoing call with its own `$/cancel_request`; MCP's word for it is
  // notifications/cancelled, with a reason.
  if (message.find("\"$/cancel_request\"") != std::string::npos) {
    if (auto parsed = support::parse_json(message); parsed && (*parsed)["method"] == Json("$/cancel_request")) {
      Json params = Json::object();
      params.set("requestId", (*parsed)["params"]["requestId"]);
      params.set("reason", cancel_reason);
      message = protocol::encode_notification("notifications/cancelled", params.dump());
    }
  }
  if (http) {
    http->send(std::move(message));
    return;
  }
  protocol::append_frame(out_buffer, protocol::Framing::ndjson, message);
  if (!writing) {
    writing = true;
    auto self = shared_from_this();
    spawn(write_loop(self), "MCP writer");
  }
}

std::string Link::stderr_summary() const {
  if (stderr_tail.empty()) return {};
  std::string out = "; last stderr: ";
  bool first = true;
  for (const auto& line : stderr_tail) {
    if (!first) out += " | ";
    out += line;
    first = false;
  }
  return out;
}

void dispatch_frame(Link& link, const protocol::FrameEvent& event) {
  if (link.closing) return;
  if (event.kind == protocol::FrameEvent::Kind::message) {
    link.peer->handle_frame(event.payload);
  } else {
    log::warn("MCP server '{}': unusable output on stdout: {}", link.server, event.payload);
  }
}

asio::awaitable<void> read_stdout(std::shared_ptr<Link> link) {
  protocol::FrameDecoder decoder;
  std::vector<char> buffer(kReadChunk);
  for (;;) {
    boost::system::error_code ec;
    const std::size_t n = co_await link->process->stdout_pipe().async_read_some(
        asio::buffer(buffer), asio::redirect_error(asio::use_awaitable, ec));
    if (n > 0) {
      decoder.feed(std::string_view(buffer.data(), n));
      while (auto event = decoder.next()) dispatch_frame(*link, *event);
    }
    if (ec) break;
  }
  if (auto event = decoder.finish()) dispatch_frame(*link, *event);
  link->stdout_closed = true;
  link->changed.notify_all();
}

void stderr_line(Link& link, std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return;
  log::debug("MCP server '{}' stderr: {}", link.server, line);
  std::string kept(line.substr(0, kMaxStderrTailLine));
  if (line.size() > kMaxStderrTailLine) {
    while (!kept.empty() && (static_cast<unsigned char>(kept.back()) & 0xC0) == 0x80) kept.pop_back();
    if (!kept.empty() && (static_cast<unsigned char>(kept.back()) & 0xC0) == 0xC0) kept.pop_back();
    kept += "...";
  }
  link.stderr_tail.push_back(std::move(kept));
  if (link.stderr_tail.size() > kStderrTailLines) link.stderr_tail.pop_front();
}

// Line by line into the log (never our stdout), keeping the last lines for a crash report.
asio::awaitable<void> read_stderr(std::shared_ptr<Link> link) {
  std::string pending;
  std::vector<char> buffer(std::size_t{16} << 10);
  for (;;) {
    boost::system::error_code ec;
    const std::size_t n = co_await link->process->stderr_pipe().async_read_some(
        asio::buffer(buffer), asio::redirect_error(asio::use_awaitable, ec));
    pending.append(buffer.data(), n);
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      stderr_line(*link, std::string_view(pending).substr(start, nl - start));
    }
    pending.erase(0, start);
    if (pending.size() > kMaxStderrLine) {
      stderr_line(*link, pending);
      pending.clear();
    }
    if (ec) break;
  }
  stderr_line(*link, pending);
  link->stderr_closed = true;
  link->changed.notify_all();
}

asio::awaitable<void> watch_exit(std::shared_ptr<Link> link) {
  co_await link->process->wait_exit();
  link->exited = true;
  link->changed.notify_all();
}

asio::awaitable<bool> wait_for(Link& link, bool& flag, Clock::time_point deadline) {
  while (!flag && Clock::now() < deadline) {
    const bool live = co_await link.changed.wait_until(deadline);
    if (!live) break;
  }
  co_return flag;
}

// The end of a run: the program exited or closed its stdout. Makes sure it is dead and reaped (and its
// group with it), says why it ended, and fails every call still waiting for an answer.
asio::awaitable<void> watch_end(std::shared_ptr<Link> link) {
  while (!link->stdout_closed && !link->exited) {
    const bool live = co_await link->changed.wait_until(Clock::time_point::max());
    if (!live) break;
  }
  std::string killed;
  const auto exit_deadline = Clock::now() + kExitAfterStdoutClosed;
  const bool exited = co_await wait_for(*link, link->exited, exit_deadline);
  if (!exited) {
    killed = "closed its stdout but kept running, killed; ";
    link->process->signal_group(SIGKILL);
    co_await wait_for(*link, link->exited, Clock::time_point::max());
  }
  const auto drain_deadline = Clock::now() + kDrainStderr;
  co_await wait_for(*link, link->stderr_closed, drain_deadline);
  link->process->signal_group(SIGKILL);  // what it started in its group goes with it
  link->end_reason = killed + describe_wait_status(link->process->wait_status()) + link->stderr_summary();
  link->closing = true;
  boost::system::error_code ignored;
  link->process->stdout_pipe().close(ignored);
  link->process->stderr_pipe().close(ignored);
  link->process->close_stdin();
  link->peer->shutdown();
  link->ended = true;
  link->changed.notify_all();
}

// The end of an HTTP server's link: the session is over (the server dropped it, or we closed it). Fails
// every call still waiting, as watch_end does for a process.
void end_http_link(Link& link, std::string reason) {
  if (link.ended) return;
  link.end_reason = std::move(reason);
  link.closing = true;
  link.peer->shutdown();
  link.ended = true;
  link.changed.notify_all();
}

asio::awaitable<void> close_http_link(std::shared_ptr<Link> link, std::string reason) {
  co_await link->http->close();
  end_http_link(*link, std::move(reason));
}

// What every request of the stateless revision carries: the version, the client's capabilities (none)
// and who the client is.
void add_stateless_meta(Json& params) {
  if (!params.is_object()) params = Json::object();
  Json& meta = params["_meta"];
  if (!meta.is_object()) meta = Json::object();
  meta.set(kMetaProtocolVersion, std::string(kStatelessProtocolVersion));
  meta.set(kMetaClientCapabilities, Json::object());
  Json client_info = Json::object();
  client_info.set("name", "agentd");
  client_info.set("version", support::kVersion);
  meta.set(kMetaClientInfo, std::move(client_info));
}

enum class CallEnd { answered, timed_out, cancelled, closed };

struct CallOutcome {
  CallEnd end = CallEnd::answered;
  std::optional<Result<Json>> result;  // when answered
};

struct PendingCall {
  explicit PendingCall(const asio::any_io_executor& executor) : timer(executor) {}
  asio::steady_timer timer;  // the deadline; cancelled to wake the waiter early
  asio::cancellation_signal signal;
  std::optional<Result<Json>> result;
  bool cancel_requested = false;
};

// One request with a deadline and a cancel token. When `cancellable`, a timeout or a cancellation sends
// notifications/cancelled (initialize must not be cancelled: the spec forbids it).
asio::awaitable<CallOutcome> call(std::shared_ptr<Link> link, std::string_view method, const Json& params,
                                  std::chrono::milliseconds timeout, const support::CancelToken& cancel,
                                  bool cancellable) {
  CallOutcome outcome;
  if (link->closing) {
    outcome.end = CallEnd::closed;
    co_return outcome;
  }
  const asio::any_io_executor executor = link->peer->executor();
  auto pending = std::make_shared<PendingCall>(executor);
  pending->timer.expires_after(timeout);
  Json sent = params;
  if (link->stateless) add_stateless_meta(sent);
  link->peer->async_call(std::string(method), sent,
                         asio::bind_cancellation_slot(pending->signal.slot(), [pending](Result<Json> result) {
                           pending->result.emplace(std::move(result));
                           pending->timer.cancel();
                         }));
  support::CancelRegistration registration = cancel.on_cancel([weak = std::weak_ptr(pending), executor] {
    asio::post(executor, [weak] {
      if (auto p = weak.lock()) {
        p->cancel_requested = true;
        p->timer.cancel();
      }
    });
  });
  for (;;) {
    if (pending->result) break;
    if (pending->cancel_requested) {
      outcome.end = CallEnd::cancelled;
      break;
    }
    boost::system::error_code ec;
    co_await pending->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (pending->result) break;
    const bool outer_cancelled = co_await asio_cancelled();
    if (pending->cancel_requested || outer_cancelled) {
      outcome.end = CallEnd::cancelled;
      break;
    }
    if (!ec) {
      outcome.end = CallEnd::timed_out;
      break;
    }
  }
  if (outcome.end == CallEnd::answered) {
    if (!*pending->result && link->closing) {
      outcome.end = CallEnd::closed;
    } else {
      outcome.result = std::move(pending->result);
    }
    co_return outcome;
  }
  if (cancellable && !link->closing) {
    link->cancel_reason = outcome.end == CallEnd::timed_out ? fmt::format("timed out after {} ms", timeout.count())
                                                            : std::string("cancelled by the user");
    // Peer forgets the call and sends its cancel notice, which Link::send turns into MCP's.
    pending->signal.emit(asio::cancellation_type::terminal);
  }
  co_return outcome;
}

}  // namespace

// --- A tool of one server ------------------------------------------------------------------------

class McpTool final : public Tool {
 public:
  McpTool(std::weak_ptr<ServerConnection> server, std::string server_name, ServerTool tool)
      : server_(std::move(server)), server_name_(std::move(server_name)), tool_(std::move(tool)) {}

  const ToolSpec& spec() const override { return tool_.spec; }
  std::string title(const Json& /*input*/, const ToolContext& /*context*/) const override {
    return fmt::format("{}: {}", server_name_, tool_.name);
  }
  asio::awaitable<Result<ToolResult>> run(Json input, ToolContext& context) override;

 private:
  std::weak_ptr<ServerConnection> server_;
  std::string server_name_;
  ServerTool tool_;
};

// --- One server ----------------------------------------------------------------------------------

class ServerConnection : public std::enable_shared_from_this<ServerConnection> {
 public:
  using ChangeCallback = std::function<void(bool tools_changed)>;

  ServerConnection(asio::any_io_executor executor, Spawner spawner, ServerConfig config, ClientOptions options,
                   ChangeCallback on_change)
      : executor_(std::move(executor)),
        spawn_(std::move(spawner)),
        config_(std::move(config)),
        options_(options),
        on_change_(std::move(on_change)),
        changed_(executor_) {}

  const std::string& name() const { return config_.name; }
  ServerState state() const { return state_; }
  const std::vector<std::shared_ptr<Tool>>& tools() const { return tools_; }

  ServerStatus status() const {
    ServerStatus out;
    out.name = config_.name;
    out.state = state_;
    out.protocol_version = protocol_version_;
    out.server_info = server_info_;
    out.error = error_;
    out.restarts = restarts_;
    for (const auto& tool : tools_) out.tools.push_back(tool->spec().name);
    return out;
  }

  void start() {
    auto self = shared_from_this();
    spawn_(run(self), "MCP server " + config_.name);
  }

  // Marks a server that cannot even be started (a duplicate name).
  void fail_now(std::string reason) {
    error_ = std::move(reason);
    state_ = ServerState::failed;
    finished_ = true;
    log::warn("MCP server '{}' failed: {}", config_.name, error_);
  }

  void begin_stop() {
    if (stopping_) return;
    stopping_ = true;
    if (link_ && !link_->ended) {
      link_->closing = true;    // what it still sends is of no use now
      link_->peer->shutdown();  // calls in progress fail now, with "shut down"
      if (link_->http) {
        spawn_(close_http_link(link_, "stopped"), "MCP HTTP close");
      } else {
        link_->process->close_stdin();
      }
    }
    changed_.notify_all();
  }

  asio::awaitable<void> finish_stop(Clock::time_point term_at, Clock::time_point kill_at) {
    auto self = shared_from_this();
    std::shared_ptr<Link> link = link_;
    if (link && !link->ended && link->process) {
      const bool exited_on_eof = co_await wait_for(*link, link->exited, term_at);
      if (!exited_on_eof) {
        log::info("MCP server '{}' did not exit when its stdin closed: SIGTERM", config_.name);
        link->process->signal_group(SIGTERM);
        const bool exited_on_term = co_await wait_for(*link, link->exited, kill_at);
        if (!exited_on_term) {
          log::warn("MCP server '{}' ignored SIGTERM: SIGKILL", config_.name);
          link->process->signal_group(SIGKILL);
        }
      }
    }
    const auto deadline = Clock::now() + kStopSlack;
    while (!finished_ && Clock::now() < deadline) {
      const bool live = co_await changed_.wait_until(deadline);
      if (!live) break;
    }
  }

  asio::awaitable<Result<ToolResult>> call_tool(const std::string& tool, Json arguments, ToolContext& context) {
    auto self = shared_from_this();
    if (state_ != ServerState::ready || !link_ || link_->closing) co_return ToolResult::failure(unavailable());
    std::shared_ptr<Link> link = link_;
    const std::string token = fmt::format("agentd-{}", next_progress_token_++);
    Json params = Json::object();
    params.set("name", tool);
    params.set("arguments", arguments.is_object() ? std::move(arguments) : Json::object());
    params["_meta"].set("progressToken", token);
    const std::string key = Json(token).dump();
    if (context.progress) progress_[key] = context.progress;
    CallOutcome outcome = co_await call(link, "tools/call", params, options_.call_timeout, context.cancel, true);
    progress_.erase(key);
    switch (outcome.end) {
      case CallEnd::cancelled:
        co_return Error(Errc::cancelled, fmt::format("'{}' on MCP server '{}' was cancelled", tool, config_.name));
      case CallEnd::timed_out:
        co_return ToolResult::failure(
            fmt::format("MCP tool '{}' on server '{}' timed out after {} ms and was cancelled", tool, config_.name,
                        options_.call_timeout.count()));
      case CallEnd::closed:
        if (stopping_) {
          co_return ToolResult::failure(
              fmt::format("MCP server '{}' was shut down while '{}' was running", config_.name, tool));
        }
        co_return ToolResult::failure(fmt::format("MCP server '{}' exited while '{}' was running ({})", config_.name,
                                                  tool, link->end_reason.empty() ? "no reason" : link->end_reason));
      case CallEnd::answered: break;
    }
    if (!*outcome.result) {
      co_return ToolResult::failure(fmt::format("MCP server '{}' refused the call to '{}': {}", config_.name, tool,
                                                outcome.result->error().message()));
    }
    co_return tool_result_from_call(config_.name, tool, **outcome.result);
  }

 private:
  enum class Handshake { ready, fatal, ended };

  std::string unavailable() const {
    switch (state_) {
      case ServerState::starting: return fmt::format("MCP server '{}' is still starting", config_.name);
      case ServerState::restarting:
        return fmt::format("MCP server '{}' is restarting after it exited ({})", config_.name, error_);
      case ServerState::failed: return fmt::format("MCP server '{}' is not available: {}", config_.name, error_);
      case ServerState::stopped: return fmt::format("MCP server '{}' has been shut down", config_.name);
      case ServerState::ready: break;
    }
    return fmt::format("MCP server '{}' is not connected", config_.name);
  }

  void set_state(ServerState state, bool tools_changed) {
    state_ = state;
    if (state != ServerState::ready && !tools_.empty()) {
      tools_.clear();
      tools_changed = true;
    }
    changed_.notify_all();
    if (on_change_) on_change_(tools_changed);
  }

  void install_tools(std::vector<ServerTool> listed) {
    std::vector<std::shared_ptr<Tool>> tools;
    std::set<std::string> names;
    std::weak_ptr<ServerConnection> weak = shared_from_this();
    for (auto& tool : listed) {
      if (!names.insert(tool.spec.name).second) {
        log::warn("MCP server '{}': tool '{}' maps to the name {} already taken; skipped", config_.name, tool.name,
                  tool.spec.name);
        continue;
      }
      tools.push_back(std::make_shared<McpTool>(weak, config_.name, std::move(tool)));
    }
    tools_ = std::move(tools);
  }

  Result<std::shared_ptr<Link>> launch() {
    if (!config_.url.empty()) return connect_http();
    auto process = ServerProcess::spawn(executor_, config_);
    if (!process) return std::move(process).error();
    auto link = std::make_shared<Link>(executor_, spawn_);
    link->server = config_.name;
    link->process = std::move(*process);
    std::weak_ptr<Link> weak_link = link;
    link->peer = std::make_unique<protocol::Peer>(executor_, [weak_link](std::string message) {
      if (auto l = weak_link.lock()) l->send(std::move(message));
    });
    register_handlers(*link->peer, weak_link);
    log::info("MCP server '{}' started: {} (pid {})", config_.name, config_.command, link->process->pid());
    spawn_(read_stdout(link), "MCP stdout reader");
    spawn_(read_stderr(link), "MCP stderr reader");
    spawn_(watch_exit(link), "MCP exit watcher");
    spawn_(watch_end(link), "MCP end watcher");
    return link;
  }

  // A Streamable HTTP server: no process, a transport under the Peer. Header values are expanded from
  // agentd's environment now, so a token set after start-up is used on the next connection.
  Result<std::shared_ptr<Link>> connect_http() {
    HttpTransportOptions options;
    options.server = config_.name;
    options.url = config_.url;
    for (const auto& [name, value] : config_.headers) {
      auto expanded = expand_header_value(value);
      if (!expanded)
        return Error(Errc::invalid_argument, fmt::format("header {}: {}", name, expanded.error().message()));
      options.headers.push_back({name, std::move(*expanded)});
    }
    options.proxy = net::ProxyConfig::from_environment();
    auto link = std::make_shared<Link>(executor_, spawn_);
    link->server = config_.name;
    std::weak_ptr<Link> weak_link = link;
    auto transport = HttpTransport::create(
        executor_, std::move(options),
        [weak_link](const std::string& message) {
          if (auto l = weak_link.lock(); l && !l->closing) l->peer->handle_frame(message);
        },
        [weak_link](std::string reason) {
          if (auto l = weak_link.lock()) end_http_link(*l, std::move(reason));
        },
        [spawn = spawn_](asio::awaitable<void> task, std::string name) { spawn(std::move(task), std::move(name)); });
    if (!transport) return std::move(transport).error();
    link->http = std::move(*transport);
    link->peer = std::make_unique<protocol::Peer>(executor_, [weak_link](std::string message) {
      if (auto l = weak_link.lock()) l->send(std::move(message));
    });
    register_handlers(*link->peer, weak_link);
    log::info("MCP server '{}': connecting to {}", config_.name, config_.url);
    return link;
  }

  void register_handlers(protocol::Peer& peer, const std::weak_ptr<Link>& weak_link) {
    std::weak_ptr<ServerConnection> weak = shared_from_this();
    // The one server->client request we answer; at any time, even before initialize completes.
    peer.on_request_raw("ping",
                        [](const Json& /*params*/, protocol::Responder responder) { responder.reply(Json::object()); });
    // We declare no client capabilities, so these are refused (anything else is refused by the Peer
    // with "Method not found" too).
    for (const char* method : {"sampling/createMessage", "roots/list", "elicitation/create"}) {
      peer.on_request_raw(method, [name = config_.name, m = std::string(method)](const Json& /*params*/,
                                                                                 protocol::Responder responder) {
        log::info("MCP server '{}' asked for {}, which agentd does not offer", name, m);
        responder.fail(protocol::RpcError{protocol::error_code::kMethodNotFound,
                                          fmt::format("agentd does not support {} (no such client capability)", m),
                                          std::nullopt});
      });
    }
    peer.on_notification_raw("notifications/progress", [weak](const Json& params) {
      auto self = weak.lock();
      if (!self) return;
      auto it = self->progress_.find(params["progressToken"].dump());
      if (it == self->progress_.end()) return;  // a finished call's late progress
      auto callback = it->second;               // the callback may end the call: keep a copy
      callback(format_progress(params));
    });
    peer.on_notification_raw("notifications/tools/list_changed", [weak, weak_link](const Json& /*params*/) {
      auto self = weak.lock();
      auto link = weak_link.lock();
      if (!self || !link) return;
      // Before the handshake's own listing nothing may be asked (the spec allows only pings before
      // initialized); during it, the change may have missed that listing: re-list once ready.
      if (link->initialized) self->relist_wanted_ = true;
      if (self->state_ == ServerState::ready && self->relist_wanted_ && !self->relisting_) {
        self->relisting_ = true;
        self->spawn_(relist(self, link), "MCP tools re-list");
      }
    });
    peer.on_notification_raw("notifications/message", [name = config_.name](const Json& params) {
      log::debug("MCP server '{}' log ({}): {}", name,
                 params["level"].is_string() ? params["level"].as_string() : std::string("info"),
                 params["data"].is_string() ? params["data"].as_string() : params["data"].dump());
    });
    peer.on_notification_raw("notifications/cancelled", [](const Json& /*params*/) {
      // Cancels a request of theirs to us; we answer those at once, so there is nothing to stop.
    });
  }

  static asio::awaitable<CallEnd> list_tools(std::shared_ptr<ServerConnection> self, std::shared_ptr<Link> link,
                                             std::vector<ServerTool>& out, std::string& error) {
    std::string cursor;
    std::set<std::string> seen_cursors;
    for (int page = 0; page < kMaxListPages; ++page) {
      Json params = Json::object();
      if (!cursor.empty()) params.set("cursor", cursor);
      CallOutcome listed = co_await call(link, "tools/list", params, self->options_.call_timeout, {}, true);
      if (listed.end != CallEnd::answered) co_return listed.end;
      if (!*listed.result) {
        error = fmt::format("tools/list failed: {}", listed.result->error().message());
        co_return CallEnd::answered;
      }
      const Json& result = **listed.result;
      if (const Json* tools = result.find("tools"); tools != nullptr && tools->is_array()) {
        for (const Json& entry : tools->as_array()) {
          if (auto tool = read_server_tool(self->config_.name, entry)) {
            out.push_back(std::move(*tool));
          } else {
            log::warn("MCP server '{}': ignoring a tool without a name", self->config_.name);
          }
        }
      }
      const Json* next = result.find("nextCursor");
      if (next == nullptr || !next->is_string() || next->as_string().empty()) co_return CallEnd::answered;
      if (!seen_cursors.insert(next->as_string()).second) {
        log::warn("MCP server '{}': tools/list repeated cursor {}; stopping there", self->config_.name,
                  next->as_string());
        co_return CallEnd::answered;
      }
      cursor = next->as_string();
    }
    log::warn("MCP server '{}': tools/list still paging after {} pages; stopping there", self->config_.name,
              kMaxListPages);
    co_return CallEnd::answered;
  }

  static asio::awaitable<void> relist(std::shared_ptr<ServerConnection> self, std::shared_ptr<Link> link) {
    while (self->relist_wanted_ && self->link_ == link && !link->closing) {
      self->relist_wanted_ = false;
      std::vector<ServerTool> listed;
      std::string error;
      const CallEnd end = co_await list_tools(self, link, listed, error);
      if (end != CallEnd::answered || self->link_ != link || self->state_ != ServerState::ready) break;
      if (!error.empty()) {
        log::warn("MCP server '{}': re-listing tools after list_changed: {}; keeping the old list", self->config_.name,
                  error);
        continue;
      }
      self->install_tools(std::move(listed));
      log::info("MCP server '{}': tools changed, now {}", self->config_.name, self->tools_.size());
      self->set_state(ServerState::ready, true);
    }
    self->relisting_ = false;
  }

  // server/discover, for a server whose initialize failed: ready (and `result` holds its answer) when it
  // speaks the stateless revision; fatal when it does not (or does not know the method either).
  static asio::awaitable<Handshake> discover(std::shared_ptr<ServerConnection> self, std::shared_ptr<Link> link,
                                             Json& result) {
    if (link->closing) co_return Handshake::ended;
    link->stateless = true;
    if (link->http) link->http->set_protocol_version(std::string(kStatelessProtocolVersion));
    CallOutcome discovered =
        co_await call(link, "server/discover", Json::object(), self->options_.init_timeout, {}, false);
    if (discovered.end == CallEnd::closed || discovered.end == CallEnd::cancelled) co_return Handshake::ended;
    bool speaks = false;
    if (discovered.end == CallEnd::answered && *discovered.result) {
      if (const Json* versions = (**discovered.result).find("supportedVersions");
          versions != nullptr && versions->is_array()) {
        for (const Json& v : versions->as_array()) speaks = speaks || v == Json(std::string(kStatelessProtocolVersion));
      }
    }
    if (!speaks) {
      link->stateless = false;
      if (link->http) link->http->set_protocol_version({});
      co_return Handshake::fatal;
    }
    result = std::move(**discovered.result);
    self->protocol_version_ = std::string(kStatelessProtocolVersion);
    co_return Handshake::ready;
  }

  static asio::awaitable<Handshake> handshake(std::shared_ptr<ServerConnection> self, std::shared_ptr<Link> link) {
    const ClientOptions& options = self->options_;
    Json params = Json::object();
    params.set("protocolVersion", std::string(kProtocolVersion));
    params.set("capabilities", Json::object());
    Json client_info = Json::object();
    client_info.set("name", "agentd");
    client_info.set("version", support::kVersion);
    params.set("clientInfo", std::move(client_info));
    CallOutcome init = co_await call(link, "initialize", params, options.init_timeout, {}, false);
    if (init.end == CallEnd::closed || init.end == CallEnd::cancelled) co_return Handshake::ended;
    if (init.end == CallEnd::timed_out) {
      self->error_ = fmt::format("did not answer initialize within {} ms", options.init_timeout.count());
      co_return Handshake::fatal;
    }
    Json result;
    if (!*init.result) {
      // A server of the stateless revision has no initialize: ask it what it speaks.
      const std::string refused = init.result->error().message();
      const Handshake discovered = co_await discover(self, link, result);
      if (discovered == Handshake::ended) co_return discovered;
      if (discovered == Handshake::fatal) {
        self->error_ = fmt::format("initialize failed: {}", refused);
        co_return Handshake::fatal;
      }
    } else {
      result = **init.result;
      const Json& version = result["protocolVersion"];
      if (!version.is_string() || !is_supported_protocol_version(version.as_string())) {
        self->error_ = fmt::format("answered protocol version {}, which agentd does not speak (it speaks {})",
                                   version.is_null() ? std::string("(none)") : version.dump(),
                                   fmt::join(supported_protocol_versions(), ", "));
        co_return Handshake::fatal;
      }
      self->protocol_version_ = version.as_string();
    }
    const Json& info = result["serverInfo"];
    self->server_info_ = info["name"].is_string() ? info["name"].as_string() : std::string("unnamed");
    if (info["version"].is_string()) self->server_info_ += " " + info["version"].as_string();
    const bool offers_tools = result["capabilities"].contains("tools");
    if (!link->stateless) {
      // Over HTTP the notification already carries the negotiated version (MCP-Protocol-Version).
      if (link->http) link->http->initialized(self->protocol_version_);
      link->peer->notify("notifications/initialized", Json::object());
    }
    link->initialized = true;

    std::vector<ServerTool> listed;
    std::string error;
    const CallEnd end = co_await list_tools(self, link, listed, error);
    if (end == CallEnd::closed || end == CallEnd::cancelled) co_return Handshake::ended;
    if (end == CallEnd::timed_out) {
      self->error_ = fmt::format("did not answer tools/list within {} ms", options.call_timeout.count());
      co_return Handshake::fatal;
    }
    if (!error.empty()) {
      if (offers_tools) {
        self->error_ = error;
        co_return Handshake::fatal;
      }
      listed.clear();  // it said it has no tools; asking anyway was a courtesy
    }
    self->install_tools(std::move(listed));
    co_return Handshake::ready;
  }

  static asio::awaitable<void> run(std::shared_ptr<ServerConnection> self) {
    const std::string& name = self->config_.name;
    for (;;) {
      auto launched = self->launch();
      if (!launched) {
        self->error_ = launched.error().message();
        log::warn("MCP server '{}' failed: {}", name, self->error_);
        self->set_state(ServerState::failed, true);
        break;
      }
      std::shared_ptr<Link> link = *launched;
      self->link_ = link;
      self->relist_wanted_ = false;
      const Handshake handshake_end = co_await handshake(self, link);
      if (handshake_end == Handshake::ready && !self->stopping_ && !link->closing) {
        log::info("MCP server '{}' ready: {}, protocol {}, {} tools", name, self->server_info_, self->protocol_version_,
                  self->tools_.size());
        self->set_state(ServerState::ready, true);
        if (self->relist_wanted_ && !self->relisting_) {
          self->relisting_ = true;
          self->spawn_(relist(self, link), "MCP tools re-list");
        }
      } else if (handshake_end == Handshake::fatal) {
        if (link->http) {
          link->closing = true;
          self->spawn_(close_http_link(link, "failed"), "MCP HTTP close");
        } else {
          link->process->signal_group(SIGKILL);
        }
      }
      while (!link->ended) {
        const bool live = co_await link->changed.wait_until(Clock::time_point::max());
        if (!live) break;
      }
      if (self->stopping_) {
        log::info("MCP server '{}' stopped ({})", name, link->end_reason);
        self->set_state(ServerState::stopped, true);
        break;
      }
      if (handshake_end == Handshake::fatal) {
        log::warn("MCP server '{}' failed: {}", name, self->error_);
        self->set_state(ServerState::failed, true);
        break;
      }
      const std::string reason =
          link->http ? fmt::format("disconnected: {}", link->end_reason) : fmt::format("exited: {}", link->end_reason);
      if (self->restarts_ >= self->options_.max_restarts) {
        self->error_ = self->restarts_ == 0 ? reason
                                            : fmt::format("{} (after {} restart{})", reason, self->restarts_,
                                                          self->restarts_ == 1 ? "" : "s");
        log::warn("MCP server '{}' failed: {}", name, self->error_);
        self->set_state(ServerState::failed, true);
        break;
      }
      ++self->restarts_;
      self->error_ = reason;
      log::warn("MCP server '{}' {}; restarting in {} ms", name, reason, self->options_.restart_backoff.count());
      self->set_state(ServerState::restarting, true);
      const auto deadline = Clock::now() + self->options_.restart_backoff;
      while (!self->stopping_ && Clock::now() < deadline) {
        const bool live = co_await self->changed_.wait_until(deadline);
        if (!live) break;
      }
      if (self->stopping_) {
        self->set_state(ServerState::stopped, true);
        break;
      }
    }
    self->finished_ = true;
    self->changed_.notify_all();
  }

  asio::any_io_executor executor_;
  Spawner spawn_;
  ServerConfig config_;
  ClientOptions options_;
  ChangeCallback on_change_;
  Notifier changed_;  // state_, stopping_ or finished_ changed

  ServerState state_ = ServerState::starting;
  std::string protocol_version_;
  std::string server_info_;
  std::string error_;
  int restarts_ = 0;
  std::vector<std::shared_ptr<Tool>> tools_;
  std::shared_ptr<Link> link_;
  bool stopping_ = false;
  bool finished_ = false;
  bool relisting_ = false;
  bool relist_wanted_ = false;
  std::uint64_t next_progress_token_ = 1;
  std::map<std::string, std::function<void(std::string_view)>> progress_;  // by progressToken JSON
};

asio::awaitable<Result<ToolResult>> McpTool::run(Json input, ToolContext& context) {
  auto server = server_.lock();
  if (!server) co_return ToolResult::failure(fmt::format("MCP server '{}' is gone", server_name_));
  co_return co_await server->call_tool(tool_.name, std::move(input), context);
}

// --- The manager ---------------------------------------------------------------------------------

constexpr support::EnumName<ServerState> kServerStateNames[] = {{ServerState::starting, "starting"},
                                                                {ServerState::ready, "ready"},
                                                                {ServerState::restarting, "restarting"},
                                                                {ServerState::failed, "failed"},
                                                                {ServerState::stopped, "stopped"}};
static_assert(support::names_every_value(kServerStateNames, ServerState::stopped));
std::span<const support::EnumName<ServerState>> enum_names(ServerState) noexcept { return kServerStateNames; }

std::string_view server_state_name(ServerState state) { return support::enum_name(state, "unknown"); }

struct McpManager::Waiters {
  explicit Waiters(const asio::any_io_executor& executor) : notifier(executor) {}
  Notifier notifier;
};

std::shared_ptr<McpManager> McpManager::create(asio::any_io_executor executor, ClientOptions options) {
  return std::shared_ptr<McpManager>(new McpManager(std::move(executor), options));
}

McpManager::McpManager(asio::any_io_executor executor, ClientOptions options)
    : executor_(std::move(executor)),
      options_(options),
      waiters_(std::make_shared<Waiters>(executor_)),
      tasks_(std::make_shared<support::TaskGroup>(executor_)) {}

McpManager::~McpManager() {
  if (tasks_->size() == 0) return;
  // Gone without shutdown() (a host that could not wait for it): the servers run on in their tasks, as
  // they would have, and the group must outlive every one of them; the completion of its join holds it.
  // (The one coroutine outside a group here: the group's own keeper.)
  support::TaskGroup& tasks = *tasks_;
  asio::co_spawn(executor_, tasks.join(), [keep = tasks_](const std::exception_ptr&) {});
}

void McpManager::start(std::vector<ServerConfig> servers) {
  // A server that dies while we write to it must not kill agentd with SIGPIPE (daemon.cpp ignores it
  // already; this covers other hosts, such as tests).
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    std::signal(SIGPIPE, SIG_IGN);
  }
  std::weak_ptr<McpManager> weak = shared_from_this();
  for (auto& config : servers) {
    const bool duplicate = std::any_of(servers_.begin(), servers_.end(),
                                       [&](const auto& server) { return server->name() == config.name; });
    auto connection = std::make_shared<ServerConnection>(executor_, Spawner(tasks_), std::move(config), options_,
                                                         [weak](bool changed) {
                                                           if (auto self = weak.lock()) self->state_changed(changed);
                                                         });
    servers_.push_back(connection);
    if (duplicate) {
      connection->fail_now("another MCP server has the same name");
    } else if (shut_down_) {
      connection->fail_now("the MCP client is shut down");
    } else {
      connection->start();
    }
  }
}

void McpManager::state_changed(bool tools_changed) {
  waiters_->notifier.notify_all();
  if (tools_changed && on_tools_changed_) {
    try {
      on_tools_changed_();
    } catch (const std::exception& e) {
      log::error("MCP tools-changed callback threw: {}", e.what());
    }
  }
}

asio::awaitable<void> McpManager::wait_ready(std::chrono::milliseconds timeout, support::CancelToken cancel) {
  auto self = shared_from_this();
  auto waiters = waiters_;
  support::CancelRegistration registration = cancel.on_cancel([weak = std::weak_ptr(waiters), executor = executor_] {
    asio::post(executor, [weak] {
      if (auto w = weak.lock()) w->notifier.notify_all();
    });
  });
  const auto settled = [this] {
    return std::all_of(servers_.begin(), servers_.end(), [](const auto& server) {
      const ServerState state = server->state();
      return state == ServerState::ready || state == ServerState::failed || state == ServerState::stopped;
    });
  };
  const auto deadline = Clock::now() + timeout;
  while (!settled() && !cancel.cancelled() && Clock::now() < deadline) {
    const bool live = co_await waiters->notifier.wait_until(deadline);
    if (!live) break;
  }
  for (const auto& server : servers_) {
    const ServerState state = server->state();
    if (state == ServerState::starting || state == ServerState::restarting) {
      log::warn("MCP server '{}' is still {} after {} ms; its tools are absent until it is ready", server->name(),
                server_state_name(state), timeout.count());
    }
  }
}

std::vector<std::shared_ptr<Tool>> McpManager::tools() const {
  std::vector<std::shared_ptr<Tool>> out;
  for (const auto& server : servers_) {
    if (server->state() != ServerState::ready) continue;
    out.insert(out.end(), server->tools().begin(), server->tools().end());
  }
  return out;
}

std::vector<ServerStatus> McpManager::status() const {
  std::vector<ServerStatus> out;
  out.reserve(servers_.size());
  for (const auto& server : servers_) out.push_back(server->status());
  return out;
}

void McpManager::on_tools_changed(std::function<void()> callback) { on_tools_changed_ = std::move(callback); }

asio::awaitable<void> McpManager::shutdown() {
  auto self = shared_from_this();
  if (shut_down_) co_return;
  shut_down_ = true;
  for (const auto& server : servers_) server->begin_stop();
  // One clock for all: the servers wind down together, so shutdown takes two graces at most.
  const auto term_at = Clock::now() + options_.shutdown_grace;
  const auto kill_at = term_at + options_.shutdown_grace;
  for (const auto& server : servers_) co_await server->finish_stop(term_at, kill_at);
  // Every server has ended (or its slack ran out). Their readers and watchers end with the closed pipes;
  // whatever still waits is cancelled. None may outlive the manager and what it owns.
  tasks_->cancel_all();
  co_await tasks_->join();
}

}  // namespace agentd::tools::mcp
