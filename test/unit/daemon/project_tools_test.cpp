// Each session's tools take its own project's settings: one agentd, two projects, two shell configs.
// The shell tool's description and schema carry the timeouts, so the model requests show which
// configuration each session's tools were built with.
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/support/session_fixture.h"

namespace agentd {
namespace {

namespace fs = std::filesystem;
using support::Json;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ProjectTools, EachSessionsShellUsesItsProjectsSettings) {
  testing::SessionFixture f(
      testing::text_reply("a", "A.") + "," + testing::text_reply("b", "B."), [](const fs::path& work) {
        fs::create_directories(work / ".agentd");
        std::ofstream(work / ".agentd/config.json") << R"({"shell": {"timeoutMs": 5000, "maxTimeoutMs": 20000}})";
      });
  fs::create_directories(f.dir.file("other"));
  Json other =
      testing::request(*f.agentd, 2, "session/new", R"({"cwd":")" + f.dir.file("other") + R"(","mcpServers":[]})");
  ASSERT_TRUE(other["result"]["sessionId"].is_string()) << other.dump();

  EXPECT_EQ(f.prompt("first")["result"]["stopReason"].as_string(), "end_turn");
  const std::string configured = f.session;
  f.session = other["result"]["sessionId"].as_string();
  EXPECT_EQ(f.prompt("second")["result"]["stopReason"].as_string(), "end_turn");
  f.session = configured;

  EXPECT_THAT(f.body(0), HasSubstr("(default 5000ms, at most 20000ms)"));
  EXPECT_THAT(f.body(0), HasSubstr(R"("maximum":20000)"));
  EXPECT_THAT(f.body(1), HasSubstr("(default 120000ms, at most 600000ms)"));
  EXPECT_THAT(f.body(1), Not(HasSubstr("at most 20000ms")));
}

TEST(ProjectTools, ABadVerifySettingFailsThatProjectsSession) {
  testing::SessionFixture f("");
  fs::create_directories(f.dir.file("broken/.agentd"));
  std::ofstream(f.dir.file("broken/.agentd/config.json")) << R"({"verify": {"auto": "always"}})";
  Json refused =
      testing::request(*f.agentd, 2, "session/new", R"({"cwd":")" + f.dir.file("broken") + R"(","mcpServers":[]})");
  ASSERT_TRUE(refused.contains("error")) << refused.dump();
  EXPECT_THAT(refused["error"]["message"].as_string(), HasSubstr("verify.auto"));
  EXPECT_THAT(refused["error"]["message"].as_string(), HasSubstr("\"off\", \"suggest\" (the default) or \"run\""));
}

}  // namespace
}  // namespace agentd
