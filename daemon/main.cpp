// agentd: entry point. Parses options, sets up logging, and hands over to run_daemon().
#include <malloc.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/support/log.h"
#include "core/support/version.h"
#include "daemon/daemon.h"
#include "daemon/options.h"
#include "daemon/sandbox_exec.h"

namespace {

// --help and --version are the only output agentd ever writes outside the protocol stream, and they
// happen before any protocol starts.
void print(int fd, const std::string& text) {
  std::string_view rest = text;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n <= 0) return;
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

// glibc returns freed memory at the top of a heap to the kernel as soon as 128 KiB are free, and adapts
// its mmap threshold as blocks come and go. A turn allocates and frees the same few hundred KiB (request
// bodies, history, SQLite pages) on two threads, so the defaults give the memory back and fault it in
// again on every model call: ~50 page faults per turn, about a tenth of the daemon's CPU. Fixed
// thresholds keep at most a few MiB of slack per arena.
void tune_malloc() {
  mallopt(M_TRIM_THRESHOLD, 4 << 20);
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  namespace log = agentd::support::log;
  tune_malloc();
  log::init_from_env();
  const std::vector<std::string> args(argv + 1, argv + argc);
  // A command run under agentd's sandbox for someone else (an editor's terminal): no daemon at all.
  if (!args.empty() && args[0] == "sandbox-exec") {
    return agentd::daemon::run_sandbox_exec(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  auto options = agentd::daemon::parse_options(args);
  if (!options) {
    print(STDERR_FILENO, "agentd: " + options.error().message() + "\n");
    return 2;
  }
  if (options->show_help) {
    print(STDOUT_FILENO, agentd::daemon::usage_text());  // stdout-ok: before any protocol
    return 0;
  }
  if (options->show_version) {
    print(STDOUT_FILENO, std::string("agentd ") + agentd::support::kVersion + "\n");  // stdout-ok
    return 0;
  }
  if (options->log_file) {
    if (auto r = log::set_file(*options->log_file); !r) {
      print(STDERR_FILENO, "agentd: " + r.error().message() + "\n");
      return 2;
    }
  }
  return agentd::daemon::run_daemon(*options, STDIN_FILENO, STDOUT_FILENO);  // stdout-ok: handed to the transport
}
