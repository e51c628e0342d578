// Permission rules and approvals over the real binary: a configured deny rule refuses a call and the model
// is told which rule; an "always" answer is persisted for the project, so a new session there does not
// ask again; _agentd/permissions/list shows it and _agentd/permissions/revoke takes it back.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/mock_model/mock_model_server.h"
#include "test/support/agentd_process.h"
#include "test/support/session_fixture.h"
#include "test/support/temp_dir.h"

namespace agentd {
namespace {

using support::Json;
using testing::request;

// Each turn: the model writes one file, then answers. `loop` so every session's turn gets the same.
constexpr std::string_view kScript = R"({"loop": true, "exchanges": [
  {"name": "write", "response": {"generate": {"provider": "anthropic",
     "tool_calls": [{"name": "write_file", "input": {"path": "out.txt", "content": "x"}}],
     "usage": {"input_tokens": 100, "output_tokens": 20}}}},
  {"name": "answer", "response": {"generate": {"provider": "anthropic", "text": "Done.",
     "usage": {"input_tokens": 150, "output_tokens": 10}}}}]})";

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<mock_model::MockModelServer> mock;
  std::unique_ptr<testing::AcpClient> agentd;

  explicit Fixture(std::string_view project_config = "") {
    std::filesystem::create_directories(dir.file("work/.agentd"));
    if (!project_config.empty()) std::ofstream(dir.file("work/.agentd/config.json")) << project_config;
    auto script = mock_model::parse_script(*support::parse_json(kScript), dir.path());
    EXPECT_TRUE(script);
    auto server = mock_model::MockModelServer::start(std::move(*script));
    EXPECT_TRUE(server);
    mock = std::move(*server);
    agentd = testing::start_in_process_with_mock(dir, mock->url());
    request(*agentd, 0, "initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  }
  std::string new_session(int id, const std::string& project = "work") {
    Json created = request(*agentd, id, "session/new", R"({"cwd":")" + dir.file(project) + R"(","mcpServers":[]})");
    EXPECT_TRUE(created["result"]["sessionId"].is_string()) << created.dump();
    return created["result"]["sessionId"].is_string() ? created["result"]["sessionId"].as_string() : "";
  }
  // Runs one turn; answers a permission request with `option` and counts the requests.
  int prompt(int id, const std::string& session, std::string_view option) {
    int asked = 0;
    Json answer = request(
        *agentd, id, "session/prompt",
        R"({"sessionId":")" + session + R"(","prompt":[{"type":"text","text":"write it"}]})", [&](const Json& m) {
          if (m["method"] != Json("session/request_permission")) return;
          ++asked;
          agentd->write(R"({"jsonrpc":"2.0","id":)" + m["id"].dump() +
                        R"(,"result":{"outcome":{"outcome":"selected","optionId":")" + std::string(option) + "\"}}}\n");
        });
    EXPECT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
    return asked;
  }
};

TEST(Permissions, AConfiguredDenyRuleRefusesTheCallAndNamesTheRule) {
  Fixture f(R"j({"permissions": {"deny": ["write_file(*.txt)"]}})j");
  const std::string session = f.new_session(1);
  EXPECT_EQ(f.prompt(2, session, "allow_once"), 0);  // denied without asking
  EXPECT_FALSE(std::filesystem::exists(f.dir.file("work/out.txt")));
  auto requests = f.mock->requests();
  ASSERT_EQ(requests.size(), 2U);
  const std::string body = requests[1]["body"].dump();
  EXPECT_NE(body.find("denied by the rule deny \\\"write_file(*.txt)\\\""), std::string::npos) << body;
  EXPECT_NE(body.find(".agentd/config.json"), std::string::npos) << body;
}

TEST(Permissions, ConfiguredDenyPathsRefuseTheFileWhateverTheAnswer) {
  Fixture f(R"j({"permissions": {"denyPaths": ["out.txt"]}})j");
  const std::string session = f.new_session(1);
  f.prompt(2, session, "allow_once");
  EXPECT_FALSE(std::filesystem::exists(f.dir.file("work/out.txt")));
  auto requests = f.mock->requests();
  ASSERT_EQ(requests.size(), 2U);
  const std::string body = requests[1]["body"].dump();
  EXPECT_NE(body.find("the configuration denies it (permissions.denyPaths)"), std::string::npos) << body;
}

