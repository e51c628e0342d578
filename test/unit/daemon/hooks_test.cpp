// Hooks end to end, over ACP against the mock model: the user's config names scripts for SessionStart,
// UserPromptSubmit, PreToolUse, PostToolUse and Stop; what each answers reaches the model (context, a
// blocked call's reason, a Stop hook's instruction), permission follows a hook's "allow", and each run
// is a span of the turn.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/support/session_fixture.h"

namespace agentd {
namespace {

namespace fs = std::filesystem;
using support::Json;

void write_file(const fs::path& path, const std::string& text, bool executable = false) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  if (executable) fs::permissions(path, fs::perms::owner_all, fs::perm_options::add);
}

// The scripts live beside the workspace (readable in the sandbox, not writable); the Stop hook keeps
// its marker in the workspace, where a sandboxed hook may write.
void install_hooks(const fs::path& work) {
  const fs::path hooks = work.parent_path() / "hooks";
  write_file(hooks / "start.sh", "#!/bin/sh\ncat > /dev/null\necho 'the deploy freeze is on'\n", true);
  write_file(hooks / "prompt.sh", "#!/bin/sh\ncat > /dev/null\necho 'ticket ABC-1'\n", true);
  // Blocks any command with rm in it; lets writes through without asking.
  write_file(hooks / "guard.sh",
             "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in\n  *'\"rm '*) echo 'no deleting in this repo' >&2; exit 2;;\n"
             "  *write_file*) echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", "
             "\"permissionDecision\": \"allow\"}}';;\nesac\n",
             true);
  write_file(hooks / "after.sh",
             "#!/bin/sh\ncat > /dev/null\necho '{\"hookSpecificOutput\": {\"additionalContext\": \"formatted by "
             "prettier\"}}'\n",
             true);
  // The first time the model would stop, it is sent back once.
  write_file(hooks / "stop.sh",
             "#!/bin/sh\ncat > /dev/null\nif [ -e .stopped-once ]; then exit 0; fi\ntouch .stopped-once\n"
             "echo 'run the tests first' >&2\nexit 2\n",
             true);
  const std::string dir = hooks.string();
  write_file(work.parent_path() / "config/agentd/config.json", R"({"hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": ")" +
                                                                   dir + R"(/start.sh"}]}],
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": ")" +
                                                                   dir + R"(/prompt.sh"}]}],
    "PreToolUse": [{"matcher": "shell|write_file", "hooks": [{"type": "command", "command": ")" +
                                                                   dir + R"(/guard.sh"}]}],
    "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": ")" +
                                                                   dir + R"(/after.sh"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": ")" + dir + R"(/stop.sh", "timeout": 20}]}]
  }})");
}

constexpr std::string_view kExchanges = R"(
  {"name": "calls", "expect": {"body_contains": ["the deploy freeze is on", "ticket ABC-1", "fix it"]},
   "response": {"generate": {"provider": "anthropic", "text": "On it.",
     "tool_calls": [{"id": "toolu_rm", "name": "shell", "input": {"command": "rm -rf build"}},
                    {"id": "toolu_w", "name": "write_file", "input": {"path": "fix.txt", "content": "fixed\n"}}]}}},
  {"name": "after the calls", "expect": {"body_contains": ["no deleting in this repo", "formatted by prettier"]},
   "response": {"generate": {"provider": "anthropic", "text": "Done."}}},
  {"name": "sent back", "expect": {"body_contains": ["A Stop hook did not let the turn end yet: run the tests first"]},
   "response": {"generate": {"provider": "anthropic", "text": "Tests pass."}}},
  {"name": "second turn", "response": {"generate": {"provider": "anthropic", "text": "Again."}}})";

