// MockModelServer: a real HTTP/1.1 server on 127.0.0.1 that plays a Script (mock_script.h) in the
// Anthropic Messages and OpenAI Chat Completions streaming formats and records every request. It runs
// on its own io_context thread, so a test can start one in-process; `agentd-mock-model` wraps it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/json.h"
#include "core/support/result.h"
#include "test/mock_model/mock_script.h"

namespace agentd::mock_model {

struct ServerOptions {
  std::uint16_t port = 0;            // 0: the system picks a free port
  std::string record_file;           // when set, every recorded request is appended here as one JSON line
  std::filesystem::path script_dir;  // resolves file references in scripts posted to /_mock/script
  // Called on the server's thread with each piece of a response body just before it is written to the
  // socket: a benchmark timestamps what it sends (latency = received - sent).
  std::function<void(std::string_view piece)> on_body_write;
};

class MockModelServer {
 public:
  // Binds 127.0.0.1:port and starts serving on a new thread.
  static Result<std::unique_ptr<MockModelServer>> start(Script script, ServerOptions options = {});

  MockModelServer(const MockModelServer&) = delete;
  MockModelServer& operator=(const MockModelServer&) = delete;
  ~MockModelServer();  // stop()

  // Closes the listener and every connection (stalled ones included) and joins the thread. Idempotent.
  void stop();

  std::uint16_t port() const noexcept;
  std::string url() const;  // "http://127.0.0.1:PORT"

  // Every non-/_mock request so far, in arrival order: {seq, exchange, connection, name, method, path, target,
  // headers (names lower-cased, credentials redacted), body (JSON) or body_text, expectation_failures}.
  std::vector<support::Json> requests() const;
  // Waits until at least `count` requests have been recorded; false on timeout.
  bool wait_for_requests(std::size_t count, std::chrono::milliseconds timeout) const;
  void clear_requests();

  // Replaces the script and starts it from its first exchange.
  void set_script(Script script);
  // Exchanges answered from the current script (expectation failures included).
  std::size_t exchanges_used() const;

  struct Impl;

 private:
  explicit MockModelServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentd::mock_model
