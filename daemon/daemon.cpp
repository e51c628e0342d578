#include "daemon/daemon.h"

#include <algorithm>
#include <csignal>
#include <thread>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/engine/engine_store.h"
#include "core/engine/session_manager.h"
#include "core/engine/system_rules.h"
#include "core/model/http_client.h"
#include "core/support/log.h"
#include "daemon/acp_server.h"
#include "daemon/config.h"
#include "daemon/demo.h"
#include "daemon/stdio_transport.h"
#include "protocol/peer.h"
#include "storage/database.h"
#include "storage/db_worker.h"
#include "tools/builtin/builtin_tools.h"
#include "tools/builtin/shell.h"
#include "tools/sandbox.h"
#include "tools/verify/verify_tool.h"

namespace agentd::daemon {

namespace asio = boost::asio;
namespace log = support::log;
using namespace boost::asio::experimental::awaitable_operators;

namespace {
constexpr auto kShutdownGrace = std::chrono::milliseconds(2000);
// Stopping MCP servers: closed stdin, then SIGTERM after 2 s, SIGKILL 2 s later (tools/mcp).
constexpr auto kMcpShutdownGrace = std::chrono::milliseconds(5000);
}  // namespace

int run_daemon(const Options& options, int in_fd, int out_fd) {
  // A client that goes away must show up as EPIPE on write, not kill us mid-flush.
  std::signal(SIGPIPE, SIG_IGN);

  std::string db_path;
  if (options.db_path) {
    db_path = *options.db_path;
  } else {
    auto path = storage::default_database_path();
    if (!path) {
      log::error("{}", path.error().message());
      return 1;
    }
    db_path = *path;
  }
  auto config = load_config(ConfigInputs{std::nullopt, std::nullopt, options.config_file, options.model, {}});
  if (!config) {
    log::error("{}", config.error().message());
    return 1;
  }
  for (const auto& source : config->sources) log::debug("config: read {}", source);
  if (config->project_trust && !config->project_trust->trusted) {
    log::warn("{}", untrusted_message(*config->project_trust));
  }

  std::optional<DemoModelServer> demo;
  if (options.demo) {
    auto started = DemoModelServer::start("/proc/self/exe");
    if (!started) {
      log::error("{}", started.error().message());
      return 1;
    }
    demo.emplace(std::move(*started));
    // Every model name resolves to the scripted server; nothing leaves the machine.
    core::model::ModelConfig scripted =
        core::model::default_model_config(core::model::Provider::anthropic, "scripted-demo");
    scripted.base_url = demo->url();
    scripted.api_key_env.clear();
    config->models.clear();
    config->models["anthropic:scripted-demo"] = scripted;
    config->model = "anthropic:scripted-demo";
  }

  auto db = storage::open_database(storage::DatabaseOptions{db_path});
  if (!db) {
    log::error("{}", db.error().message());
    return 1;
  }
  log::debug("database {} ready", db_path);
  // All SQLite work from here on happens on the worker's thread, group-committed.
  storage::DbWorker db_worker(std::make_unique<storage::Connection>(std::move(*db)));
  core::EngineStore store(db_worker);

  asio::io_context io(1);
  // Queued writes hold completion handlers bound to `io`, and the objects below may queue more as
  // they are destroyed; the worker must have run (and dropped) them all before `io` goes. Declared
  // right after `io`, so it is destroyed last before it.
  struct FlushBeforeLoopEnds {
    storage::DbWorker& worker;
    explicit FlushBeforeLoopEnds(storage::DbWorker& w) : worker(w) {}
    FlushBeforeLoopEnds(const FlushBeforeLoopEnds&) = delete;
    FlushBeforeLoopEnds& operator=(const FlushBeforeLoopEnds&) = delete;
    ~FlushBeforeLoopEnds() { worker.flush(); }
  } flush_before_loop_ends(db_worker);
  auto http = core::model::HttpClient::create(io.get_executor(), core::model::HttpClientOptions{});
  if (!http) {
    log::error("{}", http.error().message());
    return 1;
  }
  const tools::ShellConfig shell = shell_config(config->shell);
  // Said once at startup, so a user whose kernel cannot sandbox finds out before the first command. The
  // probe forks a child, so it runs beside the event loop instead of delaying `initialize`; a shell call
  // that comes first waits for it (the result is computed once).
  std::jthread sandbox_probe;
  if (shell.sandbox.require) {
    sandbox_probe = std::jthread([mode = config->shell.sandbox, fallback = shell.sandbox.allow_unsandboxed] {
      const tools::SandboxStatus& sandbox = tools::sandbox_status();
      if (!sandbox.landlock()) {
        log::warn("shell sandbox unavailable: {}; commands are {} (config shell.sandbox = \"{}\")", sandbox.summary(),
                  fallback ? "run unsandboxed" : "refused", mode);
      } else {
        log::debug("shell sandbox: {}", sandbox.summary());
      }
    });
  } else {
    log::info("shell sandbox off (config shell.sandbox = \"off\"): commands can write anywhere this user can");
  }

  core::EngineContext engine;
  engine.executor = io.get_executor();
  engine.store = &store;
  engine.http = http->get();
  // Each session gets the builtin tools and `verify`, with its own project's shell settings.
  engine.install_tools = [](tools::ToolRegistry& registry,
                            const core::ProjectSettings& settings) -> support::Result<void> {
    AGENTD_TRY_VOID(tools::register_builtin_tools(registry, settings.shell));
    return registry.add(tools::verify::make_verify_tool(settings.shell));
  };
  std::optional<core::model::ModelConfig> demo_model;
  if (demo) demo_model = config->models["anthropic:scripted-demo"];
  engine.system_rules = std::string(core::system_rules());
  engine.workspace_index = std::make_shared<core::context::WorkspaceIndex>();
  // Each session reads its own project's layers (user file, <cwd>/.agentd/config.json, --config, the
  // environment and --model) when it is created or loaded.
  engine.project_settings = [config_file = options.config_file, model_flag = options.model,
                             demo_model](const std::string& cwd) -> support::Result<core::ProjectSettings> {
    auto loaded = load_config(ConfigInputs{std::nullopt, cwd, config_file, model_flag, {}});
    if (!loaded) return std::move(loaded).error();
    for (const auto& source : loaded->sources) log::debug("config for {}: read {}", cwd, source);
    if (loaded->project_trust && !loaded->project_trust->trusted) {
      log::warn("{}", untrusted_message(*loaded->project_trust));
    }
    if (demo_model) {
      // In --demo every name is the scripted server, which needs no key.
      loaded->models.clear();
      loaded->models["anthropic:scripted-demo"] = *demo_model;
      loaded->model = "anthropic:scripted-demo";
    }
    return project_settings(std::move(*loaded), demo_model);
  };
  core::SessionManager sessions(engine);

  StdioTransport transport(io, in_fd, out_fd, options.max_frame_bytes);
  protocol::Peer peer(io.get_executor(), [&transport](const std::string& message) { transport.send(message); });
  AcpServer server(peer, sessions);

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code ec, int signo) {
    if (ec) return;
    log::info("received {}, shutting down", signo == SIGINT ? "SIGINT" : "SIGTERM");
    transport.stop_reading();
  });

  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await transport.read_until_eof([&peer](const protocol::FrameEvent& event) {
          if (event.kind == protocol::FrameEvent::Kind::message) {
            peer.handle_frame(event.payload);
          } else {
            peer.handle_frame_error(event);
          }
        });
        log::debug("input closed; cancelling work in progress");
        server.cancel_all();
        peer.shutdown();
        // Handlers were cancelled; one that ignores it must not keep the process alive. After the
        // grace period the loop stops and destroys what is left.
        asio::steady_timer grace(io, kShutdownGrace);
        const auto joined = co_await ((peer.join() && server.join()) || grace.async_wait(asio::use_awaitable));
        if (joined.index() == 1)
          log::warn("handlers still running {} ms after cancellation; stopping anyway", kShutdownGrace.count());
        // MCP servers are our children: stop them (gracefully, then by force) before we go.
        asio::steady_timer mcp_grace(io, kMcpShutdownGrace);
        co_await (sessions.stop_all() || mcp_grace.async_wait(asio::use_awaitable));
        co_await transport.flush(kShutdownGrace);
        signals.cancel();
      },
      [&io](const std::exception_ptr& e) {
        if (e) {
          try {
            std::rethrow_exception(e);
          } catch (const std::exception& ex) {
            log::error("main loop failed: {}", ex.what());
          }
        }
        io.stop();
      });

  io.run();
  log::debug("stopped");
  return 0;
}

}  // namespace agentd::daemon
