// The ACP binding against the real binary and the mock model, for what transcripts cannot express
// simply: file reads through the editor when it offers fs/read_text_file (its unsaved buffer wins over
// the disk), and the extension methods _agentd/trace/get, _agentd/cost/get and _agentd/events/replay.
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <vector>

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

constexpr std::string_view kScript = R"({"exchanges": [
  {"name": "read", "response": {"generate": {"provider": "anthropic", "text": "Reading.",
     "tool_calls": [{"id": "toolu_buf", "name": "read_file", "input": {"path": "notes.txt"}}],
     "usage": {"input_tokens": 100, "output_tokens": 20}}}},
  {"name": "answer", "expect": {"body_contains": "unsaved editor text"},
   "response": {"generate": {"provider": "anthropic", "text": "The buffer says so.",
     "usage": {"input_tokens": 150, "output_tokens": 10}}}}]})";

// The same turn, with no expectation on what the tool returned.
constexpr std::string_view kPlainScript = R"({"exchanges": [
  {"name": "read", "response": {"generate": {"provider": "anthropic", "text": "Reading.",
     "tool_calls": [{"id": "toolu_buf", "name": "read_file", "input": {"path": "notes.txt"}}],
     "usage": {"input_tokens": 100, "output_tokens": 20}}}},
  {"name": "answer", "response": {"generate": {"provider": "anthropic", "text": "Done.",
     "usage": {"input_tokens": 150, "output_tokens": 10}}}}]})";

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<mock_model::MockModelServer> mock;
  std::unique_ptr<testing::AcpClient> agentd;
  std::string session;

  Fixture(bool client_reads_files, std::string_view script_text, bool client_writes_files = false) {
    std::filesystem::create_directories(dir.file("work"));
    std::ofstream(dir.file("work/notes.txt")) << "text on disk\n";
    auto script = mock_model::parse_script(*support::parse_json(script_text), dir.path());
    EXPECT_TRUE(script);
    auto server = mock_model::MockModelServer::start(std::move(*script));
    EXPECT_TRUE(server);
    mock = std::move(*server);
    agentd = testing::start_in_process_with_mock(dir, mock->url());
    request(*agentd, 0, "initialize",
            std::string(R"({"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":)") +
                (client_reads_files ? "true" : "false") + R"(,"writeTextFile":)" +
                (client_writes_files ? "true" : "false") + "}}}");
    Json created = request(*agentd, 1, "session/new", R"({"cwd":")" + dir.file("work") + R"(","mcpServers":[]})");
    session = created["result"]["sessionId"].is_string() ? created["result"]["sessionId"].as_string() : "";
    EXPECT_FALSE(session.empty()) << created.dump();
  }
};

TEST(AcpSession, ReadsGoThroughTheEditorWhenItOffersFiles) {
  Fixture f(true, kScript);
  int fs_requests = 0;
  bool saw_tool_call = false;
  Json answer = request(
      *f.agentd, 2, "session/prompt",
      R"({"sessionId":")" + f.session + R"(","prompt":[{"type":"text","text":"read it"}]})", [&](const Json& m) {
        if (m["method"].is_string() && m["method"].as_string() == "session/update" &&
            m["params"]["update"]["sessionUpdate"].is_string() &&
            m["params"]["update"]["sessionUpdate"].as_string() == "tool_call") {
          saw_tool_call = true;
        }
        if (!m["method"].is_string() || m["method"].as_string() != "fs/read_text_file") return;
        ++fs_requests;
        EXPECT_TRUE(saw_tool_call) << "the client sees the tool call before the read made for it";
        EXPECT_EQ(m["params"]["sessionId"].as_string(), f.session);
        EXPECT_EQ(m["params"]["path"].as_string(), std::filesystem::canonical(f.dir.file("work/notes.txt")).string());
        f.agentd->write(R"({"jsonrpc":"2.0","id":)" + m["id"].dump() +
                        R"(,"result":{"content":"unsaved editor text\n"}})"
                        "\n");
      });
  EXPECT_EQ(answer["result"]["stopReason"].as_string(), "end_turn") << answer.dump();
  EXPECT_EQ(fs_requests, 1);
  // The mock's second exchange expects the editor's text in the tool result.
  auto requests = f.mock->requests();
  ASSERT_EQ(requests.size(), 2U);
  EXPECT_TRUE(requests[1]["expectation_failures"].size() == 0) << requests[1]["expectation_failures"].dump();
}

