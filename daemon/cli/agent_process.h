// The agentd child of the `agent` CLI: spawned in a process group of its own (so the terminal's
// Ctrl-C reaches the CLI, which decides what it means), spoken to in newline-delimited JSON-RPC on its
// stdin and stdout, its stderr written to a log file. A reader thread parses agentd's lines into a
// queue the CLI's one thread takes from with a timeout, so it can draw a spinner and notice Ctrl-C.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/types.h>

#include "core/support/json.h"
#include "core/support/json_writer.h"
#include "core/support/result.h"

namespace agentd::daemon::cli {

class AgentProcess {
 public:
  // argv[0] is the agentd program; `log_path` receives its stderr (appended).
  static support::Result<std::unique_ptr<AgentProcess>> spawn(const std::vector<std::string>& argv,
                                                              const std::string& log_path);
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;
  // Closes agentd's stdin (it shuts down on end of input), waits for it a moment, then SIGTERMs it.
  ~AgentProcess();

  // Writes one message; false once agentd is gone.
  bool send(const support::Json& message);
  // A request with a fresh id; returns the id. `params` is a typed protocol struct (protocol/acp),
  // written by its to_json, or a support::Json.
  template <class P>
  std::int64_t request(std::string_view method, const P& params) {
    return request_raw(method, json_text(params));
  }
  template <class P>
  void notify(std::string_view method, const P& params) {
    notify_raw(method, json_text(params));
  }
  template <class R>
  void respond(const support::Json& id, const R& result) {
    respond_raw(id, json_text(result));
  }
  // The same with params or result already written as JSON.
  std::int64_t request_raw(std::string_view method, std::string_view params_json);
  void notify_raw(std::string_view method, std::string_view params_json);
  void respond_raw(const support::Json& id, std::string_view result_json);

  enum class Next { message, timeout, closed };
  // The next message agentd wrote, waiting at most `timeout`.
  Next next(std::chrono::milliseconds timeout, support::Json& out);

 private:
  AgentProcess(pid_t pid, int in_fd, int out_fd);
  void read_loop();
  bool send_line(std::string line);
  template <class T>
  static std::string json_text(const T& value) {
    std::string json;
    support::JsonWriter writer(json);
    writer.value(value);
    return json;
  }

  pid_t pid_;
  int in_fd_;
  int out_fd_;
  std::int64_t next_id_ = 1;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<support::Json> queue_;
  bool closed_ = false;
  std::thread reader_;
};

}  // namespace agentd::daemon::cli
