// spawn_process: the one way agentd starts a program it does not need to touch between fork and exec
// (tools/process.cpp's supervised fork does, for the sandbox). posix_spawn underneath, so no copy of
// our page tables and exec failures come back as values. Only stdin, stdout and stderr reach the child.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "core/support/result.h"

namespace agentd::support {

// A file descriptor closed when this goes.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) noexcept : fd_(fd) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() { reset(); }

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

// What one of the child's stdin, stdout and stderr is.
struct ChildStdio {
  enum class Mode {
    inherit,  // ours
    pipe,     // a pipe; our end comes back in SpawnedChild
    null,     // /dev/null
    fd,       // `fd`, which the caller keeps (and closes when it likes)
    file,     // `path`, opened read-only for stdin, for appending otherwise
  };
  Mode mode = Mode::inherit;
  int fd = -1;
  std::string path;

  static ChildStdio inherit() { return {}; }
  static ChildStdio pipe() { return {Mode::pipe, -1, {}}; }
  static ChildStdio null() { return {Mode::null, -1, {}}; }
  static ChildStdio from_fd(int fd) { return {Mode::fd, fd, {}}; }
  static ChildStdio from_file(std::string path) { return {Mode::file, -1, std::move(path)}; }
};

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is what the child sees as its name; must not be empty
  // The file to run; empty: argv[0]. Without a slash it is looked up in our PATH only when search_path
  // is set (else it names a file in the cwd the child starts in).
  std::string program;
  bool search_path = false;
  std::optional<std::vector<std::string>> env;  // "NAME=value" entries; nullopt: our environment
  std::string cwd;                              // empty: ours
  ChildStdio stdin_mode;
  ChildStdio stdout_mode;
  ChildStdio stderr_mode;
  // The child leads a process group of its own (its pid is the group id): a signal to the group reaches
  // everything it starts, and a terminal's ^C for our group does not reach it.
  bool new_process_group = false;
  // Every signal at its default disposition and none blocked in the child. exec keeps ignored signals
  // (agentd ignores SIGPIPE) and the mask; most programs expect neither.
  bool default_signals = false;
};

// A started child. Reaping it (waitpid) is the caller's business; the pipe ends close with this.
struct SpawnedChild {
  pid_t pid = -1;
  OwnedFd stdin_fd;   // write end, when stdin_mode is pipe
  OwnedFd stdout_fd;  // read end, when stdout_mode is pipe
  OwnedFd stderr_fd;  // read end, when stderr_mode is pipe
};

// The first executable regular file named `name` in the directories of `path` (a PATH value; empty
// directories mean the current one), or nullopt. A name with a slash is returned as it is.
std::optional<std::string> find_in_path(std::string_view name, std::string_view path);

// Starts the program. Errors: Errc::invalid_argument (empty argv), Errc::not_found (no such program,
// not executable, or no such cwd or stdin file), Errc::io (anything else); native_code is the errno.
// Our ends of the pipes are close-on-exec, and the child gets no descriptor but 0, 1 and 2.
Result<SpawnedChild> spawn_process(const SpawnOptions& options);

}  // namespace agentd::support
