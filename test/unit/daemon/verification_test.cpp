// Verification feedback end to end over the real binary, the mock model and node's real test runner
// (the Node fixture project, test/fixtures/verify/node): the project's commands in the system prompt,
// the verify tool checking the turn's changed files, verify.auto = suggest (a note) and run (a failure
// in the changed code goes back to the model, which sees it and fixes it; an unrelated failure is
// reported and not chased), and _agentd/verify/plan.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/support/session_fixture.h"
#include "test/unit/verify/verify_test_util.h"

namespace agentd {
namespace {

namespace fs = std::filesystem;
using support::Json;
using ::testing::HasSubstr;
using ::testing::Not;

// A mock exchange that calls one tool.
std::string tool_reply(std::string_view name, std::string_view tool, const std::string& input_json) {
  return fmt::format(R"({{"name": "{}", "response": {{"generate": {{"provider": "anthropic", "text": "Working.",
     "tool_calls": [{{"id": "toolu_{}", "name": "{}", "input": {}}}]}}}}}})",
                     name, name, tool, input_json);
}

std::string edit(std::string_view name, std::string_view old_text, std::string_view new_text) {
  Json input = Json::object();
  input["path"] = "src/calc.js";
  input["old_string"] = std::string(old_text);
  input["new_string"] = std::string(new_text);
  return tool_reply(name, "edit_file", input.dump());
}

// The Node fixture, plus the user's config (XDG_CONFIG_HOME is <dir>/config; a project file could not
// loosen these without trust): no prompts (bypass), verify.auto as given, and a sandbox that falls back
// where the kernel has none (CI containers).
std::function<void(const fs::path&)> node_project(std::string_view auto_mode, bool break_more_test = false) {
  return [mode = std::string(auto_mode), break_more_test](const fs::path& work) {
    fs::copy(fs::path(AGENTD_SOURCE_DIR) / "test/fixtures/verify/node", work, fs::copy_options::recursive);
    fs::create_directories(work / "../config/agentd");
    std::ofstream(work / "../config/agentd/config.json")
        << R"({"mode": "bypass", "shell": {"sandbox": "fallback"}, "verify": {"auto": ")" << mode << R"("}})";
    if (break_more_test) {
      std::ofstream(work / "test/more.test.js")
          << "'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert');\n"
             "test('unrelated', () => {\n  assert.strictEqual(1, 2);\n});\n";
    }
  };
}

bool have_node() {
  return !tools::verify::testing::find_program("node").empty() && !tools::verify::testing::find_program("npm").empty();
}

// The model reads the file first: edits of unread files are refused.
std::string read(std::string_view name) { return tool_reply(name, "read_file", R"({"path": "src/calc.js"})"); }

// The verification results the client was shown, in order (tool_call_update _meta.agentd.verification
// of verify calls; an edit's result has a `verification` of its own, the read-back check).
std::vector<Json> verifications(const std::vector<Json>& updates) {
  std::vector<Json> out;
  for (const Json& u : updates) {
    const Json& v = u["update"]["_meta"]["agentd"]["verification"];
    if (v.is_object() && v.contains("command")) out.push_back(v);
  }
  return out;
}

std::string agent_text(const std::vector<Json>& updates) {
  std::string text;
  for (const Json& u : updates) {
    if (u["update"]["sessionUpdate"].is_string() && u["update"]["sessionUpdate"].as_string() == "agent_message_chunk")
      text += u["update"]["content"]["text"].as_string();
  }
  return text;
}

TEST(Verification, TheModelVerifiesItsChangeWithTheVerifyTool) {
  if (!have_node()) GTEST_SKIP() << "node or npm is not installed";
  testing::SessionFixture f(read("read") + "," + edit("change", "return a - b;", "return b - a;") + "," +
                                tool_reply("check", "verify", "{}") + "," + testing::text_reply("done", "Done."),
                            node_project("suggest"));
  std::vector<Json> updates;
  Json answer = f.prompt("make sub symmetric", &updates);
  EXPECT_EQ(answer["result"]["stopReason"].as_string(), "end_turn") << answer.dump();
  // The project's commands are in the system prompt.
  EXPECT_THAT(f.body(0), HasSubstr("# Verification"));
  EXPECT_THAT(f.body(0), HasSubstr("`npm test` (test, package.json scripts.test)"));
  // With no arguments, verify ran the test of the file this turn changed, and said so to the client.
  auto results = verifications(updates);
  ASSERT_EQ(results.size(), 1U) << agent_text(updates);
  EXPECT_EQ(results[0]["command"].as_string(), "npm test -- test/calc.test.js");
  EXPECT_EQ(results[0]["status"].as_string(), "failed");
  EXPECT_THAT(f.body(3), HasSubstr("FAILED: npm test -- test/calc.test.js"));
  // The model verified, so suggest mode adds no note.
  EXPECT_THAT(agent_text(updates), Not(HasSubstr("Suggested verification")));
  // The call's span names the command it ran (verify resolved it before it was judged).
  Json trace = f.call("_agentd/trace/get", Json::object());
  bool found = false;
  for (const Json& c : trace["result"]["spans"].as_array()[0]["children"].as_array()) {
    if (c["name"] != Json("tool.verify")) continue;
    found = true;
    EXPECT_EQ(c["attributes"]["command"], Json("npm test -- test/calc.test.js")) << c.dump();
  }
  EXPECT_TRUE(found) << trace.dump();
}

