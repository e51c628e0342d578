// agent: the command-line client of agentd (README "The agent CLI").
#include <string>
#include <vector>

#include "daemon/cli/agent_cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return agentd::daemon::cli::run_cli(argv[0], args);
}
