// A JSON-RPC client of an agentd child process for the benchmarks that drive several sessions at once:
// requests go out with fresh ids, and the caller reads every message itself (responses and the
// session/update notifications of all sessions arrive interleaved on one pipe).
#pragma once

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/support/json.h"
#include "test/mock_model/mock_model_server.h"
#include "test/support/child_process.h"

namespace agentd::bench {

class RpcClient {
 public:
  explicit RpcClient(testing::ChildProcess& agentd) : agentd_(agentd) {}

  // Sends a request; returns its id.
  int send(std::string_view method, const std::string& params) {
    const int id = next_id_++;
    agentd_.write(fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"{}","params":{}}})", id, method, params) + "\n");
    return id;
  }
  // The next message; throws when agentd goes quiet for a minute.
  support::Json next() {
    auto line = agentd_.read_line(std::chrono::seconds(60));
    if (!line) throw std::runtime_error("agentd stopped answering: " + agentd_.stderr_text());
    auto json = support::parse_json(*line);
    if (!json) throw std::runtime_error("bad JSON from agentd: " + *line);
    return std::move(*json);
  }
  // A request and its response; what arrives meanwhile goes to `other`.
  template <class OnOther>
  support::Json call(std::string_view method, const std::string& params, OnOther&& other) {
    const int id = send(method, params);
    for (;;) {
      support::Json m = next();
      if (is_response(m, id)) return m;
      other(m);
    }
  }
  support::Json call(std::string_view method, const std::string& params) {
    return call(method, params, [](const support::Json&) {});
  }

  static bool is_response(const support::Json& m, int id) {
    return !m["method"].is_string() && m["id"].is_integer() && m["id"].as_int64() == id;
  }
  static std::string prompt_params(const std::string& session, std::string_view text) {
    return fmt::format(R"({{"sessionId":"{}","prompt":[{{"type":"text","text":"{}"}}]}})", session, text);
  }

 private:
  testing::ChildProcess& agentd_;
  int next_id_ = 1;
};

// In an Anthropic Messages request body: how many tool_use blocks of an assistant message the next
// message does not answer with a tool_result (a provider refuses such a request with HTTP 400).
inline long unpaired_tool_calls(const support::Json& body) {
  long unpaired = 0;
  if (!body["messages"].is_array()) return 0;
  const auto& messages = body["messages"].as_array();
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i]["content"].is_array()) continue;
    for (const support::Json& block : messages[i]["content"].as_array()) {
      if (!block["type"].is_string() || block["type"].as_string() != "tool_use") continue;
      bool answered = false;
      if (i + 1 < messages.size() && messages[i + 1]["content"].is_array()) {
        for (const support::Json& reply : messages[i + 1]["content"].as_array()) {
          answered = answered || (reply["type"].is_string() && reply["type"].as_string() == "tool_result" &&
                                  reply["tool_use_id"] == block["id"]);
        }
      }
      if (!answered) ++unpaired;
    }
  }
  return unpaired;
}

// A mock model server playing the script `script_json` (files it names are relative to `dir`); throws
// what went wrong.
inline std::unique_ptr<mock_model::MockModelServer> start_mock(std::string_view script_json,
                                                               const std::filesystem::path& dir,
                                                               mock_model::ServerOptions options = {}) {
  auto parsed = support::parse_json(script_json);
  if (!parsed) throw std::runtime_error("mock script: " + parsed.error().message());
  auto script = mock_model::parse_script(*parsed, dir);
  if (!script) throw std::runtime_error("mock script: " + script.error().message());
  auto mock = mock_model::MockModelServer::start(std::move(*script), std::move(options));
  if (!mock) throw std::runtime_error(mock.error().message());
  return std::move(*mock);
}

// How an agentd child of a benchmark runs: in `cwd`, its HOME and config under `dir` (never the user's),
// talking to the mock at `model_url` as anthropic:claude-sonnet-4-5 (no URL: the config says), logging at
// `log_level`.
inline testing::ChildProcess::Options agentd_options(const std::filesystem::path& dir, const std::filesystem::path& cwd,
                                                     const std::string& model_url, std::string_view log_level) {
  testing::ChildProcess::Options options;
  options.env_overrides = {"ANTHROPIC_API_KEY=bench", "AGENTD_LOG=" + std::string(log_level),
                           "HOME=" + (dir / "home").string(), "XDG_CONFIG_HOME=" + (dir / "cfg").string()};
  if (!model_url.empty()) {
    options.env_overrides.push_back("ANTHROPIC_BASE_URL=" + model_url);
    options.env_overrides.push_back("AGENTD_MODEL=anthropic:claude-sonnet-4-5");
  }
  options.cwd = cwd.string();
  return options;
}

}  // namespace agentd::bench
