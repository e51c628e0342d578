// One file because the supervisor is one protocol: the parent's side (pipes, the report, the clock, the
// kill) and the forked supervisor's async-signal-safe side must be read together. OutputCapture and the
// UTF-8 chunker that it feeds are at the end.
#include "tools/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "core/support/clock.h"
#include "core/support/spawn.h"
#include "tools/environment.h"
#include "tools/sandbox.h"

namespace agentd::tools {
namespace {

namespace asio = boost::asio;
using support::Errc;
using support::SteadyClock;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------------
// UTF-8 boundaries

bool is_continuation(char c) noexcept { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Length of `text` without a multi-byte sequence that is cut off at its end.
std::size_t complete_prefix(std::string_view text) noexcept {
  const std::size_t size = text.size();
  for (std::size_t back = 1; back <= std::min<std::size_t>(4, size); ++back) {
    const auto c = static_cast<unsigned char>(text[size - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back for its lead
    const std::size_t expected = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return expected > back ? size - back : size;
  }
  return size;
}

// Continuation bytes at the start of `text` (at most 3): the rest of a sequence whose lead was cut.
std::size_t leading_continuations(std::string_view text) noexcept {
  std::size_t n = 0;
  while (n < 3 && n < text.size() && is_continuation(text[n])) ++n;
  return n;
}

// ---------------------------------------------------------------------------------------------------
// The supervisor: a forked copy of agentd that never execs, so between fork and _exit it may only make
// async-signal-safe calls (no allocation, no locks, no stdio): another thread of agentd may have held
// any lock at the moment of the fork.

// What the command's child tells the supervisor when it fails before exec.
struct ChildFailure {
  int error = 0;
  char step[64] = {};
};

// The supervisor's messages on the control socket: the program's pid once it is forked, then this.
struct SupervisorReport {
  std::int32_t setup_failed = 0;  // the program never ran: `error` and `step` say why
  std::int32_t wait_status = 0;
  std::int32_t error = 0;
  std::int32_t leftovers = 0;  // descendants reaped after the program itself ended
  std::int32_t killed = 0;     // the kill request came before the program ended
  char step[64] = {};
};

struct Launch {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;  // null: agentd's
  const SandboxPlan* sandbox = nullptr;
  int control_fd = -1;  // the supervisor's end of the socket to agentd
  int output_fd = -1;   // write end of the output pipe
  int null_fd = -1;     // stdin
  int stderr_fd = -1;   // the program's stderr when it is not the output pipe
  long grace_ms = 500;
};

void copy_step(char (&out)[64], const char* step) noexcept {
  std::size_t i = 0;
  for (; step != nullptr && step[i] != '\0' && i + 1 < sizeof out; ++i) out[i] = step[i];
  out[i] = '\0';
}

long monotonic_ms() noexcept {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

bool write_all(int fd, const void* data, std::size_t size) noexcept {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

ssize_t read_full(int fd, void* data, std::size_t size) noexcept {
  char* p = static_cast<char*>(data);
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, p + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(got);
}

// Closes descriptors first..last; before Linux 5.9 (no close_range) one by one, up to a sane bound.
void close_between(unsigned int first, unsigned int last) noexcept {
  if (::syscall(SYS_close_range, first, last, 0) == 0) return;
  for (unsigned int fd = first; fd <= last && fd < 65536; ++fd) ::close(static_cast<int>(fd));
}

// Closes every descriptor from 3 up except `keep` (unsorted, -1 entries ignored): the children must
// not hold agentd's sockets, other runs' pipes, or the database open.
void close_all_except(std::array<int, 5> keep) noexcept {
  std::sort(keep.begin(), keep.end());
  unsigned int next = 3;
  for (int fd : keep) {
    if (fd < static_cast<int>(next)) continue;
    if (static_cast<unsigned int>(fd) > next) close_between(next, static_cast<unsigned int>(fd) - 1);
    next = static_cast<unsigned int>(fd) + 1;
  }
  close_between(next, ~0U);
}

// Parses decimal pids out of `text`, carrying a number cut by the buffer edge in `partial`.
template <class F>
void parse_pids(const char* text, ssize_t size, long& partial, F&& on_pid) noexcept {
  for (ssize_t i = 0; i < size; ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      partial = (partial < 0 ? 0 : partial) * 10 + (c - '0');
    } else if (partial >= 0) {
      on_pid(static_cast<pid_t>(partial));
      partial = -1;
    }
  }
}

// Calls `on_pid` for each child of this (single-threaded) process: from /proc/thread-self/children
// when the kernel has it (CONFIG_PROC_CHILDREN), else by reading every /proc/<pid>/stat.
template <class F>
void for_each_child(F&& on_pid) noexcept {
  alignas(8) char buffer[4096];  // getdents64 records hold 64-bit fields
  int fd = ::open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    long partial = -1;
    ssize_t n = 0;
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0) parse_pids(buffer, n, partial, on_pid);
    if (partial >= 0) on_pid(static_cast<pid_t>(partial));
    ::close(fd);
    return;
  }
  const pid_t self = ::getpid();
  const int proc = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return;
  long n = 0;
  while ((n = ::syscall(SYS_getdents64, proc, buffer, sizeof buffer)) > 0) {
    for (long offset = 0; offset < n;) {
      struct Dirent64 {
        std::uint64_t ino;
        std::int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
      };
      const auto* entry = reinterpret_cast<const Dirent64*>(buffer + offset);
      offset += entry->reclen;
      const char* name = entry->name;
      if (name[0] < '1' || name[0] > '9') continue;
      char path[64] = "/proc/";
      std::size_t len = 6;
      for (const char* p = name; *p != '\0' && len + 6 < sizeof path; ++p) path[len++] = *p;
      std::memcpy(path + len, "/stat", 6);
      const int stat_fd = ::openat(proc, path + 6, O_RDONLY | O_CLOEXEC);
      if (stat_fd < 0) continue;
      char stat[512];
      const ssize_t got = ::read(stat_fd, stat, sizeof stat - 1);
      ::close(stat_fd);
      if (got <= 0) continue;
      stat[got] = '\0';
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so find the last ')'.
      const char* close_paren = std::strrchr(stat, ')');
      if (close_paren == nullptr || close_paren[1] == '\0' || close_paren[2] == '\0') continue;
      long ppid = 0;
      for (const char* p = close_paren + 4; *p >= '0' && *p <= '9'; ++p) ppid = ppid * 10 + (*p - '0');
      if (ppid != self) continue;
      long pid = 0;
      for (const char* p = name; *p >= '0' && *p <= '9'; ++p) pid = pid * 10 + (*p - '0');
      on_pid(static_cast<pid_t>(pid));
    }
  }
  ::close(proc);
}

// What the supervisor knows of the tree below it.
struct Tree {
  pid_t program = 0;  // also its process group id
  bool program_done = false;
  int program_status = 0;
  int reaped_after_program = 0;
  pid_t termed[256] = {};  // fixed: no allocation after a fork
  int termed_count = 0;

  void reaped(pid_t pid, int status) noexcept {
    if (pid == program) {
      program_done = true;
      program_status = status;
    } else if (program_done) {
      ++reaped_after_program;
    }
  }
  // Reaps whatever has exited; false once there is no child left at all.
  bool reap_exited() noexcept {
    for (;;) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        reaped(pid, status);
        continue;
      }
      if (pid < 0 && errno == EINTR) continue;
      return !(pid < 0 && errno == ECHILD);
    }
  }
  // The program's group, and every child of the supervisor: the program while it lives, and every
  // orphan of the tree, whatever group or session it moved to.
  void signal_all(int signo) const noexcept {
    ::kill(-program, signo);
    for_each_child([signo](pid_t pid) { ::kill(pid, signo); });
  }
  // SIGTERM to orphans re-parented here since the last call (the program's own group had it already).
  void term_new_orphans() noexcept {
    for_each_child([this](pid_t pid) {
      for (int i = 0; i < termed_count; ++i) {
        if (termed[i] == pid) return;
      }
      ::kill(pid, SIGTERM);
      ::kill(pid, SIGCONT);
      if (termed_count < static_cast<int>(std::size(termed))) termed[termed_count++] = pid;
    });
  }
  // SIGTERM (and SIGCONT, so a stopped process sees it), `grace_ms` for the tree to go (orphans that
  // appear meanwhile get their SIGTERM too), then SIGKILL from the top down: each killed process's
  // orphans are re-parented here and killed next round, until there is no child left.
  void terminate(long grace_ms) noexcept {
    if (!reap_exited()) return;
    ::kill(-program, SIGTERM);
    ::kill(-program, SIGCONT);
    if (termed_count == 0) termed[termed_count++] = program;  // its group just had the signal
    const long deadline = monotonic_ms() + grace_ms;
    while (true) {
      term_new_orphans();
      if (!reap_exited()) return;
      if (monotonic_ms() >= deadline) break;
      ::poll(nullptr, 0, 5);
    }
    for (;;) {
      signal_all(SIGKILL);
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, 0);
      if (pid > 0) {
        reaped(pid, status);
      } else if (errno != EINTR) {
        return;  // ECHILD: the tree is gone
      }
    }
  }
};

}  // namespace