TEST(Hooks, EachEventReachesTheModelAndTheTurn) {
  testing::SessionFixture f(std::string(kExchanges), install_hooks);
  const fs::path work = f.dir.file("work");
  std::vector<Json> updates;
  int permission_requests = 0;
  Json answer = f.prompt("fix it", &updates, [&](const Json& m) {
    if (m["method"] == Json("session/request_permission")) ++permission_requests;
  });
  ASSERT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
  EXPECT_EQ(f.mock->requests().size(), 3U);
  EXPECT_EQ(permission_requests, 0) << "the PreToolUse hook allowed the write";
  EXPECT_TRUE(fs::exists(work / "fix.txt"));
  EXPECT_TRUE(fs::exists(work / ".stopped-once"));

  // The blocked call failed, with the hook's reason; the write completed.
  bool rm_failed = false;
  for (const Json& p : updates) {
    const Json& u = p["update"];
    if (u["toolCallId"] == Json("toolu_rm") && u["status"] == Json("failed")) rm_failed = true;
  }
  EXPECT_TRUE(rm_failed);

  // Every hook run is a span of the turn, under the step it belongs to.
  Json trace = f.call("_agentd/trace/get", Json::object());
  const std::string spans = trace.dump();
  for (const char* name :
       {"hook.SessionStart", "hook.UserPromptSubmit", "hook.PreToolUse", "hook.PostToolUse", "hook.Stop"}) {
    EXPECT_NE(spans.find(name), std::string::npos) << name << " in " << spans.substr(0, 2000);
  }

  // SessionStart ran once: the second turn's request does not carry its context again as new.
  Json second = f.prompt("and again");
  EXPECT_EQ(second["result"]["stopReason"], Json("end_turn")) << second.dump();
  const std::string body = f.body(3);
  const std::size_t first_start = body.find("the deploy freeze is on");
  ASSERT_NE(first_start, std::string::npos);
  EXPECT_EQ(body.find("the deploy freeze is on", first_start + 1), std::string::npos) << "SessionStart ran again";
}

TEST(Hooks, UserPromptSubmitCanRefuseAPrompt) {
  testing::SessionFixture f(R"({"name": "never", "response": {"generate": {"provider": "anthropic", "text": "x"}}})",
                            [](const fs::path& work) {
                              write_file(work.parent_path() / "config/agentd/config.json",
                                         R"({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
                                            "command": "grep -q password && { echo 'no secrets in prompts' >&2; exit 2; }; exit 0"}]}]}})");
                            });
  std::vector<Json> updates;
  Json answer = f.prompt("my password is hunter2", &updates);
  EXPECT_EQ(answer["result"]["stopReason"], Json("refusal")) << answer.dump();
  EXPECT_TRUE(f.mock->requests().empty()) << "the model never saw the prompt";
  bool told = false;
  for (const Json& p : updates) {
    if (p["update"]["content"]["text"].is_string() &&
        p["update"]["content"]["text"].as_string().find("no secrets in prompts") != std::string::npos) {
      told = true;
    }
  }
  EXPECT_TRUE(told);
  Json fine = f.prompt("hello");
  EXPECT_EQ(fine["result"]["stopReason"], Json("end_turn")) << fine.dump();
}

TEST(Hooks, AFailingHookIsReportedAndTheTurnGoesOn) {
  testing::SessionFixture f(
      R"({"name": "answer", "response": {"generate": {"provider": "anthropic", "text": "fine"}}})",
      [](const fs::path& work) {
        write_file(work.parent_path() / "config/agentd/config.json",
                   R"({"hooks": {"UserPromptSubmit": [{"hooks": [{"command": "echo broken >&2; exit 1"}]}],
                                 "Stop": [{"hooks": [{"command": "sleep 30", "timeout": 0.3}]}]}})");
      });
  std::vector<Json> updates;
  Json answer = f.prompt("hello", &updates);
  EXPECT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
  std::string said;
  for (const Json& p : updates) {
    if (p["update"]["sessionUpdate"] == Json("agent_message_chunk")) said += p["update"]["content"]["text"].as_string();
  }
  EXPECT_NE(said.find("UserPromptSubmit hook failed (exit code 1): broken"), std::string::npos) << said;
  EXPECT_NE(said.find("Stop hook failed (timed out"), std::string::npos) << said;
}

}  // namespace
}  // namespace agentd
