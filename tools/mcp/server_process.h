// The child process behind one MCP stdio server: spawned in a process group of its own with pipes on
// stdin, stdout and stderr, a secret-free environment plus the configured variables, and signals to
// the whole group. Reaping goes through a pidfd, so the loop never blocks and no zombie is left.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <sys/types.h>

#include "core/support/result.h"

namespace agentd::tools::mcp {

struct ServerConfig;

// The environment a server gets: agentd's, scrubbed of secrets (tools/environment.h), then the
// configured variables, which may put back what the server needs (a token the user gave it).
std::vector<std::string> server_environment(const std::vector<std::pair<std::string, std::string>>& env);

// "exit code 3", "killed by signal 9 (Killed)"
std::string describe_wait_status(int wait_status);

class ServerProcess {
 public:
  // Starts the program. Errors: Errc::not_found (no such program or cwd), Errc::io (spawn failed).
  static support::Result<std::unique_ptr<ServerProcess>> spawn(const boost::asio::any_io_executor& executor,
                                                               const ServerConfig& config);
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  // Kills the group and reaps the program if that has not happened yet (blocking, but after SIGKILL).
  ~ServerProcess();

  pid_t pid() const noexcept { return pid_; }
  boost::asio::posix::stream_descriptor& stdin_pipe() { return stdin_; }
  boost::asio::posix::stream_descriptor& stdout_pipe() { return stdout_; }
  boost::asio::posix::stream_descriptor& stderr_pipe() { return stderr_; }

  // Completes when the program has exited and been reaped; returns its wait status.
  boost::asio::awaitable<int> wait_exit();
  bool reaped() const noexcept { return reaped_; }
  int wait_status() const noexcept { return wait_status_; }

  // Signals the whole group (the program and whatever it started that stayed in the group).
  void signal_group(int signo) const noexcept;
  void close_stdin();

 private:
  ServerProcess(const boost::asio::any_io_executor& executor, pid_t pid, int in_fd, int out_fd, int err_fd);
  bool try_reap() noexcept;

  boost::asio::any_io_executor executor_;
  pid_t pid_;
  boost::asio::posix::stream_descriptor stdin_;
  boost::asio::posix::stream_descriptor stdout_;
  boost::asio::posix::stream_descriptor stderr_;
  int pidfd_ = -1;
  bool reaped_ = false;
  int wait_status_ = 0;
};

}  // namespace agentd::tools::mcp