int kill_leftovers(pid_t program_group) noexcept {
  Tree tree;
  tree.program = program_group;
  tree.program_done = true;
  int reaped = 0;
  for (;;) {
    tree.signal_all(SIGKILL);
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid > 0) {
      ++reaped;
    } else if (errno != EINTR) {
      return reaped;  // ECHILD: nothing is left
    }
  }
}

namespace {

[[noreturn]] void fail_child(int failure_fd, const char* step, int error) noexcept {
  ChildFailure failure;
  failure.error = error;
  copy_step(failure.step, step);
  [[maybe_unused]] const ssize_t ignored = ::write(failure_fd, &failure, sizeof failure);
  ::_exit(127);
}

// The program's side of the second fork: its own group, default signal handling, stdin from /dev/null,
// stdout and stderr into the pipe, nothing else open, the sandbox, exec.
[[noreturn]] void exec_program(const Launch& launch, int failure_fd) noexcept {
  ::setpgid(0, 0);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int signo = 1; signo < NSIG; ++signo) {
    if (signo != SIGKILL && signo != SIGSTOP) ::sigaction(signo, &default_action, nullptr);
  }
  if (::dup2(launch.null_fd, 0) < 0) fail_child(failure_fd, "dup2 stdin", errno);
  if (::dup2(launch.output_fd, 1) < 0) fail_child(failure_fd, "dup2 stdout", errno);  // stdout-ok: the child's
  if (::dup2(launch.stderr_fd >= 0 ? launch.stderr_fd : launch.output_fd, 2) < 0) {
    fail_child(failure_fd, "dup2 stderr", errno);
  }
  close_all_except({failure_fd, launch.sandbox != nullptr ? launch.sandbox->ruleset_fd() : -1, -1, -1, -1});
  if (launch.cwd != nullptr && ::chdir(launch.cwd) != 0) fail_child(failure_fd, "chdir", errno);
  if (launch.sandbox != nullptr) {
    const char* step = "sandbox";
    if (const int error = launch.sandbox->apply_in_child(&step); error != 0) fail_child(failure_fd, step, error);
    // Once more: the sandbox's mounts are seen only by a fresh lookup, and the old cwd could be below one.
    if (launch.cwd != nullptr && ::chdir(launch.cwd) != 0) fail_child(failure_fd, "chdir", errno);
  }
  // After the sandbox: entering a user namespace would clear it. Should the supervisor die (SIGKILL by
  // someone), the program goes with it rather than running on unsupervised.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  ::execve(launch.path, launch.argv, launch.envp);
  fail_child(failure_fd, "execve", errno);
}

