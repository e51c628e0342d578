#include "core/support/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <sys/stat.h>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere else

namespace agentd::support {

void OwnedFd::reset(int fd) noexcept {
  if (fd_ >= 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
}

namespace {

// `fd` moved above 2 (closing the original) when it landed on 0, 1 or 2, which happens when we run with
// one of those closed: the child's own dup2 onto that number would overwrite it. -1 (errno set) on failure.
int above_stderr(int fd) {
  if (fd < 0 || fd > STDERR_FILENO) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return moved;
}

// A close-on-exec pipe with both ends above 2: a pipe that landed on 0, 1 or 2 (because we run with
// one of those closed) would be overwritten by the child's own dup2 onto that number.
bool open_pipe(std::array<OwnedFd, 2>& ends) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  for (int i = 0; i < 2; ++i) {
    fds[i] = above_stderr(fds[i]);
    if (fds[i] < 0) {
      if (i == 0) {
        const int saved = errno;
        ::close(fds[1]);
        errno = saved;
      }
      return false;
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

// Adds what makes child descriptor `target` what `stdio` says; `child_end` is the descriptor it gets for
// a pipe (the pipe's end) or a file (opened here, by open_file).
void add_stdio(posix_spawn_file_actions_t* actions, int target, const ChildStdio& stdio, int child_end) {
  switch (stdio.mode) {
    case ChildStdio::Mode::inherit: break;
    case ChildStdio::Mode::pipe: ::posix_spawn_file_actions_adddup2(actions, child_end, target); break;
    case ChildStdio::Mode::null:
      ::posix_spawn_file_actions_addopen(actions, target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0);
      break;
    case ChildStdio::Mode::fd: ::posix_spawn_file_actions_adddup2(actions, stdio.fd, target); break;
    case ChildStdio::Mode::file: ::posix_spawn_file_actions_adddup2(actions, child_end, target); break;
  }
}

// A `file` stdio is opened here rather than in the child, so that a path that cannot be opened is an
// error naming that path (posix_spawn would report it as a failure to start the program).
Result<OwnedFd> open_file(int target, const ChildStdio& stdio) {
  if (stdio.mode != ChildStdio::Mode::file) return OwnedFd();
  const int flags = (target == STDIN_FILENO ? O_RDONLY : O_WRONLY | O_CREAT | O_APPEND) | O_CLOEXEC;
  const int fd = above_stderr(::open(stdio.path.c_str(), flags, 0600));
  if (fd < 0) {
    const int error = errno;
    return Error(error == ENOENT || error == ENOTDIR ? Errc::not_found : Errc::io,
                 fmt::format("cannot open {} for the child's {}: {}", stdio.path,
                             target == STDIN_FILENO    ? "stdin"
                             : target == STDOUT_FILENO ? "stdout"  // stdout-ok: names the child's stream
                                                       : "stderr",
                             std::strerror(error)),
                 error);
  }
  return OwnedFd(fd);
}

}  // namespace

std::optional<std::string> find_in_path(std::string_view name, std::string_view path) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string_view::npos) return std::string(name);
  for (;;) {
    const std::size_t colon = path.find(':');
    const std::string_view dir = path.substr(0, colon);
    std::string candidate = fmt::format("{}/{}", dir.empty() ? "." : dir, name);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return std::nullopt;
    path.remove_prefix(colon + 1);
  }
}

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

  // The descriptor each child stream gets: the pipe's child end, or the file opened for it.
  std::array<OwnedFd, 3> files;
  for (std::size_t i = 0; i < 3; ++i) {
    auto opened = open_file(static_cast<int>(i), *stdio[i]);
    if (!opened) return opened.error();
    files[i] = std::move(*opened);
  }
  const auto child_end = [&](std::size_t i, int pipe_end) {
    return files[i] ? files[i].get() : pipes[i][pipe_end].get();
  };

  SpawnSetup setup;
  add_stdio(setup.actions(), STDIN_FILENO, options.stdin_mode, child_end(0, 0));
  add_stdio(setup.actions(), STDOUT_FILENO, options.stdout_mode, child_end(1, 1));  // stdout-ok: the child's
  add_stdio(setup.actions(), STDERR_FILENO, options.stderr_mode, child_end(2, 1));
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
    // posix_spawn says only that something failed; a directory the child cannot enter is the one other
    // thing that can, and naming the program for it would send the reader looking in the wrong place.
    if (!options.cwd.empty() && ::access(options.cwd.c_str(), X_OK) != 0) {
      const int error = errno;
      return Error(error == ENOENT || error == ENOTDIR ? Errc::not_found : Errc::io,
                   fmt::format("cannot start {} in {}: {}", program, options.cwd, std::strerror(error)), error);
    }
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
