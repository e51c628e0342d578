#include "tools/mcp/server_process.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <system_error>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "core/support/spawn.h"
#include "tools/environment.h"
#include "tools/mcp/mcp_manager.h"

namespace agentd::tools::mcp {
namespace {

namespace asio = boost::asio;
using support::Errc;

// The program to run: the command itself when it has a slash, else the first executable of that name
// in the PATH the server will get (its own, which the configuration may set).
support::Result<std::string> find_program(const std::string& name, const std::vector<std::string>& env) {
  if (name.empty()) return support::Error(Errc::invalid_argument, "no command configured");
  if (name.find('/') != std::string::npos) return name;
  std::string_view path = find_variable(env, "PATH");
  if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
  while (!path.empty()) {
    const std::size_t colon = path.find(':');
    const std::string_view dir = path.substr(0, colon);
    path = colon == std::string_view::npos ? std::string_view() : path.substr(colon + 1);
    std::string candidate = fmt::format("{}/{}", dir.empty() ? "." : dir, name);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return support::make_error(Errc::not_found, "no program named \"{}\" in PATH", name);
}

}  // namespace

std::vector<std::string> server_environment(const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> entries = scrubbed_environment({});
  for (const auto& [name, value] : env) set_variable(entries, name, value);
  return entries;
}

std::string describe_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return fmt::format("exit code {}", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int signo = WTERMSIG(wait_status);
    const char* name = ::strsignal(signo);
    return fmt::format("killed by signal {} ({})", signo, name != nullptr ? name : "unknown");
  }
  return fmt::format("wait status {}", wait_status);
}

support::Result<std::unique_ptr<ServerProcess>> ServerProcess::spawn(const asio::any_io_executor& executor,
                                                                     const ServerConfig& config) {
  std::vector<std::string> env = server_environment(config.env);
  auto program = find_program(config.command, env);
  if (!program) return std::move(program).error();
  if (!config.cwd.empty()) {
    struct stat st {};
    if (::stat(config.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return support::make_error(Errc::not_found, "working directory {} does not exist", config.cwd);
    }
  }

  support::SpawnOptions options;
  options.program = *program;
  options.argv.push_back(config.command);
  options.argv.insert(options.argv.end(), config.args.begin(), config.args.end());
  options.env = std::move(env);
  options.cwd = config.cwd;
  options.stdin_mode = support::ChildStdio::pipe();
  options.stdout_mode = support::ChildStdio::pipe();
  options.stderr_mode = support::ChildStdio::pipe();
  // Its own group, so signals reach everything it starts and a ^C for our terminal does not; default
  // dispositions (agentd ignores SIGPIPE, which exec would otherwise pass on) and no blocked signals.
  options.new_process_group = true;
  options.default_signals = true;
  auto child = support::spawn_process(options);
  if (!child) return std::move(child).error();
  return std::unique_ptr<ServerProcess>(new ServerProcess(executor, child->pid, child->stdin_fd.release(),
                                                          child->stdout_fd.release(), child->stderr_fd.release()));
}

ServerProcess::ServerProcess(const asio::any_io_executor& executor, pid_t pid, int in_fd, int out_fd, int err_fd)
    : executor_(executor), pid_(pid), stdin_(executor, in_fd), stdout_(executor, out_fd), stderr_(executor, err_fd) {
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

ServerProcess::~ServerProcess() {
  if (!reaped_) {
    signal_group(SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool ServerProcess::try_reap() noexcept {
  if (reaped_) return true;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    wait_status_ = status;
  } else if (r < 0 && errno == ECHILD) {
    reaped_ = true;  // someone else reaped it (a waitpid(-1) elsewhere): the status is lost
    wait_status_ = 0;
  }
  return reaped_;
}

asio::awaitable<int> ServerProcess::wait_exit() {
  if (pidfd_ >= 0) {
    // The pidfd becomes readable when the process exits; a dup keeps ours for the destructor.
    asio::posix::stream_descriptor watch(executor_, ::dup(pidfd_));
    while (!try_reap()) {
      boost::system::error_code ec;
      co_await watch.async_wait(asio::posix::stream_descriptor::wait_read,
                                asio::redirect_error(asio::use_awaitable, ec));
      if (ec && ec != asio::error::interrupted) break;
    }
  }
  // No pidfd (Linux before 5.3, or a seccomp filter): poll.
  asio::steady_timer timer(executor_);
  while (!try_reap()) {
    timer.expires_after(std::chrono::milliseconds(20));
    co_await timer.async_wait(asio::use_awaitable);
  }
  co_return wait_status_;
}

void ServerProcess::signal_group(int signo) const noexcept {
  // Once the program is reaped its group id may still name leftovers (Linux does not reuse a pid
  // while a group of that id exists), so the group is still ours to signal; ESRCH is harmless.
  ::kill(-pid_, signo);
}

void ServerProcess::close_stdin() {
  boost::system::error_code ignored;
  stdin_.close(ignored);
}

}  // namespace agentd::tools::mcp