[[noreturn]] void finish_supervisor(int control_fd, const SupervisorReport& report) noexcept {
  (void)write_all(control_fd, &report, sizeof report);
  ::_exit(0);
}

[[noreturn]] void run_supervisor(const Launch& launch) noexcept {
  // Its own group, so a ^C meant for agentd's terminal group does not reach it; agentd's signal
  // handlers make no sense here, and a stray SIGTERM must not orphan the tree.
  ::setpgid(0, 0);
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  for (int signo = 1; signo < NSIG; ++signo) {
    if (signo != SIGKILL && signo != SIGSTOP) ::sigaction(signo, &action, nullptr);
  }
  action.sa_handler = SIG_IGN;
  for (int signo : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE}) ::sigaction(signo, &action, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  close_all_except({launch.control_fd, launch.output_fd, launch.null_fd,
                    launch.sandbox != nullptr ? launch.sandbox->ruleset_fd() : -1, launch.stderr_fd});
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

  SupervisorReport report;
  int failure_pipe[2];
  if (::pipe2(failure_pipe, O_CLOEXEC) != 0) {
    report.setup_failed = 1;
    report.error = errno;
    const std::int32_t no_pid = 0;
    (void)write_all(launch.control_fd, &no_pid, sizeof no_pid);
    copy_step(report.step, "pipe2");
    finish_supervisor(launch.control_fd, report);
  }
  const pid_t program = ::fork();
  if (program == 0) exec_program(launch, failure_pipe[1]);
  const int fork_error = errno;
  const std::int32_t pid_record = program > 0 ? program : 0;
  (void)write_all(launch.control_fd, &pid_record, sizeof pid_record);
  if (program < 0) {
    report.setup_failed = 1;
    report.error = fork_error;
    copy_step(report.step, "fork");
    finish_supervisor(launch.control_fd, report);
  }
  ::setpgid(program, program);  // also here: signals to the group must not race the child's own call
  ::close(failure_pipe[1]);
  ::close(launch.output_fd);  // else the pipe never reaches end-of-file
  ::close(launch.null_fd);
  if (launch.stderr_fd >= 0) ::close(launch.stderr_fd);  // the caller's copy is the one it reads

  Tree tree;
  tree.program = program;
  ChildFailure failure;
  const bool exec_failed = read_full(failure_pipe[0], &failure, sizeof failure) == static_cast<ssize_t>(sizeof failure);
  ::close(failure_pipe[0]);
  if (exec_failed) {
    tree.terminate(0);
    report.setup_failed = 1;
    report.error = failure.error;
    std::memcpy(report.step, failure.step, sizeof report.step);
    finish_supervisor(launch.control_fd, report);
  }

  // Wait for the program to end or for agentd to ask for the kill (or to die: end-of-file).
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, program, 0));
  for (;;) {
    pollfd fds[2] = {{launch.control_fd, POLLIN, 0}, {pidfd, POLLIN, 0}};
    // Without pidfds (before Linux 5.3) poll for the exit every 20 ms.
    const int ready = ::poll(fds, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 20);
    if (ready < 0 && errno != EINTR) break;
    (void)tree.reap_exited();
    if (tree.program_done) break;
    if (ready > 0 && fds[0].revents != 0) {
      report.killed = 1;
      break;
    }
  }
  tree.terminate(launch.grace_ms);
  report.wait_status = tree.program_status;
  // After a kill everything went down together; leftovers are what outlived a program that ended.
  report.leftovers = report.killed != 0 ? 0 : tree.reaped_after_program;
  finish_supervisor(launch.control_fd, report);
}

