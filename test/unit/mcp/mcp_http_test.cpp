// The MCP client over Streamable HTTP: against test/fixtures/mcp/http_server.mjs (a dependency-free
// node server that answers JSON and event streams, checks a bearer token, expires sessions and fails on
// request) and against the reference @modelcontextprotocol/server-everything in its streamableHttp mode.
// Skipped without node (or without the npm packages for the reference server).
#include <stdlib.h>

#include <filesystem>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/support/child_process.h"
#include "test/unit/mcp/mcp_test_util.h"
#include "tools/mcp/http_transport.h"

namespace agentd::tools::mcp {
namespace {

namespace fs = std::filesystem;
using support::Json;
using testing::McpFixture;
using namespace std::chrono_literals;

bool have_node() { return ::system("node --version > /dev/null 2>&1") == 0; }

// A node server that prints "PORT <n>" once it listens (the fixture) or logs it (server-everything).
struct NodeServer {
  std::unique_ptr<agentd::testing::ChildProcess> child;
  int port = 0;
};

std::string fixture_path() { return (fs::path(AGENTD_SOURCE_DIR) / "test/fixtures/mcp/http_server.mjs").string(); }

NodeServer start_fixture(const std::string& token, const std::string& mode = "") {
  NodeServer server;
  std::vector<std::string> argv{"node", fixture_path(), token};
  if (!mode.empty()) argv.push_back(mode);
  server.child = std::make_unique<agentd::testing::ChildProcess>(argv);
  auto line = server.child->read_line(15s);
  EXPECT_TRUE(line && line->starts_with("PORT ")) << (line ? *line : "(nothing)") << server.child->stderr_text();
  if (line && line->starts_with("PORT ")) server.port = std::stoi(line->substr(5));
  return server;
}

// GET /log of the fixture, through the same HTTP client the transport uses.
class McpHttpTest : public McpFixture {
 protected:
  Json server_log(int port) {
    auto http = net::HttpClient::create(io_.get_executor(), {});
    EXPECT_TRUE(http);
    std::string body;
    auto fetch = [&]() -> boost::asio::awaitable<bool> {
      net::HttpRequest request;
      request.method = "GET";
      request.url = "http://127.0.0.1:" + std::to_string(port) + "/log";
      auto sent = co_await (*http)->send(std::move(request), [&](std::string_view chunk) {
        body.append(chunk);
        return net::BodyAction::more;
      });
      co_await (*http)->shutdown();
      co_return sent && sent->ok_status();
    };
    auto ok = run(fetch());
    EXPECT_TRUE(ok && *ok);
    auto parsed = support::parse_json(body);
    return parsed ? *parsed : Json();
  }

