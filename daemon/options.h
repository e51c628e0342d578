// Command-line options of the agentd executable.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/support/result.h"
#include "protocol/framing.h"

namespace agentd::daemon {

struct Options {
  bool show_help = false;
  bool show_version = false;
  std::optional<std::string> db_path;      // --db; default: storage::default_database_path()
  std::optional<std::string> index_cache;  // --index-cache DIR: build content indexes there; default none
  std::optional<std::string> log_file;     // --log-file; default: stderr
  std::size_t max_frame_bytes = protocol::kDefaultMaxFrameBytes;
  std::optional<std::string> model;        // --model provider:model
  std::optional<std::string> config_file;  // --config FILE, a layer after the project's config
  bool demo = false;                       // --demo: a scripted mock model instead of a provider
};

support::Result<Options> parse_options(const std::vector<std::string>& args);
std::string usage_text();

}  // namespace agentd::daemon