// ---------------------------------------------------------------------------------------------------
// Zombies of runs abandoned mid-way (their coroutine destroyed): reaped at the start of later runs.

std::mutex abandoned_mutex;
std::vector<pid_t> abandoned;  // NOLINT: guarded by abandoned_mutex

void reap_abandoned() {
  std::lock_guard lock(abandoned_mutex);
  std::erase_if(abandoned, [](pid_t pid) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    return r == pid || (r < 0 && errno == ECHILD);
  });
}

// ---------------------------------------------------------------------------------------------------
// agentd's side of a run: three coroutines on the caller's executor share this.

constexpr std::size_t kReadChunk = std::size_t{64} << 10;
// After asking for the kill, how much longer than the grace period the supervisor may take before it
// is killed itself (it is wedged: a process in uninterruptible sleep, say).
constexpr auto kSupervisorSlack = 5s;
// After the report, how long a descendant that somehow still holds the pipe may keep it open.
constexpr auto kDrainAfterReport = 1s;

// Whether the coroutine awaiting run_process was cancelled through Asio (a TaskGroup's cancel_all):
// then our own waits are aborted too, and the run is treated as cancelled.
asio::awaitable<bool> outer_cancelled() {
  const asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
  co_return state.cancelled() != asio::cancellation_type::none;
}