  static ServerConfig http_server(int port) {
    ServerConfig config;
    config.name = "remote";
    config.url = "http://127.0.0.1:" + std::to_string(port) + "/mcp";
    config.headers = {{"Authorization", "Bearer ${AGENTD_TEST_MCP_TOKEN}"}};
    return config;
  }
};

TEST(McpHttpHeaders, VariablesAreExpandedAndAMissingOneIsNamed) {
  const auto lookup = [](const char* name) -> const char* {
    return std::string_view(name) == "TOKEN" ? "s3cret" : nullptr;
  };
  EXPECT_EQ(*expand_header_value("Bearer ${TOKEN}", lookup), "Bearer s3cret");
  EXPECT_EQ(*expand_header_value("plain", lookup), "plain");
  EXPECT_EQ(*expand_header_value("${TOKEN}-${TOKEN}", lookup), "s3cret-s3cret");
  EXPECT_EQ(*expand_header_value("unclosed ${TOKEN", lookup), "unclosed ${TOKEN");
  auto missing = expand_header_value("Bearer ${GITHUB_TOKEN}", lookup);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("${GITHUB_TOKEN}"), std::string::npos) << missing.error().message();
}

TEST_F(McpHttpTest, SessionsToolsErrorsAndExpiry) {
  if (!have_node()) GTEST_SKIP() << "node is not installed";
  NodeServer server = start_fixture("tok-123");
  ASSERT_NE(server.port, 0);
  ::setenv("AGENTD_TEST_MCP_TOKEN", "tok-123", 1);
  ClientOptions options;
  options.restart_backoff = 50ms;
  start({http_server(server.port)}, options);
  wait_ready(20s);
  ServerStatus s = status();
  ASSERT_EQ(s.state, ServerState::ready) << s.error;
  EXPECT_EQ(s.protocol_version, "2025-11-25");
  EXPECT_EQ(s.server_info, "fixture 1.0");
  EXPECT_EQ(s.tools.size(), 5U);

  // A JSON answer; the session id and the negotiated version went with every request after initialize.
  auto who = call("mcp__remote__whoami");
  ASSERT_TRUE(who && *who);
  EXPECT_TRUE((*who)->ok) << (*who)->content;
  Json log = server_log(server.port);
  ASSERT_EQ(log["initialized"].size(), 1U) << log.dump();
  const std::string first_session = log["initialized"].as_array()[0].as_string();
  EXPECT_NE((*who)->content.find("session " + first_session + " call 1"), std::string::npos) << (*who)->content;
  for (const Json& version : log["protocolVersions"].as_array()) EXPECT_EQ(version, Json("2025-11-25")) << log.dump();
  EXPECT_GE(log["gets"].as_int64(), 1) << "the GET stream was tried (405 here)";

  // An event stream with progress before the answer.
  std::vector<std::string> progress;
  ToolContext context;
  context.progress = [&](std::string_view text) { progress.emplace_back(text); };
  auto slow = call("mcp__remote__slow", Json::object(), context);
  ASSERT_TRUE(slow && *slow);
  EXPECT_TRUE((*slow)->ok) << (*slow)->content;
  ASSERT_EQ(progress.size(), 1U);
  EXPECT_EQ(progress[0], "progress 1/2: half");

  // A stream that closes before the answer is resumed by a GET with its Last-Event-ID (SEP-1699).
  auto resumed = call("mcp__remote__resumable");
  ASSERT_TRUE(resumed && *resumed);
  EXPECT_TRUE((*resumed)->ok) << (*resumed)->content;
  EXPECT_NE((*resumed)->content.find("session " + first_session + " call 3"), std::string::npos) << (*resumed)->content;
  EXPECT_EQ(server_log(server.port)["lastEventIds"], support::parse_json(R"(["r-1"])").value());

  // HTTP 500: a failed call the model can read, and the server stays usable.
  auto failed = call("mcp__remote__fail");
  ASSERT_TRUE(failed && *failed);
  EXPECT_FALSE((*failed)->ok);
  EXPECT_NE((*failed)->content.find("HTTP 500: boom"), std::string::npos) << (*failed)->content;
  EXPECT_EQ(status().state, ServerState::ready);

  // The server forgets the session (404): the call fails, and agentd opens a new session.
  auto expired = call("mcp__remote__expire");
  ASSERT_TRUE(expired && *expired);
  EXPECT_FALSE((*expired)->ok);
  ASSERT_TRUE(run_until([&] { return status().state == ServerState::ready && status().restarts == 1; }, 20s))
      << status().error;
  auto again = call("mcp__remote__whoami");
  ASSERT_TRUE(again && *again);
  EXPECT_TRUE((*again)->ok) << (*again)->content;
  log = server_log(server.port);
  ASSERT_EQ(log["initialized"].size(), 2U) << log.dump();
  const std::string second_session = log["initialized"].as_array()[1].as_string();
  EXPECT_NE((*again)->content.find("session " + second_session), std::string::npos) << (*again)->content;
  EXPECT_EQ(log["unauthorized"], Json(0));

  // Shutting down deletes the live session on the server.
  run_void(manager_->shutdown());
  log = server_log(server.port);
  ASSERT_EQ(log["deleted"].size(), 1U) << log.dump();
  EXPECT_EQ(log["deleted"].as_array()[0], Json(second_session));
  EXPECT_EQ(status().state, ServerState::stopped);
}

TEST_F(McpHttpTest, AWrongOrMissingTokenFailsTheServerWithAClearReason) {
  if (!have_node()) GTEST_SKIP() << "node is not installed";
  NodeServer server = start_fixture("right");
  ASSERT_NE(server.port, 0);
  ::setenv("AGENTD_TEST_MCP_TOKEN", "wrong", 1);
  start({http_server(server.port)});
  wait_ready(20s);
  ServerStatus s = status();
  EXPECT_EQ(s.state, ServerState::failed);
  EXPECT_NE(s.error.find("HTTP 401"), std::string::npos) << s.error;

  run_void(manager_->shutdown());
  ::unsetenv("AGENTD_TEST_MCP_TOKEN");
  start({http_server(server.port)});
  wait_ready(20s);
  s = status();
  EXPECT_EQ(s.state, ServerState::failed);
  EXPECT_NE(s.error.find("${AGENTD_TEST_MCP_TOKEN}"), std::string::npos) << s.error;
}

// A server of the stateless 2026-07-28 revision refuses initialize: agentd asks server/discover and
// speaks that revision on this connection (the version and capabilities in every request's _meta, which
// the fixture insists on; no session; the routing headers).
TEST_F(McpHttpTest, AStatelessServerIsSpokenToInItsRevision) {
  if (!have_node()) GTEST_SKIP() << "node is not installed";
  NodeServer server = start_fixture("", "stateless");
  ASSERT_NE(server.port, 0);
  ServerConfig config;
  config.name = "modern";
  config.url = "http://127.0.0.1:" + std::to_string(server.port) + "/mcp";
  start({config});
  wait_ready(20s);
  const ServerStatus s = status();
  ASSERT_EQ(s.state, ServerState::ready) << s.error;
  EXPECT_EQ(s.protocol_version, "2026-07-28");
  EXPECT_EQ(s.server_info, "stateless-fixture 2.0");
  EXPECT_EQ(s.tools.size(), 5U);
  auto who = call("mcp__modern__whoami");
  ASSERT_TRUE(who && *who);
  EXPECT_TRUE((*who)->ok) << (*who)->content;
  EXPECT_NE((*who)->content.find("stateless whoami"), std::string::npos) << (*who)->content;
  const Json log = server_log(server.port);
  EXPECT_EQ(log["initialized"].size(), 0U);
  EXPECT_EQ(log["gets"], Json(0)) << "the revision has no GET stream";
  const auto& methods = log["methods"].as_array();
  ASSERT_EQ(methods.size(), 4U) << log.dump();
  EXPECT_EQ(methods[1], Json("server/discover"));
  EXPECT_EQ(methods[3], Json("tools/call"));
  for (const Json& version : log["protocolVersions"].as_array()) EXPECT_EQ(version, Json("2026-07-28"));
}

TEST_F(McpHttpTest, NothingListensThere) {
  ServerConfig config;
  config.name = "gone";
  config.url = "http://127.0.0.1:9/mcp";  // discard: nothing answers
  start({config});
  wait_ready(20s);
  const ServerStatus s = status();
  EXPECT_EQ(s.state, ServerState::failed);
  EXPECT_NE(s.error.find("could not be reached"), std::string::npos) << s.error;
}

// The reference server in its Streamable HTTP mode (express, the official SDK's transport).
TEST_F(McpHttpTest, EverythingOverStreamableHttp) {
  const fs::path entry = fs::path(AGENTD_SOURCE_DIR) /
                         "test/conformance/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
  if (!have_node() || !fs::exists(entry)) {
    GTEST_SKIP() << "@modelcontextprotocol/server-everything is not installed: run `npm ci` in test/conformance";
  }
  // A free port: bound, read, released (the server binds it a moment later).
  int port = 0;
  {
    boost::asio::ip::tcp::acceptor probe(io_, {boost::asio::ip::make_address("127.0.0.1"), 0});
    port = probe.local_endpoint().port();
  }
  agentd::testing::ChildProcess::Options child_options;
  child_options.env_overrides = {"PORT=" + std::to_string(port)};
  agentd::testing::ChildProcess everything({"node", entry.string(), "streamableHttp"}, child_options);
  // It says so on stderr once it listens.
  const auto listening_by = std::chrono::steady_clock::now() + 20s;
  while (everything.stderr_text().find("listening") == std::string::npos &&
         std::chrono::steady_clock::now() < listening_by) {
    run_until([] { return false; }, 50ms);
  }
  ASSERT_NE(everything.stderr_text().find("listening"), std::string::npos) << everything.stderr_text();

  ServerConfig config;
  config.name = "everything";
  config.url = "http://127.0.0.1:" + std::to_string(port) + "/mcp";
  start({config});
  wait_ready(30s);
  const ServerStatus s = status();
  ASSERT_EQ(s.state, ServerState::ready) << s.error;
  EXPECT_EQ(s.protocol_version, "2025-11-25");
  Json echo_input = Json::object();
  echo_input.set("message", "over http");
  auto echo = call("mcp__everything__echo", std::move(echo_input));
  ASSERT_TRUE(echo && *echo);
  EXPECT_TRUE((*echo)->ok) << (*echo)->content;
  EXPECT_NE((*echo)->content.find("over http"), std::string::npos) << (*echo)->content;

  std::vector<std::string> progress;
  ToolContext context;
  context.progress = [&](std::string_view text) { progress.emplace_back(text); };
  Json long_input = Json::object();
  long_input.set("duration", 1);
  long_input.set("steps", 2);
  auto long_run = call("mcp__everything__trigger-long-running-operation", std::move(long_input), context, 30s);
  ASSERT_TRUE(long_run && *long_run);
  EXPECT_TRUE((*long_run)->ok) << (*long_run)->content;
  EXPECT_EQ(progress.size(), 2U) << "progress arrives on the POST's event stream";
  run_void(manager_->shutdown());
  EXPECT_EQ(status().state, ServerState::stopped);
}

}  // namespace
}  // namespace agentd::tools::mcp