// An editor that serves reads and writes: the model edits the unsaved buffer, the edit goes back through
// fs/write_text_file (after the tool call the client is drawing), and the disk is left to the editor.
TEST(AcpSession, EditsOfAnUnsavedBufferGoThroughTheEditor) {
  constexpr std::string_view script = R"({"exchanges": [
    {"name": "read", "response": {"generate": {"provider": "anthropic", "text": "Reading.",
       "tool_calls": [{"id": "toolu_r", "name": "read_file", "input": {"path": "notes.txt"}}],
       "usage": {"input_tokens": 100, "output_tokens": 20}}}},
    {"name": "edit", "response": {"generate": {"provider": "anthropic", "text": "Editing.",
       "tool_calls": [{"id": "toolu_e", "name": "edit_file",
                       "input": {"path": "notes.txt", "old_string": "unsaved", "new_string": "edited"}}],
       "usage": {"input_tokens": 120, "output_tokens": 20}}}},
    {"name": "answer", "expect": {"body_contains": "Edited notes.txt"},
     "response": {"generate": {"provider": "anthropic", "text": "Done.",
       "usage": {"input_tokens": 150, "output_tokens": 10}}}}]})";
  Fixture f(true, script, true);
  request(*f.agentd, 2, "session/set_mode", R"({"sessionId":")" + f.session + R"(","modeId":"acceptEdits"})");
  std::string buffer = "unsaved editor text\n";
  std::vector<std::string> written;
  bool saw_edit_call = false;
  Json answer = request(
      *f.agentd, 3, "session/prompt",
      R"({"sessionId":")" + f.session + R"(","prompt":[{"type":"text","text":"edit it"}]})", [&](const Json& m) {
        const Json& update = m["params"]["update"];
        if (update["sessionUpdate"] == Json("tool_call") && update["toolCallId"] == Json("toolu_e")) {
          saw_edit_call = true;
        }
        if (m["method"] == Json("fs/read_text_file")) {
          Json reply = Json::object();
          reply.set("jsonrpc", "2.0");
          reply.set("id", m["id"]);
          Json result = Json::object();
          result.set("content", buffer);
          reply.set("result", std::move(result));
          f.agentd->write(reply.dump() + "\n");
        } else if (m["method"] == Json("fs/write_text_file")) {
          EXPECT_TRUE(saw_edit_call) << "the client sees the tool call before the write made for it";
          EXPECT_EQ(m["params"]["path"].as_string(), std::filesystem::canonical(f.dir.file("work/notes.txt")).string());
          buffer = m["params"]["content"].as_string();
          written.push_back(buffer);
          f.agentd->write(R"({"jsonrpc":"2.0","id":)" + m["id"].dump() +
                          R"(,"result":null})"
                          "\n");
        }
      });
  EXPECT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
  ASSERT_EQ(written.size(), 1U);
  EXPECT_EQ(written[0], "edited editor text\n");
  std::ifstream disk(f.dir.file("work/notes.txt"));
  std::string on_disk((std::istreambuf_iterator<char>(disk)), std::istreambuf_iterator<char>());
  EXPECT_EQ(on_disk, "text on disk\n") << "the editor saves; agentd did not write the disk";
  auto requests = f.mock->requests();
  ASSERT_EQ(requests.size(), 3U);
  EXPECT_TRUE(requests[2]["expectation_failures"].size() == 0) << requests[2]["body"].dump();
}

