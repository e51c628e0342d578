// session/fork over ACP against the mock model: the fork holds the history up to the turn it names, in
// its own directory; its next request carries that history and not the later turns; session/load of
// the fork replays only what it holds; the source goes on as it was; checkpoints stay with the source;
// bad requests get JSON-RPC errors and store nothing.
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

namespace fs = std::filesystem;
using support::Json;
using testing::request;

constexpr std::string_view kScript = R"({"exchanges": [
  {"name": "write", "response": {"generate": {"provider": "anthropic", "text": "Writing.",
     "tool_calls": [{"id": "toolu_w", "name": "write_file", "input": {"path": "made.txt", "content": "made\n"}}]}}},
  {"name": "first", "response": {"generate": {"provider": "anthropic", "text": "first answer"}}},
  {"name": "second", "response": {"generate": {"provider": "anthropic", "text": "second answer"}}},
  {"name": "in the fork", "expect": {"body_contains": ["first question", "first answer", "third question"]},
   "response": {"generate": {"provider": "anthropic", "text": "third answer"}}}]})";

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<mock_model::MockModelServer> mock;
  std::unique_ptr<testing::AcpClient> agentd;
  fs::path work;
  fs::path elsewhere;
  int next_id = 0;

  Fixture() {
    fs::create_directories(dir.file("work"));
    fs::create_directories(dir.file("elsewhere"));
    work = fs::canonical(dir.file("work"));
    elsewhere = fs::canonical(dir.file("elsewhere"));
    auto script = mock_model::parse_script(*support::parse_json(kScript), dir.path());
    EXPECT_TRUE(script);
    auto server = mock_model::MockModelServer::start(std::move(*script));
    EXPECT_TRUE(server);
    mock = std::move(*server);
    agentd = testing::start_in_process_with_mock(dir, mock->url());
  }

  Json call(std::string_view method, const std::string& params, std::vector<Json>* updates = nullptr) {
    return request(*agentd, next_id++, method, params, [&](const Json& m) {
      if (updates != nullptr && m["method"] == Json("session/update")) updates->push_back(m["params"]);
    });
  }

  std::string prompt(const std::string& session, const std::string& words) {
    Json answer = call("session/prompt",
                       R"({"sessionId":")" + session + R"(","prompt":[{"type":"text","text":")" + words + R"("}]})");
    EXPECT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
    const Json& turn = answer["result"]["_meta"]["agentd"]["turnId"];
    return turn.is_string() ? turn.as_string() : "";
  }
};

// The text of the message chunks among `updates`, in order, run together.
template <class Updates>
std::string chunks(const Updates& updates) {
  std::string text;
  for (const Json& p : updates) {
    const Json& u = p["update"];
    if ((u["sessionUpdate"] == Json("user_message_chunk") || u["sessionUpdate"] == Json("agent_message_chunk")) &&
        u["content"]["text"].is_string()) {
      text += u["content"]["text"].as_string();
    }
  }
  return text;
}

TEST(Fork, TheForkHoldsTheHistoryUpToItsTurnAndGoesOnAlone) {
  Fixture f;
  Json init = f.call("initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  EXPECT_TRUE(init["result"]["agentCapabilities"]["sessionCapabilities"]["fork"].is_object()) << init.dump();
  Json created = f.call("session/new", R"({"cwd":")" + f.work.string() + R"(","mcpServers":[]})");
  const std::string source = created["result"]["sessionId"].as_string();
  f.call("session/set_mode", R"({"sessionId":")" + source + R"(","modeId":"acceptEdits"})");
  const std::string first = f.prompt(source, "first question");
  ASSERT_FALSE(first.empty());
  ASSERT_TRUE(fs::exists(f.work / "made.txt"));
  f.prompt(source, "second question");

  Json forked = f.call("session/fork", R"({"sessionId":")" + source + R"(","cwd":")" + f.elsewhere.string() +
                                           R"(","mcpServers":[],"_meta":{"agentd":{"turnId":")" + first + R"("}}})");
  ASSERT_TRUE(forked.contains("result")) << forked.dump();
  const std::string fork = forked["result"]["sessionId"].as_string();
  EXPECT_NE(fork, source);
  EXPECT_EQ(forked["result"]["modes"]["currentModeId"], Json("acceptEdits")) << "the source's mode comes along";
  EXPECT_TRUE(forked["result"]["configOptions"].is_array());

  // Listed in its own directory.
  Json listed = f.call("session/list", R"({"cwd":")" + f.elsewhere.string() + R"("})");
  ASSERT_EQ(listed["result"]["sessions"].size(), 1U) << listed.dump();
  EXPECT_EQ(listed["result"]["sessions"].as_array()[0]["sessionId"], Json(fork));

  // Loading the fork replays the first turn and nothing of the second.
  std::vector<Json> replayed;
  Json loaded =
      f.call("session/load",
             R"({"sessionId":")" + fork + R"(","cwd":")" + f.elsewhere.string() + R"(","mcpServers":[]})", &replayed);
  ASSERT_TRUE(loaded.contains("result")) << loaded.dump();
  const std::string history = chunks(replayed);
  EXPECT_NE(history.find("first question"), std::string::npos) << history;
  EXPECT_NE(history.find("first answer"), std::string::npos) << history;
  EXPECT_EQ(history.find("second"), std::string::npos) << history;
  for (const Json& p : replayed) EXPECT_EQ(p["sessionId"], Json(fork)) << p.dump();

  // The fork's next request carries the first turn and not the second.
  f.prompt(fork, "third question");
  auto requests = f.mock->requests();
  ASSERT_EQ(requests.size(), 4U);
  EXPECT_EQ(requests[3]["expectation_failures"].size(), 0U) << requests[3]["expectation_failures"].dump();
  ASSERT_TRUE(requests[3]["body"].is_object());
  EXPECT_NE(requests[3]["body"].dump().find("first answer"), std::string::npos);
  EXPECT_EQ(requests[3]["body"].dump().find("second question"), std::string::npos);

  // Checkpoints stay with the turns that made them: the fork has nothing to undo, the file stays.
  std::vector<Json> undo_updates;
  Json undo = f.call("session/prompt", R"({"sessionId":")" + fork + R"(","prompt":[{"type":"text","text":"/undo"}]})",
                     &undo_updates);
  EXPECT_NE(chunks(undo_updates).find("Nothing to undo"), std::string::npos) << chunks(undo_updates);
  EXPECT_TRUE(fs::exists(f.work / "made.txt"));

  // The source still has both turns.
  Json replay = f.call("_agentd/events/replay", R"({"sessionId":")" + source + R"(","since":0})");
  ASSERT_TRUE(replay["result"]["events"].is_array()) << replay.dump();
  const std::string source_history = chunks(replay["result"]["events"].as_array());
  EXPECT_NE(source_history.find("second answer"), std::string::npos) << source_history;
}

