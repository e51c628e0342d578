// ChildProcess: runs a program with pipes on its stdin, stdout and stderr, for tests and benchmarks
// that drive the real binaries (agentd, agentd-mock-model). Reads take a timeout, so a test waits on
// an event with a bound instead of sleeping, and a hung child fails the test instead of hanging it.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace agentd::testing {

struct ExitStatus {
  bool exited = false;  // normal exit (then `code`), else killed by `signal`
  int code = -1;
  int signal = 0;
  long max_rss_kb = 0;  // peak resident set size, from wait4's rusage
  // Linux carries the spawning process's own peak RSS into a posix_spawn (vfork) child's ru_maxrss
  // across exec, so max_rss_kb is the child's own peak only when it is above this: our peak at spawn.
  long spawner_max_rss_kb = 0;
  double user_seconds = 0;
  double system_seconds = 0;
};

class ChildProcess {
 public:
  struct Options {
    std::vector<std::string> env_overrides;  // "NAME=value", added to (or replacing in) our environment
    bool capture_stderr = true;              // else stderr is inherited
    std::string stdin_file;                  // when set, stdin is this file instead of a pipe
    std::string cwd;
  };

  // Starts `argv[0]` (looked up in PATH when it has no slash). Throws std::runtime_error on failure.
  ChildProcess(const std::vector<std::string>& argv, Options options);
  explicit ChildProcess(const std::vector<std::string>& argv) : ChildProcess(argv, Options{}) {}
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();  // kills (SIGKILL) and reaps the child if it is still running

  pid_t pid() const noexcept { return pid_; }

  // Writes all of `bytes` to the child's stdin (false when the pipe is closed). write and close_stdin
  // touch only stdin, so one thread may feed the child while another reads it (see bench/).
  bool write(std::string_view bytes);
  void close_stdin();

  // The next line of stdout without its '\n', or nothing on timeout or end of output.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  // Everything the child writes to stdout until it closes it (or the timeout passes).
  std::string read_all_stdout(std::chrono::milliseconds timeout);
  // Appends to `out` whatever stdout holds next (buffered bytes, else one read): for benchmarks that
  // split a fast stream into lines themselves, since read_line copies and shifts the buffer per line.
  // False on timeout or end of output.
  bool read_some(std::string& out, std::chrono::milliseconds timeout);
  // Whatever stderr holds so far (non-blocking), accumulated.
  const std::string& stderr_text();

  // The running child's own peak RSS so far (VmHWM of its /proc status, which exec starts afresh), in
  // kB; 0 once it has exited. Unlike max_rss_kb it cannot include our memory.
  long peak_rss_kb() const;

  void signal(int signo);
  // Waits for the child to exit; nothing on timeout.
  std::optional<ExitStatus> wait(std::chrono::milliseconds timeout);

 private:
  bool fill_stdout(std::chrono::milliseconds timeout);
  void drain_stderr();

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::string stdout_buf_;
  std::string stderr_buf_;
  std::optional<ExitStatus> status_;
  long spawner_max_rss_kb_ = 0;
};

}  // namespace agentd::testing