TEST(Verification, SuggestModeNamesTheCommandWithoutRunningIt) {
  if (!have_node()) GTEST_SKIP() << "node or npm is not installed";
  testing::SessionFixture f(read("read") + "," + edit("change", "return a - b;", "return b - a;") + "," +
                                testing::text_reply("done", "Done."),
                            node_project("suggest"));
  std::vector<Json> updates;
  Json answer = f.prompt("make sub symmetric", &updates);
  EXPECT_EQ(answer["result"]["stopReason"].as_string(), "end_turn") << answer.dump();
  EXPECT_TRUE(verifications(updates).empty());
  EXPECT_THAT(agent_text(updates), HasSubstr("Suggested verification: `npm test -- test/calc.test.js`"));
  EXPECT_EQ(f.mock->requests().size(), 3U);

  // The plan for the last turn's change, and for files named by the caller.
  Json plan = f.call("_agentd/verify/plan", Json::object());
  ASSERT_TRUE(plan.contains("result")) << plan.dump();
  EXPECT_EQ(plan["result"]["suggested"]["command"].as_string(), "npm test -- test/calc.test.js") << plan.dump();
  EXPECT_EQ(plan["result"]["auto"].as_string(), "suggest");
  EXPECT_EQ(plan["result"]["files"].size(), 1U);
  bool has_test = false;
  for (const Json& c : plan["result"]["commands"].as_array()) has_test |= c["id"].as_string() == "npm:test";
  EXPECT_TRUE(has_test) << plan.dump();
  Json params = Json::object();
  Json files = Json::array();
  files.push_back("README.md");
  params["files"] = std::move(files);
  Json whole = f.call("_agentd/verify/plan", params);
  EXPECT_EQ(whole["result"]["suggested"]["command"].as_string(), "npm test") << whole.dump();
  EXPECT_EQ(whole["result"]["suggested"]["narrowed"].as_bool(), false);

  Json unknown = testing::request(*f.agentd, 99, "_agentd/verify/plan", R"({"sessionId":"s_nope"})");
  EXPECT_EQ(unknown["error"]["code"].as_int64(), -32002) << unknown.dump();
  Json bad = testing::request(*f.agentd, 98, "_agentd/verify/plan", R"({"sessionId":1})");
  EXPECT_EQ(bad["error"]["code"].as_int64(), -32602) << bad.dump();
}

TEST(Verification, RunModeFeedsAFailureBackAndTheSecondRoundSeesIt) {
  if (!have_node()) GTEST_SKIP() << "node or npm is not installed";
  testing::SessionFixture f(read("read") + "," + edit("break", "return a + b;", "return a * b;") + "," +
                                testing::text_reply("claims", "Changed add.") + "," +
                                edit("fix", "return a * b;", "return a + b;") + "," +
                                testing::text_reply("fixed", "Fixed add; the tests pass."),
                            node_project("run"));
  std::vector<Json> updates;
  Json answer = f.prompt("change add", &updates);
  EXPECT_EQ(answer["result"]["stopReason"].as_string(), "end_turn") << answer.dump();
  ASSERT_EQ(f.mock->requests().size(), 5U) << agent_text(updates);
  // The fourth request carries the failure, as agentd's message to the model.
  const std::string third = f.body(3);
  EXPECT_THAT(third, HasSubstr("[agentd auto-verification, fix round 1 of 1]"));
  EXPECT_THAT(third, HasSubstr("npm test -- test/calc.test.js"));
  EXPECT_THAT(third, HasSubstr("not ok 1 - adds"));
  EXPECT_THAT(third, HasSubstr("do not widen the change"));
  // Two runs shown to the client: the failure, then the pass after the fix.
  auto results = verifications(updates);
  ASSERT_EQ(results.size(), 2U) << agent_text(updates);
  EXPECT_EQ(results[0]["status"].as_string(), "failed");
  EXPECT_EQ(results[1]["status"].as_string(), "passed");

  // The trace records the auto-verification spans.
  Json trace = f.call("_agentd/trace/get", Json::object());
  EXPECT_THAT(trace.dump(), HasSubstr("verify.auto"));
}