struct Run {
  Run(const asio::any_io_executor& executor, int output_fd, int control_fd, const ProcessOptions& options,
      const OutputCallback& on_output)
      : output(executor, output_fd),
        control(executor, control_fd),
        clock(executor),
        drain(executor),
        options(options),
        on_output(on_output),
        capture(options.capture_head_bytes, options.capture_tail_bytes) {}
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;
  ~Run() {
    if (supervisor_pidfd >= 0) ::close(supervisor_pidfd);
    if (supervisor > 0 && !supervisor_reaped) {
      // Abandoned mid-run: closing the socket tells the supervisor to kill the tree; reap it later.
      control.close();
      std::lock_guard lock(abandoned_mutex);
      abandoned.push_back(supervisor);
    }
  }

  void request_kill(EndedBy why) {
    if (kill_requested_for || reported) return;
    kill_requested_for = why;
    kill_sent = SteadyClock::now();
    const char byte = 'k';
    (void)::send(control.native_handle(), &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    clock.cancel();  // re-armed for the supervisor's deadline
  }

  void deliver(std::string_view bytes) {
    capture.append(bytes);
    const std::string_view chunk = chunker.feed(bytes);
    if (!chunk.empty() && on_output) on_output(chunk);
  }

  asio::posix::stream_descriptor output;
  asio::posix::stream_descriptor control;
  asio::steady_timer clock;
  asio::steady_timer drain;
  const ProcessOptions& options;
  const OutputCallback& on_output;
  OutputCapture capture;
  Utf8Chunker chunker;
  SteadyClock::time_point started = SteadyClock::now();
  SteadyClock::time_point finished;
  pid_t supervisor = -1;
  int supervisor_pidfd = -1;
  bool supervisor_reaped = false;
  pid_t program = 0;
  std::optional<EndedBy> kill_requested_for;
  SteadyClock::time_point kill_sent;
  bool reported = false;         // the control socket is done: report read, or end-of-file
  bool report_complete = false;  // ... and it held a whole report
  SupervisorReport report;
  bool output_done = false;
  bool output_abandoned = false;
};

// The three below run as children of one parallel group, each its own Asio "thread": an aborted wait
// is then handled (as a cancellation) instead of thrown, so none of them leaves the others hanging.
asio::awaitable<void> pump_output(Run& run) {
  co_await asio::this_coro::throw_if_cancelled(false);
  std::unique_ptr<char[]> buffer(new char[kReadChunk]);
  for (;;) {
    auto [ec, n] = co_await run.output.async_read_some(asio::buffer(buffer.get(), kReadChunk),
                                                       asio::as_tuple(asio::use_awaitable));
    if (n > 0) run.deliver(std::string_view(buffer.get(), n));
    if (!ec) continue;
    if (ec == asio::error::operation_aborted && !run.output_abandoned) {
      const bool cancelled = co_await outer_cancelled();
      if (cancelled) run.request_kill(EndedBy::cancelled);
      continue;
    }
    break;  // end of file: every process that held the pipe is gone
  }
  const std::string_view rest = run.chunker.flush();
  if (!rest.empty() && run.on_output) run.on_output(rest);
  run.output_done = true;
  run.drain.cancel();
}

asio::awaitable<void> wait_supervisor_exit(Run& run) {
  if (run.supervisor_pidfd >= 0) {
    asio::posix::stream_descriptor pidfd(run.output.get_executor(), run.supervisor_pidfd);
    run.supervisor_pidfd = -1;  // owned by `pidfd` now
    for (;;) {
      auto [ec] =
          co_await pidfd.async_wait(asio::posix::descriptor_base::wait_read, asio::as_tuple(asio::use_awaitable));
      if (ec != asio::error::operation_aborted) break;
    }
    siginfo_t info{};
    if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd.native_handle()), &info, WEXITED) == 0 ||
        errno == ECHILD) {
      run.supervisor_reaped = true;
    }
  }
  if (!run.supervisor_reaped) {
    // No pidfd: the supervisor closed the socket on its way out, so this wait is short.
    int status = 0;
    while (::waitpid(run.supervisor, &status, 0) < 0 && errno == EINTR) {
    }
    run.supervisor_reaped = true;
  }
}

