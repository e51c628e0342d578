#include "daemon/cli/cli_options.h"

#include <cstdlib>

// CLI11 is a large header: it stays in this file (and agentd's options.cpp), never in a header.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace agentd::daemon::cli {

using support::Errc;
using support::Error;

namespace {

constexpr std::string_view kUsage = R"(usage: agent [options] ["prompt"]
       agent -p "prompt" [--output-format text|json|jsonl] [options]
       agent sessions [--all]
       agent trace [TURN] [--format tree|chrome]
       agent cost
       agent trust [DIR] | agent untrust [DIR])";

constexpr std::string_view kDescription =
    R"(With a prompt: one turn in the current directory, streamed. Without one: an interactive loop (slash
commands such as /help, /cost and /undo go to agentd; /exit or Ctrl-D leaves). Ctrl-C cancels the
running turn; a second Ctrl-C exits.

agent trust lets DIR's .agentd/config.json loosen your settings (its mode, sandbox, allow rules, MCP
servers, model endpoints...) as the file is now; a later change to those settings needs trust again.)";

constexpr std::string_view kExitCodes =
    R"(exit codes: 0 done, 1 model or agent error, 2 bad usage, 3 stopped by a budget (max_tokens,
max_turn_requests), 4 the model refused, 130 cancelled)";

// CLI11's help starts with the description; ours starts with the usage lines, as Unix tools do.
class UsageFirstFormatter : public CLI::Formatter {
 public:
  std::string make_description(const CLI::App*) const override { return {}; }
  std::string make_usage(const CLI::App* app, std::string) const override {
    return fmt::format("{}\n\n{}\n", kUsage, app->get_description());
  }
  // "--resume{}" declares the flag's value when none is given (""); the help shows "--resume [ID]".
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional);
    if (const auto braces = name.find("{}"); braces != std::string::npos) name.erase(braces, 2);
    return name;
  }
};

// What CLI11 fills in; parse_cli turns it into CliOptions.
struct Parsed {
  CliOptions options;
  std::vector<std::string> words;  // the prompt, or a listing command and its argument
  std::string format;              // --output-format
  std::string trace_format;        // agent trace --format
  std::string resume;              // --resume's value, "" for the latest session here
  CLI::Option* resume_option = nullptr;
  CLI::Option* format_option = nullptr;
  CLI::Option* trace_format_option = nullptr;
};

// The one definition of agent's options: parsing and --help both come from it.
void define_options(CLI::App& app, Parsed& p) {
  CliOptions& o = p.options;
  // First, so that the hidden group ("") does not come last and add a blank line to the help.
  app.add_option("words", p.words)->group("");  // the usage lines describe them
  app.description(std::string(kDescription));
  app.footer(std::string(kExitCodes));
  app.set_help_flag();  // -h/--help is a flag below: run_cli prints the help, not CLI11
  app.allow_extras();   // unknown options are reported by parse_cli
  app.option_defaults()->group("options")->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  auto formatter = std::make_shared<UsageFirstFormatter>();
  formatter->column_width(30);
  app.formatter(formatter);

  app.add_flag("-p,--print", o.print,
               "non-interactive: permission questions are answered from --mode and the\n"
               "--allow/--deny rules, never asked");
  p.format_option = app.add_option("--output-format", p.format,
                                   "with -p: text (default), json (one object at the end), jsonl (one event per line)")
                        ->check(CLI::IsMember({"text", "json", "jsonl"}).description(""))
                        ->type_name("FORMAT");
  p.trace_format_option =
      app.add_option("--format", p.trace_format,
                     "with agent trace: tree (default) or chrome (the Trace Event format: open the\n"
                     "file in https://ui.perfetto.dev or chrome://tracing)")
          ->check(CLI::IsMember({"tree", "chrome"}).description(""))
          ->type_name("FORMAT");
  app.add_option("--model", o.model, "the model of new sessions")->type_name("PROVIDER:MODEL");
  app.add_option("--mode", o.mode, "default, acceptEdits, plan or bypass")
      ->check(CLI::IsMember({"default", "acceptEdits", "plan", "bypass"}).description(""))
      ->type_name("MODE");
  // One rule per --allow/--deny, so that `--allow RULE "prompt"` leaves the prompt alone.
  app.add_option("--allow", o.allow, "permission rules such as \"shell(npm test)\" or \"edit(src/**)\" (repeatable)")
      ->type_name("RULE")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--deny", o.deny, "permission rules that refuse, in the same form as --allow (repeatable)")
      ->type_name("RULE")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  // The id is optional, so --resume is a flag that takes a value only as --resume=ID; parse_cli joins
  // `--resume s_...` into that form first.
  p.resume_option =
      app.add_flag("--resume{}", p.resume, "continue session ID (without ID: the latest one in this directory)")
          ->option_text("[ID]");
  app.add_flag("-c,--continue", o.continue_latest, "continue the latest session in this directory");
  app.add_option("--max-budget-usd", o.max_budget_usd,
                 "stop when the session's model calls would cost more than this many dollars")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            char* end = nullptr;
            const double usd = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end != '\0' || !(usd > 0) || usd > 1e6) {
              return "expected a number of dollars above 0, not " + text;
            }
            return {};
          },
          ""))
      ->type_name("USD");
  app.add_option("--image", o.images, "an image to send with the prompt: PNG, JPEG, GIF or WebP (repeatable)")
      ->type_name("FILE")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--config", o.config, "an agentd config file")->type_name("FILE");
  app.add_option("--agentd", o.agentd, "the agentd binary (default: $AGENTD_BIN, next to agent, then PATH)")
      ->type_name("PATH");
  app.add_option("--log", o.log, "where agentd's log goes (default: $XDG_STATE_HOME/agentd/agent.log)")
      ->type_name("FILE");
  app.add_flag("--demo", o.demo, "agentd's scripted offline model (no key, no network)");
  app.add_flag("--all", o.all, "with sessions: the sessions of every directory");
  app.add_flag(
      "--version", [&o](std::int64_t) { o.command = Command::version; }, "print the version and exit");
  app.add_flag(
      "-h,--help", [&o](std::int64_t) { o.command = Command::help; }, "print this help and exit");
}

