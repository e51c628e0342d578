// The `agent` command line: what to do (one prompt, the interactive loop, or a listing) and how
// (output format, model, mode, permission rules, which session).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/support/result.h"

namespace agentd::daemon::cli {

enum class Command { prompt, interactive, sessions, trace, cost, trust, untrust, help, version };
enum class OutputFormat { text, json, jsonl };

// Exit codes, documented in README ("The agent CLI").
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;    // the model or agentd failed
inline constexpr int kExitUsage = 2;    // bad command line
inline constexpr int kExitBudget = 3;   // max_tokens or max_turn_requests
inline constexpr int kExitRefused = 4;  // the model refused
inline constexpr int kExitCancelled = 130;

struct CliOptions {
  Command command = Command::interactive;
  std::string prompt;  // Command::prompt
  bool print = false;  // -p: non-interactive, never asks
  OutputFormat format = OutputFormat::text;
  std::optional<std::string> model;      // --model provider:model
  std::optional<std::string> mode;       // --mode default|acceptEdits|plan|bypass
  std::vector<std::string> allow;        // --allow RULE
  std::vector<std::string> deny;         // --deny RULE
  std::optional<std::string> resume;     // --resume ID ("" = pick the latest here)
  bool continue_latest = false;          // --continue
  std::optional<std::string> config;     // --config FILE, passed on to agentd (merged with the rules)
  std::optional<std::string> agentd;     // --agentd PATH (else $AGENTD_BIN, next to agent, PATH)
  std::optional<std::string> log;        // --log FILE (agentd's stderr)
  std::optional<std::string> turn;       // agent trace TURN
  bool trace_chrome = false;             // agent trace --format chrome: the Trace Event format
  std::string directory;                 // agent trust/untrust DIR (default: the current directory)
  bool all = false;                      // agent sessions --all
  bool demo = false;                     // --demo: agentd's scripted offline model
  std::optional<double> max_budget_usd;  // --max-budget-usd: the session's dollar budget
  std::vector<std::string> images;       // --image FILE: sent with the prompt
};

support::Result<CliOptions> parse_cli(const std::vector<std::string>& args);
std::string cli_usage();

}  // namespace agentd::daemon::cli