TEST(AcpSession, WithoutTheEditorReadsComeFromDisk) {
  Fixture f(false, kPlainScript);
  bool asked = false;
  request(*f.agentd, 2, "session/prompt",
          R"({"sessionId":")" + f.session + R"(","prompt":[{"type":"text","text":"read it"}]})", [&](const Json& m) {
            asked = asked || (m["method"].is_string() && m["method"].as_string() == "fs/read_text_file");
          });
  EXPECT_FALSE(asked);
  auto requests = f.mock->requests();
  ASSERT_EQ(requests.size(), 2U);
  EXPECT_NE(requests[1]["body"].dump().find("text on disk"), std::string::npos);
}

// A response cut at the output limit (or refused) while it makes tool calls: the calls are not run, each
// gets an error result the model can act on, and the next prompt's request is valid (every call has its
// result) instead of an HTTP 400 forever after.
// A model chosen by its name in the config's `models` stays that name: the answer's currentValue and the
// option list show the choice that was made (not the provider:model it resolves to, added as a new choice).
TEST(AcpSession, AModelChosenByItsConfigNameKeepsThatName) {
  testing::SessionFixture f("", [](const std::filesystem::path& work) {
    const auto config = work.parent_path() / "config" / "agentd";
    std::filesystem::create_directories(config);
    std::ofstream(config / "config.json")
        << R"({"models": {"fast": {"provider": "anthropic", "model": "claude-haiku-4-5"}}})";
  });
  Json set = request(*f.agentd, 5, "session/set_config_option",
                     R"({"sessionId":")" + f.session + R"(","configId":"model","value":"fast"})");
  ASSERT_TRUE(set["result"]["configOptions"].is_array()) << set.dump();
  const Json& option = set["result"]["configOptions"].as_array().at(0);
  EXPECT_EQ(option["currentValue"], Json("fast")) << set.dump();
  std::vector<std::string> values;
  for (const Json& choice : option["options"].as_array()) values.push_back(choice["value"].as_string());
  EXPECT_EQ(values, (std::vector<std::string>{"anthropic:claude-sonnet-4-5", "fast"})) << set.dump();
  std::vector<Json> updates;
  f.prompt("/model", &updates);
  std::string text;
  for (const Json& u : updates) {
    if (u["update"]["sessionUpdate"] == Json("agent_message_chunk")) text += u["update"]["content"]["text"].as_string();
  }
  EXPECT_NE(text.find("Model: fast"), std::string::npos) << text;
}

TEST(AcpSession, CallsOfACutResponseGetResultsAndTheSessionGoesOn) {
  for (const std::string stop : {"max_tokens", "refusal"}) {
    const std::string script = R"({"exchanges": [
      {"name": "cut", "response": {"generate": {"provider": "anthropic", "text": "Writing.", "stop_reason": ")" +
                               stop + R"(",
         "tool_calls": [{"id": "toolu_cut", "name": "write_file", "input": {"path": "big.txt", "content": "x"}}],
         "usage": {"input_tokens": 100, "output_tokens": 20}}}},
      {"name": "next", "response": {"generate": {"provider": "anthropic", "text": "Smaller this time.",
         "usage": {"input_tokens": 150, "output_tokens": 10}}}}]})";
    Fixture f(false, script);
    std::vector<Json> failed;
    Json first = request(
        *f.agentd, 2, "session/prompt",
        R"({"sessionId":")" + f.session + R"(","prompt":[{"type":"text","text":"write it"}]})", [&](const Json& m) {
          const Json& update = m["params"]["update"];
          if (update["sessionUpdate"] == Json("tool_call_update") && update["status"] == Json("failed")) {
            failed.push_back(update);
          }
        });
    EXPECT_EQ(first["result"]["stopReason"], Json(stop)) << first.dump();
    EXPECT_FALSE(std::filesystem::exists(f.dir.file("work/big.txt"))) << stop;
    ASSERT_EQ(failed.size(), 1U) << stop;
    EXPECT_EQ(failed[0]["toolCallId"], Json("toolu_cut"));
    Json second = request(*f.agentd, 3, "session/prompt",
                          R"({"sessionId":")" + f.session + R"(","prompt":[{"type":"text","text":"again"}]})");
    EXPECT_EQ(second["result"]["stopReason"], Json("end_turn")) << second.dump();
    auto requests = f.mock->requests();
    ASSERT_EQ(requests.size(), 2U) << stop;
    // The call and its result, in that order, before the new prompt.
    const std::string body = requests[1]["body"].dump();
    const auto call_at = body.find(R"("id":"toolu_cut")");
    const auto result_at = body.find(R"("tool_use_id":"toolu_cut")");
    ASSERT_NE(call_at, std::string::npos) << body;
    ASSERT_NE(result_at, std::string::npos) << body;
    EXPECT_LT(call_at, result_at);
    EXPECT_NE(body.find(stop == "max_tokens" ? "cut at the output limit" : "ended in a refusal", result_at),
              std::string::npos)
        << body;
  }
}

