// What a turn adds to the request, end to end over the real binary and the mock model: pinned
// AGENTS.md text, a selected skill, the workspace context package from a stack trace, remembered facts
// (/remember and _agentd/memory/*), _agentd/context/preview, and /compact (summary in, pinned text kept
// byte for byte, the session going on after it).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/support/session_fixture.h"

namespace agentd {
namespace {

using support::Json;
using testing::request;

constexpr std::string_view kAgentsMd = "# House rules\nAlways run `make check` before saying done. Tabs: never.\n";

std::string reply(std::string_view name, std::string_view text) { return testing::text_reply(name, text); }

// A project with AGENTS.md, a bugfix skill and app/pricing.py (line 42 divides by a percentage).
void prepare_project(const std::filesystem::path& work) {
  std::filesystem::create_directories(work / ".git");
  std::filesystem::create_directories(work / "app");
  std::filesystem::create_directories(work / ".agents/skills/bugfix");
  std::ofstream(work / "AGENTS.md") << kAgentsMd;
  std::ofstream(work / ".agents/skills/bugfix/SKILL.md")
      << "---\nname: bugfix\ndescription: Fix a crash or traceback in the service\n---\n"
         "1. Reproduce the traceback first.\n";
  std::ofstream out(work / "app/pricing.py");
  for (int i = 1; i <= 60; ++i) {
    if (i == 42) {
      out << "    return price * (1 - discount_percent / 100)\n";
    } else {
      out << "# line " << i << "\n";
    }
  }
}

struct Fixture : testing::SessionFixture {
  explicit Fixture(const std::string& exchanges) : SessionFixture(exchanges, prepare_project) {}
};

std::string json_text(std::string_view raw) { return Json(std::string(raw)).dump(); }

TEST(ContextAndMemory, TheRequestCarriesInstructionsSkillAndEvidence) {
  Fixture f(reply("answer", "Fixed."));
  Json answer = f.prompt(
      "Fix this crash:\nTraceback (most recent call last):\n  File \"app/pricing.py\", line 42, in total\n"
      "ZeroDivisionError: division by zero");
  EXPECT_EQ(answer["result"]["stopReason"].as_string(), "end_turn") << answer.dump();
  const std::string body = f.body(0);
  // AGENTS.md verbatim (its JSON-escaped form, since the body is JSON).
  const std::string agents = json_text(kAgentsMd);
  EXPECT_NE(body.find(agents.substr(1, agents.size() - 2)), std::string::npos) << body;
  EXPECT_NE(body.find("Reproduce the traceback first."), std::string::npos) << "the bugfix skill is selected";
  EXPECT_NE(body.find("Evidence E1: app/pricing.py:"), std::string::npos) << body;
  EXPECT_NE(body.find("discount_percent"), std::string::npos);

  // The span says what was gathered.
  Json trace = f.call("_agentd/trace/get", Json::object());
  const Json& root = trace["result"]["spans"].as_array()[0];
  bool found = false;
  for (const Json& c : root["children"].as_array()) {
    if (c["name"].as_string() != "context.retrieve") continue;
    found = true;
    EXPECT_EQ(c["attributes"]["instruction_files"].as_int64(), 1) << c.dump();
    EXPECT_EQ(c["attributes"]["skills_selected"].as_int64(), 1) << c.dump();
    EXPECT_GE(c["attributes"]["evidence"].as_int64(), 1) << c.dump();
  }
  EXPECT_TRUE(found) << trace.dump();
}

TEST(ContextAndMemory, PreviewShowsThePackageWithoutCallingTheModel) {
  Fixture f("");
  Json params = Json::object();
  params["input"] = "ZeroDivisionError at app/pricing.py:42 in total";
  Json preview = f.call("_agentd/context/preview", params);
  ASSERT_TRUE(preview.contains("result")) << preview.dump();
  const Json& r = preview["result"];
  ASSERT_TRUE(r["context"]["evidence"].is_array()) << r.dump();
  ASSERT_GE(r["context"]["evidence"].size(), 1U) << r.dump();
  EXPECT_EQ(r["context"]["evidence"].as_array()[0]["path"].as_string(), "app/pricing.py");
  EXPECT_EQ(r["instructions"].size(), 1U);
  EXPECT_NE(r["request"]["system"].as_string().find("Always run `make check`"), std::string::npos);
  EXPECT_TRUE(f.mock->requests().empty()) << "a preview never calls the model";

  Json unknown = request(*f.agentd, 99, "_agentd/context/preview", R"({"sessionId":"s_nope","input":"x"})");
  EXPECT_EQ(unknown["error"]["code"].as_int64(), -32002) << unknown.dump();
  Json missing = f.call("_agentd/context/preview", Json::object());
  EXPECT_EQ(missing["error"]["code"].as_int64(), -32602) << missing.dump();
}

TEST(ContextAndMemory, RememberedFactsAreListedSelectedAndForgotten) {
  Fixture f(reply("first", "Noted.") + "," + reply("second", "Ok."));
  std::vector<Json> updates;
  f.prompt("/remember the staging database is called hydra-staging", &updates);
  ASSERT_FALSE(updates.empty());
  EXPECT_NE(updates.back()["update"]["content"]["text"].as_string().find("Remembered (fact"), std::string::npos);

  Json added = f.call("_agentd/memory/add", [] {
    Json p = Json::object();
    p["text"] = "releases are cut on Tuesdays";
    return p;
  }());
  ASSERT_TRUE(added.contains("result")) << added.dump();
  const std::int64_t tuesday = added["result"]["id"].as_int64();
  Json empty = f.call("_agentd/memory/add", [] {
    Json p = Json::object();
    p["text"] = "   ";
    return p;
  }());
  EXPECT_TRUE(empty.contains("error")) << "empty facts are refused: " << empty.dump();

  Json list = f.call("_agentd/memory/list", Json::object());
  ASSERT_EQ(list["result"]["facts"].size(), 2U) << list.dump();

  // A turn about the database gets that fact, not the release one.
  f.prompt("which staging database should the migration use?");
  const std::string body = f.body(0);
  EXPECT_NE(body.find("hydra-staging"), std::string::npos) << body;
  EXPECT_EQ(body.find("Tuesdays"), std::string::npos) << body;

  Json deleted = f.call("_agentd/memory/delete", [&] {
    Json p = Json::object();
    p["id"] = tuesday;
    return p;
  }());
  EXPECT_TRUE(deleted.contains("result")) << deleted.dump();
  Json again = f.call("_agentd/memory/delete", [&] {
    Json p = Json::object();
    p["id"] = tuesday;
    return p;
  }());
  EXPECT_TRUE(again.contains("error")) << again.dump();
  EXPECT_EQ(f.call("_agentd/memory/list", Json::object())["result"]["facts"].size(), 1U);

  updates.clear();
  f.prompt("/memory", &updates);
  ASSERT_FALSE(updates.empty());
  const std::string report = updates.back()["update"]["content"]["text"].as_string();
  EXPECT_NE(report.find("AGENTS.md"), std::string::npos) << report;
  EXPECT_NE(report.find("hydra-staging"), std::string::npos) << report;
}

TEST(ContextAndMemory, CompactSummarizesOlderTurnsAndTheSessionGoesOn) {
  constexpr std::string_view kSummary =
      "## Goals\n- migrate billing to cents\n## Decisions\n- keep floats out\n## Files touched\n- "
      "app/pricing.py\n"
      "## Open tasks\n- update the tests\n## Errors seen\n- none";
  Fixture f(reply("t1", "One.") + "," + reply("t2", "Two.") + "," + reply("t3", "Three.") + "," +
            reply("summary", kSummary) + "," + reply("after", "Continuing."));
  std::vector<Json> updates;
  // With nothing old enough to summarize, /compact says so and calls no model.
  f.prompt("/compact", &updates);
  ASSERT_FALSE(updates.empty());
  EXPECT_NE(updates.back()["update"]["content"]["text"].as_string().find("Nothing compacted"), std::string::npos)
      << updates.back().dump();
  EXPECT_TRUE(f.mock->requests().empty());

  f.prompt("first: the zebra-alpha question");
  f.prompt("second: the zebra-beta question");
  f.prompt("third: the zebra-gamma question");
  updates.clear();
  Json compacted = f.prompt("/compact", &updates);
  EXPECT_EQ(compacted["result"]["stopReason"].as_string(), "end_turn") << compacted.dump();
  bool marked = false;
  for (const Json& u : updates) {
    if (u["update"]["_meta"]["agentd"]["compaction"].is_object()) {
      marked = true;
      EXPECT_EQ(u["update"]["_meta"]["agentd"]["compaction"]["turns"].as_int64(), 1) << u.dump();
    }
  }
  EXPECT_TRUE(marked) << "the client sees the compaction";
  // The summarization request saw the oldest turn.
  EXPECT_NE(f.body(3).find("zebra-alpha"), std::string::npos);

  Json after = f.prompt("fourth: go on");
  EXPECT_EQ(after["result"]["stopReason"].as_string(), "end_turn") << after.dump();
  const std::string body = f.body(4);
  EXPECT_EQ(body.find("zebra-alpha"), std::string::npos) << "the summarized turn is no longer sent";
  EXPECT_NE(body.find("zebra-beta"), std::string::npos) << "the latest turns are kept";
  EXPECT_NE(body.find("migrate billing to cents"), std::string::npos) << "the summary is sent";
  const std::string agents = json_text(kAgentsMd);
  EXPECT_NE(body.find(agents.substr(1, agents.size() - 2)), std::string::npos) << "pinned text byte for byte";
}

// /compact's summarization call stalls (the provider sends a little and then nothing): session/cancel ends
// the command as it ends a turn, and the history is as it was.
TEST(ContextAndMemory, ACompactionCanBeCancelled) {
  const std::string stalled =
      R"({"name": "summary", "response": {"generate": {"provider": "anthropic", "text": "## Goals\n- some",
           "text_piece_bytes": 8}, "stall_after_bytes": 300}})";
  Fixture f(reply("t1", "One.") + "," + reply("t2", "Two.") + "," + reply("t3", "Three.") + "," + stalled + "," +
            reply("after", "Continuing."));
  f.prompt("first: the zebra-alpha question");
  f.prompt("second: the zebra-beta question");
  f.prompt("third: the zebra-gamma question");
  // Nothing reaches the client while the summary is awaited: the cancel goes once the summarization request
  // has reached the model (and stalled there).
  const int id = f.next_id++;
  f.agentd->write(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                  R"(,"method":"session/prompt","params":{"sessionId":")" + f.session +
                  R"(","prompt":[{"type":"text","text":"/compact"}]}})" + "\n");
  for (int i = 0; i < 500 && f.mock->requests().size() < 4; ++i) f.agentd->run_for(std::chrono::milliseconds(10));
  ASSERT_EQ(f.mock->requests().size(), 4U);
  f.agentd->write(R"({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":")" + f.session + "\"}}\n");
  Json compacted;
  for (;;) {
    Json m = testing::next_message(*f.agentd);
    if (m.is_null() || (!m.contains("method") && m["id"] == Json(id))) {
      compacted = m;
      break;
    }
  }
  EXPECT_EQ(compacted["result"]["stopReason"], Json("cancelled")) << compacted.dump();
  // Nothing was compacted: the next request still carries the oldest turn.
  const Json after = f.prompt("fourth: go on");
  EXPECT_EQ(after["result"]["stopReason"].as_string(), "end_turn") << after.dump();
  EXPECT_NE(f.body(4).find("zebra-alpha"), std::string::npos);
}

