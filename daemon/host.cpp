#include "daemon/host.h"

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/engine/engine_store.h"
#include "core/engine/session_manager.h"
#include "core/engine/system_rules.h"
#include "core/net/http_client.h"
#include "core/support/log.h"
#include "core/telemetry/otlp_exporter.h"
#include "daemon/acp_server.h"
#include "daemon/config.h"
#include "protocol/peer.h"
#include "storage/blob_store.h"
#include "storage/database.h"
#include "storage/db_worker.h"
#include "tools/builtin/builtin_tools.h"
#include "tools/verify/verify_tool.h"

namespace agentd::daemon {

namespace asio = boost::asio;
namespace log = support::log;
using namespace boost::asio::experimental::awaitable_operators;

namespace {
constexpr auto kShutdownGrace = std::chrono::milliseconds(2000);
// Stopping MCP servers: closed stdin, then SIGTERM after 2 s, SIGKILL 2 s later (tools/mcp).
constexpr auto kMcpShutdownGrace = std::chrono::milliseconds(5000);

// The API-key variables agentd offers authentication for: the built-in providers', and those the user's
// own config names (a project's file does not add any). With a fixed model (--demo), only its own.
std::shared_ptr<core::model::Credentials> make_credentials(const HostOptions& options, const Config* user) {
  std::vector<std::string> vars;
  if (options.fixed_model) {
    vars.push_back(options.fixed_model->api_key_env);
  } else {
    vars = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"};
    if (user != nullptr) {
      for (const auto& [name, model] : user->models) vars.push_back(model.api_key_env);
    }
  }
  return core::model::Credentials::create(std::move(vars), options.env);
}

core::EngineContext engine_context(asio::io_context& io, core::EngineStore& store, net::HttpClient& http,
                                   HostOptions options) {
  core::EngineContext engine;
  // What is process-wide comes from the user's own layers (their file and --config), read once here.
  auto user = load_user_config(
      ConfigInputs{options.user_config_file, std::nullopt, options.config_file, std::nullopt, options.env});
  if (!user)
    log::warn("the user's config could not be read (API-key variables, telemetry): {}", user.error().message());
  // Keys are read through the credentials (authenticate, logout), by model calls and by the config's
  // default model choice alike.
  engine.credentials = make_credentials(options, user ? &*user : nullptr);
  options.env = engine.credentials->lookup();
  engine.model_options.env = options.env;
  engine.executor = io.get_executor();
  engine.store = &store;
  engine.http = &http;
  // Each session gets the builtin tools and `verify`, with its own project's shell settings.
  engine.install_tools = [](tools::ToolRegistry& registry,
                            const core::ProjectSettings& settings) -> support::Result<void> {
    AGENTD_TRY_VOID(tools::register_builtin_tools(registry, settings.shell));
    return registry.add(tools::verify::make_verify_tool(settings.shell));
  };
  engine.system_rules = std::string(core::system_rules());
  // OpenTelemetry: the OTEL_* variables of agentd's own environment (never a project's file: where
  // spans go is the user's to say). A value that cannot work is reported and export stays off.
  const core::model::EnvLookup env = options.env ? options.env : [](const char* name) { return std::getenv(name); };
  const core::telemetry::OtlpSettings from_file = user ? user->telemetry : core::telemetry::OtlpSettings{};
  if (auto otlp = core::telemetry::otlp_config_from_env(env, from_file); !otlp) {
    log::warn("OpenTelemetry export is off: {}", otlp.error().message());
  } else if (*otlp) {
    auto exporter = core::telemetry::OtlpExporter::start(std::move(**otlp), net::ProxyConfig::from_lookup(env));
    if (exporter) {
      engine.otlp = std::move(*exporter);
    } else {
      log::warn("OpenTelemetry export is off: {}", exporter.error().message());
    }
  }
  if (const char* traceparent = env("TRACEPARENT"); traceparent != nullptr && *traceparent != '\0') {
    if (auto parent = core::telemetry::parse_traceparent(traceparent)) {
      engine.trace_parent = std::move(*parent);
    } else {
      log::warn("TRACEPARENT ignored: {}", parent.error().message());
    }
  }
  core::context::IndexOptions index;
  if (options.index_cache_directory) index.content.cache_directory = *options.index_cache_directory;
  engine.workspace_index = std::make_shared<core::context::WorkspaceIndex>(index);
  // Each session reads its own project's layers (user file, <cwd>/.agentd/config.json, --config, the
  // environment and --model) when it is created or loaded.
  engine.project_settings = [options](const std::string& cwd) -> support::Result<core::ProjectSettings> {
    auto loaded =
        load_config(ConfigInputs{options.user_config_file, cwd, options.config_file, options.model, options.env});
    if (!loaded) return std::move(loaded).error();
    for (const auto& source : loaded->sources) log::debug("config for {}: read {}", cwd, source);
    if (loaded->project_trust && !loaded->project_trust->trusted) {
      log::warn("{}", untrusted_message(*loaded->project_trust));
    }
    if (options.fixed_model) {
      // Every name is the fixed model (--demo's scripted server needs no key).
      const std::string name =
          std::string(core::model::provider_name(options.fixed_model->provider)) + ":" + options.fixed_model->model;
      loaded->models.clear();
      loaded->models[name] = *options.fixed_model;
      loaded->model = name;
    }
    return project_settings(std::move(*loaded), options.fixed_model);
  };
  return engine;
}
}  // namespace

// Declaration order is destruction order, reversed: everything that may queue database work is
// destroyed before `flush` runs the worker dry, and that happens while `io` (whose handlers the
// queued work holds) still exists; `store` and `worker` outlive `io` as they always did.
struct Host::Parts {
  storage::DbWorker worker;
  core::EngineStore store;
  asio::io_context io{1};
  struct FlushBeforeLoopEnds {
    storage::DbWorker& worker;
    explicit FlushBeforeLoopEnds(storage::DbWorker& w) : worker(w) {}
    FlushBeforeLoopEnds(const FlushBeforeLoopEnds&) = delete;
    FlushBeforeLoopEnds& operator=(const FlushBeforeLoopEnds&) = delete;
    ~FlushBeforeLoopEnds() { worker.flush(); }
  } flush{worker};
  std::unique_ptr<net::HttpClient> http;
  core::EngineContext engine;
  core::SessionManager sessions;
  Output output;
  protocol::Peer peer;
  AcpServer server;

