// The process runner under the shell tool, the verification commands and agentd's own git
// (core/context): runs a program in a process group of its own, streams its merged stdout and stderr as
// it comes, keeps a capped capture (head and tail), enforces a timeout, and on timeout or cancellation
// kills the whole process tree, including descendants that left the group (setsid, double-forked
// daemons). Never blocks the loop.
//
// How the tree is found: each run has a supervisor, a forked copy of agentd that never execs. It makes
// itself a child subreaper (PR_SET_CHILD_SUBREAPER), so every orphan below it, whatever its session or
// group, is re-parented to it rather than to init; it kills top-down and reaps until it has no child
// left, then reports. Unlike a PID namespace or a cgroup this needs no privilege and no user
// namespace, and unlike making agentd itself the subreaper it tells which orphan belongs to which run.
// A process can still escape by asking another service to start it (systemd-run, at, a D-Bus daemon).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <sys/types.h>

#include "core/support/cancel.h"
#include "core/support/enum_names.h"
#include "core/support/result.h"

namespace agentd::tools {

class SandboxPlan;  // tools/sandbox.h

// How a run ended: the program exited, a signal killed it (not ours), or we killed it.
enum class EndedBy { exit, signal, timeout, cancelled };
std::string_view ended_by_name(EndedBy ended_by) noexcept;
std::span<const support::EnumName<EndedBy>> enum_names(EndedBy) noexcept;

// The captured output: the first `head` bytes and the last `tail` bytes, with how much was dropped in
// between, so memory stays bounded however much a command prints. Cuts keep UTF-8 sequences whole.
class OutputCapture {
 public:
  OutputCapture(std::size_t head, std::size_t tail);
  void append(std::string_view bytes);
  std::uint64_t total_bytes() const noexcept { return total_; }
  // Bytes of the middle that text() leaves out.
  std::uint64_t dropped_bytes() const;
  // The head, "\n[... N bytes of output omitted ...]\n" when something was dropped, and the tail.
  std::string text() const;

 private:
  std::size_t head_limit_;
  std::size_t tail_limit_;
  std::string head_;
  std::string tail_;  // a ring once full: tail_start_ is where the oldest byte is
  std::size_t tail_start_ = 0;
  std::uint64_t total_ = 0;
};

// Splits a byte stream into chunks that end on UTF-8 sequence boundaries, so a sequence cut by a read
// is delivered whole with the next chunk instead of as two replacement characters.
class Utf8Chunker {
 public:
  // The part of `pending + bytes` that ends on a boundary; keeps up to 3 bytes for the next call.
  std::string_view feed(std::string_view bytes);
  // What is left at the end of the stream (an incomplete sequence: invalid, but it is the output).
  std::string_view flush();

 private:
  std::string buffer_;
  std::string held_;
};

struct ProcessOptions {
  std::vector<std::string> argv;         // argv[0] is a path, or a name looked up in the PATH of `env`
  std::string cwd;                       // empty: agentd's
  std::vector<std::string> env;          // "NAME=value": the whole environment
  std::chrono::milliseconds timeout{0};  // 0: none
  // From SIGTERM to SIGKILL, on timeout or cancellation, and for leftovers after the program exits.
  std::chrono::milliseconds kill_grace{500};
  std::size_t capture_head_bytes = std::size_t{16} << 10;
  std::size_t capture_tail_bytes = std::size_t{16} << 10;
  const SandboxPlan* sandbox = nullptr;  // applied in the child before exec; must outlive the run
  // -1: stderr goes into the output with stdout. Else a descriptor above 2 (a file or memfd the caller
  // reads afterwards) that becomes the program's stderr, for output that must stay parseable (git's).
  int stderr_fd = -1;
  // -1: stdin is /dev/null. Else a readable descriptor (a memfd holding the input, say) that becomes the
  // program's stdin; the runner reads through its own duplicate, so the caller keeps and closes this one.
  int stdin_fd = -1;
};

struct ProcessResult {
  EndedBy ended_by = EndedBy::exit;
  // The program's own end: exit code (or -1), or the signal that killed it (or 0). After a timeout or a
  // cancellation this is usually SIGTERM or SIGKILL, ours.
  int exit_code = -1;
  int signal = 0;
  std::chrono::milliseconds duration{0};
  std::string output;  // capped: see OutputCapture
  std::uint64_t output_bytes = 0;
  std::uint64_t truncated_bytes = 0;
  pid_t pid = 0;  // also the process group id
  // Processes still running after the program ended on its own (background jobs, daemons), all
  // killed. 0 after a timeout or cancellation, which kill everything at once.
  int leftover_processes = 0;
};

// Called on the run's executor with each piece of output as it arrives (UTF-8 boundaries kept).
using OutputCallback = std::function<void(std::string_view)>;

// Runs one program to its end. A cancelled token kills the tree and completes with EndedBy::cancelled
// once it is dead; so does Asio cancellation of the awaiting coroutine. Errors: Errc::not_found when
// the program or the cwd cannot be found, Errc::io for a failed fork or exec, Errc::unavailable when the
// sandbox could not be applied in the child (with the step and errno), Errc::cancelled when the token
// was cancelled before anything started. The arguments are references (co_await the call in the same
// expression): GCC 12 destroys a class prvalue passed by value to a coroutine twice.
// For a child subreaper (PR_SET_CHILD_SUBREAPER) whose program has ended: SIGKILLs the program's group
// and every child left, again for each orphan that comes up, and reaps them until none is left.
// Blocking; returns how many it reaped. agentd sandbox-exec's end, the supervisor's own rule.
int kill_leftovers(pid_t program_group) noexcept;

boost::asio::awaitable<support::Result<ProcessResult>> run_process(const ProcessOptions& options,
                                                                   const OutputCallback& on_output,
                                                                   const support::CancelToken& cancel);

}  // namespace agentd::tools
