#include "daemon/cli/cli_options.h"

#include <fmt/format.h>

namespace agentd::daemon::cli {

using support::Errc;
using support::Error;

std::string cli_usage() {
  return R"usage(usage: agent [options] ["prompt"]
       agent -p "prompt" [--output-format text|json|jsonl] [options]
       agent sessions [--all]
       agent trace [TURN]
       agent cost
       agent trust [DIR] | agent untrust [DIR]

With a prompt: one turn in the current directory, streamed. Without one: an interactive loop (slash
commands such as /help, /cost and /undo go to agentd; /exit or Ctrl-D leaves). Ctrl-C cancels the
running turn; a second Ctrl-C exits.

agent trust lets DIR's .agentd/config.json loosen your settings (its mode, sandbox, allow rules, MCP
servers, model endpoints...) as the file is now; a later change to those settings needs trust again.

options:
  -p, --print                 non-interactive: permission questions are answered from --mode and the
                              --allow/--deny rules, never asked
  --output-format FORMAT      with -p: text (default), json (one object at the end), jsonl (one event per line)
  --model PROVIDER:MODEL      the model of new sessions
  --mode MODE                 default, acceptEdits, plan or bypass
  --allow RULE, --deny RULE   permission rules such as "shell(npm test)" or "edit(src/**)" (repeatable)
  --resume [ID]               continue session ID (without ID: the latest one in this directory)
  -c, --continue              continue the latest session in this directory
  --config FILE               an agentd config file
  --agentd PATH               the agentd binary (default: $AGENTD_BIN, next to agent, then PATH)
  --log FILE                  where agentd's log goes (default: $XDG_STATE_HOME/agentd/agent.log)
  --demo                      agentd's scripted offline model (no key, no network)
  -h, --help, --version

exit codes: 0 done, 1 model or agent error, 2 bad usage, 3 stopped by a budget (max_tokens,
max_turn_requests), 4 the model refused, 130 cancelled
)usage";
}

support::Result<CliOptions> parse_cli(const std::vector<std::string>& args) {
  CliOptions o;
  std::vector<std::string> positional;
  bool format_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    std::optional<std::string> inline_value;
    if (arg.starts_with("--")) {
      if (const auto eq = arg.find('='); eq != std::string::npos) {
        inline_value = arg.substr(eq + 1);
        arg.resize(eq);
      }
    }
    auto value = [&](std::string_view flag) -> support::Result<std::string> {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) return Error(Errc::invalid_argument, fmt::format("{} needs a value", flag));
      return args[++i];
    };
    if (arg == "--") {
      for (++i; i < args.size(); ++i) positional.push_back(args[i]);
      break;
    }
    if (arg == "-h" || arg == "--help") {
      o.command = Command::help;
      return o;
    }
    if (arg == "--version") {
      o.command = Command::version;
      return o;
    }
    if (arg == "-p" || arg == "--print") {
      o.print = true;
    } else if (arg == "-c" || arg == "--continue") {
      o.continue_latest = true;
    } else if (arg == "--all") {
      o.all = true;
    } else if (arg == "--demo") {
      o.demo = true;
    } else if (arg == "--resume") {
      // The id is optional: take the next word only when it is not a flag or the prompt.
      if (inline_value) {
        o.resume = *inline_value;
      } else if (i + 1 < args.size() && args[i + 1].starts_with("s_")) {
        o.resume = args[++i];
      } else {
        o.resume = std::string();
      }
    } else if (arg == "--output-format" || arg == "--model" || arg == "--mode" || arg == "--allow" || arg == "--deny" ||
               arg == "--config" || arg == "--agentd" || arg == "--log") {
      auto v = value(arg);
      if (!v) return std::move(v).error();
      if (arg == "--output-format") {
        if (*v == "text") {
          o.format = OutputFormat::text;
        } else if (*v == "json") {
          o.format = OutputFormat::json;
        } else if (*v == "jsonl") {
          o.format = OutputFormat::jsonl;
        } else {
          return Error(Errc::invalid_argument, fmt::format("--output-format is text, json or jsonl, not '{}'", *v));
        }
        format_given = true;
      } else if (arg == "--model") {
        o.model = *v;
      } else if (arg == "--mode") {
        if (*v != "default" && *v != "acceptEdits" && *v != "plan" && *v != "bypass")
          return Error(Errc::invalid_argument,
                       fmt::format("--mode is default, acceptEdits, plan or bypass, not '{}'", *v));
        o.mode = *v;
      } else if (arg == "--allow") {
        o.allow.push_back(*v);
      } else if (arg == "--deny") {
        o.deny.push_back(*v);
      } else if (arg == "--config") {
        o.config = *v;
      } else if (arg == "--agentd") {
        o.agentd = *v;
      } else {
        o.log = *v;
      }
    } else if (arg.starts_with("-") && arg.size() > 1) {
      return Error(Errc::invalid_argument, fmt::format("unknown option '{}'", arg));
    } else {
      positional.push_back(arg);
    }
  }
  if (!positional.empty() && positional[0] == "sessions") {
    if (positional.size() > 1) return Error(Errc::invalid_argument, "agent sessions takes no arguments");
    o.command = Command::sessions;
  } else if (!positional.empty() && positional[0] == "trace") {
    if (positional.size() > 2) return Error(Errc::invalid_argument, "agent trace takes at most one TURN");
    o.command = Command::trace;
    if (positional.size() == 2) o.turn = positional[1];
  } else if (!positional.empty() && (positional[0] == "trust" || positional[0] == "untrust")) {
    if (positional.size() > 2)
      return Error(Errc::invalid_argument, fmt::format("agent {} takes at most one DIR", positional[0]));
    o.command = positional[0] == "trust" ? Command::trust : Command::untrust;
    if (positional.size() == 2) o.directory = positional[1];
  } else if (!positional.empty() && positional[0] == "cost") {
    if (positional.size() > 1) return Error(Errc::invalid_argument, "agent cost takes no arguments");
    o.command = Command::cost;
  } else if (!positional.empty()) {
    if (positional.size() > 1)
      return Error(Errc::invalid_argument, "give the prompt as one argument (quote it): agent \"fix the tests\"");
    o.command = Command::prompt;
    o.prompt = positional[0];
  } else {
    o.command = Command::interactive;
  }
  if (o.print && o.command != Command::prompt)
    return Error(Errc::invalid_argument, "-p needs a prompt: agent -p \"what to do\"");
  if (format_given && !o.print) return Error(Errc::invalid_argument, "--output-format goes with -p");
  if (o.continue_latest && o.resume) return Error(Errc::invalid_argument, "give --continue or --resume, not both");
  return o;
}

}  // namespace agentd::daemon::cli