// `--resume s_123` becomes `--resume=s_123`: the next word is the id only when it looks like one,
// so that `agent --resume "fix it"` still reads "fix it" as the prompt.
std::vector<std::string> join_resume_id(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (args[i] == "--resume" && i + 1 < args.size() && args[i + 1].starts_with("s_")) {
      out.push_back("--resume=" + args[++i]);
    } else {
      out.push_back(args[i]);
    }
  }
  return out;
}

}  // namespace

std::string cli_usage() {
  CLI::App app("", "agent");
  Parsed p;
  define_options(app, p);
  return app.help();
}

support::Result<CliOptions> parse_cli(const std::vector<std::string>& args) {
  CLI::App app("", "agent");
  Parsed p;
  define_options(app, p);
  const std::vector<std::string> joined = join_resume_id(args);
  try {
    app.parse(std::vector<std::string>(joined.rbegin(), joined.rend()));  // CLI11 takes the words reversed
  } catch (const CLI::ParseError& e) {
    return Error(Errc::invalid_argument, e.what());
  }
  for (const std::string& extra : app.remaining()) {
    // CLI11 passes "--" (the end of the options) on with the words it did not know.
    if (extra != "--") return Error(Errc::invalid_argument, fmt::format("unknown option '{}'", extra));
  }
  CliOptions o = std::move(p.options);
  if (o.command == Command::help || o.command == Command::version) return o;
  if (p.resume_option->count() > 0) o.resume = p.resume;
  if (p.format == "json") o.format = OutputFormat::json;
  if (p.format == "jsonl") o.format = OutputFormat::jsonl;
  const std::vector<std::string>& words = p.words;
  if (!words.empty() && words[0] == "sessions") {
    if (words.size() > 1) return Error(Errc::invalid_argument, "agent sessions takes no arguments");
    o.command = Command::sessions;
  } else if (!words.empty() && words[0] == "trace") {
    if (words.size() > 2) return Error(Errc::invalid_argument, "agent trace takes at most one TURN");
    o.command = Command::trace;
    if (words.size() == 2) o.turn = words[1];
  } else if (!words.empty() && (words[0] == "trust" || words[0] == "untrust")) {
    if (words.size() > 2) return Error(Errc::invalid_argument, fmt::format("agent {} takes at most one DIR", words[0]));
    o.command = words[0] == "trust" ? Command::trust : Command::untrust;
    if (words.size() == 2) o.directory = words[1];
  } else if (!words.empty() && words[0] == "cost") {
    if (words.size() > 1) return Error(Errc::invalid_argument, "agent cost takes no arguments");
    o.command = Command::cost;
  } else if (!words.empty()) {
    if (words.size() > 1)
      return Error(Errc::invalid_argument, "give the prompt as one argument (quote it): agent \"fix the tests\"");
    o.command = Command::prompt;
    o.prompt = words[0];
  } else {
    o.command = Command::interactive;
  }
  if (o.print && o.command != Command::prompt)
    return Error(Errc::invalid_argument, "-p needs a prompt: agent -p \"what to do\"");
  if (!o.images.empty() && o.command != Command::prompt)
    return Error(Errc::invalid_argument, "--image goes with a prompt: agent --image shot.png \"what is wrong here?\"");
  if (p.format_option->count() > 0 && !o.print) return Error(Errc::invalid_argument, "--output-format goes with -p");
  if (p.trace_format_option->count() > 0 && o.command != Command::trace) {
    return Error(Errc::invalid_argument, "--format goes with agent trace (--output-format with -p)");
  }
  o.trace_chrome = p.trace_format == "chrome";
  if (o.continue_latest && o.resume) return Error(Errc::invalid_argument, "give --continue or --resume, not both");
  return o;
}

}  // namespace agentd::daemon::cli
