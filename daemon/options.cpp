#include "daemon/options.h"

#include <charconv>

#include <fmt/format.h>

namespace agentd::daemon {

using support::Errc;
using support::Error;
using support::Result;

std::string usage_text() {
  return R"(usage: agentd [options]

agentd is a headless coding-agent daemon. It speaks JSON-RPC 2.0 (the Agent Client
Protocol, one JSON message per line) on stdin and stdout; logs go to stderr.

options:
  --db PATH              SQLite database (default: $XDG_DATA_HOME/agentd/agentd.db,
                         else ~/.local/share/agentd/agentd.db); ":memory:" keeps nothing
  --log-file PATH        write logs to PATH instead of stderr
  --max-frame-bytes N    largest message accepted (default 67108864)
  --model PROVIDER:MODEL the model new sessions use, e.g. anthropic:claude-sonnet-4-5 or
                         openai:gpt-4.1 (any OpenAI-compatible server via OPENAI_BASE_URL)
  --config FILE          a config file read after ~/.config/agentd/config.json and
                         ./.agentd/config.json
  --demo                 talk to a scripted mock model (agentd-mock-model) instead of a
                         real provider; for trying agentd without an API key
  --version              print the version and exit
  -h, --help             print this help and exit

environment:
  AGENTD_LOG             log level: trace, debug, info (default), warn, error, off
  AGENTD_MODEL           the model, as for --model (the flag wins)
  ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, OPENAI_API_KEY, OPENAI_BASE_URL
                         provider keys (read at each call, never stored) and endpoints
  AGENTD_MOCK_MODEL      the agentd-mock-model executable --demo starts
)";
}

Result<Options> parse_options(const std::vector<std::string>& args) {
  Options options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    // Accept both "--flag value" and "--flag=value".
    std::string name = arg;
    std::optional<std::string> inline_value;
    if (arg.starts_with("--")) {
      if (const auto eq = arg.find('='); eq != std::string::npos) {
        name = arg.substr(0, eq);
        inline_value = arg.substr(eq + 1);
      }
    }
    auto value = [&]() -> Result<std::string> {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) return support::make_error(Errc::invalid_argument, "{} needs a value", name);
      return args[++i];
    };
    if (name == "-h" || name == "--help") {
      options.show_help = true;
    } else if (name == "--version") {
      options.show_version = true;
    } else if (name == "--db") {
      auto v = value();
      if (!v) return std::move(v).error();
      options.db_path = *v;
    } else if (name == "--log-file") {
      auto v = value();
      if (!v) return std::move(v).error();
      options.log_file = *v;
    } else if (name == "--model") {
      auto v = value();
      if (!v) return std::move(v).error();
      options.model = *v;
    } else if (name == "--config") {
      auto v = value();
      if (!v) return std::move(v).error();
      options.config_file = *v;
    } else if (name == "--demo") {
      options.demo = true;
    } else if (name == "--max-frame-bytes") {
      auto v = value();
      if (!v) return std::move(v).error();
      std::size_t n = 0;
      const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
      if (ec != std::errc() || end != v->data() + v->size() || n < 1024) {
        return support::make_error(Errc::invalid_argument, "--max-frame-bytes needs a whole number >= 1024, not '{}'",
                                   *v);
      }
      options.max_frame_bytes = n;
    } else {
      return support::make_error(Errc::invalid_argument, "unknown option '{}' (see agentd --help)", arg);
    }
  }
  return options;
}

}  // namespace agentd::daemon