// A tool round trip reuses the model connection: the first response's last bytes (its chunked end) come
// 40 ms after its final event, while the tool runs; the next model call waits for them rather than
// opening a second connection (with a real provider, a new TCP and TLS handshake).
TEST(AcpSession, ATwoCallTurnUsesOneConnection) {
  constexpr std::string_view kSlowEnd = R"({"exchanges": [
    {"name": "read", "response": {"end_delay_ms": 40, "generate": {"provider": "anthropic", "text": "Reading.",
       "tool_calls": [{"id": "toolu_buf", "name": "read_file", "input": {"path": "notes.txt"}}],
       "usage": {"input_tokens": 100, "output_tokens": 20}}}},
    {"name": "answer", "response": {"generate": {"provider": "anthropic", "text": "Done.",
       "usage": {"input_tokens": 150, "output_tokens": 10}}}}]})";
  Fixture f(false, kSlowEnd);
  Json answer = request(*f.agentd, 2, "session/prompt",
                        R"({"sessionId":")" + f.session + R"(","prompt":[{"type":"text","text":"read it"}]})");
  EXPECT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
  const auto requests = f.mock->requests();
  ASSERT_EQ(requests.size(), 2U);
  EXPECT_EQ(requests[0]["connection"], requests[1]["connection"])
      << requests[0]["connection"].dump() << " then " << requests[1]["connection"].dump();
}

// A session's dollar budget, set by the client: the first call's answer is cut to what the budget leaves,
// and once it is spent the turn stops before the next call, saying which budget (issue 17, item 9).
TEST(AcpSession, ABudgetStopsTheTurnBeforeTheCallThatWouldPassIt) {
  constexpr std::string_view kCostly = R"({"exchanges": [
    {"name": "read", "response": {"generate": {"provider": "anthropic", "text": "Reading.",
       "tool_calls": [{"id": "toolu_buf", "name": "read_file", "input": {"path": "notes.txt"}}],
       "usage": {"input_tokens": 100000, "output_tokens": 1000}}}},
    {"name": "never", "response": {"generate": {"provider": "anthropic", "text": "Too late."}}}]})";
  Fixture f(false, kCostly);
  const std::string session = R"({"sessionId":")" + f.session + R"(")";
  Json bad = request(*f.agentd, 2, "_agentd/session/set_budget", session + R"(,"turnUsd":-1})");
  EXPECT_EQ(bad["error"]["code"], Json(-32602)) << bad.dump();
  Json set = request(*f.agentd, 3, "_agentd/session/set_budget", session + R"(,"sessionUsd":0.3,"turnUsd":5})");
  ASSERT_TRUE(set.contains("result")) << set.dump();
  EXPECT_EQ(set["result"]["sessionUsd"], Json(0.3));
  EXPECT_EQ(set["result"]["turnUsd"], Json(5.0));
  // null removes one budget and leaves the others.
  set = request(*f.agentd, 4, "_agentd/session/set_budget", session + R"(,"turnUsd":null})");
  EXPECT_EQ(set["result"]["sessionUsd"], Json(0.3)) << set.dump();
  EXPECT_FALSE(set["result"].contains("turnUsd")) << set.dump();

  Json answer = request(*f.agentd, 5, "session/prompt", session + R"(,"prompt":[{"type":"text","text":"read it"}]})");
  EXPECT_EQ(answer["result"]["stopReason"], Json("max_turn_requests")) << answer.dump();
  const Json& by = answer["result"]["_meta"]["agentd"]["stoppedBy"];
  EXPECT_EQ(by["budget"], Json("sessionUsd")) << answer.dump();
  EXPECT_EQ(by["limit"], Json(0.3));
  EXPECT_GT(by["spent"].as_double(), 0.3);  // 100,000 input and 1,000 output tokens: $0.315
  const auto requests = f.mock->requests();
  ASSERT_EQ(requests.size(), 1U);  // the second call never went out
  // The first call's answer was limited to what $0.30 leaves after its input.
  const Json& max_tokens = requests[0]["body"]["max_tokens"];
  ASSERT_TRUE(max_tokens.is_integer()) << requests[0]["body"].dump();
  EXPECT_LT(max_tokens.as_int64(), 20000);
  EXPECT_GT(max_tokens.as_int64(), 10000);
}