asio::awaitable<void> read_report(Run& run) {
  co_await asio::this_coro::throw_if_cancelled(false);
  std::array<char, sizeof(std::int32_t) + sizeof(SupervisorReport)> buffer{};
  std::size_t got = 0;
  while (got < buffer.size()) {
    auto [ec, n] = co_await run.control.async_read_some(asio::buffer(buffer.data() + got, buffer.size() - got),
                                                        asio::as_tuple(asio::use_awaitable));
    got += n;
    if (got >= sizeof(std::int32_t) && run.program == 0) {
      std::int32_t pid = 0;
      std::memcpy(&pid, buffer.data(), sizeof pid);
      run.program = pid;
    }
    if (!ec) continue;
    if (ec == asio::error::operation_aborted) {
      const bool cancelled = co_await outer_cancelled();
      if (cancelled) run.request_kill(EndedBy::cancelled);
      continue;
    }
    break;  // end of file before a whole report: the supervisor died
  }
  run.finished = SteadyClock::now();
  if (got == buffer.size()) {
    std::memcpy(&run.report, buffer.data() + sizeof(std::int32_t), sizeof run.report);
    run.report_complete = true;
  }
  run.reported = true;
  run.clock.cancel();
  co_await wait_supervisor_exit(run);
  if (!run.output_done) {
    run.drain.expires_after(kDrainAfterReport);
    // Ended either way: by the deadline, or cancelled by pump_output at end-of-file.
    (void)co_await run.drain.async_wait(asio::as_tuple(asio::use_awaitable));
    if (!run.output_done) {
      run.output_abandoned = true;
      run.output.cancel();
    }
  }
}

// The timeout, then (once a kill was asked for) the supervisor's own deadline.
asio::awaitable<void> watch_clock(Run& run) {
  co_await asio::this_coro::throw_if_cancelled(false);
  while (!run.reported) {
    auto deadline = SteadyClock::time_point::max();
    if (run.kill_requested_for) {
      deadline = run.kill_sent + run.options.kill_grace + kSupervisorSlack;
    } else if (run.options.timeout.count() > 0) {
      deadline = run.started + run.options.timeout;
    }
    run.clock.expires_at(deadline);
    auto [ec] = co_await run.clock.async_wait(asio::as_tuple(asio::use_awaitable));
    if (run.reported) break;
    if (ec) {
      // Re-armed by request_kill, or the awaiting coroutine was cancelled.
      const bool cancelled = co_await outer_cancelled();
      if (cancelled) run.request_kill(EndedBy::cancelled);
      continue;
    }
    if (!run.kill_requested_for) {
      run.request_kill(EndedBy::timeout);
      continue;
    }
    // The supervisor is wedged: kill it and the program's group ourselves. Orphans outside the group
    // then go to init; this is the one path where the tree may not die whole.
    if (run.program > 0) ::kill(-run.program, SIGKILL);
    ::kill(run.supervisor, SIGKILL);
    break;
  }
}

// The program to exec: argv[0] itself when it has a slash, else the first executable of that name in
// the PATH the program will get.
support::Result<std::string> find_program(const std::string& name, const std::vector<std::string>& env) {
  std::string_view path = find_variable(env, "PATH");
  if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
  if (auto found = support::find_in_path(name, path)) return std::move(*found);
  return support::make_error(Errc::not_found, "no program named \"{}\" in PATH", name);
}

