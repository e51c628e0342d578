#include "tools/mcp/server_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <array>
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

class Pipe {
 public:
  Pipe() = default;
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    close_end(0);
    close_end(1);
  }
  bool open() { return ::pipe2(fds_.data(), O_CLOEXEC) == 0; }
  int end(int which) const { return fds_[which]; }
  int release(int which) { return std::exchange(fds_[which], -1); }
  void close_end(int which) {
    if (fds_[which] >= 0) ::close(fds_[which]);
    fds_[which] = -1;
  }

 private:
  std::array<int, 2> fds_{-1, -1};
};

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

  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(config.command.c_str()));                           // NOLINT: exec's signature
  for (const auto& arg : config.args) argv.push_back(const_cast<char*>(arg.c_str()));  // NOLINT
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& entry : env) envp.push_back(const_cast<char*>(entry.c_str()));  // NOLINT
  envp.push_back(nullptr);

  Pipe in;
  Pipe out;
  Pipe err;
  if (!in.open() || !out.open() || !err.open()) {
    return support::Error(Errc::io, fmt::format("pipe: {}", std::strerror(errno)), errno);
  }

  // posix_spawn (vfork underneath) rather than fork: no copy of agentd's page tables, and exec
  // failures come back as the return value.
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawnattr_init(&attr);
  ::posix_spawn_file_actions_adddup2(&actions, in.end(0), 0);
  ::posix_spawn_file_actions_adddup2(&actions, out.end(1), 1);
  ::posix_spawn_file_actions_adddup2(&actions, err.end(1), 2);
  ::posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (!config.cwd.empty()) ::posix_spawn_file_actions_addchdir_np(&actions, config.cwd.c_str());
  // Its own group, so signals reach everything it starts and a ^C for our terminal does not; default
  // dispositions (agentd ignores SIGPIPE, which exec would otherwise pass on) and no blocked signals.
  sigset_t all;
  sigset_t none;
  ::sigfillset(&all);
  ::sigemptyset(&none);
  ::posix_spawnattr_setpgroup(&attr, 0);
  ::posix_spawnattr_setsigdefault(&attr, &all);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, program->c_str(), &actions, &attr, argv.data(), envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    const Errc code = rc == ENOENT || rc == ENOTDIR || rc == EACCES ? Errc::not_found : Errc::io;
    return support::Error(code, fmt::format("cannot start {}: {}", *program, std::strerror(rc)), rc);
  }
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);
  return std::unique_ptr<ServerProcess>(
      new ServerProcess(executor, pid, in.release(1), out.release(0), err.release(0)));
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
