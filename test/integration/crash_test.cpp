// Crash test: kill -9 agentd at several points of a streaming turn with a tool call, start it again on
// the same database, session/load, and compare the replay with what the client had been sent. Every
// session/update the client saw must come back, with the same seq and the same content, because
// agentd stores an update before it sends it.
#include <csignal>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/mock_model/mock_model_server.h"
#include "test/support/agentd_process.h"
#include "test/support/child_process.h"
#include "test/support/temp_dir.h"

namespace agentd {
namespace {

using namespace std::chrono_literals;
using support::Json;
using testing::next_message;
using testing::request;

// The model streams its text slowly, calls read_file, then answers slowly: a kill can land anywhere.
constexpr std::string_view kScript = R"({"loop": true, "exchanges": [
  {"name": "read first", "response": {"generate": {"provider": "anthropic",
     "text": "Let me read the notes file before I answer you properly.",
     "tool_calls": [{"id": "toolu_1", "name": "read_file", "input": {"path": "notes.txt"}}],
     "usage": {"input_tokens": 100, "output_tokens": 20}, "text_piece_bytes": 4}, "chunk_delay_ms": 3}},
  {"name": "answer", "response": {"generate": {"provider": "anthropic",
     "text": "The notes say the build is green and the release is on Friday.",
     "usage": {"input_tokens": 150, "output_tokens": 30}, "text_piece_bytes": 4}, "chunk_delay_ms": 3}}]})";

class CrashTest : public ::testing::TestWithParam<int> {};

// seq -> the update, for every session/update of `session`.
void collect(const Json& m, const std::string& session, std::map<std::int64_t, Json>& into) {
  if (m["method"].is_string() && m["method"].as_string() == "session/update" &&
      m["params"]["sessionId"].as_string() == session) {
    into[m["params"]["_meta"]["agentd"]["seq"].as_int64()] = m["params"]["update"];
  }
}

TEST_P(CrashTest, EverythingTheClientSawSurvivesKillNine) {
  const int kill_after = GetParam();  // session/update notifications seen before the kill
  testing::TempDir dir;
  std::filesystem::create_directories(dir.file("work"));
  { std::ofstream(dir.file("work/notes.txt")) << "build: green\nrelease: friday\n"; }
  auto script = mock_model::parse_script(*support::parse_json(kScript), dir.path());
  ASSERT_TRUE(script) << script.error().message();
  auto mock = mock_model::MockModelServer::start(std::move(*script));
  ASSERT_TRUE(mock) << mock.error().message();

  auto agentd = testing::start_agentd_with_mock(dir, (*mock)->url());
  request(*agentd, 0, "initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  Json created = request(*agentd, 1, "session/new", R"({"cwd":")" + dir.file("work") + R"(","mcpServers":[]})");
  ASSERT_TRUE(created["result"]["sessionId"].is_string()) << created.dump();
  const std::string session = created["result"]["sessionId"].as_string();

  std::map<std::int64_t, Json> seen;
  ASSERT_TRUE(agentd->write(R"({"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":")" + session +
                            R"(","prompt":[{"type":"text","text":"What do the notes say?"}]}})"
                            "\n"));
  int updates = 0;
  bool answered = false;
  while (updates < kill_after) {
    Json m = next_message(*agentd);
    ASSERT_FALSE(m.is_null());
    if (m["id"].is_integer() && m["id"].as_int64() == 2) {
      answered = true;
      break;
    }
    collect(m, session, seen);
    if (m["method"].is_string() && m["method"].as_string() == "session/update") ++updates;
  }
  // The claim is a kill during the turn: a turn that ended first leaves an idle daemon to kill, which
  // proves nothing about a crash mid-stream.
  ASSERT_FALSE(answered) << "the prompt was answered after " << updates << " updates, before the kill point "
                         << kill_after << ": this kill would hit an idle daemon";
  agentd->signal(SIGKILL);
  ASSERT_TRUE(agentd->wait(10s));
  ASSERT_FALSE(seen.empty());

  // A new process on the same database: load replays the stored history, then answers.
  agentd = testing::start_agentd_with_mock(dir, (*mock)->url());
  request(*agentd, 0, "initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  ASSERT_TRUE(agentd->write(R"({"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":")" + session +
                            R"(","cwd":")" + dir.file("work") +
                            R"(","mcpServers":[]}})"
                            "\n"));
  std::map<std::int64_t, Json> replayed;
  for (;;) {
    Json m = next_message(*agentd);
    ASSERT_FALSE(m.is_null());
    if (!m.contains("method") && m["id"].is_integer() && m["id"].as_int64() == 1) {
      ASSERT_TRUE(m.contains("result")) << m.dump();
      break;
    }
    collect(m, session, replayed);
  }
  for (const auto& [seq, update] : seen) {
    // Advertised commands are the session's current state, announced afresh after a load, not history.
    if (update["sessionUpdate"] == Json("available_commands_update")) continue;
    auto it = replayed.find(seq);
    ASSERT_NE(it, replayed.end()) << "update " << seq
                                  << " was sent before the kill but is not replayed: " << update.dump();
    EXPECT_EQ(it->second, update) << "seq " << seq;
  }
  // Once the client saw anything of the turn, the user's prompt (logged first) is replayed too. A kill
  // before that may lose the prompt: it was never acknowledged in any way.
  bool turn_seen = false;
  for (const auto& [seq, update] : seen)
    turn_seen = turn_seen || update["sessionUpdate"].as_string() != "available_commands_update";
  bool prompt_replayed = false;
  for (const auto& [seq, update] : replayed) {
    prompt_replayed = prompt_replayed || (update["sessionUpdate"].as_string() == "user_message_chunk" &&
                                          update["content"]["text"].as_string() == "What do the notes say?");
  }
  if (turn_seen) {
    EXPECT_TRUE(prompt_replayed);
  }

  // The session goes on: a new turn on the loaded history is a valid request for the provider.
  (*mock)->clear_requests();
  Json next = request(*agentd, 2, "session/prompt",
                      R"({"sessionId":")" + session + R"(","prompt":[{"type":"text","text":"And again?"}]})");
  EXPECT_TRUE(next.contains("result")) << next.dump() << "\n" << agentd->stderr_text();
  auto requests = (*mock)->requests();
  ASSERT_FALSE(requests.empty());
  // Every tool call in what we sent has its result (a turn cut by the kill gets one on load).
  const Json& messages = requests.front()["body"]["messages"];
  std::vector<std::string> calls;
  std::vector<std::string> results;
  for (const Json& message : messages.as_array()) {
    if (!message["content"].is_array()) continue;
    for (const Json& block : message["content"].as_array()) {
      if (block["type"].is_string() && block["type"].as_string() == "tool_use")
        calls.push_back(block["id"].as_string());
      if (block["type"].is_string() && block["type"].as_string() == "tool_result")
        results.push_back(block["tool_use_id"].as_string());
    }
  }
  EXPECT_EQ(calls, results) << messages.dump();
  agentd->close_stdin();
  EXPECT_TRUE(agentd->wait(10s));
}

// 1: before the turn shows anything; 2: its first chunk; 8: mid-text; 16 and 24: around the tool
// call; 32: during the answer (the whole turn sends 37).
INSTANTIATE_TEST_SUITE_P(KillPoints, CrashTest, ::testing::Values(1, 2, 8, 16, 24, 32));

}  // namespace
}  // namespace agentd
