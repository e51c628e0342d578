// shell: runs a command with /bin/sh -c in the session's workspace, under the Landlock sandbox, with a
// secret-free environment and a private TMPDIR; streams its output and returns the capped capture with
// how it ended. A non-zero exit is information for the model, not a failed call.
#include "tools/builtin/shell.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <sys/mman.h>

#include "core/support/unique_fd.h"
#include "tools/builtin/common.h"
#include "tools/command_risk.h"
#include "tools/environment.h"
#include "tools/path_guard.h"
#include "tools/process.h"
#include "tools/search.h"

namespace agentd::tools {
namespace builtin {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Json;

constexpr std::size_t kTitleCommandChars = 80;

// "200ms", "45s", "2m", "2m30s": how a timeout reads in a result.
std::string describe_duration(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms < 1000 || ms % 1000 != 0) return fmt::format("{}ms", ms);
  const auto seconds = ms / 1000;
  if (seconds < 60) return fmt::format("{}s", seconds);
  if (seconds % 60 == 0) return fmt::format("{}m", seconds / 60);
  return fmt::format("{}m{}s", seconds / 60, seconds % 60);
}

std::string signal_name(int signo) {
  const char* abbrev = ::sigabbrev_np(signo);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signo);
}

// The command's first line, shortened, for titles and summaries.
std::string short_command(std::string_view command) {
  const std::size_t newline = command.find('\n');
  std::string_view line = command.substr(0, newline);
  std::string out(utf8_prefix(line, kTitleCommandChars));
  if (out.size() < command.size()) out += "...";
  return out;
}

class ShellTool final : public Tool {
 public:
  explicit ShellTool(ShellConfig config) : config_(std::move(config)) {
    spec_.name = "shell";
    spec_.description = fmt::format(
        "Run a shell command (/bin/sh -c) in the working directory and return its output (stdout and stderr "
        "merged) and exit code. Keep commands non-interactive: stdin is empty. The command and everything it "
        "starts, background jobs included, are killed when it ends or times out (default {}ms, at most {}ms). "
        "Output over {} KiB keeps its start and end. Writes are allowed only inside the workspace and $TMPDIR "
        "(a fresh private directory per call) when the sandbox is on.",
        config_.default_timeout.count(), config_.max_timeout.count(),
        (config_.output_head_bytes + config_.output_tail_bytes) >> 10);
    spec_.input_schema = support::parse_json(fmt::format(R"({{
  "type": "object",
  "properties": {{
    "command": {{"type": "string", "minLength": 1, "description": "The command line, run with /bin/sh -c."}},
    "timeout_ms": {{"type": "integer", "minimum": 1, "maximum": {},
                    "description": "Kill the command after this many milliseconds. Default {}."}},
    "cwd": {{"type": "string", "minLength": 1,
             "description": "The directory to run in: relative to the working directory, or absolute inside it. Default: the working directory."}}
  }},
  "required": ["command"],
  "additionalProperties": false
}})",
                                                         config_.max_timeout.count(), config_.default_timeout.count()))
                             .value();
    spec_.kind = ToolKind::execute;
    spec_.base_risk = Risk::execute;
  }

  const ToolSpec& spec() const override { return spec_; }

  std::string title(const Json& input, const ToolContext& /*context*/) const override {
    return "Run " + short_command(string_field(input, "command"));
  }

  RiskAssessment assess(const Json& input, const ToolContext& context) const override {
    return assess_command(spec_.base_risk, string_field(input, "command"), command_cwd(input, context), context);
  }

  std::string describe(const Json& input, const ToolContext& context) const override {
    return describe_command(string_field(input, "command"), command_cwd(input, context));
  }

  boost::asio::awaitable<support::Result<ToolResult>> run(Json input, ToolContext& context) override {
    if (auto invalid = check_input(spec_, input)) co_return std::move(*invalid);
    if (context.cancel.cancelled()) co_return support::Error(Errc::cancelled, "shell cancelled");
    const std::string command = string_field(input, "command");
    const auto timeout = std::min(
        std::chrono::milliseconds(integer_field(input, "timeout_ms").value_or(config_.default_timeout.count())),
        config_.max_timeout);

    auto checked_cwd = checked_command_cwd(input, context);
    if (!checked_cwd) co_return ToolResult::failure(checked_cwd.error().message());
    const fs::path cwd = std::move(*checked_cwd);

    CommandRequest request;
    request.command = command;
    request.cwd = cwd;
    request.timeout = timeout;
    auto ran = co_await run_command(config_, request, context, "shell");
    if (!ran) co_return std::move(ran).error();
    if (!ran->refused.empty()) co_return ToolResult::failure(std::move(ran->refused));
    const ProcessResult& process = ran->process;
    const std::string& unsandboxed = ran->unsandboxed;
    const std::string ending = describe_ending(process, timeout, config_);

    ToolResult result;
    result.ok = process.ended_by != EndedBy::timeout;
    result.content = process.output.empty() ? "(no output)\n" : process.output;
    if (result.content.back() != '\n') result.content += '\n';
    if (process.leftover_processes > 0) {
      result.content += fmt::format(
          "[{} process{} still running when the command ended (background jobs) {} killed; nothing outlives a "
          "shell call]\n",
          process.leftover_processes, process.leftover_processes == 1 ? "" : "es",
          process.leftover_processes == 1 ? "was" : "were");
    }
    if (!unsandboxed.empty()) result.content += fmt::format("[ran without a sandbox: {}]\n", unsandboxed);
    result.content += ending;
    result.summary = fmt::format("{}: {}", short_command(command), ending.substr(0, ending.find(':')));

    result.metadata.set("exitCode", process.exit_code >= 0 ? Json(process.exit_code) : Json());
    result.metadata.set("signal", process.signal != 0 ? Json(process.signal) : Json());
    result.metadata.set("endedBy", ended_by_name(process.ended_by));
    result.metadata.set("durationMs", static_cast<std::int64_t>(process.duration.count()));
    result.metadata.set("outputBytes", process.output_bytes);
    result.metadata.set("truncatedBytes", process.truncated_bytes);
    result.metadata.set("sandbox", std::move(ran->sandbox));
    co_return result;
  }

 private:
  ShellConfig config_;
  ToolSpec spec_;
};

}  // namespace
}  // namespace builtin