TEST(Fork, WithoutATurnTheForkTakesTheWholeHistory) {
  Fixture f;
  f.call("initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  Json created = f.call("session/new", R"({"cwd":")" + f.work.string() + R"(","mcpServers":[]})");
  const std::string source = created["result"]["sessionId"].as_string();
  f.call("session/set_mode", R"({"sessionId":")" + source + R"(","modeId":"acceptEdits"})");
  f.prompt(source, "first question");
  f.prompt(source, "second question");
  Json forked = f.call("session/fork", R"({"sessionId":")" + source + R"(","cwd":")" + f.work.string() + R"("})");
  ASSERT_TRUE(forked.contains("result")) << forked.dump();
  Json replay = f.call("_agentd/events/replay",
                       R"({"sessionId":")" + forked["result"]["sessionId"].as_string() + R"(","since":0})");
  ASSERT_TRUE(replay["result"]["events"].is_array()) << replay.dump();
  const std::string history = chunks(replay["result"]["events"].as_array());
  EXPECT_NE(history.find("first answer"), std::string::npos) << history;
  EXPECT_NE(history.find("second answer"), std::string::npos) << history;
}

TEST(Fork, BadRequestsAreErrorsAndStoreNothing) {
  Fixture f;
  f.call("initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  Json created = f.call("session/new", R"({"cwd":")" + f.work.string() + R"(","mcpServers":[]})");
  const std::string source = created["result"]["sessionId"].as_string();
  const std::string cwd = f.work.string();

  Json unknown = f.call("session/fork", R"({"sessionId":"s_nope","cwd":")" + cwd + R"("})");
  ASSERT_TRUE(unknown.contains("error")) << unknown.dump();
  EXPECT_NE(unknown["error"]["message"].as_string().find("s_nope"), std::string::npos) << unknown.dump();

  Json turn = f.call("session/fork",
                     R"({"sessionId":")" + source + R"(","cwd":")" + cwd + R"(","_meta":{"agentd":{"turnId":"t_x"}}})");
  EXPECT_EQ(turn["error"]["code"], Json(-32602)) << turn.dump();
  Json typed = f.call("session/fork",
                      R"({"sessionId":")" + source + R"(","cwd":")" + cwd + R"(","_meta":{"agentd":{"turnId":7}}})");
  EXPECT_EQ(typed["error"]["code"], Json(-32602)) << typed.dump();
  Json relative = f.call("session/fork", R"({"sessionId":")" + source + R"(","cwd":"work"})");
  EXPECT_EQ(relative["error"]["code"], Json(-32602)) << relative.dump();
  Json missing_cwd = f.call("session/fork", R"({"sessionId":")" + source + R"("})");
  EXPECT_EQ(missing_cwd["error"]["code"], Json(-32602)) << missing_cwd.dump();

  Json listed = f.call("session/list", "{}");
  EXPECT_EQ(listed["result"]["sessions"].size(), 1U) << "only the source: " << listed.dump();
}

}  // namespace
}  // namespace agentd