// agentd serves sessions in several projects: each reads its own <cwd>/.agentd/config.json, not the
// one of the directory agentd was started in.
TEST(Permissions, EachSessionReadsItsOwnProjectsConfig) {
  Fixture f;  // started in work/, which has no project config
  std::filesystem::create_directories(f.dir.file("strict/.agentd"));
  std::ofstream(f.dir.file("strict/.agentd/config.json")) << R"j({"permissions": {"deny": ["write_file(*.txt)"]}})j";
  const std::string strict = f.new_session(1, "strict");
  EXPECT_EQ(f.prompt(2, strict, "allow_once"), 0);  // denied by strict/'s rule, without asking
  EXPECT_FALSE(std::filesystem::exists(f.dir.file("strict/out.txt")));
  const std::string relaxed = f.new_session(3);
  EXPECT_EQ(f.prompt(4, relaxed, "allow_once"), 1);  // work/ has no such rule: asked, and allowed
  EXPECT_TRUE(std::filesystem::exists(f.dir.file("work/out.txt")));

  // A broken project file fails that session, naming the file and line, and nothing else.
  std::filesystem::create_directories(f.dir.file("broken/.agentd"));
  std::ofstream(f.dir.file("broken/.agentd/config.json")) << "{\n  \"maxTurnRequests\": -1}";
  Json refused = request(*f.agentd, 5, "session/new", R"({"cwd":")" + f.dir.file("broken") + R"(","mcpServers":[]})");
  ASSERT_TRUE(refused["error"].is_object()) << refused.dump();
  const std::string message = refused["error"]["message"].as_string();
  EXPECT_NE(message.find("broken/.agentd/config.json:2: config.maxTurnRequests"), std::string::npos) << message;
  EXPECT_FALSE(f.new_session(6).empty());
}

TEST(Permissions, AlwaysAnswersPersistForTheProjectUntilRevoked) {
  Fixture f;
  const std::string first = f.new_session(1);
  EXPECT_EQ(f.prompt(2, first, "allow_always"), 1);
  EXPECT_TRUE(std::filesystem::exists(f.dir.file("work/out.txt")));

  // A new session in the same project: the approval holds, nobody is asked.
  const std::string second = f.new_session(3);
  std::filesystem::remove(f.dir.file("work/out.txt"));
  EXPECT_EQ(f.prompt(4, second, "reject_once"), 0);
  EXPECT_TRUE(std::filesystem::exists(f.dir.file("work/out.txt")));

  Json listed = request(*f.agentd, 5, "_agentd/permissions/list", R"({"sessionId":")" + second + R"("})");
  ASSERT_TRUE(listed.contains("result")) << listed.dump();
  ASSERT_EQ(listed["result"]["rules"].size(), 1U) << listed.dump();
  const Json& rule = listed["result"]["rules"].as_array()[0];
  EXPECT_EQ(rule["rule"], Json("write_file"));
  EXPECT_EQ(rule["verdict"], Json("allow"));
  ASSERT_TRUE(rule["approvalId"].is_integer()) << listed.dump();

  Json revoked = request(*f.agentd, 6, "_agentd/permissions/revoke",
                         R"({"sessionId":")" + second + R"(","approvalId":)" + rule["approvalId"].dump() + "}");
  EXPECT_TRUE(revoked.contains("result")) << revoked.dump();
  Json again = request(*f.agentd, 7, "_agentd/permissions/revoke",
                       R"({"sessionId":")" + second + R"(","approvalId":)" + rule["approvalId"].dump() + "}");
  EXPECT_EQ(again["error"]["code"], Json(-32002)) << again.dump();

  // Revoked: the next session asks again, and a rejection is honoured.
  const std::string third = f.new_session(8);
  std::filesystem::remove(f.dir.file("work/out.txt"));
  EXPECT_EQ(f.prompt(9, third, "reject_once"), 1);
  EXPECT_FALSE(std::filesystem::exists(f.dir.file("work/out.txt")));
}

}  // namespace
}  // namespace agentd
