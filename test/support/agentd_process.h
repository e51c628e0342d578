// Helpers for tests that drive agentd against the in-process mock model, as the real binary or in this
// process (acp_client.h): start it pointed at a mock server, read its messages as JSON, and make requests
// while collecting the notifications and agent-to-client requests that arrive in between. Header-only:
// AGENTD_BIN is defined per test target (test/CMakeLists.txt).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/support/child_process.h"
#include "test/support/temp_dir.h"

namespace agentd::testing {

// agentd with --db <dir>/agentd.db, its cwd <dir>/work, HOME and config under <dir>, talking to the
// model at `model_url` as anthropic:claude-sonnet-4-5.
inline std::unique_ptr<ChildProcess> start_agentd_with_mock(const TempDir& dir, const std::string& model_url) {
  ChildProcess::Options options;
  options.env_overrides = {"ANTHROPIC_BASE_URL=" + model_url,
                           "ANTHROPIC_API_KEY=test",
                           "AGENTD_MODEL=anthropic:claude-sonnet-4-5",
                           "AGENTD_LOG=warn",
                           "HOME=" + dir.file("home"),
                           "XDG_CONFIG_HOME=" + dir.file("config")};
  options.cwd = dir.file("work");
  return std::make_unique<ChildProcess>(std::vector<std::string>{AGENTD_BIN, "--db", dir.file("agentd.db")}, options);
}

// The next message agentd writes, parsed; null (and a test failure) when none comes within 10 s.
// `Agent` is a ChildProcess (the binary) or an AcpClient (in-process, acp_client.h).
template <class Agent>
support::Json next_message(Agent& agentd) {
  auto line = agentd.read_line(std::chrono::seconds(10));
  EXPECT_TRUE(line) << "agentd wrote nothing; stderr:\n" << agentd.stderr_text();
  if (!line) return {};
  auto json = support::parse_json(*line);
  EXPECT_TRUE(json) << *line;
  return json ? *json : support::Json();
}

// Sends a request and returns its response. Every other message that arrives first is passed to
// `on_other` (notifications, agentd's own requests), which may answer them.
template <class Agent>
support::Json request(Agent& agentd, int id, std::string_view method, const std::string& params,
                      const std::function<void(const support::Json&)>& on_other = {}) {
  EXPECT_TRUE(agentd.write(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + std::string(method) +
                           R"(","params":)" + params + "}\n"));
  for (;;) {
    support::Json m = next_message(agentd);
    if (m.is_null()) return m;
    if (!m.contains("method") && m["id"].is_integer() && m["id"].as_int64() == id) return m;
    if (on_other) on_other(m);
  }
}

}  // namespace agentd::testing