TEST(AcpSession, ExtensionMethodsReportTheTurn) {
  Fixture f(false, kPlainScript);
  std::int64_t last_seq = 0;
  std::vector<Json> sent;  // the session/update params the client was sent during the turn
  Json answer = request(*f.agentd, 2, "session/prompt",
                        R"({"sessionId":")" + f.session + R"(","prompt":[{"type":"text","text":"read it"}]})",
                        [&](const Json& m) {
                          if (m["method"].is_string() && m["method"].as_string() == "session/update") {
                            last_seq = m["params"]["_meta"]["agentd"]["seq"].as_int64();
                            sent.push_back(m["params"]);
                          }
                        });
  ASSERT_TRUE(answer["result"]["_meta"]["agentd"]["turnId"].is_string()) << answer.dump();
  const std::string turn = answer["result"]["_meta"]["agentd"]["turnId"].as_string();

  // The span tree: turn.run at the root, the steps under it.
  Json trace = request(*f.agentd, 3, "_agentd/trace/get", R"({"sessionId":")" + f.session + R"("})");
  ASSERT_TRUE(trace.contains("result")) << trace.dump();
  EXPECT_EQ(trace["result"]["turnId"].as_string(), turn);
  ASSERT_EQ(trace["result"]["spans"].size(), 1U);
  const Json& root = trace["result"]["spans"].as_array()[0];
  EXPECT_EQ(root["name"].as_string(), "turn.run");
  std::multiset<std::string> children;
  for (const Json& c : root["children"].as_array()) children.insert(c["name"].as_string());
  EXPECT_EQ(children.count("context.retrieve"), 1U);
  EXPECT_EQ(children.count("model.call"), 2U);
  EXPECT_EQ(children.count("tool.read_file"), 1U);
  EXPECT_EQ(children.count("response.render"), 1U);
  // context.retrieve holds the steps of gathering the turn's context, recorded off the event loop.
  std::multiset<std::string> steps;
  std::function<void(const Json&)> collect = [&](const Json& span) {
    for (const Json& c : span["children"].as_array()) {
      steps.insert(c["name"].as_string());
      collect(c);
    }
  };
  for (const Json& c : root["children"].as_array()) {
    if (c["name"] == Json("context.retrieve")) collect(c);
  }
  for (const char* step : {"instructions.load", "memory.select", "verify.discover", "context.workspace",
                           "context.index", "context.git", "context.search", "context.references"}) {
    EXPECT_EQ(steps.count(step), 1U) << step;
  }
  EXPECT_EQ(children.count("skill.select"), 1U) << "beside context.retrieve, as the seed draws the tree";

  // The same turn in the Trace Event format: one complete event per span, times from the turn's start,
  // the turn's id in the process name. Everything is on one track except context.git, which runs beside
  // context.index: when the two overlap in time, the later one gets a second track.
  Json chrome = request(*f.agentd, 7, "_agentd/trace/get", R"({"sessionId":")" + f.session + R"(","format":"chrome"})");
  ASSERT_TRUE(chrome.contains("result")) << chrome.dump();
  EXPECT_FALSE(chrome["result"].contains("spans"));
  EXPECT_EQ(chrome["result"]["displayTimeUnit"].as_string(), "ms");
  std::size_t complete = 0;
  for (const Json& e : chrome["result"]["traceEvents"].as_array()) {
    if (e["ph"].as_string() == "M" && e["name"].as_string() == "process_name") {
      EXPECT_EQ(e["args"]["name"].as_string(), "agentd turn " + turn);
    }
    if (e["ph"].as_string() != "X") continue;
    ++complete;
    if (e["name"].as_string() == "turn.run") {
      EXPECT_EQ(e["ts"].as_int64(), 0);
    }
    EXPECT_GE(e["ts"].as_int64(), 0);
    if (e["name"].as_string() == "context.git" || e["name"].as_string() == "context.index") {
      EXPECT_LE(e["tid"].as_int64(), 2) << e.dump();
    } else {
      EXPECT_EQ(e["tid"].as_int64(), 1) << e.dump();
    }
  }
  std::function<std::size_t(const Json&)> count = [&](const Json& span) {
    std::size_t n = 1;
    for (const Json& c : span["children"].as_array()) n += count(c);
    return n;
  };
  EXPECT_EQ(complete, count(root)) << "one event per span of the tree";
  Json wrong = request(*f.agentd, 8, "_agentd/trace/get", R"({"sessionId":")" + f.session + R"(","format":"otlp"})");
  EXPECT_EQ(wrong["error"]["code"].as_int64(), -32602) << wrong.dump();

  Json cost = request(*f.agentd, 4, "_agentd/cost/get", R"({"sessionId":")" + f.session + R"("})");
  ASSERT_TRUE(cost.contains("result")) << cost.dump();
  EXPECT_EQ(cost["result"]["session"]["inputTokens"].as_int64(), 250);
  EXPECT_EQ(cost["result"]["session"]["outputTokens"].as_int64(), 30);
  EXPECT_EQ(cost["result"]["session"]["modelCalls"].as_int64(), 2);
  EXPECT_TRUE(cost["result"]["session"]["costUsd"].is_number()) << "claude-sonnet-4-5 is priced";

  // Replay from the middle gives exactly the later updates, in order, as session/update params.
  Json replay = request(*f.agentd, 5, "_agentd/events/replay", R"({"sessionId":")" + f.session + R"(","since":3})");
  ASSERT_TRUE(replay.contains("result")) << replay.dump();
  EXPECT_EQ(replay["result"]["lastSeq"].as_int64(), last_seq);
  std::vector<Json> later;
  for (const Json& params : sent) {
    if (params["_meta"]["agentd"]["seq"].as_int64() > 3) later.push_back(params);
  }
  // The turn streams text, a tool call and usage: far more than three updates, so the list cannot be empty.
  ASSERT_GT(last_seq, 3);
  ASSERT_EQ(later.size(), static_cast<std::size_t>(last_seq - 3)) << "the client missed updates it was sent";
  const Json& events = replay["result"]["events"];
  ASSERT_TRUE(events.is_array()) << replay.dump();
  EXPECT_EQ(events, Json(later)) << replay.dump();

  Json unknown = request(*f.agentd, 6, "_agentd/trace/get", R"({"sessionId":"s_nope"})");
  EXPECT_EQ(unknown["error"]["code"].as_int64(), -32002) << unknown.dump();
}

