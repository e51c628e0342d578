#include "daemon/options.h"

#include <charconv>
#include <limits>

// CLI11 is a large header: it stays in this file (and the agent CLI's), never in a header.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace agentd::daemon {

using support::Errc;
using support::Result;

namespace {

// CLI11's help starts with the description; ours starts with the usage line, as Unix tools do.
class UsageFirstFormatter : public CLI::Formatter {
 public:
  std::string make_description(const CLI::App*) const override { return {}; }
  std::string make_usage(const CLI::App* app, std::string) const override {
    return "usage: agentd [options]\n\n" + app->get_description() + "\n";
  }
};

constexpr std::string_view kDescription =
    "agentd is a headless coding-agent daemon. It speaks JSON-RPC 2.0 (the Agent Client\n"
    "Protocol, one JSON message per line) on stdin and stdout; logs go to stderr.";

constexpr std::string_view kEnvironment = R"(environment:
  AGENTD_LOG             log level: trace, debug, info (default), warn, error, off
  AGENTD_MODEL           the model, as for --model (the flag wins)
  ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, OPENAI_API_KEY, OPENAI_BASE_URL
                         provider keys (read at each call, never stored) and endpoints
  AGENTD_MOCK_MODEL      the agentd-mock-model executable --demo starts

agentd sandbox-exec [--root DIR]... [--writable DIR]... [--deny-path PATTERN]... [--no-network]
                    [--env-allow NAME]... [--secret-env NAME]... [--allow-unsandboxed] -- PROGRAM [ARGS...]
  runs one program under the shell tool's sandbox and environment (README "Security model"))";

// A decimal count of bytes, at least 1024. CLI11's own integer conversion would take "010" as octal
// and "0x400" as hex, so the value is read here.
std::optional<std::size_t> parse_frame_bytes(const std::string& text) {
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1024) return std::nullopt;
  return n;
}

// The one definition of agentd's options: parsing and --help both come from it.
void define_options(CLI::App& app, Options& options, std::string& max_frame_bytes) {
  app.description(std::string(kDescription));
  app.footer(std::string(kEnvironment));
  app.set_help_flag();  // -h/--help is an ordinary flag below: main prints the help, not CLI11
  app.allow_extras();   // unknown options are reported by parse_options, with a pointer to --help
  app.option_defaults()->group("options")->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  auto formatter = std::make_shared<UsageFirstFormatter>();
  formatter->column_width(25);
  app.formatter(formatter);

  app.add_option("--db", options.db_path,
                 "SQLite database (default: $XDG_DATA_HOME/agentd/agentd.db,\n"
                 "else ~/.local/share/agentd/agentd.db); \":memory:\" keeps nothing")
      ->type_name("PATH");
  app.add_option("--index-cache", options.index_cache,
                 "build persistent content indexes of trees over 5000 files in DIR\n"
                 "(experimental; e.g. ~/.cache/agentd; default: none)")
      ->type_name("DIR");
  app.add_option("--log-file", options.log_file, "write logs to PATH instead of stderr")->type_name("PATH");
  app.add_option("--max-frame-bytes", max_frame_bytes,
                 fmt::format("largest message accepted (default {})", protocol::kDefaultMaxFrameBytes))
      ->type_name("N")
      ->check(
          [](const std::string& text) -> std::string {
            return parse_frame_bytes(text) ? std::string()
                                           : fmt::format("needs a whole number >= 1024, not '{}'", text);
          },
          "");
  app.add_option("--model", options.model,
                 "the model new sessions use, e.g. anthropic:claude-sonnet-4-5 or\n"
                 "openai:gpt-4.1 (any OpenAI-compatible server via OPENAI_BASE_URL)")
      ->type_name("PROVIDER:MODEL");
  app.add_option("--config", options.config_file,
                 "a config file read after ~/.config/agentd/config.json and\n"
                 "./.agentd/config.json")
      ->type_name("FILE");
  app.add_flag("--demo", options.demo,
               "talk to a scripted mock model (agentd-mock-model) instead of a\n"
               "real provider; for trying agentd without an API key");
  app.add_flag("--version", options.show_version, "print the version and exit");
  app.add_flag("-h,--help", options.show_help, "print this help and exit");
}

}  // namespace

std::string usage_text() {
  CLI::App app("", "agentd");
  Options options;
  std::string max_frame_bytes;
  define_options(app, options, max_frame_bytes);
  return app.help();
}

Result<Options> parse_options(const std::vector<std::string>& args) {
  CLI::App app("", "agentd");
  Options options;
  std::string max_frame_bytes;
  define_options(app, options, max_frame_bytes);
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));  // CLI11 takes the words reversed
  } catch (const CLI::ParseError& e) {
    return support::make_error(Errc::invalid_argument, "{} (see agentd --help)", e.what());
  }
  if (const auto extras = app.remaining(); !extras.empty()) {
    return support::make_error(Errc::invalid_argument, "unknown option '{}' (see agentd --help)", extras.front());
  }
  if (!max_frame_bytes.empty()) options.max_frame_bytes = *parse_frame_bytes(max_frame_bytes);
  return options;
}

}  // namespace agentd::daemon
