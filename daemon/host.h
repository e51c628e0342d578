// Host: agentd without its transport. Storage, the HTTP client, the engine and the ACP binding on one
// io_context, with a JSON-RPC peer that takes frames in and hands messages out. run_daemon puts it
// behind stdio; tests drive it in-process (test/support/acp_client.h), so the engine is exercised as
// the daemon wires it, without spawning a process.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include "core/model/model_config.h"
#include "core/support/result.h"

namespace agentd::storage {
class DbWorker;
}

namespace agentd::protocol {
class Peer;
}

namespace agentd::daemon {

struct HostOptions {
  std::string db_path;
  std::optional<std::string> user_config_file;  // default: $XDG_CONFIG_HOME/agentd/config.json or ~/.config/...
  std::optional<std::string> config_file;       // --config, a layer after the project's config
  std::optional<std::string> model;             // --model provider:model
  // When set, every model name resolves to this one (--demo's scripted server, a test's mock model).
  std::optional<core::model::ModelConfig> fixed_model;
  core::model::EnvLookup env;  // null: the process environment
  // Where content indexes of big trees go (core/context/content_indexer.h); unset or empty: none. Opt-in
  // while a warm turn through the index is slower than the path-word search (see README).
  std::optional<std::string> index_cache_directory;
};

class Host {
 public:
  // Where the peer's outgoing messages go (unframed JSON); the transport's send.
  using Output = std::function<void(const std::string& message)>;

  // Opens the database and builds the engine; an error says what could not be opened.
  static support::Result<std::unique_ptr<Host>> create(const HostOptions& options);
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  boost::asio::io_context& io() noexcept;
  protocol::Peer& peer() noexcept;
  // The database's worker thread: its health, and (tests) a way to run a job on agentd's own connection.
  storage::DbWorker& database() noexcept;
  // Messages go to `output` from now on; an empty one drops them (a transport about to be destroyed).
  void connect(Output output);

  // Input ended: cancels what runs, waits (bounded) for the handlers, then stops the MCP servers.
  boost::asio::awaitable<void> shutdown();

 private:
  struct Parts;
  explicit Host(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace agentd::daemon
