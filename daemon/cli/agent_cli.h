// The `agent` CLI's work: start agentd, open or resume a session, run turns while drawing what
// streams in (text, tool calls and their diffs, a spinner), answer permission questions (at the
// keyboard, or from the rules in -p mode), and the listings (sessions, trace, cost).
#pragma once

#include <string>
#include <vector>

namespace agentd::daemon::cli {

// Runs the CLI with its arguments (argv without the program name); returns the exit code.
// `self` is argv[0], for finding agentd next to it.
int run_cli(const std::string& self, const std::vector<std::string>& args);

}  // namespace agentd::daemon::cli
