// The shell tool's configuration: timeouts, output caps, the sandbox policy and which variables a
// command may see despite looking secret, or may not although they do not. The daemon fills it from
// its config; the defaults are what a session gets without one.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/support/json.h"
#include "core/support/result.h"
#include "tools/builtin/builtin_tools.h"
#include "tools/process.h"
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
  // Variables kept although their names or values look secret, or lead into the user's session: the
  // user's word, so it wins over secret_env_names too (tools/environment.h).
  std::vector<std::string> env_allow;
  // More variables to drop than those whose names look secret: each configured model's api_key_env
  // (a key in MY_LLM_KEY has no telling name).
  std::vector<std::string> secret_env_names;
  // The agentd binary, for `agentd sandbox-exec` when a command runs in the client's terminal
  // (ToolContext::terminal). Empty: commands never go to a terminal.
  std::string sandbox_exec;
};

std::shared_ptr<Tool> make_shell_tool(ShellConfig config);

// One command run the way the shell tool runs it: `shell -c command` in its own process group, under the
// sandbox policy, with the scrubbed environment and a private TMPDIR, its output streamed to
// ToolContext::progress (up to ShellConfig::stream_bytes). Shared by every tool that runs commands
// (shell, verify), so they cannot drift apart.
struct CommandRequest {
  std::string command;
  std::filesystem::path cwd;  // absolute, already checked by the caller to be inside the workspace
  std::chrono::milliseconds timeout{0};
  // Output capture; 0 takes the config's output_head_bytes / output_tail_bytes.
  std::size_t capture_head_bytes = 0;
  std::size_t capture_tail_bytes = 0;
  // What the command reads on stdin (empty: /dev/null). Hooks get their event as JSON here.
  std::string stdin_text;
  // Keep stderr out of the output, in CommandRun::stderr_text (up to 64 KiB), for callers that parse
  // stdout (hooks).
  bool separate_stderr = false;
};

struct CommandRun {
  // Non-empty: the command was not run, and this says why and what to do (sandbox unavailable, program
  // or cwd not found). The caller turns it into ToolResult::failure.
  std::string refused;
  ProcessResult process;
  support::Json sandbox = support::Json::object();  // {enforced, description} or {enforced:false, reason}
  std::string unsandboxed;                          // why it ran without a sandbox, when it did
  std::string stderr_text;                          // CommandRequest::separate_stderr: the first 64 KiB
};

// Where a tool that executes runs its command: its `cwd` field resolved lexically against the session's
// cwd, else the session's cwd. For judging and showing a call before it runs (run() checks the directory).
std::filesystem::path command_cwd(const support::Json& input, const ToolContext& context);
// The directory a command runs in, checked as run() needs it: the input's `cwd` through the PathGuard
// (inside a root, not deny-listed) and an existing directory; the session's cwd when none is given.
// Errc::invalid_argument with a message for the model otherwise.
support::Result<std::filesystem::path> checked_command_cwd(const support::Json& input, const ToolContext& context);
// The risk of running `command` in `cwd`: `base` plus what tools/command_risk.h reads in the line.
RiskAssessment assess_command(Risk base, std::string_view command, const std::filesystem::path& cwd,
                              const ToolContext& context);
// The permission prompt's text for a command: "$ npm test\n(in /home/me/app/web)".
std::string describe_command(std::string_view command, const std::filesystem::path& cwd);

// Errors end the turn: Errc::cancelled (`what` names the tool in the message), or a fault such as a
// failed fork. Everything the model can act on is a CommandRun with `refused` set.
boost::asio::awaitable<support::Result<CommandRun>> run_command(const ShellConfig& config,
                                                                const CommandRequest& request, ToolContext& context,
                                                                std::string_view what);

// How a run ended, for the model: "exit code 1", "killed by signal 9 (SIGKILL)", "timed out after 2m: ...".
std::string describe_ending(const ProcessResult& process, std::chrono::milliseconds timeout, const ShellConfig& config);

}  // namespace agentd::tools
