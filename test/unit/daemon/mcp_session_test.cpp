// MCP servers in sessions, end to end over the real binary and the mock model: a server offered in
// session/new and one from the project's config are started, their tools reach the model as
// mcp__<server>__<tool> and run through the same call path as builtin tools, /mcp shows them, a server
// that crashes twice is reported to the model and the client once, a Streamable HTTP server offered by
// the client works the same, and unsupported transports are refused.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/support/child_process.h"
#include "test/support/session_fixture.h"
#include "test/unit/verify/verify_test_util.h"

namespace agentd {
namespace {

namespace fs = std::filesystem;
using support::Json;
using ::testing::HasSubstr;

std::string fake_server() { return std::string(AGENTD_SOURCE_DIR) + "/test/fixtures/mcp/fake_server.py"; }

std::string tool_reply(std::string_view name, std::string_view tool, std::string_view input_json) {
  return fmt::format(R"({{"name": "{}", "response": {{"generate": {{"provider": "anthropic", "text": "Calling.",
     "tool_calls": [{{"id": "toolu_{}", "name": "{}", "input": {}}}]}}}}}})",
                     name, name, tool, input_json);
}

// A session whose project config names the `fake` server (mode `mode`) and allows every call.
struct McpFixture {
  std::string python = tools::verify::testing::find_program("python3");
  std::unique_ptr<testing::SessionFixture> f;

  McpFixture(const std::string& exchanges, std::string_view mode) {
    if (python.empty()) return;
    Json config = Json::object();
    config["mode"] = "bypass";
    Json server = Json::object();
    server["command"] = python;
    Json args = Json::array();
    args.push_back(fake_server());
    args.push_back(std::string(mode));
    server["args"] = std::move(args);
    Json servers = Json::object();
    servers["fake"] = std::move(server);
    config["mcpServers"] = std::move(servers);
    // The user's own config (XDG_CONFIG_HOME is <dir>/config): a project's servers need trust first.
    f = std::make_unique<testing::SessionFixture>(exchanges, [text = config.dump()](const fs::path& work) {
      fs::create_directories(work / "../config/agentd");
      std::ofstream(work / "../config/agentd/config.json") << text;
    });
  }
};

std::string agent_text(const std::vector<Json>& updates) {
  std::string text;
  for (const Json& u : updates) {
    if (u["update"]["sessionUpdate"].is_string() && u["update"]["sessionUpdate"].as_string() == "agent_message_chunk")
      text += u["update"]["content"]["text"].as_string();
  }
  return text;
}

TEST(McpSession, ConfiguredServerToolsReachTheModelAndRun) {
  McpFixture m(
      tool_reply("call", "mcp__fake__echo", R"({"text": "hello"})") + "," + testing::text_reply("done", "Echoed."),
      "normal");
  if (m.python.empty()) GTEST_SKIP() << "python3 is not installed";
  testing::SessionFixture& f = *m.f;
  std::vector<Json> updates;
  Json answer = f.prompt("echo hello", &updates);
  EXPECT_EQ(answer["result"]["stopReason"].as_string(), "end_turn") << answer.dump();
  // The first request offered the server's tools beside the builtin ones.
  EXPECT_THAT(f.body(0), HasSubstr(R"("name":"mcp__fake__echo")"));
  EXPECT_THAT(f.body(0), HasSubstr(R"("name":"read_file")"));
  // The call ran on the server; its answer went back to the model.
  EXPECT_THAT(f.body(1), HasSubstr("echo: hello"));
  bool titled = false;
  for (const Json& u : updates)
    titled |= u["update"]["title"].is_string() && u["update"]["title"].as_string() == "fake: echo";
  EXPECT_TRUE(titled) << "the client sees the call titled <server>: <tool>";
  // The trace has the call's span like any tool's.
  Json trace = f.call("_agentd/trace/get", Json::object());
  EXPECT_THAT(trace.dump(), HasSubstr("tool.mcp__fake__echo"));

  std::vector<Json> listing;
  f.prompt("/mcp", &listing);
  const std::string text = agent_text(listing);
  EXPECT_THAT(text, HasSubstr("fake: ready (fake-normal 1.0, protocol 2025-11-25)"));
  EXPECT_THAT(text, HasSubstr("mcp__fake__echo"));
}