support::Error setup_error(const ProcessOptions& options, const SupervisorReport& report) {
  const std::string_view step(report.step, strnlen(report.step, sizeof report.step));
  const std::string reason = std::generic_category().message(report.error);
  Errc code = Errc::io;
  if (step == "execve" || step == "chdir") {
    if (report.error == ENOENT || report.error == ENOTDIR) code = Errc::not_found;
  } else if (step != "fork" && step != "pipe2" && !step.starts_with("dup2")) {
    code = Errc::unavailable;  // a sandbox step
  }
  if (step == "chdir") {
    return support::Error(code, fmt::format("cannot enter {}: {}", options.cwd, reason), report.error);
  }
  return support::Error(code, fmt::format("cannot start {}: {} failed: {}", options.argv[0], step, reason),
                        report.error);
}

}  // namespace

constexpr support::EnumName<EndedBy> kEndedByNames[] = {
    {EndedBy::exit, "exit"},
    {EndedBy::signal, "signal"},
    {EndedBy::timeout, "timeout"},
    {EndedBy::cancelled, "cancelled"},
};
static_assert(support::names_every_value(kEndedByNames, EndedBy::cancelled));

std::span<const support::EnumName<EndedBy>> enum_names(EndedBy) noexcept { return kEndedByNames; }

std::string_view ended_by_name(EndedBy ended_by) noexcept { return support::enum_name(ended_by, "exit"); }

// ---------------------------------------------------------------------------------------------------
// OutputCapture and Utf8Chunker

OutputCapture::OutputCapture(std::size_t head, std::size_t tail) : head_limit_(head), tail_limit_(tail) {}

void OutputCapture::append(std::string_view bytes) {
  total_ += bytes.size();
  if (head_.size() < head_limit_) {
    const std::size_t take = std::min(head_limit_ - head_.size(), bytes.size());
    head_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
  }
  if (bytes.empty() || tail_limit_ == 0) return;
  if (bytes.size() >= tail_limit_) {
    tail_.assign(bytes.substr(bytes.size() - tail_limit_));
    tail_start_ = 0;
    return;
  }
  if (tail_.size() < tail_limit_) {
    const std::size_t take = std::min(tail_limit_ - tail_.size(), bytes.size());
    tail_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
  }
  while (!bytes.empty()) {  // full: overwrite the oldest bytes
    const std::size_t take = std::min(tail_limit_ - tail_start_, bytes.size());
    std::memcpy(tail_.data() + tail_start_, bytes.data(), take);
    tail_start_ = (tail_start_ + take) % tail_limit_;
    bytes.remove_prefix(take);
  }
}

std::uint64_t OutputCapture::dropped_bytes() const {
  const std::uint64_t kept = head_.size() + tail_.size();
  if (total_ == kept) return 0;
  // Whatever the UTF-8 trimming cut from the edges counts as dropped too.
  const std::size_t head_kept = complete_prefix(head_);
  std::string tail = tail_.substr(tail_start_) + tail_.substr(0, tail_start_);
  const std::size_t tail_kept = tail.size() - leading_continuations(tail);
  return total_ - head_kept - tail_kept;
}

std::string OutputCapture::text() const {
  std::string tail = tail_.substr(tail_start_) + tail_.substr(0, tail_start_);
  const std::uint64_t kept = head_.size() + tail.size();
  if (total_ == kept) return head_ + tail;  // nothing dropped: the output is whole
  const std::string_view head = std::string_view(head_).substr(0, complete_prefix(head_));
  const std::string_view rest = std::string_view(tail).substr(leading_continuations(tail));
  const std::uint64_t dropped = total_ - head.size() - rest.size();
  return fmt::format("{}\n[... {} bytes of output omitted ...]\n{}", head, dropped, rest);
}

std::string_view Utf8Chunker::feed(std::string_view bytes) {
  if (held_.empty()) {
    const std::size_t complete = complete_prefix(bytes);
    held_.assign(bytes.substr(complete));
    return bytes.substr(0, complete);
  }
  buffer_.assign(held_);
  buffer_.append(bytes);
  const std::size_t complete = complete_prefix(buffer_);
  held_.assign(std::string_view(buffer_).substr(complete));
  return std::string_view(buffer_).substr(0, complete);
}

std::string_view Utf8Chunker::flush() {
  buffer_.swap(held_);
  held_.clear();
  return buffer_;
}

// ---------------------------------------------------------------------------------------------------
// run_process

