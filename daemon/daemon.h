// The agentd process: wires storage, the stdio transport, the JSON-RPC peer and the ACP binding onto
// one io_context, and shuts them down cleanly on end of input, SIGTERM or SIGINT.
#pragma once

#include "daemon/options.h"

namespace agentd::daemon {

// Runs until shutdown; returns the process exit code.
int run_daemon(const Options& options, int in_fd, int out_fd);

}  // namespace agentd::daemon
