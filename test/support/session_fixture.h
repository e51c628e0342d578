// agentd in this process (acp_client.h) against the in-process mock model, with one session open in
// <tmp>/work: what the engine's end-to-end tests share. `prepare` fills the workspace before agentd starts; the mock
// plays `exchanges` (the JSON of a mock script's "exchanges" list) in order. Header-only, like agentd_process.h.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/mock_model/mock_model_server.h"
#include "test/support/acp_client.h"
#include "test/support/agentd_process.h"
#include "test/support/temp_dir.h"

namespace agentd::testing {

// A mock exchange that answers with `text` and no tool calls.
inline std::string text_reply(std::string_view name, std::string_view text) {
  support::Json exchange = support::Json::object();
  exchange["name"] = std::string(name);
  support::Json generate = support::Json::object();
  generate["provider"] = "anthropic";
  generate["text"] = std::string(text);
  support::Json usage = support::Json::object();
  usage["input_tokens"] = 100;
  usage["output_tokens"] = 10;
  generate["usage"] = std::move(usage);
  support::Json response = support::Json::object();
  response["generate"] = std::move(generate);
  exchange["response"] = std::move(response);
  return exchange.dump();
}

// agentd in this process, set up as start_agentd_with_mock sets up the binary: its database, HOME and
// config under `dir`, the model anthropic:claude-sonnet-4-5 at `model_url`; `extra_env` after those.
inline std::unique_ptr<AcpClient> start_in_process_with_mock(
    const TempDir& dir, const std::string& model_url,
    const std::vector<std::pair<std::string, std::string>>& extra_env = {}) {
  AcpClient::Options options;
  options.db_path = dir.file("agentd.db");
  options.env = {{"ANTHROPIC_BASE_URL", model_url},
                 {"ANTHROPIC_API_KEY", "test"},
                 {"AGENTD_MODEL", "anthropic:claude-sonnet-4-5"},
                 {"AGENTD_LOG", "warn"},
                 {"HOME", dir.file("home")},
                 {"XDG_CONFIG_HOME", dir.file("config")}};
  options.env.insert(options.env.end(), extra_env.begin(), extra_env.end());
  return std::make_unique<AcpClient>(options);
}

struct SessionFixture {
  TempDir dir;
  std::unique_ptr<mock_model::MockModelServer> mock;
  std::unique_ptr<AcpClient> agentd;
  std::string session;
  int next_id = 10;

  explicit SessionFixture(const std::string& exchanges,
                          const std::function<void(const std::filesystem::path& work)>& prepare = {}) {
    std::filesystem::create_directories(dir.file("work"));
    if (prepare) prepare(dir.file("work"));
    auto script = mock_model::parse_script(*support::parse_json(R"({"exchanges": [)" + exchanges + "]}"), dir.path());
    EXPECT_TRUE(script);
    if (!script) return;
    auto server = mock_model::MockModelServer::start(std::move(*script));
    EXPECT_TRUE(server);
    if (!server) return;
    mock = std::move(*server);
    agentd = start_in_process_with_mock(dir, mock->url());
    request(*agentd, 0, "initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
    support::Json created =
        request(*agentd, 1, "session/new", R"({"cwd":")" + dir.file("work") + R"(","mcpServers":[]})");
    session = created["result"]["sessionId"].is_string() ? created["result"]["sessionId"].as_string() : "";
    EXPECT_FALSE(session.empty()) << created.dump();
  }

  // One prompt; the session/update params that arrive meanwhile go to `updates`, and agentd's requests
  // (permission prompts) to `on_request`, which may answer them.
  support::Json prompt(const std::string& text, std::vector<support::Json>* updates = nullptr,
                       const std::function<void(const support::Json&)>& on_request = {}) {
    support::Json params = support::Json::object();
    params["sessionId"] = session;
    support::Json block = support::Json::object();
    block["type"] = "text";
    block["text"] = text;
    support::Json blocks = support::Json::array();
    blocks.push_back(std::move(block));
    params["prompt"] = std::move(blocks);
    return request(*agentd, next_id++, "session/prompt", params.dump(), [&](const support::Json& m) {
      if (!m["method"].is_string()) return;
      if (m["method"].as_string() == "session/update") {
        if (updates != nullptr) updates->push_back(m["params"]);
      } else if (on_request && m.contains("id")) {
        on_request(m);
      }
    });
  }

  // An extension method of this session (sessionId added).
  support::Json call(std::string_view method, support::Json params) {
    params["sessionId"] = session;
    return request(*agentd, next_id++, method, params.dump());
  }

  // The body agentd sent in model request `i`, as the text of its JSON.
  std::string body(std::size_t i) {
    auto requests = mock->requests();
    EXPECT_GT(requests.size(), i);
    return requests.size() > i ? requests[i]["body"].dump() : std::string();
  }
};

}  // namespace agentd::testing