  Parts(std::unique_ptr<storage::Connection> db, const HostOptions& options)
      : worker(std::move(db)),
        store(worker),
        http(make_http(io)),
        engine(engine_context(io, store, *http, options)),
        sessions(engine),
        peer(io.get_executor(),
             [this](const std::string& message) {
               if (output) output(message);
             }),
        server(peer, sessions) {}

  static std::unique_ptr<net::HttpClient> make_http(asio::io_context& io) {
    // Without extra CA certificates (agentd passes none) create() has nothing that can fail.
    auto http = net::HttpClient::create(io.get_executor(), net::HttpClientOptions{});
    if (!http) throw std::runtime_error(http.error().message());
    return std::move(*http);
  }
};

support::Result<std::unique_ptr<Host>> Host::create(const HostOptions& options) {
  auto db = storage::open_database(storage::DatabaseOptions{options.db_path});
  if (!db) return std::move(db).error();
  log::debug("database {} ready", options.db_path);
  // All SQLite work from here on happens on the worker's thread, group-committed.
  try {
    return std::unique_ptr<Host>(
        new Host(std::make_unique<Parts>(std::make_unique<storage::Connection>(std::move(*db)), options)));
  } catch (const std::exception& e) {
    return support::make_error(support::Errc::internal, "cannot start: {}", e.what());
  }
}

Host::Host(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {
  // Pre-images that no change refers to any more (their sessions were deleted), and blob files a crash
  // left without a row: removed once per start, with the first write that wakes the worker.
  parts_->worker.write(
      [](storage::Connection& db) -> support::Result<void> {
        auto pruned = storage::BlobStore(db).prune();
        if (!pruned) return std::move(pruned).error().context("removing unused checkpoint pre-images");
        if (*pruned > 0) log::info("removed {} checkpoint pre-images nothing refers to", *pruned);
        return support::ok();
      },
      {}, storage::Durability::process, /*lazy=*/true);
}
Host::~Host() = default;

asio::io_context& Host::io() noexcept { return parts_->io; }
protocol::Peer& Host::peer() noexcept { return parts_->peer; }
storage::DbWorker& Host::database() noexcept { return parts_->worker; }
void Host::connect(Output output) { parts_->output = std::move(output); }

asio::awaitable<void> Host::shutdown() {
  log::debug("input closed; cancelling work in progress");
  parts_->server.cancel_all();
  parts_->peer.shutdown();
  // Handlers were cancelled; one that ignores it must not keep the process alive. After the grace
  // period the caller stops the loop and destroys what is left.
  asio::steady_timer grace(parts_->io, kShutdownGrace);
  const auto joined =
      co_await ((parts_->peer.join() && parts_->server.join()) || grace.async_wait(asio::use_awaitable));
  if (joined.index() == 1)
    log::warn("handlers still running {} ms after cancellation; stopping anyway", kShutdownGrace.count());
  // MCP servers are our children: stop them (gracefully, then by force) before we go.
  asio::steady_timer mcp_grace(parts_->io, kMcpShutdownGrace);
  co_await (parts_->sessions.stop_all() || mcp_grace.async_wait(asio::use_awaitable));
  // The model connections: pooled ones closed, background drains cancelled and joined (at once).
  co_await parts_->http->shutdown();
}

}  // namespace agentd::daemon