// todo_write: each call's whole list reaches the client as a `plan` update, without a permission question
// (nothing changes on disk), and session/load shows the latest plan again, before its answer.
TEST(AcpSession, TodoWriteStreamsThePlanAndLoadReplaysIt) {
  constexpr std::string_view script = R"({"exchanges": [
    {"name": "plan", "response": {"generate": {"provider": "anthropic", "text": "Planning.",
       "tool_calls": [{"id": "toolu_p1", "name": "todo_write", "input": {"todos": [
         {"content": "Reproduce the bug", "status": "in_progress", "priority": "high"},
         {"content": "Fix the parser", "status": "pending"}]}}],
       "usage": {"input_tokens": 100, "output_tokens": 20}}}},
    {"name": "progress", "expect": {"body_contains": "[>] Reproduce the bug"},
     "response": {"generate": {"provider": "anthropic", "text": "Reproduced.",
       "tool_calls": [{"id": "toolu_p2", "name": "todo_write", "input": {"todos": [
         {"content": "Reproduce the bug", "status": "completed", "priority": "high"},
         {"content": "Fix the parser", "status": "in_progress"}]}}],
       "usage": {"input_tokens": 120, "output_tokens": 20}}}},
    {"name": "bad plan", "response": {"generate": {"provider": "anthropic", "text": "Oops.",
       "tool_calls": [{"id": "toolu_p3", "name": "todo_write", "input": {"todos": [
         {"content": "", "status": "done"}]}}],
       "usage": {"input_tokens": 130, "output_tokens": 20}}}},
    {"name": "answer", "expect": {"body_contains": "the input of todo_write does not match its schema"},
     "response": {"generate": {"provider": "anthropic", "text": "Done.",
       "usage": {"input_tokens": 150, "output_tokens": 10}}}}]})";
  Fixture f(false, script);
  std::vector<Json> plans;
  bool asked = false;
  auto watch = [&](const Json& m) {
    if (m["method"] == Json("session/request_permission")) asked = true;
    if (m["method"] == Json("session/update") && m["params"]["update"]["sessionUpdate"] == Json("plan")) {
      plans.push_back(m["params"]["update"]);
    }
  };
  Json answer = request(*f.agentd, 2, "session/prompt",
                        R"({"sessionId":")" + f.session + R"(","prompt":[{"type":"text","text":"fix it"}]})", watch);
  EXPECT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
  EXPECT_FALSE(asked) << "a plan changes nothing on disk: no permission question, even in default mode";
  ASSERT_EQ(plans.size(), 2U) << "one per accepted call; the invalid third one sets nothing";
  const Json first = support::parse_json(R"({"sessionUpdate":"plan","entries":[
      {"content":"Reproduce the bug","priority":"high","status":"in_progress"},
      {"content":"Fix the parser","priority":"medium","status":"pending"}]})")
                         .value();
  EXPECT_EQ(plans[0]["entries"], first["entries"]) << plans[0].dump();
  EXPECT_EQ(plans[1]["entries"].as_array()[0]["status"], Json("completed"));
  EXPECT_EQ(plans[1]["entries"].as_array()[1]["status"], Json("in_progress"));
  auto requests = f.mock->requests();
  ASSERT_EQ(requests.size(), 4U);
  for (std::size_t i = 1; i < requests.size(); ++i) {
    EXPECT_TRUE(requests[i]["expectation_failures"].size() == 0) << requests[i]["expectation_failures"].dump();
  }

  // A new agentd on the same database: the latest plan comes back with the history, before the answer.
  f.agentd.reset();
  f.agentd = testing::start_in_process_with_mock(f.dir, f.mock->url());
  request(*f.agentd, 0, "initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  std::vector<Json> replayed;
  Json loaded = request(*f.agentd, 1, "session/load",
                        R"({"sessionId":")" + f.session + R"(","cwd":")" + f.dir.file("work") + R"(","mcpServers":[]})",
                        [&](const Json& m) {
                          if (m["params"]["update"]["sessionUpdate"] == Json("plan")) {
                            replayed.push_back(m["params"]["update"]);
                          }
                        });
  ASSERT_TRUE(loaded.contains("result")) << loaded.dump();
  ASSERT_EQ(replayed.size(), 2U);
  EXPECT_EQ(replayed.back(), plans.back());
}

}  // namespace
}  // namespace agentd