asio::awaitable<support::Result<ProcessResult>> run_process(const ProcessOptions& options,
                                                            const OutputCallback& on_output,
                                                            const support::CancelToken& cancel) {
  reap_abandoned();
  if (cancel.cancelled()) co_return support::Error(Errc::cancelled, "cancelled before the process started");
  if (options.argv.empty()) co_return support::Error(Errc::invalid_argument, "no program to run");
  auto program_path = find_program(options.argv[0], options.env);
  if (!program_path) co_return std::move(program_path).error();

  // Everything the children need is built now: after the fork they may not allocate.
  std::vector<char*> argv;
  argv.reserve(options.argv.size() + 1);
  for (const auto& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(options.env.size() + 1);
  for (const auto& entry : options.env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  const int null_fd =
      options.stdin_fd >= 0 ? ::fcntl(options.stdin_fd, F_DUPFD_CLOEXEC, 3) : ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) co_return support::make_error(Errc::io, "opening the program's stdin: {}", std::strerror(errno));
  int output_pipe[2];
  if (::pipe2(output_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(null_fd);
    co_return support::make_error(Errc::io, "creating the output pipe: {}", std::strerror(error));
  }
  int control[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control) != 0) {
    const int error = errno;
    for (int fd : {null_fd, output_pipe[0], output_pipe[1]}) ::close(fd);
    co_return support::make_error(Errc::io, "creating the control socket: {}", std::strerror(error));
  }

  Launch launch;
  launch.path = program_path->c_str();
  launch.argv = argv.data();
  launch.envp = envp.data();
  launch.cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  launch.sandbox = options.sandbox;
  launch.control_fd = control[1];
  launch.output_fd = output_pipe[1];
  launch.null_fd = null_fd;
  launch.stderr_fd = options.stderr_fd;
  launch.grace_ms = static_cast<long>(options.kill_grace.count());

  auto executor = co_await asio::this_coro::executor;
  auto run = std::make_shared<Run>(executor, output_pipe[0], control[0], options, on_output);
  const pid_t supervisor = ::fork();
  if (supervisor == 0) run_supervisor(launch);
  const int fork_error = errno;
  for (int fd : {null_fd, output_pipe[1], control[1]}) ::close(fd);
  if (supervisor < 0) co_return support::make_error(Errc::io, "fork: {}", std::strerror(fork_error));
  run->supervisor = supervisor;
  run->supervisor_pidfd = static_cast<int>(::syscall(SYS_pidfd_open, supervisor, 0));

  // The token's callback may run on any thread: hop onto the run's executor before touching it.
  support::CancelRegistration on_cancel = cancel.on_cancel([weak = std::weak_ptr<Run>(run), executor] {
    asio::post(executor, [weak] {
      if (auto alive = weak.lock()) alive->request_kill(EndedBy::cancelled);
    });
  });

  {
    using namespace asio::experimental::awaitable_operators;
    // Named first: GCC 12 mishandles class prvalues passed by value to a coroutine (operator&& is one).
    auto pump = pump_output(*run);
    auto report = read_report(*run);
    auto clock = watch_clock(*run);
    co_await (std::move(pump) && std::move(report) && std::move(clock));
  }
  on_cancel.reset();

  if (!run->report_complete) {
    if (!run->kill_requested_for) {
      co_return support::Error(Errc::internal, "the process supervisor ended without a report");
    }
  } else if (run->report.setup_failed != 0) {
    co_return setup_error(options, run->report);
  }

  ProcessResult result;
  result.pid = run->program;
  const int status = run->report.wait_status;
  if (!run->report_complete) {
    result.signal = SIGKILL;  // the wedged-supervisor path: we killed everything ourselves
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  if (run->kill_requested_for && (!run->report_complete || run->report.killed != 0)) {
    result.ended_by = *run->kill_requested_for;
  } else {
    result.ended_by = result.signal != 0 ? EndedBy::signal : EndedBy::exit;
  }
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(run->finished - run->started);
  result.output = run->capture.text();
  result.output_bytes = run->capture.total_bytes();
  result.truncated_bytes = run->capture.dropped_bytes();
  result.leftover_processes = run->report.leftovers;
  co_return result;
}

}  // namespace agentd::tools
