// The shell tool's configuration: timeouts, output caps, the sandbox policy and the variables a command
// may see despite looking secret. The daemon fills it from its config; the defaults are what a session
// gets without one.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tools/builtin/builtin_tools.h"
#include "tools/sandbox.h"
#include "tools/tool.h"

namespace agentd::tools {

struct ShellConfig {
  std::string shell = "/bin/sh";  // run as `shell -c command`
  std::chrono::milliseconds default_timeout{kShellDefaultTimeoutMs};
  std::chrono::milliseconds max_timeout{kShellMaxTimeoutMs};
  // SIGTERM first, SIGKILL this much later, for what ignores SIGTERM.
  std::chrono::milliseconds kill_grace{500};
  // The result keeps this much of the start and of the end of the output.
  std::size_t output_head_bytes = kShellOutputHeadBytes;
  std::size_t output_tail_bytes = kShellOutputTailBytes;
  // Live output (ToolContext::progress) stops after this much, with a note: `yes` must not flood the
  // client. The result still has the head and the tail.
  std::size_t stream_bytes = std::size_t{256} << 10;
  SandboxPolicy sandbox;
  std::vector<std::string> env_allow;  // variables kept although their names look secret
};

std::shared_ptr<Tool> make_shell_tool(ShellConfig config);

}  // namespace agentd::tools