TEST(Verification, RunModeStopsAfterItsRounds) {
  if (!have_node()) GTEST_SKIP() << "node or npm is not installed";
  testing::SessionFixture f(read("read") + "," + edit("break", "return a + b;", "return a * b;") + "," +
                                testing::text_reply("claims", "Changed add.") + "," +
                                edit("still", "return a * b;", "return a / b;") + "," +
                                testing::text_reply("claims2", "Changed it again."),
                            node_project("run"));
  std::vector<Json> updates;
  Json answer = f.prompt("change add", &updates);
  EXPECT_EQ(answer["result"]["stopReason"].as_string(), "end_turn") << answer.dump();
  EXPECT_EQ(f.mock->requests().size(), 5U);
  EXPECT_EQ(verifications(updates).size(), 2U);
  EXPECT_THAT(agent_text(updates), HasSubstr("still fails after 1 fix round; stopping here"));
}

TEST(Verification, AnUnrelatedFailureIsReportedNotChased) {
  if (!have_node()) GTEST_SKIP() << "node or npm is not installed";
  Json input = Json::object();
  input["path"] = "src/util.js";
  input["content"] = "'use strict';\nmodule.exports = { twice: (x) => 2 * x };\n";
  testing::SessionFixture f(
      tool_reply("write", "write_file", input.dump()) + "," + testing::text_reply("done", "Added util.js."),
      node_project("run", /*break_more_test=*/true));
  std::vector<Json> updates;
  Json answer = f.prompt("add a helper", &updates);
  EXPECT_EQ(answer["result"]["stopReason"].as_string(), "end_turn") << answer.dump();
  // src/util.js has no test of its own: the whole suite ran, and test/more.test.js failed. That is not
  // this turn's code: no fix round.
  auto results = verifications(updates);
  ASSERT_EQ(results.size(), 1U) << agent_text(updates);
  EXPECT_EQ(results[0]["command"].as_string(), "npm test");
  EXPECT_EQ(results[0]["status"].as_string(), "failed");
  EXPECT_EQ(f.mock->requests().size(), 2U);
  EXPECT_THAT(agent_text(updates), HasSubstr("in code this turn did not change (test/more.test.js)"));
  EXPECT_THAT(agent_text(updates), HasSubstr("Reported, not chased."));
}

// The permission for verify is asked for the command it will run, chosen before the question: an "always"
// answer for `make test` does not cover the `npm test` that discovery picks once the model has written a
// package.json (whose test script is the model's to choose).
TEST(Verification, ThePermissionIsForTheCommandThatRuns) {
  Json package = Json::object();
  package["path"] = "package.json";
  package["content"] = R"({"scripts": {"test": "touch pwned"}})";
  testing::SessionFixture f(tool_reply("first", "verify", "{}") + "," + testing::text_reply("ok1", "Checked.") + "," +
                                tool_reply("plant", "write_file", package.dump()) + "," +
                                tool_reply("second", "verify", "{}") + "," + testing::text_reply("ok2", "Checked."),
                            [](const fs::path& work) {
                              std::ofstream(work / "Makefile") << "test:\n\t@echo all good\n";
                              fs::create_directories(work / "../config/agentd");
                              std::ofstream(work / "../config/agentd/config.json")
                                  << R"({"shell": {"sandbox": "fallback"}})";
                            });
  std::vector<Json> prompts;
  const auto answer_with = [&](const std::string& option) {
    return [&, option](const Json& m) {
      if (m["method"] != Json("session/request_permission")) return;
      prompts.push_back(m["params"]);
      const std::string chosen = m["params"]["toolCall"]["rawInput"].contains("content") ? "allow_once" : option;
      f.agentd->write(R"({"jsonrpc":"2.0","id":)" + m["id"].dump() +
                      R"(,"result":{"outcome":{"outcome":"selected","optionId":")" + chosen + "\"}}}\n");
    };
  };
  Json first = f.prompt("check the project", nullptr, answer_with("allow_always"));
  EXPECT_EQ(first["result"]["stopReason"].as_string(), "end_turn") << first.dump();
  ASSERT_EQ(prompts.size(), 1U);
  // The question names the command and where it runs, and the input it is bound to carries them.
  const Json& tool_call = prompts[0]["toolCall"];
  EXPECT_EQ(tool_call["rawInput"]["command"].as_string(), "make test") << tool_call.dump();
  EXPECT_THAT(tool_call["content"].as_array().at(0)["content"]["text"].as_string(),
              HasSubstr("$ make test\n(in " + f.dir.file("work")));
  EXPECT_EQ(tool_call["title"].as_string(), "Verify: make test");

  Json second = f.prompt("plant a test script", nullptr, answer_with("reject_once"));
  EXPECT_EQ(second["result"]["stopReason"].as_string(), "end_turn") << second.dump();
  ASSERT_EQ(prompts.size(), 3U) << "verify ran `npm test` under the approval given for `make test`";
  EXPECT_EQ(prompts[2]["toolCall"]["rawInput"]["command"].as_string(), "npm test");
  EXPECT_FALSE(fs::exists(f.dir.file("work/pwned")));
  // The model was told it was not run, and why.
  EXPECT_THAT(f.body(4), HasSubstr("the user rejected this call"));
}

}  // namespace
}  // namespace agentd
