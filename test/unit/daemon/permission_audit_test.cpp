// _agentd/permissions/audit over the real binary: a decision made by a configured rule and one made by
// the user are both read back, newest first, filtered by session and limited; they are still there
// after session/delete (which is idempotent); bad params are answered -32602 with the field named.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
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
     "tool_calls": [{"id": "toolu_write", "name": "write_file", "input": {"path": "out.txt", "content": "x"}}],
     "usage": {"input_tokens": 100, "output_tokens": 20}}}},
  {"name": "answer", "response": {"generate": {"provider": "anthropic", "text": "Done.",
     "usage": {"input_tokens": 150, "output_tokens": 10}}}}]})";

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<mock_model::MockModelServer> mock;
  std::unique_ptr<testing::AcpClient> agentd;
  int next_id = 1;

  Fixture() {
    // "strict" denies the write by a rule; "open" has no rule, so the user is asked.
    std::filesystem::create_directories(dir.file("work"));
    std::filesystem::create_directories(dir.file("strict/.agentd"));
    std::filesystem::create_directories(dir.file("open"));
    std::ofstream(dir.file("strict/.agentd/config.json")) << R"j({"permissions": {"deny": ["write_file(*.txt)"]}})j";
    auto script = mock_model::parse_script(*support::parse_json(kScript), dir.path());
    EXPECT_TRUE(script);
    auto server = mock_model::MockModelServer::start(std::move(*script));
    EXPECT_TRUE(server);
    mock = std::move(*server);
    agentd = testing::start_in_process_with_mock(dir, mock->url());
    call("initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  }
  Json call(std::string_view method, const std::string& params) { return request(*agentd, next_id++, method, params); }
  std::string new_session(const std::string& project) {
    Json created = call("session/new", R"({"cwd":")" + dir.file(project) + R"(","mcpServers":[]})");
    EXPECT_TRUE(created["result"]["sessionId"].is_string()) << created.dump();
    return created["result"]["sessionId"].is_string() ? created["result"]["sessionId"].as_string() : "";
  }
  // Runs one turn, allowing once whatever is asked; returns the turn's id.
  std::string prompt(const std::string& session) {
    Json answer = request(
        *agentd, next_id++, "session/prompt",
        R"({"sessionId":")" + session + R"(","prompt":[{"type":"text","text":"write it"}]})", [&](const Json& m) {
          if (m["method"] != Json("session/request_permission")) return;
          agentd->write(R"({"jsonrpc":"2.0","id":)" + m["id"].dump() +
                        R"(,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}})" + "\n");
        });
    EXPECT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
    const Json& turn = answer["result"]["_meta"]["agentd"]["turnId"];
    return turn.is_string() ? turn.as_string() : "";
  }
  Json audit(const std::string& params) {
    Json answer = call("_agentd/permissions/audit", params);
    EXPECT_TRUE(answer["result"]["entries"].is_array()) << answer.dump();
    return answer["result"]["entries"];
  }
};

struct Expected {
  std::string session;
  std::string turn;
  std::string_view decision;
  std::string_view decided_by;
  std::string_view reason_has;  // the reason's wording belongs to the policy; the test checks its gist
  std::string cwd;
};

// The whole entry as expected. What the test cannot know exactly (id, time, digest, reason, risk) is
// checked for its shape and then taken from `actual`.
Json expected_entry(const Json& actual, const Expected& e, std::int64_t after_ms, std::int64_t before_ms) {
  EXPECT_TRUE(actual["id"].is_integer()) << actual.dump();
  EXPECT_TRUE(actual["time"].is_integer()) << actual.dump();
  if (actual["time"].is_integer()) {
    EXPECT_GE(actual["time"].as_int64(), after_ms);
    EXPECT_LE(actual["time"].as_int64(), before_ms);
  }
  EXPECT_TRUE(actual["inputDigest"].is_string() && actual["inputDigest"].as_string().starts_with("sha256:"))
      << actual.dump();
  EXPECT_TRUE(actual["reason"].is_string() && actual["reason"].as_string().find(e.reason_has) != std::string::npos)
      << actual.dump();
  EXPECT_TRUE(actual["risk"].is_string()) << actual.dump();
  Json j = Json::object();
  j["id"] = actual["id"];
  j["time"] = actual["time"];
  j["sessionId"] = e.session;
  j["turnId"] = e.turn;
  j["toolCallId"] = "toolu_write";
  j["tool"] = "write_file";
  j["inputDigest"] = actual["inputDigest"];
  j["decision"] = std::string(e.decision);
  j["decidedBy"] = std::string(e.decided_by);
  j["reason"] = actual["reason"];
  j["cwd"] = e.cwd;
  j["risk"] = actual["risk"];
  return j;
}

TEST(PermissionAudit, DecisionsAreReadNewestFirstAndOutliveTheirSession) {
  Fixture f;
  const std::int64_t start_ms = now_ms();
  const std::string strict = f.new_session("strict");
  const std::string strict_turn = f.prompt(strict);  // denied by the rule, nobody asked
  const std::string open = f.new_session("open");
  const std::string open_turn = f.prompt(open);  // asked, and allowed once
  const std::int64_t end_ms = now_ms();
  EXPECT_FALSE(std::filesystem::exists(f.dir.file("strict/out.txt")));
  EXPECT_TRUE(std::filesystem::exists(f.dir.file("open/out.txt")));

  const Expected denied{strict,   strict_turn,         "deny",
                        "policy", "write_file(*.txt)", std::filesystem::canonical(f.dir.file("strict")).string()};
  const Expected allowed{open,   open_turn, "allow",
                         "user", "allowed", std::filesystem::canonical(f.dir.file("open")).string()};

  // The asked-and-allowed write's trace: the permission question with its diff preview under it, and the
  // write itself, under the tool's span.
  Json trace = f.call("_agentd/trace/get", R"({"sessionId":")" + open + R"("})");
  const Json* tool = nullptr;
  for (const Json& c : trace["result"]["spans"].as_array()[0]["children"].as_array()) {
    if (c["name"] == Json("tool.write_file")) tool = &c;
  }
  ASSERT_NE(tool, nullptr) << trace.dump();
  std::map<std::string, const Json*> steps;
  for (const Json& c : (*tool)["children"].as_array()) steps[c["name"].as_string()] = &c;
  ASSERT_TRUE(steps.contains("permission.request") && steps.contains("fs.atomic_write")) << tool->dump();
  const Json& preview = (*steps["permission.request"])["children"];
  ASSERT_EQ(preview.size(), 1U) << tool->dump();
  EXPECT_EQ(preview.as_array()[0]["name"], Json("permission.diff_preview"));
  EXPECT_EQ(preview.as_array()[0]["attributes"]["files"], Json(1));
  const Json& write = *steps["fs.atomic_write"];
  EXPECT_EQ(write["attributes"]["path"], Json(std::filesystem::canonical(f.dir.file("open/out.txt")).string()));
  EXPECT_EQ(write["attributes"]["bytes"], Json(1));
  EXPECT_EQ(write["attributes"]["through"], Json("disk"));
  EXPECT_EQ(write["attributes"]["readBack"], Json(true));
  EXPECT_EQ(write["status"], Json("ok"));

  // No sessionId: every session's decisions, newest first.
  Json all = f.audit("{}");
  ASSERT_EQ(all.size(), 2U) << all.dump();
  EXPECT_EQ(all.as_array()[0], expected_entry(all.as_array()[0], allowed, start_ms, end_ms));
  EXPECT_EQ(all.as_array()[1], expected_entry(all.as_array()[1], denied, start_ms, end_ms));
  EXPECT_GT(all.as_array()[0]["id"].as_int64(), all.as_array()[1]["id"].as_int64());
  // Leaving params out altogether is the same.
  ASSERT_TRUE(f.agentd->write(R"({"jsonrpc":"2.0","id":"bare","method":"_agentd/permissions/audit"})"
                              "\n"));
  Json bare = testing::next_message(*f.agentd);
  while (!bare.is_null() && bare.contains("method")) bare = testing::next_message(*f.agentd);  // late updates
  EXPECT_EQ(bare["id"], Json("bare")) << bare.dump();
  EXPECT_EQ(bare["result"]["entries"], all) << bare.dump();

  // Filtered and limited; a limit above the cap is clamped, not refused.
  Json strict_only = f.audit(R"({"sessionId":")" + strict + R"("})");
  ASSERT_EQ(strict_only.size(), 1U) << strict_only.dump();
  EXPECT_EQ(strict_only.as_array()[0], all.as_array()[1]);
  Json newest = f.audit(R"({"limit":1})");
  ASSERT_EQ(newest.size(), 1U) << newest.dump();
  EXPECT_EQ(newest.as_array()[0], all.as_array()[0]);
  EXPECT_EQ(f.audit(R"({"limit":100000})"), all);

  // Deleting the session leaves its audit: that is what an audit is for.
  Json deleted = f.call("session/delete", R"({"sessionId":")" + strict + R"("})");
  ASSERT_TRUE(deleted.contains("result")) << deleted.dump();
  Json listed = f.call("session/list", "{}");
  EXPECT_EQ(listed.dump().find(strict), std::string::npos) << listed.dump();
  EXPECT_EQ(f.audit(R"({"sessionId":")" + strict + R"("})"), strict_only);
  EXPECT_EQ(f.audit("{}"), all);

  // Deleting is idempotent: again, or an id that never was, succeeds (ACP TCK ACP-DELETE-002).
  EXPECT_TRUE(f.call("session/delete", R"({"sessionId":")" + strict + R"("})").contains("result"));
  EXPECT_TRUE(f.call("session/delete", R"({"sessionId":"s-never-was"})").contains("result"));

  // A session nobody knows has no decisions; that is not an error (it may have been deleted).
  EXPECT_EQ(f.audit(R"({"sessionId":"s-never-was"})"), Json::array());
}

TEST(PermissionAudit, BadParamsAreInvalidParams) {
  Fixture f;
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"({"limit":"ten"})", "params.limit: expected integer"},
      {R"({"limit":0})", "params.limit: must be at least 1, got 0"},
      {R"({"limit":-5})", "params.limit: must be at least 1, got -5"},
      {R"({"limit":2.5})", "params.limit: expected integer"},
      {R"({"sessionId":7})", "params.sessionId: expected string"},
      {R"({"sessionId":""})", "params.sessionId: must not be empty"},
      {R"([1])", "params: expected object"},
  };
  for (const auto& [params, message] : cases) {
    Json answer = f.call("_agentd/permissions/audit", std::string(params));
    EXPECT_EQ(answer["error"]["code"], Json(-32602)) << params << " -> " << answer.dump();
    const Json& text = answer["error"]["message"];
    EXPECT_TRUE(text.is_string() && text.as_string().find(message) != std::string::npos)
        << params << " -> " << answer.dump();
  }
}

}  // namespace
}  // namespace agentd
