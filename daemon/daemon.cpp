#include "daemon/daemon.h"

#include <csignal>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "core/support/log.h"
#include "daemon/config.h"
#include "daemon/demo.h"
#include "daemon/host.h"
#include "daemon/stdio_transport.h"
#include "protocol/peer.h"
#include "storage/database.h"
#include "tools/builtin/shell.h"
#include "tools/sandbox.h"

namespace agentd::daemon {

namespace asio = boost::asio;
namespace log = support::log;

namespace {
// How long the last replies get to reach the client.
constexpr auto kFlushGrace = std::chrono::milliseconds(2000);
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
    scripted.keyless = true;
    config->models.clear();
    config->models["anthropic:scripted-demo"] = scripted;
    config->model = "anthropic:scripted-demo";
  }

  const tools::ShellConfig shell = shell_config(config->shell);
  HostOptions host_options;
  host_options.db_path = db_path;
  host_options.index_cache_directory = options.index_cache;
  host_options.config_file = options.config_file;
  host_options.model = options.model;
  if (demo) host_options.fixed_model = config->models["anthropic:scripted-demo"];
  auto host = Host::create(host_options);
  if (!host) {
    log::error("{}", host.error().message());
    return 1;
  }
  asio::io_context& io = (*host)->io();
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

  StdioTransport transport(io, in_fd, out_fd, options.max_frame_bytes);
  (*host)->connect([&transport](const std::string& message) { transport.send(message); });
  // The transport goes first; nothing the host does while it is destroyed may reach it.
  struct Disconnect {
    Host& host;
    ~Disconnect() { host.connect({}); }
  } disconnect{**host};
  protocol::Peer& peer = (*host)->peer();

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code ec, int signo) {
    if (ec) return;
    log::info("received {}, shutting down", signo == SIGINT ? "SIGINT" : "SIGTERM");
    transport.stop_reading();
  });

  // The root: no TaskGroup above it; it joins everything below and its end stops the loop.
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
        co_await (*host)->shutdown();
        co_await transport.flush(kFlushGrace);
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