namespace {

constexpr std::size_t kStderrKeptBytes = std::size_t{64} << 10;

boost::asio::awaitable<support::Result<CommandRun>> run_in_terminal(const ShellConfig& config,
                                                                    const CommandRequest& request, ToolContext& context,
                                                                    std::string_view what);

bool write_whole(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The first `limit` bytes of a memory file the program wrote.
std::string read_start(int fd, std::size_t limit) {
  std::string out(limit, '\0');
  std::size_t got = 0;
  while (got < limit) {
    const ssize_t n = ::pread(fd, out.data() + got, limit - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

}  // namespace

std::filesystem::path command_cwd(const support::Json& input, const ToolContext& context) {
  const support::Json* given = input.find("cwd");
  if (given == nullptr || !given->is_string()) return context.cwd;
  return (std::filesystem::path(context.cwd) / given->as_string())
      .lexically_normal();  // an absolute `cwd` replaces the session's
}

support::Result<std::filesystem::path> checked_command_cwd(const support::Json& input, const ToolContext& context) {
  const support::Json* requested = input.find("cwd");
  if (requested == nullptr) return std::filesystem::path(context.cwd);
  auto resolved = PathGuard(context).resolve(requested->as_string(), PathAccess::read);
  if (!resolved) return std::move(resolved).error();
  std::error_code ec;
  if (!std::filesystem::is_directory(resolved->absolute, ec)) {
    return support::Error(
        support::Errc::invalid_argument,
        fmt::format("cwd {} is not a directory; give an existing directory inside the workspace", resolved->display));
  }
  return std::move(resolved->absolute);
}

RiskAssessment assess_command(Risk base, std::string_view command, const std::filesystem::path& cwd,
                              const ToolContext& context) {
  const PathGuard guard(context);
  const char* home = std::getenv("HOME");  // NOLINT(concurrency-mt-unsafe): nothing here sets the environment
  RiskAssessment risk = assess_command_line(parse_shell_command(command), cwd, guard.roots(),
                                            home != nullptr ? std::filesystem::path(home) : std::filesystem::path());
  risk.risk |= base;
  return risk;
}

std::string describe_command(std::string_view command, const std::filesystem::path& cwd) {
  return fmt::format("$ {}\n(in {})", command, cwd.string());
}

boost::asio::awaitable<support::Result<CommandRun>> run_command(const ShellConfig& config,
                                                                const CommandRequest& request, ToolContext& context,
                                                                std::string_view what) {
  namespace fs = std::filesystem;
  using support::Errc;
  if (context.cancel.cancelled()) co_return support::Error(Errc::cancelled, fmt::format("{} cancelled", what));
  if (context.terminal != nullptr && !config.sandbox_exec.empty() && request.stdin_text.empty() &&
      !request.separate_stderr) {
    co_return co_await run_in_terminal(config, request, context, what);
  }
  CommandRun run;
  auto temp = PrivateTempDir::create();
  if (!temp) co_return std::move(temp).error();
  ProcessOptions options;
  options.argv = {config.shell, "-c", request.command};
  options.cwd = request.cwd.string();
  options.env = scrubbed_environment(config.env_allow, config.secret_env_names);
  set_variable(options.env, "TMPDIR", temp->path().string());
  options.timeout = request.timeout;
  options.kill_grace = config.kill_grace;
  options.capture_head_bytes = request.capture_head_bytes != 0 ? request.capture_head_bytes : config.output_head_bytes;
  options.capture_tail_bytes = request.capture_tail_bytes != 0 ? request.capture_tail_bytes : config.output_tail_bytes;

  // Input and a separate stderr live in memory files the program reads and writes like regular files.
  support::UniqueFd stdin_file;
  support::UniqueFd stderr_file;
  if (!request.stdin_text.empty()) {
    stdin_file = support::UniqueFd(::memfd_create("agentd-stdin", MFD_CLOEXEC));
    if (stdin_file.get() < 0 || !write_whole(stdin_file.get(), request.stdin_text) ||
        ::lseek(stdin_file.get(), 0, SEEK_SET) != 0) {
      co_return support::make_error(Errc::io, "preparing the command's stdin: {}", std::strerror(errno));
    }
    options.stdin_fd = stdin_file.get();
  }
  if (request.separate_stderr) {
    stderr_file = support::UniqueFd(::memfd_create("agentd-stderr", MFD_CLOEXEC));
    if (stderr_file.get() < 0) {
      co_return support::make_error(Errc::io, "preparing the command's stderr: {}", std::strerror(errno));
    }
    options.stderr_fd = stderr_file.get();
  }

  std::optional<SandboxPlan> plan;
  if (!config.sandbox.require) {
    run.unsandboxed = "the sandbox is turned off in agentd's configuration";
  } else {
    const PathGuard guard(context);
    SandboxRequest sandbox_request;
    sandbox_request.writable = guard.roots();
    sandbox_request.writable.push_back(temp->path());
    for (const auto& dir : config.sandbox.writable_dirs) {
      std::error_code ec;
      if (fs::is_directory(dir, ec)) sandbox_request.writable.emplace_back(dir);
    }
    sandbox_request.deny_network = config.sandbox.deny_network;
    // The mount namespace: .agentd/ and git's config and hooks read-only, secrets and deny-listed files
    // hidden. Where the kernel cannot give one, the same consent as for no sandbox at all runs the
    // command with Landlock alone.
    sandbox_request.protected_roots = guard.roots();
    sandbox_request.denied_paths = guard.denied();
    sandbox_request.hide_user_secrets = true;
    sandbox_request.mounts_optional = config.sandbox.allow_unsandboxed;
    // Off the loop: the plan scans the workspace for deny-listed files.
    auto prepare = [request = std::move(sandbox_request)]() -> support::Result<SandboxPlan> {
      try {
        return SandboxPlan::prepare(request);
      } catch (const std::exception& e) {
        return support::Error(Errc::internal, fmt::format("preparing the sandbox failed: {}", e.what()));
      }
    };
    auto prepared = co_await run_off_loop(std::move(prepare));
    if (prepared) {
      plan.emplace(std::move(*prepared));
      options.sandbox = &*plan;
      run.sandbox.set("enforced", true);
      run.sandbox.set("description", plan->describe());
      if (!plan->mount_namespace_error().empty()) {
        run.unsandboxed = fmt::format(
            "no mount namespace on this kernel ({}), so .git/config, .git/hooks and .agentd/ were writable and "
            "the user's secrets readable; only Landlock kept writes inside the workspace",
            plan->mount_namespace_error());
      }
    } else if (prepared.error().code() == Errc::unsupported && config.sandbox.allow_unsandboxed) {
      run.unsandboxed = prepared.error().message();
    } else {
      run.refused = fmt::format(
          "Not run: the command sandbox cannot be set up ({}), and agentd's configuration does not allow "
          "commands without it. Do the task with the other tools, or ask the user to allow unsandboxed "
          "commands.",
          prepared.error().message());
      co_return run;
    }
  }
  if (!run.unsandboxed.empty()) {
    run.sandbox.set("enforced", false);
    run.sandbox.set("reason", run.unsandboxed);
  }

  // Live output goes to the client until the stream budget is spent, then one note says so.
  std::size_t streamed = 0;
  bool stream_cut = false;
  const OutputCallback on_output = [&](std::string_view chunk) {
    if (!context.progress || stream_cut) return;
    if (streamed + chunk.size() > config.stream_bytes) {
      stream_cut = true;
      context.progress(fmt::format("\n[live output stops here after {} KiB; the result keeps the start and end]\n",
                                   config.stream_bytes >> 10));
      return;
    }
    streamed += chunk.size();
    context.progress(chunk);
  };
  auto ran = co_await run_process(options, on_output, context.cancel);
  // The whole tree is dead now: undo what it made of the protected paths no mount could cover.
  const std::vector<fs::path> removed = plan ? plan->remove_created_protected_paths() : std::vector<fs::path>{};
  if (!ran) {
    if (ran.error().code() == Errc::cancelled) co_return std::move(ran).error();
    if (ran.error().code() == Errc::unavailable) {
      run.refused = fmt::format("Not run: the sandbox could not be applied: {}", ran.error().message());
      co_return run;
    }
    if (ran.error().code() == Errc::not_found) {
      run.refused = ran.error().message();
      co_return run;
    }
    co_return std::move(ran).error();
  }
  if (ran->ended_by == EndedBy::cancelled) {
    co_return support::Error(Errc::cancelled,
                             fmt::format("{} cancelled: the command and every process it started were killed", what));
  }
  run.process = std::move(*ran);
  if (stderr_file.get() >= 0) run.stderr_text = read_start(stderr_file.get(), kStderrKeptBytes);
  if (!removed.empty()) {
    std::string names;
    for (const auto& path : removed) names += (names.empty() ? "" : ", ") + path.string();
    run.process.output += fmt::format(
        "\n[agentd removed {}: the command created protected paths, which are read-only in the sandbox (agentd's "
        "and git's configuration); change them with the file tools, which ask the user]\n",
        names);
  }
  co_return run;
}

namespace {

// The command in the client's terminal, wrapped in `agentd sandbox-exec` with this policy: the same
// sandbox and environment as a command agentd runs itself, while the editor shows it live.
boost::asio::awaitable<support::Result<CommandRun>> run_in_terminal(const ShellConfig& config,
                                                                    const CommandRequest& request, ToolContext& context,
                                                                    std::string_view what) {
  const PathGuard guard(context);
  TerminalCommand command;
  command.program = config.sandbox_exec;
  command.args.emplace_back("sandbox-exec");
  for (const auto& root : guard.roots()) {
    command.args.emplace_back("--root");
    command.args.push_back(root.string());
  }
  for (const auto& dir : config.sandbox.writable_dirs) {
    command.args.emplace_back("--writable");
    command.args.push_back(dir);
  }
  for (const auto& pattern : guard.denied()) {
    command.args.emplace_back("--deny-path");
    command.args.push_back(pattern);
  }
  for (const auto& name : config.env_allow) {
    command.args.emplace_back("--env-allow");
    command.args.push_back(name);
  }
  for (const auto& name : config.secret_env_names) {
    command.args.emplace_back("--secret-env");
    command.args.push_back(name);
  }
  if (config.sandbox.deny_network) command.args.emplace_back("--no-network");
  if (!config.sandbox.require || config.sandbox.allow_unsandboxed) command.args.emplace_back("--allow-unsandboxed");
  command.args.emplace_back("--");
  command.args.push_back(config.shell);
  command.args.emplace_back("-c");
  command.args.push_back(request.command);
  command.cwd = request.cwd.string();
  command.timeout = request.timeout;
  const std::size_t head = request.capture_head_bytes != 0 ? request.capture_head_bytes : config.output_head_bytes;
  const std::size_t tail = request.capture_tail_bytes != 0 ? request.capture_tail_bytes : config.output_tail_bytes;
  command.output_byte_limit = head + tail;
  auto ran = co_await context.terminal->run(command, context.cancel);
  if (!ran) {
    if (ran.error().code() == support::Errc::cancelled) {
      co_return support::Error(support::Errc::cancelled, fmt::format("{} cancelled: the terminal was killed", what));
    }
    CommandRun refused;
    refused.refused = fmt::format("Not run: the editor's terminal failed: {}", ran.error().message());
    co_return refused;
  }
  CommandRun run;
  run.process.output = std::move(ran->output);
  if (ran->truncated) {
    run.process.output.insert(
        0, fmt::format("[the terminal kept only the last {} KiB of the output]\n", command.output_byte_limit >> 10));
  }
  run.process.output_bytes = run.process.output.size();
  run.process.duration = ran->duration;
  run.process.exit_code = ran->exit_code;
  if (ran->timed_out) {
    run.process.ended_by = EndedBy::timeout;
  } else if (ran->exit_code < 0) {
    run.process.ended_by = EndedBy::signal;
    run.process.signal = SIGKILL;  // killed, unless the client names the signal
    for (int signo = 1; signo < NSIG; ++signo) {
      const char* abbrev = ::sigabbrev_np(signo);
      if (abbrev != nullptr && (ran->signal == abbrev || ran->signal == fmt::format("SIG{}", abbrev))) {
        run.process.signal = signo;
      }
    }
  }
  run.sandbox.set("enforced", true);
  run.sandbox.set("description", "agentd sandbox-exec in the editor's terminal");
  co_return run;
}

}  // namespace

std::string describe_ending(const ProcessResult& process, std::chrono::milliseconds timeout,
                            const ShellConfig& config) {
  switch (process.ended_by) {
    case EndedBy::exit: return fmt::format("exit code {}", process.exit_code);
    case EndedBy::signal:
      return fmt::format("killed by signal {} ({})", process.signal, builtin::signal_name(process.signal));
    case EndedBy::timeout:
      return fmt::format(
          "timed out after {}: the command and every process it started were killed (timeout_ms can be at most "
          "{})",
          builtin::describe_duration(timeout), config.max_timeout.count());
    case EndedBy::cancelled: return "cancelled";
  }
  return "ended";
}

std::shared_ptr<Tool> make_shell_tool(ShellConfig config) {
  return std::make_shared<builtin::ShellTool>(std::move(config));
}

std::shared_ptr<Tool> make_shell_tool() { return make_shell_tool(ShellConfig{}); }

}  // namespace agentd::tools