TEST(ContextAndMemory, ASkillCanBeForcedAndSkillsSaysWhy) {
  Fixture f(reply("plain", "Hello.") + "," + reply("forced", "Done."));
  f.prompt("say hello to the team");
  EXPECT_EQ(f.body(0).find("Reproduce the traceback first."), std::string::npos) << "not relevant, not sent";
  std::vector<Json> updates;
  f.prompt("/skills", &updates);
  ASSERT_FALSE(updates.empty());
  std::string report = updates.back()["update"]["content"]["text"].as_string();
  EXPECT_NE(report.find("bugfix"), std::string::npos) << report;
  EXPECT_EQ(report.find("forced with"), std::string::npos) << report;

  f.prompt("/bugfix look at the deploy notes");
  EXPECT_NE(f.body(1).find("Reproduce the traceback first."), std::string::npos) << "forced, so sent";
  updates.clear();
  f.prompt("/skills", &updates);
  ASSERT_FALSE(updates.empty());
  report = updates.back()["update"]["content"]["text"].as_string();
  EXPECT_NE(report.find("forced with /bugfix"), std::string::npos) << report;
}

TEST(ContextAndMemory, TheSummaryOutlivesARestart) {
  constexpr std::string_view kSummary = "## Goals\n- rename the ledger module\n## Open tasks\n- fix imports";
  Fixture f(reply("t1", "One.") + "," + reply("t2", "Two.") + "," + reply("t3", "Three.") + "," +
            reply("summary", kSummary) + "," + reply("after", "Continuing."));
  f.prompt("first: the yak-alpha question");
  f.prompt("second: the yak-beta question");
  f.prompt("third: the yak-gamma question");
  f.prompt("/compact");
  ASSERT_EQ(f.mock->requests().size(), 4U);

  // A new agentd on the same database loads the session: the summary, not the turn, is sent.
  f.agentd.reset();
  f.agentd = testing::start_in_process_with_mock(f.dir, f.mock->url());
  request(*f.agentd, 0, "initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  Json loaded =
      request(*f.agentd, 1, "session/load",
              R"({"sessionId":")" + f.session + R"(","cwd":")" + f.dir.file("work") + R"(","mcpServers":[]})");
  ASSERT_TRUE(loaded.contains("result")) << loaded.dump();
  f.prompt("fourth: go on");
  const std::string body = f.body(4);
  EXPECT_EQ(body.find("yak-alpha"), std::string::npos) << body;
  EXPECT_NE(body.find("yak-beta"), std::string::npos);
  EXPECT_NE(body.find("rename the ledger module"), std::string::npos) << body;
}

}  // namespace
}  // namespace agentd
