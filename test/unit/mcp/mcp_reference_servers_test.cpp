// The MCP client against the real reference servers from npm (pinned in test/conformance/package.json):
// @modelcontextprotocol/server-everything and server-filesystem. Skipped when they are not installed.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/support/cancel.h"
#include "test/support/temp_dir.h"
#include "test/unit/mcp/mcp_test_util.h"

namespace agentd::tools::mcp {
namespace {

using support::Errc;
using support::Json;
using testing::McpFixture;
using namespace std::chrono_literals;

// node + the package's entry point, so no shell wrapper (.bin scripts) stands between us and it.
std::optional<ServerConfig> reference_server(const std::string& package, const std::string& name) {
  const std::filesystem::path entry = std::filesystem::path(AGENTD_SOURCE_DIR) /
                                      "test/conformance/node_modules/@modelcontextprotocol" / package / "dist/index.js";
  if (!std::filesystem::exists(entry)) return std::nullopt;
  ServerConfig config;
  config.name = name;
  config.command = "node";
  config.args = {entry.string()};
  return config;
}

#define REQUIRE_SERVER(config, package)                                                             \
  if (!(config)) {                                                                                  \
    GTEST_SKIP() << package                                                                         \
                 << " is not installed: run `npm ci` in test/conformance to test against the real " \
                    "MCP reference servers";                                                        \
  }

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

class McpReferenceServers : public McpFixture {};

TEST_F(McpReferenceServers, EverythingListsAndCallsTools) {
  auto config = reference_server("server-everything", "everything");
  REQUIRE_SERVER(config, "@modelcontextprotocol/server-everything");
  start({*config});
  wait_ready(30s);
  const ServerStatus s = status();
  ASSERT_EQ(s.state, ServerState::ready) << s.error;
  EXPECT_EQ(s.protocol_version, "2025-11-25");
  EXPECT_TRUE(has(s.tools, "mcp__everything__echo"));
  EXPECT_TRUE(has(s.tools, "mcp__everything__get-sum"));
  EXPECT_TRUE(has(s.tools, "mcp__everything__trigger-long-running-operation"));

  Json echo_input = Json::object();
  echo_input.set("message", "hello from agentd");
  auto echo = call("mcp__everything__echo", std::move(echo_input));
  ASSERT_TRUE(echo && *echo);
  EXPECT_TRUE((*echo)->ok) << (*echo)->content;
  EXPECT_NE((*echo)->content.find("hello from agentd"), std::string::npos) << (*echo)->content;

  Json sum_input = Json::object();
  sum_input.set("a", 2);
  sum_input.set("b", 40);
  auto sum = call("mcp__everything__get-sum", std::move(sum_input));
  ASSERT_TRUE(sum && *sum);
  EXPECT_TRUE((*sum)->ok) << (*sum)->content;
  EXPECT_NE((*sum)->content.find("42"), std::string::npos) << (*sum)->content;
}

TEST_F(McpReferenceServers, EverythingLongRunningOperationReportsProgressAndCancels) {
  auto config = reference_server("server-everything", "everything");
  REQUIRE_SERVER(config, "@modelcontextprotocol/server-everything");
  ClientOptions options;
  options.shutdown_grace = 300ms;  // the cancelled operation keeps it from exiting when stdin closes
  start({*config}, options);
  wait_ready(30s);
  ASSERT_EQ(status().state, ServerState::ready) << status().error;

  // 4 steps of 0.1 s each: the progress arrives as it happens.
  std::vector<std::string> progress;
  ToolContext context;
  context.progress = [&](std::string_view line) { progress.emplace_back(line); };
  Json input = Json::object();
  input.set("duration", 0.4);
  input.set("steps", 4);
  auto done = call("mcp__everything__trigger-long-running-operation", std::move(input), context);
  ASSERT_TRUE(done && *done);
  EXPECT_TRUE((*done)->ok) << (*done)->content;
  EXPECT_GE(progress.size(), 2U);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.front(), "progress 1/4");

  // The same, cancelled at its first progress report (60 s long, so it cannot finish first).
  support::CancelSource source;
  ToolContext cancelling;
  cancelling.cancel = source.token();
  int reports = 0;
  cancelling.progress = [&](std::string_view) {
    ++reports;
    source.cancel();
  };
  Json long_input = Json::object();
  long_input.set("duration", 60);
  long_input.set("steps", 600);
  const auto t0 = std::chrono::steady_clock::now();
  auto cancelled = call("mcp__everything__trigger-long-running-operation", std::move(long_input), cancelling, 20s);
  ASSERT_TRUE(cancelled);
  ASSERT_FALSE(*cancelled);
  EXPECT_EQ(cancelled->error().code(), Errc::cancelled);
  EXPECT_GE(reports, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);

  // Still usable afterwards.
  Json echo_input = Json::object();
  echo_input.set("message", "after cancel");
  auto echo = call("mcp__everything__echo", std::move(echo_input));
  ASSERT_TRUE(echo && *echo);
  EXPECT_NE((*echo)->content.find("after cancel"), std::string::npos) << (*echo)->content;
  EXPECT_EQ(status().state, ServerState::ready);
}

TEST_F(McpReferenceServers, FilesystemReadsAFile) {
  auto config = reference_server("server-filesystem", "fs");
  REQUIRE_SERVER(config, "@modelcontextprotocol/server-filesystem");
  agentd::testing::TempDir dir;
  const std::string root = std::filesystem::canonical(dir.path()).string();
  {
    std::ofstream out(root + "/note.txt");
    out << "line one\nline two\n";
  }
  config->args.push_back(root);  // the allowed directory
  start({*config});
  wait_ready(30s);
  const ServerStatus s = status();
  ASSERT_EQ(s.state, ServerState::ready) << s.error;
  EXPECT_TRUE(has(s.tools, "mcp__fs__read_text_file"));
  EXPECT_TRUE(has(s.tools, "mcp__fs__list_directory"));
  auto read_tool = find_tool("mcp__fs__read_text_file");
  ASSERT_TRUE(read_tool);
  EXPECT_EQ(read_tool->spec().base_risk, Risk::read);

  Json input = Json::object();
  input.set("path", root + "/note.txt");
  auto read = call("mcp__fs__read_text_file", std::move(input));
  ASSERT_TRUE(read && *read);
  EXPECT_TRUE((*read)->ok) << (*read)->content;
  EXPECT_NE((*read)->content.find("line one\nline two"), std::string::npos) << (*read)->content;

  Json outside = Json::object();
  outside.set("path", "/etc/hostname");
  auto refused = call("mcp__fs__read_text_file", std::move(outside));
  ASSERT_TRUE(refused && *refused);
  EXPECT_FALSE((*refused)->ok) << (*refused)->content;
}

}  // namespace
}  // namespace agentd::tools::mcp
