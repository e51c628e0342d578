#include "daemon/sandbox_exec.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "tools/environment.h"
#include "tools/process.h"
#include "tools/sandbox.h"

namespace agentd::daemon {

namespace {

namespace fs = std::filesystem;

struct ExecRequest {
  std::vector<fs::path> roots;
  std::vector<fs::path> writable;
  std::vector<std::string> deny_paths;
  std::vector<std::string> env_allow;
  std::vector<std::string> secret_env;
  bool no_network = false;
  bool allow_unsandboxed = false;
  std::vector<std::string> argv;
};

void say(const std::string& text) {
  const std::string line = "agentd sandbox-exec: " + text + "\n";
  std::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, rest.data(), rest.size());
    if (n <= 0) return;
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::optional<ExecRequest> parse(const std::vector<std::string>& args, std::string& error) {
  ExecRequest request;
  std::size_t i = 0;
  const auto value = [&](const std::string& flag) -> std::optional<std::string> {
    if (i + 1 >= args.size()) {
      error = flag + " needs a value";
      return std::nullopt;
    }
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      request.argv.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    std::optional<std::string> v;
    if (arg == "--no-network") {
      request.no_network = true;
    } else if (arg == "--allow-unsandboxed") {
      request.allow_unsandboxed = true;
    } else if (arg == "--root" || arg == "--writable" || arg == "--deny-path" || arg == "--env-allow" ||
               arg == "--secret-env") {
      if (!(v = value(arg))) return std::nullopt;
      if (arg == "--root") request.roots.emplace_back(*v);
      if (arg == "--writable") request.writable.emplace_back(*v);
      if (arg == "--deny-path") request.deny_paths.push_back(*v);
      if (arg == "--env-allow") request.env_allow.push_back(*v);
      if (arg == "--secret-env") request.secret_env.push_back(*v);
    } else {
      error = fmt::format("unknown option {} (the program goes after --)", arg);
      return std::nullopt;
    }
  }
  if (request.argv.empty()) {
    error = "no program: agentd sandbox-exec [options] -- PROGRAM [ARGS...]";
    return std::nullopt;
  }
  std::error_code ec;
  if (request.roots.empty()) request.roots.push_back(fs::current_path(ec));
  for (auto& root : request.roots) {
    fs::path canonical = fs::canonical(root, ec);
    if (ec || !fs::is_directory(canonical)) {
      error = fmt::format("--root {}: not a directory", root.string());
      return std::nullopt;
    }
    root = std::move(canonical);
  }
  return request;
}

// For the forked child: write(2) only.
void put(const char* text) {
  if (text != nullptr) (void)!::write(STDERR_FILENO, text, ::strlen(text));
}

int status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 126;
}

// The child we wait for, for the forwarding handler.
volatile sig_atomic_t g_child = 0;

void forward(int signo) {
  if (g_child > 0) ::kill(-static_cast<pid_t>(g_child), signo);
}

}  // namespace

int run_sandbox_exec(const std::vector<std::string>& args) {
  std::string error;
  auto request = parse(args, error);
  if (!request) {
    say(error);
    return 2;
  }
  auto temp = tools::PrivateTempDir::create();
  if (!temp) {
    say(fmt::format("cannot make a private TMPDIR: {}", temp.error().message()));
    return 126;
  }
  std::vector<std::string> env = tools::scrubbed_environment(request->env_allow, request->secret_env);
  tools::set_variable(env, "TMPDIR", temp->path().string());

  tools::SandboxRequest sandbox;
  sandbox.writable = request->roots;
  sandbox.writable.push_back(temp->path());
  for (const auto& dir : request->writable) {
    std::error_code ec;
    if (fs::is_directory(dir, ec)) sandbox.writable.push_back(dir);
  }
  sandbox.deny_network = request->no_network;
  sandbox.protected_roots = request->roots;
  sandbox.denied_paths = request->deny_paths;
  sandbox.hide_user_secrets = true;
  sandbox.mounts_optional = request->allow_unsandboxed;
  std::optional<tools::SandboxPlan> plan;
  if (auto prepared = tools::SandboxPlan::prepare(sandbox)) {
    plan.emplace(std::move(*prepared));
    if (!plan->mount_namespace_error().empty()) {
      say(fmt::format("no mount namespace here ({}): only Landlock confines this command",
                      plan->mount_namespace_error()));
    }
  } else if (prepared.error().code() == support::Errc::unsupported && request->allow_unsandboxed) {
    say(fmt::format("running WITHOUT a sandbox: {}", prepared.error().message()));
  } else {
    say(fmt::format("not run: the sandbox cannot be set up ({})", prepared.error().message()));
    return 126;
  }

  // Everything the child needs exists before the fork: after it, only async-signal-safe calls.
  std::vector<char*> argv;
  argv.reserve(request->argv.size() + 1);
  for (auto& a : request->argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  const pid_t child = ::fork();
  if (child < 0) {
    say(fmt::format("fork: {}", ::strerror(errno)));
    return 126;
  }
  if (child == 0) {
    // A group of its own, so a signal reaches everything the program starts; and if agentd
    // sandbox-exec is killed outright, the program goes with it.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() == 1) ::_exit(126);  // the parent died before the line above
    if (plan) {
      const char* step = "";
      if (const int err = plan->apply_in_child(&step); err != 0) {
        put("agentd sandbox-exec: the sandbox could not be applied: ");
        put(step);
        put(": ");
        put(::strerrordesc_np(err));
        put("\n");
        ::_exit(126);
      }
    }
    ::execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    put("agentd sandbox-exec: ");
    put(argv[0]);
    put(": ");
    put(::strerrordesc_np(err));
    put("\n");
    ::_exit(err == ENOENT ? 127 : 126);
  }
  // Signals for us (the terminal killed, ^C) go to the program's whole group. Orphans of the program
  // come to us (subreaper), and whatever is left when the program ends is killed: as with the shell
  // tool, nothing outlives the command.
  ::setpgid(child, child);  // also here: the forwarding must not race the child's own call
  g_child = child;
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  struct sigaction action {};
  action.sa_handler = forward;
  ::sigemptyset(&action.sa_mask);
  for (int signo : {SIGTERM, SIGHUP, SIGINT, SIGQUIT}) ::sigaction(signo, &action, nullptr);
  int wait_status = 0;
  while (::waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  tools::kill_leftovers(child);
  if (plan) {
    for (const auto& removed : plan->remove_created_protected_paths()) {
      say(fmt::format("removed {}: protected paths are read-only in the sandbox", removed.string()));
    }
  }
  return status_of(wait_status);
}

}  // namespace agentd::daemon
