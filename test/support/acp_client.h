// AcpClient: agentd in this process, for tests of the engine as the daemon wires it. It runs the
// daemon's own Host (storage, engine, ACP binding; daemon/host.h) on an io_context that the test's thread
// drives while it waits for a message, with bytes in and messages out in place of stdin and stdout. Like
// clangd's LSPClient: no process is spawned, so a failure points at a line of agentd, not at a pipe.
//
// It speaks the same shape as ChildProcess (write, read_line, stderr_text, close_stdin), so the helpers
// of agentd_process.h (request, next_message) drive either. Tests of the process itself (signals,
// stdio, crash recovery, the CLI) stay with ChildProcess under test/integration/.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "daemon/host.h"
#include "protocol/framing.h"

namespace agentd::testing {

class AcpClient {
 public:
  struct Options {
    std::string db_path;
    // Set in this process's environment before the engine starts (HOME, XDG_CONFIG_HOME, the model's
    // variables): the engine reads them where the daemon would. Tests run one per process (CTest).
    std::vector<std::pair<std::string, std::string>> env;
  };

  explicit AcpClient(const Options& options);
  // Ends input and shuts down as the daemon does at end of stdin (bounded by its grace periods).
  ~AcpClient();
  AcpClient(const AcpClient&) = delete;
  AcpClient& operator=(const AcpClient&) = delete;

  // Bytes as a client would write them to agentd's stdin (newline-delimited or Content-Length frames).
  bool write(std::string_view bytes);
  // The next message agentd sent, running the engine until one comes or `timeout` passes.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  // What happened to stderr in a process: here the log goes to this test's own stderr.
  std::string stderr_text() const { return "(in-process agentd: its log is above, on the test's stderr)"; }
  // End of input: what the daemon does when stdin closes. Idempotent; the destructor calls it.
  void close_stdin();

  // Runs the engine for `duration` (a test waiting for something other than a message, such as a
  // request reaching the mock model).
  void run_for(std::chrono::milliseconds duration);

  // The daemon's parts, for a test that acts on them directly (its database, say).
  daemon::Host& host() noexcept { return *host_; }

 private:
  std::unique_ptr<daemon::Host> host_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  protocol::FrameDecoder decoder_;
  std::deque<std::string> out_;
  bool closed_ = false;
};

}  // namespace agentd::testing
