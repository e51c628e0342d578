#include "test/support/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include <sys/resource.h>
#include <sys/wait.h>

#include "core/support/spawn.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere else

namespace agentd::testing {

namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, Options options) {
  if (argv.empty()) throw std::runtime_error("ChildProcess: empty argv");
  support::SpawnOptions spawn;
  spawn.argv = argv;
  spawn.search_path = true;
  spawn.cwd = options.cwd;
  spawn.stdin_mode =
      options.stdin_file.empty() ? support::ChildStdio::pipe() : support::ChildStdio::from_file(options.stdin_file);
  spawn.stdout_mode = support::ChildStdio::pipe();
  spawn.stderr_mode = options.capture_stderr ? support::ChildStdio::pipe() : support::ChildStdio::inherit();

  // Environment: ours, with overrides replacing variables of the same name.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    const auto name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& o : options.env_overrides) {
      if (std::string_view(o).substr(0, o.find('=')) == name) overridden = true;
    }
    if (!overridden) env.emplace_back(entry);
  }
  for (const auto& o : options.env_overrides) env.push_back(o);
  spawn.env = std::move(env);

  auto child = support::spawn_process(spawn);
  if (!child) throw std::runtime_error(child.error().message());
  pid_ = child->pid;
  stdin_fd_ = child->stdin_fd.release();
  stdout_fd_ = child->stdout_fd.release();
  stderr_fd_ = child->stderr_fd.release();
  // posix_spawn returns once the child has exec'd, so this bounds what the child inherited.
  rusage self{};
  ::getrusage(RUSAGE_SELF, &self);
  spawner_max_rss_kb_ = self.ru_maxrss;
  if (stderr_fd_ != -1) ::fcntl(stderr_fd_, F_SETFL, ::fcntl(stderr_fd_, F_GETFL) | O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
  if (!status_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  for (int fd : {stdin_fd_, stdout_fd_, stderr_fd_}) {
    if (fd != -1) ::close(fd);
  }
}

bool ChildProcess::write(std::string_view bytes) {
  // A child that exits early must not kill the test with SIGPIPE.
  static const bool ignore_sigpipe = [] {
    ::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)ignore_sigpipe;
  if (stdin_fd_ == -1) return false;
  while (!bytes.empty()) {
    const ssize_t n = ::write(stdin_fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

void ChildProcess::close_stdin() {
  if (stdin_fd_ != -1) {
    ::close(stdin_fd_);
    stdin_fd_ = -1;
  }
}

bool ChildProcess::fill_stdout(std::chrono::milliseconds timeout) {
  if (stdout_fd_ == -1) return false;
  pollfd pfd{stdout_fd_, POLLIN, 0};
  const int ready = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
  if (ready <= 0) return false;
  char buf[65536];
  const ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
  if (n <= 0) {
    ::close(stdout_fd_);
    stdout_fd_ = -1;
    return false;
  }
  stdout_buf_.append(buf, static_cast<std::size_t>(n));
  return true;
}

std::optional<std::string> ChildProcess::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    const auto nl = stdout_buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = stdout_buf_.substr(0, nl);
      stdout_buf_.erase(0, nl + 1);
      return line;
    }
    if (stdout_fd_ == -1 || Clock::now() >= deadline) return std::nullopt;
    fill_stdout(std::chrono::milliseconds(remaining_ms(deadline)));
  }
}

std::string ChildProcess::read_all_stdout(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (stdout_fd_ != -1 && Clock::now() < deadline) fill_stdout(std::chrono::milliseconds(remaining_ms(deadline)));
  return std::exchange(stdout_buf_, {});
}

bool ChildProcess::read_some(std::string& out, std::chrono::milliseconds timeout) {
  if (stdout_buf_.empty() && !fill_stdout(timeout)) return false;
  out.append(stdout_buf_);
  stdout_buf_.clear();
  return true;
}

void ChildProcess::drain_stderr() {
  if (stderr_fd_ == -1) return;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(stderr_fd_, buf, sizeof buf);
    if (n <= 0) break;
    stderr_buf_.append(buf, static_cast<std::size_t>(n));
  }
}

const std::string& ChildProcess::stderr_text() {
  drain_stderr();
  return stderr_buf_;
}

long ChildProcess::peak_rss_kb() const {
  if (status_ || pid_ <= 0) return 0;
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmHWM:")) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

void ChildProcess::signal(int signo) {
  if (!status_ && pid_ > 0) ::kill(pid_, signo);
}

std::optional<ExitStatus> ChildProcess::wait(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  const auto deadline = Clock::now() + timeout;
  while (true) {
    int status = 0;
    rusage usage{};
    const pid_t r = ::wait4(pid_, &status, WNOHANG, &usage);
    if (r == pid_) {
      ExitStatus s;
      s.exited = WIFEXITED(status);
      s.code = s.exited ? WEXITSTATUS(status) : -1;
      s.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      s.max_rss_kb = usage.ru_maxrss;
      s.spawner_max_rss_kb = spawner_max_rss_kb_;
      s.user_seconds = static_cast<double>(usage.ru_utime.tv_sec) + usage.ru_utime.tv_usec / 1e6;
      s.system_seconds = static_cast<double>(usage.ru_stime.tv_sec) + usage.ru_stime.tv_usec / 1e6;
      status_ = s;
      drain_stderr();
      return status_;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    // Drain our end of stderr so a chatty child cannot block on a full pipe while we wait for it.
    drain_stderr();
    // waitpid has no timeout: poll it briefly. This is the one place a wait loops; it is bounded.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace agentd::testing