TEST(McpSession, ServersOfferedInSessionNewStartToo) {
  const std::string python = tools::verify::testing::find_program("python3");
  if (python.empty()) GTEST_SKIP() << "python3 is not installed";
  testing::SessionFixture f(testing::text_reply("hi", "Hello."));
  Json params = Json::object();
  params["cwd"] = f.dir.file("work");
  Json server = Json::object();
  server["name"] = "client-side";
  server["command"] = python;
  Json args = Json::array();
  args.push_back(fake_server());
  args.push_back("paging");
  server["args"] = std::move(args);
  server["env"] = Json::array();
  Json servers = Json::array();
  servers.push_back(std::move(server));
  params["mcpServers"] = std::move(servers);
  Json created = testing::request(*f.agentd, 5, "session/new", params.dump());
  ASSERT_TRUE(created["result"]["sessionId"].is_string()) << created.dump();
  f.session = created["result"]["sessionId"].as_string();
  // A turn waits for a server still starting, so its first request has the server's tools.
  EXPECT_EQ(f.prompt("hi")["result"]["stopReason"].as_string(), "end_turn");
  EXPECT_THAT(f.body(0), HasSubstr("mcp__client-side__echo"));
  EXPECT_THAT(f.body(0), HasSubstr("mcp__client-side__with_dot"));
  std::vector<Json> listing;
  f.prompt("/mcp", &listing);
  const std::string text = agent_text(listing);
  EXPECT_THAT(text, HasSubstr("client-side: ready"));
  EXPECT_THAT(text, HasSubstr("mcp__client-side__"));

  // The old HTTP+SSE transport is not supported (initialize says so): refused, not ignored.
  const std::string sse =
      R"({"cwd":")" + f.dir.file("work") +
      R"(","mcpServers":[{"type":"sse","name":"web","url":"https://example.com/sse","headers":[]}]})";
  Json refused = testing::request(*f.agentd, 6, "session/new", sse);
  ASSERT_TRUE(refused.contains("error")) << refused.dump();
  EXPECT_EQ(refused["error"]["code"].as_int64(), -32602);
  EXPECT_THAT(refused["error"]["message"].as_string(), HasSubstr("the old HTTP+SSE transport is not supported"));
  const std::string bad_url = R"({"cwd":")" + f.dir.file("work") +
                              R"(","mcpServers":[{"type":"http","name":"web","url":"example.com/mcp","headers":[]}]})";
  Json bad = testing::request(*f.agentd, 7, "session/new", bad_url);
  ASSERT_TRUE(bad.contains("error")) << bad.dump();
  EXPECT_EQ(bad["error"]["code"].as_int64(), -32602);
}

// A Streamable HTTP server offered in session/new (test/fixtures/mcp/http_server.mjs, with a bearer
// token in its headers): advertised in initialize, its tools reach the model and a call runs.
TEST(McpSession, AnHttpServerOfferedBySessionNew) {
  if (::system("node --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "node is not installed";
  testing::ChildProcess server(
      {"node", std::string(AGENTD_SOURCE_DIR) + "/test/fixtures/mcp/http_server.mjs", "tok-9"});
  auto line = server.read_line(std::chrono::seconds(15));
  ASSERT_TRUE(line && line->starts_with("PORT ")) << server.stderr_text();
  const std::string url = "http://127.0.0.1:" + line->substr(5) + "/mcp";
  testing::SessionFixture f(tool_reply("call", "mcp__remote__whoami", "{}") + "," +
                            R"({"name": "after", "expect": {"body_contains": ["call 1"]},
                                "response": {"generate": {"provider": "anthropic", "text": "Done."}}})");
  Json init = testing::request(*f.agentd, 4, "initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  EXPECT_EQ(init["result"]["agentCapabilities"]["mcpCapabilities"]["http"], Json(true)) << init.dump();
  Json created = testing::request(*f.agentd, 5, "session/new",
                                  R"({"cwd":")" + f.dir.file("work") +
                                      R"(","mcpServers":[{"type":"http","name":"remote","url":")" + url +
                                      R"(","headers":[{"name":"Authorization","value":"Bearer tok-9"}]}]})");
  ASSERT_TRUE(created["result"]["sessionId"].is_string()) << created.dump();
  f.session = created["result"]["sessionId"].as_string();
  testing::request(*f.agentd, 6, "session/set_mode", R"({"sessionId":")" + f.session + R"(","modeId":"bypass"})");
  Json answer = f.prompt("who answers?");
  EXPECT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
  EXPECT_THAT(f.body(0), HasSubstr("mcp__remote__whoami"));
  EXPECT_THAT(f.body(1), HasSubstr("call 1"));
}

TEST(McpSession, AServerThatKeepsCrashingIsReportedOnce) {
  McpFixture m(tool_reply("c1", "mcp__fake__crash", "{}") + "," + testing::text_reply("d1", "It crashed.") + "," +
                   tool_reply("c2", "mcp__fake__crash", "{}") + "," + testing::text_reply("d2", "Again.") + "," +
                   testing::text_reply("d3", "Without it, then."),
               "crash");
  if (m.python.empty()) GTEST_SKIP() << "python3 is not installed";
  testing::SessionFixture& f = *m.f;
  EXPECT_EQ(f.prompt("crash it")["result"]["stopReason"].as_string(), "end_turn");
  EXPECT_THAT(f.body(1), HasSubstr("\"is_error\":true"));
  // After the first crash it was restarted: the second turn still has the tool.
  EXPECT_EQ(f.prompt("once more")["result"]["stopReason"].as_string(), "end_turn");
  EXPECT_THAT(f.body(2), HasSubstr("mcp__fake__crash"));
  // The second crash is the last: the next turn tells the model and the client, once.
  std::vector<Json> updates;
  EXPECT_EQ(f.prompt("go on", &updates)["result"]["stopReason"].as_string(), "end_turn");
  EXPECT_THAT(agent_text(updates), HasSubstr(R"(MCP server "fake" is unavailable)"));
  const std::string fifth = f.body(4);
  EXPECT_THAT(fifth, HasSubstr("is unavailable"));
  EXPECT_THAT(fifth, ::testing::Not(HasSubstr(R"({"name":"mcp__fake__echo")"))) << "its tools are gone";
}

}  // namespace
}  // namespace agentd
