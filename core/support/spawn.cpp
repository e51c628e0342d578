#include "core/support/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere else

namespace agentd::support {

void OwnedFd::reset(int fd) noexcept {
  if (fd_ >= 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
}

namespace {

// A close-on-exec pipe with both ends above 2: a pipe that landed on 0, 1 or 2 (because we run with
// one of those closed) would be overwritten by the child's own dup2 onto that number.
bool open_pipe(std::array<OwnedFd, 2>& ends) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  for (int i = 0; i < 2; ++i) {
    if (fds[i] <= STDERR_FILENO) {
      const int moved = ::fcntl(fds[i], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
      const int saved = errno;
      ::close(fds[i]);
      if (moved < 0) {
        if (i == 0) ::close(fds[1]);
        errno = saved;
        return false;
      }
      fds[i] = moved;
    }
    ends[i].reset(fds[i]);
  }
  return true;
}

// posix_spawn's file actions and attributes, destroyed on every path.
class SpawnSetup {
 public:
  SpawnSetup() {
    ::posix_spawn_file_actions_init(&actions_);
    ::posix_spawnattr_init(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  ~SpawnSetup() {
    ::posix_spawn_file_actions_destroy(&actions_);
    ::posix_spawnattr_destroy(&attr_);
  }
  posix_spawn_file_actions_t* actions() { return &actions_; }
  posix_spawnattr_t* attr() { return &attr_; }

 private:
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

// Adds what makes child descriptor `target` what `stdio` says; `child_end` is the pipe end it gets.
void add_stdio(posix_spawn_file_actions_t* actions, int target, const ChildStdio& stdio, int child_end) {
  const int output_flags = O_WRONLY | O_CREAT | O_APPEND;
  switch (stdio.mode) {
    case ChildStdio::Mode::inherit: break;
    case ChildStdio::Mode::pipe: ::posix_spawn_file_actions_adddup2(actions, child_end, target); break;
    case ChildStdio::Mode::null:
      ::posix_spawn_file_actions_addopen(actions, target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0);
      break;
    case ChildStdio::Mode::fd: ::posix_spawn_file_actions_adddup2(actions, stdio.fd, target); break;
    case ChildStdio::Mode::file:
      ::posix_spawn_file_actions_addopen(actions, target, stdio.path.c_str(),
                                         target == STDIN_FILENO ? O_RDONLY : output_flags, 0600);
      break;
  }
}

}  // namespace

Result<SpawnedChild> spawn_process(const SpawnOptions& options) {
  if (options.argv.empty()) return Error(Errc::invalid_argument, "spawn_process: empty argv");
  const std::string& program = options.program.empty() ? options.argv.front() : options.program;

  // [0] stdin, [1] stdout, [2] stderr; each a {read, write} pair when that stream is a pipe.
  std::array<std::array<OwnedFd, 2>, 3> pipes;
  const std::array<const ChildStdio*, 3> stdio = {&options.stdin_mode, &options.stdout_mode, &options.stderr_mode};
  for (std::size_t i = 0; i < 3; ++i) {
    if (stdio[i]->mode == ChildStdio::Mode::pipe && !open_pipe(pipes[i])) {
      return Error(Errc::io, fmt::format("pipe: {}", std::strerror(errno)), errno);
    }
  }

  SpawnSetup setup;
  add_stdio(setup.actions(), STDIN_FILENO, options.stdin_mode, pipes[0][0].get());
  add_stdio(setup.actions(), STDOUT_FILENO, options.stdout_mode, pipes[1][1].get());  // stdout-ok: the child's
  add_stdio(setup.actions(), STDERR_FILENO, options.stderr_mode, pipes[2][1].get());
  // Whatever else is open here, close-on-exec or not (a library's, a descriptor another thread opened a
  // moment ago), stays ours.
  ::posix_spawn_file_actions_addclosefrom_np(setup.actions(), STDERR_FILENO + 1);
  if (!options.cwd.empty()) ::posix_spawn_file_actions_addchdir_np(setup.actions(), options.cwd.c_str());

  short flags = 0;
  if (options.new_process_group) {
    ::posix_spawnattr_setpgroup(setup.attr(), 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  if (options.default_signals) {
    sigset_t all;
    sigset_t none;
    ::sigfillset(&all);
    ::sigemptyset(&none);
    ::posix_spawnattr_setsigdefault(setup.attr(), &all);
    ::posix_spawnattr_setsigmask(setup.attr(), &none);
    flags |= POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  }
  ::posix_spawnattr_setflags(setup.attr(), flags);

  std::vector<char*> argv;
  argv.reserve(options.argv.size() + 1);
  for (const auto& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));  // NOLINT: exec's signature
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (options.env) {
    envp.reserve(options.env->size() + 1);
    for (const auto& entry : *options.env) envp.push_back(const_cast<char*>(entry.c_str()));  // NOLINT
    envp.push_back(nullptr);
  }
  char** const env = options.env ? envp.data() : environ;

  pid_t pid = -1;
  const int rc = options.search_path
                     ? ::posix_spawnp(&pid, program.c_str(), setup.actions(), setup.attr(), argv.data(), env)
                     : ::posix_spawn(&pid, program.c_str(), setup.actions(), setup.attr(), argv.data(), env);
  if (rc != 0) {
    const Errc code = rc == ENOENT || rc == ENOTDIR || rc == EACCES ? Errc::not_found : Errc::io;
    return Error(code, fmt::format("cannot start {}: {}", program, std::strerror(rc)), rc);
  }
  // The child's ends close here, with the pipes; ours go to the caller.
  SpawnedChild child;
  child.pid = pid;
  child.stdin_fd = std::move(pipes[0][1]);
  child.stdout_fd = std::move(pipes[1][0]);
  child.stderr_fd = std::move(pipes[2][0]);
  return child;
}

}  // namespace agentd::support
