// The MCP client against test/fixtures/mcp/fake_server.py, a python3 server that misbehaves on demand.
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include <boost/asio/detached.hpp>
#include <gtest/gtest.h>
#include <sys/types.h>

#include "core/support/cancel.h"
#include "core/support/log.h"
#include "test/support/temp_dir.h"
#include "test/unit/mcp/mcp_test_util.h"

namespace agentd::tools::mcp {
namespace {

using support::Errc;
using support::Json;
using testing::McpFixture;
using namespace std::chrono_literals;
using testing::text_input;

ServerConfig fake(std::string mode, std::string name = "fake") {
  ServerConfig config;
  config.name = std::move(name);
  config.command = "python3";
  config.args = {std::string(AGENTD_SOURCE_DIR) + "/test/fixtures/mcp/fake_server.py", std::move(mode)};
  return config;
}

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

class McpManagerTest : public McpFixture {};

TEST_F(McpManagerTest, HandshakeListsToolsWithSpecs) {
  start({fake("normal")});
  wait_ready();
  const ServerStatus s = status();
  EXPECT_EQ(s.state, ServerState::ready) << s.error;
  EXPECT_EQ(server_state_name(s.state), "ready");
  EXPECT_EQ(s.protocol_version, "2025-11-25");
  EXPECT_EQ(s.server_info, "fake-normal 1.0");
  EXPECT_EQ(s.restarts, 0);
  EXPECT_NE(std::find(s.tools.begin(), s.tools.end(), "mcp__fake__echo"), s.tools.end());
  EXPECT_NE(std::find(s.tools.begin(), s.tools.end(), "mcp__fake__with_dot"), s.tools.end());
  EXPECT_EQ(tool_names(), s.tools);
  EXPECT_GE(tools_changed_, 1);

  auto echo = find_tool("mcp__fake__echo");
  ASSERT_TRUE(echo);
  EXPECT_EQ(echo->spec().description, "Echoes its text");
  EXPECT_EQ(echo->spec().kind, ToolKind::read);
  EXPECT_EQ(echo->spec().base_risk, Risk::read);
  EXPECT_EQ(echo->spec().input_schema["properties"]["text"]["type"], Json("string"));
  ToolContext context;
  EXPECT_EQ(echo->title(Json::object(), context), "fake: echo");
  auto hang = find_tool("mcp__fake__hang");
  ASSERT_TRUE(hang);
  EXPECT_EQ(hang->spec().base_risk, Risk::execute);
  EXPECT_EQ(hang->spec().kind, ToolKind::other);
}

TEST_F(McpManagerTest, CallsReturnTextErrorsAndRichContent) {
  start({fake("normal")});
  wait_ready();
  auto echo = call("mcp__fake__echo", text_input("hi there"));
  ASSERT_TRUE(echo && *echo);
  EXPECT_TRUE((*echo)->ok);
  EXPECT_EQ((*echo)->content, "echo: hi there");

  auto dotted = call("mcp__fake__with_dot");  // called by the server's own name, with.dot
  ASSERT_TRUE(dotted && *dotted);
  EXPECT_EQ((*dotted)->content, "dot");

  auto failed = call("mcp__fake__fail");
  ASSERT_TRUE(failed && *failed);
  EXPECT_FALSE((*failed)->ok);
  EXPECT_EQ((*failed)->content, "it went wrong");

  auto rich = call("mcp__fake__rich");
  ASSERT_TRUE(rich && *rich);
  EXPECT_EQ((*rich)->content, "hello\n[image: image/png, 3 bytes]\nfile:///x.txt\ninside\nfile:///y.txt (y)");
  EXPECT_EQ((*rich)->metadata["structuredContent"]["answer"], Json(42));
}

TEST_F(McpManagerTest, EnvironmentIsScrubbedButConfiguredVariablesPass) {
  ::setenv("AGENTD_MCP_TEST_TOKEN", "leaked", 1);
  ServerConfig secret = fake("normal", "secret");
  secret.env = {{"FAKE_ENV_NAME", "AGENTD_MCP_TEST_TOKEN"}};
  ServerConfig given = fake("normal", "given");
  given.env = {{"FAKE_ENV_NAME", "MY_API_TOKEN"}, {"MY_API_TOKEN", "configured"}};
  start({secret, given});
  wait_ready();
  auto scrubbed = call("mcp__secret__env");
  ASSERT_TRUE(scrubbed && *scrubbed);
  EXPECT_EQ((*scrubbed)->content, "<unset>");
  auto passed = call("mcp__given__env");
  ASSERT_TRUE(passed && *passed);
  EXPECT_EQ((*passed)->content, "configured");
  ::unsetenv("AGENTD_MCP_TEST_TOKEN");
}

TEST_F(McpManagerTest, ProgressReachesTheToolContext) {
  start({fake("normal")});
  wait_ready();
  std::vector<std::string> progress;
  ToolContext context;
  context.progress = [&](std::string_view line) { progress.emplace_back(line); };
  auto result = call("mcp__fake__progress", Json::object(), context);
  ASSERT_TRUE(result && *result);
  EXPECT_EQ((*result)->content, "progress done");
  EXPECT_EQ(progress, (std::vector<std::string>{"progress 1/3: step 1", "progress 2/3: step 2"}));
}

TEST_F(McpManagerTest, CancellationSendsCancelledAndKeepsTheServerUsable) {
  start({fake("normal")});
  wait_ready();
  support::CancelSource source;
  ToolContext context;
  context.cancel = source.token();
  context.progress = [&](std::string_view) { source.cancel(); };  // cancel once it is surely running
  auto result = call("mcp__fake__hang", Json::object(), context, 10s);
  ASSERT_TRUE(result);
  ASSERT_FALSE(*result);
  EXPECT_EQ(result->error().code(), Errc::cancelled);

  auto log = call("mcp__fake__cancelled_log");
  ASSERT_TRUE(log && *log);
  auto cancelled = support::parse_json((*log)->content);
  ASSERT_TRUE(cancelled) << (*log)->content;
  ASSERT_EQ(cancelled->size(), 1U) << (*log)->content;
  EXPECT_TRUE(cancelled->as_array()[0]["requestId"].is_integer()) << (*log)->content;
  EXPECT_EQ(cancelled->as_array()[0]["reason"], Json("cancelled by the user"));
  EXPECT_EQ(status().state, ServerState::ready);
}

TEST_F(McpManagerTest, TimeoutCancelsTheCallAndFailsIt) {
  ClientOptions options;
  options.call_timeout = 300ms;
  start({fake("normal")}, options);
  wait_ready();
  auto result = call("mcp__fake__hang", Json::object());
  ASSERT_TRUE(result && *result);
  EXPECT_FALSE((*result)->ok);
  EXPECT_TRUE(contains((*result)->content, "timed out after 300 ms")) << (*result)->content;
  auto log = call("mcp__fake__cancelled_log");
  ASSERT_TRUE(log && *log);
  EXPECT_TRUE(contains((*log)->content, "timed out after 300 ms")) << (*log)->content;
}

TEST_F(McpManagerTest, ListChangedRelistsAndCallsBack) {
  start({fake("normal")});
  wait_ready();
  EXPECT_FALSE(find_tool("mcp__fake__added"));
  const int before = tools_changed_;
  auto added = call("mcp__fake__add_tool");
  ASSERT_TRUE(added && *added);
  ASSERT_TRUE(run_until([&] { return find_tool("mcp__fake__added") != nullptr; }, 10s));
  EXPECT_GT(tools_changed_, before);
  auto call_added = call("mcp__fake__added");  // the fake answers unknown tools with an error
  ASSERT_TRUE(call_added && *call_added);
  EXPECT_FALSE((*call_added)->ok);
  EXPECT_TRUE(contains((*call_added)->content, "unknown tool added")) << (*call_added)->content;
}

TEST_F(McpManagerTest, CrashRestartsOnceThenFails) {
  ClientOptions options;
  options.restart_backoff = 50ms;
  start({fake("crash")}, options);
  wait_ready();
  ASSERT_EQ(status().state, ServerState::ready);

  auto first = call("mcp__fake__crash");
  ASSERT_TRUE(first && *first);
  EXPECT_FALSE((*first)->ok);
  EXPECT_TRUE(contains((*first)->content, "MCP server 'fake' exited while 'crash' was running")) << (*first)->content;
  EXPECT_TRUE(contains((*first)->content, "exit code 3")) << (*first)->content;
  EXPECT_TRUE(contains((*first)->content, "crashing on purpose")) << (*first)->content;

  ASSERT_TRUE(run_until([&] { return status().state == ServerState::ready && status().restarts == 1; }, 10s))
      << server_state_name(status().state);
  auto echo = call("mcp__fake__echo", text_input("again"));
  ASSERT_TRUE(echo && *echo);
  EXPECT_EQ((*echo)->content, "echo: again");
  auto kept = find_tool("mcp__fake__echo");
  ASSERT_TRUE(kept);

  auto second = call("mcp__fake__crash");
  ASSERT_TRUE(second && *second);
  EXPECT_FALSE((*second)->ok);
  ASSERT_TRUE(run_until([&] { return status().state == ServerState::failed; }, 10s));
  const ServerStatus s = status();
  EXPECT_TRUE(contains(s.error, "exit code 3")) << s.error;
  EXPECT_TRUE(contains(s.error, "crashing on purpose")) << s.error;
  EXPECT_TRUE(contains(s.error, "after 1 restart")) << s.error;
  EXPECT_TRUE(s.tools.empty());
  EXPECT_TRUE(manager_->tools().empty());
  EXPECT_FALSE(find_tool("mcp__fake__echo"));
  // A Tool object kept from before answers with the reason.
  ToolContext context;
  Json input = text_input("x");
  auto stale = run(kept->run(std::move(input), context));
  ASSERT_TRUE(stale && *stale);
  EXPECT_FALSE((*stale)->ok);
  EXPECT_TRUE(contains((*stale)->content, "MCP server 'fake' is not available")) << (*stale)->content;
  EXPECT_TRUE(contains((*stale)->content, "exit code 3")) << (*stale)->content;
}

TEST_F(McpManagerTest, ClosedStdoutCountsAsACrash) {
  ClientOptions options;
  options.max_restarts = 0;
  start({fake("close_stdout")}, options);
  wait_ready();
  ASSERT_EQ(status().state, ServerState::ready);
  auto closed = call("mcp__fake__close");
  ASSERT_TRUE(closed && *closed);
  EXPECT_FALSE((*closed)->ok);
  EXPECT_TRUE(contains((*closed)->content, "closed its stdout but kept running, killed")) << (*closed)->content;
  EXPECT_TRUE(contains((*closed)->content, "killed by signal 9")) << (*closed)->content;
  ASSERT_TRUE(run_until([&] { return status().state == ServerState::failed; }, 10s));
  EXPECT_EQ(status().restarts, 0);
  EXPECT_TRUE(contains(status().error, "closing stdout")) << status().error;
}

TEST_F(McpManagerTest, ServerStderrGoesToTheLogNeverToStdout) {
  const support::log::Level saved = support::log::level();
  support::log::set_level(support::log::Level::debug);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  start({fake("normal")});
  wait_ready();
  run_void(manager_->shutdown());
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  support::log::set_level(saved);
  EXPECT_EQ(out.find("fake server normal starting"), std::string::npos) << out;
  EXPECT_NE(err.find("MCP server 'fake' stderr: fake server normal starting"), std::string::npos) << err;
}

TEST_F(McpManagerTest, SilentInitializeIsReportedStartingThenFailed) {
  ClientOptions options;
  options.init_timeout = 500ms;
  start({fake("silent_init", "silent")}, options);
  const auto t0 = std::chrono::steady_clock::now();
  wait_ready(100ms);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_EQ(status(0).state, ServerState::starting);
  support::CancelSource cancelled;
  cancelled.cancel();
  const support::CancelToken token = cancelled.token();  // an lvalue: see mcp_test_util.h on GCC 12
  const auto t1 = std::chrono::steady_clock::now();
  run_void(manager_->wait_ready(10s, token));  // a cancelled wait returns at once
  EXPECT_LT(std::chrono::steady_clock::now() - t1, 2s);
  wait_ready(10s);
  const ServerStatus silent = status(0);
  EXPECT_EQ(silent.state, ServerState::failed);
  EXPECT_TRUE(contains(silent.error, "did not answer initialize within 500 ms")) << silent.error;
  EXPECT_TRUE(manager_->tools().empty());
}

TEST_F(McpManagerTest, EarlyNotificationsAndOutOfOrderAnswers) {
  start({fake("early_notify")});
  wait_ready();
  ASSERT_EQ(status().state, ServerState::ready) << status().error;
  auto first_tool = find_tool("mcp__fake__first");
  auto second_tool = find_tool("mcp__fake__second");
  ASSERT_TRUE(first_tool && second_tool);
  // Both in flight at once; the fake answers the second before the first.
  ToolContext c1;
  ToolContext c2;
  Json i1 = Json::object();
  Json i2 = Json::object();
  auto a1 = first_tool->run(std::move(i1), c1);
  auto a2 = second_tool->run(std::move(i2), c2);
  auto out1 = std::make_shared<std::optional<support::Result<ToolResult>>>();
  auto out2 = std::make_shared<std::optional<support::Result<ToolResult>>>();
  boost::asio::co_spawn(io_, store(a1, out1), boost::asio::detached);
  boost::asio::co_spawn(io_, store(a2, out2), boost::asio::detached);
  ASSERT_TRUE(run_until([&] { return out1->has_value() && out2->has_value(); }, 10s));
  ASSERT_TRUE(**out1 && **out2);
  EXPECT_EQ((**out1)->content, "answer to first");
  EXPECT_EQ((**out2)->content, "answer to second");
}

TEST_F(McpManagerTest, ServerRequestsArePingedOrRefused) {
  start({fake("server_requests")});
  wait_ready();
  ASSERT_EQ(status().state, ServerState::ready) << status().error;
  auto result = call("mcp__fake__ask");
  ASSERT_TRUE(result && *result);
  auto answers = support::parse_json((*result)->content);
  ASSERT_TRUE(answers) << (*result)->content;
  EXPECT_EQ((*answers)["sampling"]["error"]["code"], Json(-32601)) << (*result)->content;
  EXPECT_TRUE(contains((*answers)["sampling"]["error"]["message"].as_string(), "sampling/createMessage"));
  EXPECT_EQ((*answers)["ping"]["result"], Json::object()) << (*result)->content;
}

TEST_F(McpManagerTest, ToolsListIsPaged) {
  start({fake("paging")});
  wait_ready();
  const ServerStatus s = status();
  ASSERT_EQ(s.state, ServerState::ready) << s.error;
  EXPECT_EQ(s.tools.size(), 9U);
  EXPECT_EQ(s.tools.front(), "mcp__fake__echo");
  EXPECT_EQ(s.tools.back(), "mcp__fake__with_dot");
}

TEST_F(McpManagerTest, OlderProtocolVersionIsAccepted) {
  start({fake("old_version")});
  wait_ready();
  EXPECT_EQ(status().state, ServerState::ready) << status().error;
  EXPECT_EQ(status().protocol_version, "2024-11-05");
  auto echo = call("mcp__fake__echo", text_input("old"));
  ASSERT_TRUE(echo && *echo);
  EXPECT_EQ((*echo)->content, "echo: old");
}

TEST_F(McpManagerTest, UnknownProtocolVersionIsRefused) {
  start({fake("bad_version")});
  wait_ready();
  const ServerStatus s = status();
  EXPECT_EQ(s.state, ServerState::failed);
  EXPECT_TRUE(contains(s.error, "\"1999-01-01\"")) << s.error;
  EXPECT_TRUE(contains(s.error, "2025-11-25")) << s.error;
  EXPECT_EQ(s.restarts, 0);
  EXPECT_TRUE(manager_->tools().empty());
}

TEST_F(McpManagerTest, MissingProgramAndDuplicateNamesFail) {
  ServerConfig missing;
  missing.name = "missing";
  missing.command = "agentd-no-such-mcp-server";
  start({missing, fake("normal"), fake("normal")});
  wait_ready();
  EXPECT_EQ(status(0).state, ServerState::failed);
  EXPECT_TRUE(contains(status(0).error, "agentd-no-such-mcp-server")) << status(0).error;
  EXPECT_EQ(status(1).state, ServerState::ready);
  EXPECT_EQ(status(2).state, ServerState::failed);
  EXPECT_TRUE(contains(status(2).error, "same name")) << status(2).error;
}

TEST_F(McpManagerTest, ShutdownFailsCallsInProgressAndStops) {
  start({fake("normal")});
  wait_ready();
  auto hang = find_tool("mcp__fake__hang");
  ASSERT_TRUE(hang);
  ToolContext context;
  Json input = Json::object();
  auto running = hang->run(std::move(input), context);
  auto out = std::make_shared<std::optional<support::Result<ToolResult>>>();
  boost::asio::co_spawn(io_, store(running, out), boost::asio::detached);
  // The call starts first (spawned first), so it is in flight when the shutdown begins.
  run_void(manager_->shutdown());
  ASSERT_TRUE(run_until([&] { return out->has_value(); }, 5s));
  ASSERT_TRUE(**out);
  EXPECT_FALSE((**out)->ok);
  EXPECT_TRUE(contains((**out)->content, "shut down")) << (**out)->content;
  EXPECT_EQ(status().state, ServerState::stopped);
  EXPECT_TRUE(manager_->tools().empty());
  run_void(manager_->shutdown());  // idempotent
}

TEST_F(McpManagerTest, ShutdownKillsAServerThatIgnoresStdinAndSigterm) {
  agentd::testing::TempDir dir;
  ServerConfig stubborn = fake("stubborn");
  stubborn.env = {{"FAKE_PID_FILE", dir.file("pid")}};
  ClientOptions options;
  options.shutdown_grace = 100ms;
  start({stubborn}, options);
  wait_ready();
  ASSERT_EQ(status().state, ServerState::ready);
  std::ifstream pid_file(dir.file("pid"));
  pid_t pid = 0;
  pid_file >> pid;
  ASSERT_GT(pid, 0);
  const auto t0 = std::chrono::steady_clock::now();
  run_void(manager_->shutdown());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  EXPECT_EQ(status().state, ServerState::stopped);
  // Dead and reaped: no such process (a zombie would still answer kill 0).
  errno = 0;
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(McpManagerTest, ShutdownLeavesNoTaskRunning) {
  // One server ready (its readers, watchers and run loop), one waiting out a restart's backoff.
  ClientOptions options;
  options.restart_backoff = 10s;
  start({fake("normal"), fake("crash", "crashy")}, options);
  wait_ready();
  ASSERT_EQ(status(0).state, ServerState::ready);
  auto crashed = call("mcp__crashy__crash");
  ASSERT_TRUE(crashed && *crashed);
  ASSERT_TRUE(run_until([&] { return status(1).state == ServerState::restarting; }, 5s)) << status(1).error;
  EXPECT_GT(manager_->running_tasks(), 0u);
  const auto t0 = std::chrono::steady_clock::now();
  run_void(manager_->shutdown());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);  // the backoff did not hold it up
  // Nothing of the client runs on after its shutdown: not a reader, a watcher or a run loop.
  EXPECT_EQ(manager_->running_tasks(), 0u);
  EXPECT_EQ(status(0).state, ServerState::stopped);
  EXPECT_EQ(status(1).state, ServerState::stopped);
}

TEST_F(McpManagerTest, AManagerDroppedWithoutShutdownLeavesItsServersRunningSafely) {
  start({fake("normal")});
  wait_ready();
  auto echo = find_tool("mcp__fake__echo");
  ASSERT_TRUE(echo);
  // Its tasks keep the server (and their group) alive; a call spawns a writer into that group.
  manager_.reset();
  ToolContext context;
  Json input = text_input("still here");
  auto answered = run(echo->run(std::move(input), context));
  ASSERT_TRUE(answered && *answered);
  EXPECT_EQ((*answered)->content, "echo: still here");
}

}  // namespace
}  // namespace agentd::tools::mcp
