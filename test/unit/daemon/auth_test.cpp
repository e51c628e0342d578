// ACP authentication end to end: with no API key anywhere, initialize offers one method per key
// variable and logout, session/new answers auth_required (-32000, data.kind "auth_required") instead of
// failing the first prompt, authenticate takes a key for this process (never stored), and logout stops
// model calls until the next authenticate.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/support/session_fixture.h"

namespace agentd {
namespace {

using support::Json;
using testing::request;

struct NoKeyFixture {
  testing::TempDir dir;
  std::unique_ptr<mock_model::MockModelServer> mock;
  std::unique_ptr<testing::AcpClient> agentd;

  NoKeyFixture() {
    std::filesystem::create_directories(dir.file("work"));
    auto script =
        mock_model::parse_script(*support::parse_json(R"({"exchanges": [)" + testing::text_reply("one", "Hello.") +
                                                      "," + testing::text_reply("two", "Again.") + "]}"),
                                 dir.path());
    EXPECT_TRUE(script);
    auto server = mock_model::MockModelServer::start(std::move(*script));
    EXPECT_TRUE(server);
    mock = std::move(*server);
    testing::AcpClient::Options options;
    options.db_path = dir.file("agentd.db");
    // The variables are set empty: this process's own environment (a developer's key) must not count.
    options.env = {{"ANTHROPIC_BASE_URL", mock->url()},
                   {"ANTHROPIC_API_KEY", ""},
                   {"OPENAI_API_KEY", ""},
                   {"AGENTD_MODEL", "anthropic:claude-sonnet-4-5"},
                   {"AGENTD_LOG", "warn"},
                   {"HOME", dir.file("home")},
                   {"XDG_CONFIG_HOME", dir.file("config")}};
    agentd = std::make_unique<testing::AcpClient>(options);
  }

  Json new_session(int id) {
    return request(*agentd, id, "session/new", R"({"cwd":")" + dir.file("work") + R"(","mcpServers":[]})");
  }
  Json prompt(int id, const std::string& session) {
    return request(*agentd, id, "session/prompt",
                   R"({"sessionId":")" + session + R"(","prompt":[{"type":"text","text":"hi"}]})");
  }
};

TEST(Auth, WithoutAKeyTheClientIsToldToAuthenticateAndCan) {
  NoKeyFixture f;
  Json init = request(*f.agentd, 0, "initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  const Json& methods = init["result"]["authMethods"];
  ASSERT_TRUE(methods.is_array()) << init.dump();
  ASSERT_EQ(methods.size(), 2U) << init.dump();
  EXPECT_EQ(methods.as_array()[0]["id"], Json("ANTHROPIC_API_KEY"));
  EXPECT_EQ(methods.as_array()[0]["name"], Json("Anthropic API key"));
  EXPECT_EQ(methods.as_array()[0]["_meta"]["agentd"]["envVar"], Json("ANTHROPIC_API_KEY"));
  EXPECT_EQ(methods.as_array()[1]["id"], Json("OPENAI_API_KEY"));
  EXPECT_TRUE(init["result"]["agentCapabilities"]["auth"]["logout"].is_object()) << init.dump();

  // No session before a key: auth_required, and nothing stored.
  Json refused = f.new_session(1);
  ASSERT_TRUE(refused.contains("error")) << refused.dump();
  EXPECT_EQ(refused["error"]["code"], Json(-32000));
  EXPECT_EQ(refused["error"]["data"]["kind"], Json("auth_required"));
  EXPECT_NE(refused["error"]["message"].as_string().find("ANTHROPIC_API_KEY"), std::string::npos) << refused.dump();
  Json listed = request(*f.agentd, 2, "session/list", "{}");
  EXPECT_EQ(listed["result"]["sessions"].size(), 0U) << listed.dump();

  // Authenticating with the environment's key, which is not set; with an unknown method; with a key that
  // would inject a header line: each refused, the key never repeated.
  Json from_env = request(*f.agentd, 3, "authenticate", R"({"methodId":"ANTHROPIC_API_KEY"})");
  EXPECT_EQ(from_env["error"]["data"]["kind"], Json("auth_required")) << from_env.dump();
  Json unknown = request(*f.agentd, 4, "authenticate", R"({"methodId":"GITHUB_TOKEN"})");
  EXPECT_EQ(unknown["error"]["code"], Json(-32602)) << unknown.dump();
  Json injected = request(*f.agentd, 5, "authenticate",
                          R"({"methodId":"ANTHROPIC_API_KEY","_meta":{"agentd":{"apiKey":"sk-hidden\r\nx-evil: 1"}}})");
  EXPECT_EQ(injected["error"]["code"], Json(-32602)) << injected.dump();
  EXPECT_EQ(injected.dump().find("sk-hidden"), std::string::npos);

  // A key for this process: the session opens and the model is called with it.
  Json ok = request(*f.agentd, 6, "authenticate",
                    R"({"methodId":"ANTHROPIC_API_KEY","_meta":{"agentd":{"apiKey":"sk-process-only-123"}}})");
  ASSERT_TRUE(ok.contains("result")) << ok.dump();
  Json created = f.new_session(7);
  ASSERT_TRUE(created["result"]["sessionId"].is_string()) << created.dump();
  const std::string session = created["result"]["sessionId"].as_string();
  Json answered = f.prompt(8, session);
  EXPECT_EQ(answered["result"]["stopReason"], Json("end_turn")) << answered.dump();
  auto requests = f.mock->requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_TRUE(requests[0]["headers"].contains("x-api-key")) << requests[0]["headers"].dump();

  // Logout: the next prompt is refused before any model call, and says how to go on.
  Json out = request(*f.agentd, 9, "logout", "{}");
  ASSERT_TRUE(out.contains("result")) << out.dump();
  Json after = f.prompt(10, session);
  EXPECT_EQ(after["error"]["data"]["kind"], Json("auth_required")) << after.dump();
  EXPECT_NE(after["error"]["message"].as_string().find("logged out"), std::string::npos) << after.dump();
  EXPECT_EQ(f.mock->requests().size(), 1U);
  // A slash command needs no key.
  Json help = request(*f.agentd, 11, "session/prompt",
                      R"({"sessionId":")" + session + R"(","prompt":[{"type":"text","text":"/help"}]})");
  EXPECT_EQ(help["result"]["stopReason"], Json("end_turn")) << help.dump();

  // The key was never written down: not in the database, its WAL, or anywhere under the test's home.
  f.agentd.reset();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(f.dir.path())) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(bytes.find("sk-process-only-123"), std::string::npos) << entry.path();
  }
}

}  // namespace
}  // namespace agentd
