#include "tools/hooks.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "test/unit/tools/tool_harness.h"
#include "tools/sandbox.h"

namespace agentd::tools {
namespace {

using namespace std::chrono_literals;
using support::Json;
using testing::json;

std::vector<HookCommand> parsed(std::string_view text, bool claude = false, bool unsandboxed = true) {
  auto hooks = parse_hooks(json(text), "/cfg.json", claude, unsandboxed);
  EXPECT_TRUE(hooks) << hooks.error().message();
  return hooks ? *hooks : std::vector<HookCommand>{};
}

std::string parse_error(std::string_view text, bool unsandboxed = true) {
  auto hooks = parse_hooks(json(text), "/cfg.json", false, unsandboxed);
  return hooks ? std::string("(parsed)") : hooks.error().message();
}

TEST(Hooks, ParsesClaudeCodesFormat) {
  const auto hooks = parsed(R"({
    "PreToolUse": [{"matcher": "shell|Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5},
                                                     {"type": "command", "command": "./log.sh"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "make check", "sandbox": false}]}]
  })");
  ASSERT_EQ(hooks.size(), 3U);
  EXPECT_EQ(hooks[0].event, HookEvent::pre_tool_use);
  EXPECT_EQ(hooks[0].matcher, "shell|Bash");
  EXPECT_EQ(hooks[0].command, "./guard.sh");
  EXPECT_EQ(hooks[0].timeout, 5000ms);
  EXPECT_EQ(hooks[0].source, "/cfg.json");
  EXPECT_EQ(hooks[1].timeout, kHookDefaultTimeout);
  EXPECT_TRUE(hooks[1].sandbox);
  EXPECT_EQ(hooks[2].event, HookEvent::stop);
  EXPECT_FALSE(hooks[2].sandbox);
}

TEST(Hooks, BadConfigurationNamesTheField) {
  EXPECT_EQ(parse_error(R"({"PreToolUse": 1})"),
            "hooks.PreToolUse: expected a list of {\"matcher\", \"hooks\"} groups");
  EXPECT_NE(parse_error(R"({"OnSave": []})").find("hooks.OnSave: unknown event"), std::string::npos);
  EXPECT_NE(parse_error(R"({"Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]})")
                .find("hooks.Stop[0].hooks[0].type: only \"command\" hooks"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"Stop": [{"hooks": [{"type": "command"}]}]})").find("a hook needs a command"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"Stop": [{"hooks": [{"command": "x", "timeout": 0}]}]})").find("timeout"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"PreToolUse": [{"matcher": "(", "hooks": []}]})").find("not a valid regular expression"),
            std::string::npos);
  // Only the user's own config may take a hook out of the sandbox.
  EXPECT_NE(
      parse_error(R"({"Stop": [{"hooks": [{"command": "x", "sandbox": false}]}]})", false).find("only your own config"),
      std::string::npos);
}

TEST(Hooks, MatchersAsClaudeCodeReadsThem) {
  HookCommand hook;
  hook.event = HookEvent::pre_tool_use;
  EXPECT_TRUE(hook_matches(hook, "shell"));  // empty: every tool
  hook.matcher = "*";
  EXPECT_TRUE(hook_matches(hook, "mcp__fs__read"));
  hook.matcher = "Bash";  // Claude Code's name for shell
  EXPECT_TRUE(hook_matches(hook, "shell"));
  EXPECT_FALSE(hook_matches(hook, "read_file"));
  hook.matcher = "edit";  // a plain name matches exactly, not as a substring
  EXPECT_FALSE(hook_matches(hook, "edit_file"));
  hook.matcher = "Edit|Write";
  EXPECT_TRUE(hook_matches(hook, "edit_file"));
  EXPECT_TRUE(hook_matches(hook, "write_file"));
  EXPECT_FALSE(hook_matches(hook, "read_file"));
  hook.matcher = "mcp__github__.*";
  EXPECT_TRUE(hook_matches(hook, "mcp__github__create_issue"));
  EXPECT_FALSE(hook_matches(hook, "mcp__gitlab__create_issue"));
  hook.event = HookEvent::session_start;
  hook.matcher = "resume";
  EXPECT_TRUE(hook_matches(hook, "resume"));
  EXPECT_FALSE(hook_matches(hook, "startup"));
}

TEST(Hooks, ToolFieldsInEachNaming) {
  HookCommand ours;
  Json input = Json::object();
  add_tool_fields(input, ours, "edit_file", json(R"({"path": "src/a.c", "old_string": "x", "new_string": "y"})"),
                  "/ws");
  EXPECT_EQ(input["tool_name"], Json("edit_file"));
  EXPECT_FALSE(input["tool_input"].contains("file_path"));
  HookCommand claude;
  claude.claude_names = true;
  Json theirs = Json::object();
  add_tool_fields(theirs, claude, "edit_file", json(R"({"path": "src/a.c", "old_string": "x", "new_string": "y"})"),
                  "/ws");
  EXPECT_EQ(theirs["tool_name"], Json("Edit"));
  EXPECT_EQ(theirs["tool_input"]["file_path"], Json("/ws/src/a.c"));
  EXPECT_EQ(theirs["tool_input"]["old_string"], Json("x"));
}

TEST(Hooks, ExitCodesMeanWhatTheyMeanInClaudeCode) {
  const HookOutcome ok = interpret_hook_result(HookEvent::pre_tool_use, 0, {}, "", "");
  EXPECT_FALSE(ok.blocked);
  EXPECT_TRUE(ok.error.empty());
  const HookOutcome blocked = interpret_hook_result(HookEvent::pre_tool_use, 2, {}, "ignored", "no rm -rf here\n");
  EXPECT_TRUE(blocked.blocked);
  EXPECT_EQ(blocked.reason, "no rm -rf here");
  const HookOutcome silent = interpret_hook_result(HookEvent::stop, 2, {}, "", "");
  EXPECT_TRUE(silent.blocked);
  EXPECT_EQ(silent.reason, "blocked by a Stop hook (it gave no reason)");
  const HookOutcome failed = interpret_hook_result(HookEvent::pre_tool_use, 1, {}, "", "jq: not found\n");
  EXPECT_FALSE(failed.blocked);
  EXPECT_EQ(failed.error, "PreToolUse hook failed (exit code 1): jq: not found");
  const HookOutcome timed_out =
      interpret_hook_result(HookEvent::stop, -1, "timed out after 1 s and was killed", "", "");
  EXPECT_FALSE(timed_out.blocked);
  EXPECT_EQ(timed_out.error, "Stop hook failed (timed out after 1 s and was killed)");
}

TEST(Hooks, PlainStdoutIsContextOnlyWhereClaudeCodeAddsIt) {
  EXPECT_EQ(interpret_hook_result(HookEvent::user_prompt_submit, 0, {}, "branch: main\n", "").context, "branch: main");
  EXPECT_EQ(interpret_hook_result(HookEvent::session_start, 0, {}, "today is Monday", "").context, "today is Monday");
  EXPECT_EQ(interpret_hook_result(HookEvent::post_tool_use, 0, {}, "formatted 3 files", "").context, "");
}

TEST(Hooks, JsonDecisions) {
  const HookOutcome deny =
      interpret_hook_result(HookEvent::pre_tool_use, 0, {},
                            R"({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
          "permissionDecisionReason": "writes to prod"}})",
                            "");
  EXPECT_TRUE(deny.blocked);
  EXPECT_EQ(deny.reason, "writes to prod");
  const HookOutcome allow = interpret_hook_result(HookEvent::pre_tool_use, 0, {},
                                                  R"({"hookSpecificOutput": {"permissionDecision": "allow"}})", "");
  EXPECT_FALSE(allow.blocked);
  EXPECT_EQ(allow.permission, "allow");
  EXPECT_EQ(interpret_hook_result(HookEvent::pre_tool_use, 0, {}, R"({"decision": "approve"})", "").permission,
            "allow");
  const HookOutcome stop_block =
      interpret_hook_result(HookEvent::stop, 0, {}, R"({"decision": "block", "reason": "tests fail"})", "");
  EXPECT_TRUE(stop_block.blocked);
  EXPECT_EQ(stop_block.reason, "tests fail");
  const HookOutcome context = interpret_hook_result(
      HookEvent::post_tool_use, 0, {}, R"({"hookSpecificOutput": {"additionalContext": "lint: 2 warnings"}})", "");
  EXPECT_EQ(context.context, "lint: 2 warnings");
  const HookOutcome halt =
      interpret_hook_result(HookEvent::post_tool_use, 0, {}, R"({"continue": false, "stopReason": "quota"})", "");
  EXPECT_TRUE(halt.stop);
  EXPECT_EQ(halt.stop_reason, "quota");
  const HookOutcome odd = interpret_hook_result(HookEvent::pre_tool_use, 0, {},
                                                R"({"hookSpecificOutput": {"permissionDecision": "maybe"}})", "");
  EXPECT_FALSE(odd.blocked);
  EXPECT_NE(odd.error.find("maybe"), std::string::npos);
  EXPECT_NE(interpret_hook_result(HookEvent::stop, 0, {}, "{not json", "").error.find("not a JSON object"),
            std::string::npos);
}

TEST(Hooks, HostileOutputIsCutBeforeItReachesTheModel) {
  const std::string flood(1 << 20, 'x');
  const HookOutcome blocked = interpret_hook_result(HookEvent::pre_tool_use, 2, {}, "", flood);
  EXPECT_TRUE(blocked.blocked);
  EXPECT_LT(blocked.reason.size(), std::size_t{9} << 10);
  EXPECT_NE(blocked.reason.find("[... cut]"), std::string::npos);
}

class HookRunTest : public ::testing::Test {
 protected:
  HookRunTest() {
    shell_.sandbox.allow_unsandboxed = true;  // the runner is under test here, not the kernel
    shell_.kill_grace = 100ms;
  }
  HookRun run(const std::string& command, const Json& input, std::chrono::milliseconds timeout = 10s,
              HookEvent event = HookEvent::pre_tool_use) {
    HookCommand hook;
    hook.event = event;
    hook.command = command;
    hook.timeout = timeout;
    auto ran = testing::run_sync(run_hook(hook, input, shell_, h_.context));
    EXPECT_TRUE(ran) << ran.error().message();
    return ran ? *ran : HookRun{};
  }
  ShellConfig shell_;
  testing::ToolHarness h_;
};

TEST_F(HookRunTest, TheEventArrivesOnStdinAndStderrIsTheReason) {
  // The hook reads its input and blocks on what it finds there, as a real guard script would.
  const HookRun ran = run(R"(input=$(cat); case "$input" in *'rm -rf'*) echo "refusing: $input" >&2; exit 2;; esac)",
                          json(R"({"tool_name": "shell", "tool_input": {"command": "rm -rf /"}})"));
  EXPECT_EQ(ran.exit_code, 2);
  EXPECT_TRUE(ran.outcome.blocked);
  EXPECT_NE(ran.outcome.reason.find(R"("command":"rm -rf /")"), std::string::npos) << ran.outcome.reason;
  EXPECT_EQ(ran.outcome.reason.find("refusing: {"), 0U) << ran.outcome.reason;

  const HookRun fine = run(R"(input=$(cat); case "$input" in *'rm -rf'*) exit 2;; esac; echo '{}')",
                           json(R"({"tool_name": "shell", "tool_input": {"command": "ls"}})"));
  EXPECT_EQ(fine.exit_code, 0);
  EXPECT_FALSE(fine.outcome.blocked);
  EXPECT_TRUE(fine.outcome.error.empty()) << fine.outcome.error;
}

TEST_F(HookRunTest, StdoutJsonIsKeptApartFromStderr) {
  const HookRun ran = run(R"(echo 'debug chatter' >&2; echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}')",
                          Json::object());
  EXPECT_EQ(ran.outcome.permission, "allow");
  EXPECT_TRUE(ran.outcome.error.empty()) << ran.outcome.error;
}

TEST_F(HookRunTest, ASlowHookIsKilledAndTheSessionGoesOn) {
  const auto started = std::chrono::steady_clock::now();
  const HookRun ran = run("sleep 30", Json::object(), 300ms, HookEvent::stop);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  EXPECT_EQ(ran.exit_code, -1);
  EXPECT_FALSE(ran.outcome.blocked);  // a timeout never blocks: the hook failed, the user is told
  EXPECT_NE(ran.outcome.error.find("timed out"), std::string::npos) << ran.outcome.error;
}

TEST_F(HookRunTest, AMissingProgramIsAFailureNotABlock) {
  const HookRun ran = run("/nonexistent/hook.sh", Json::object());
  EXPECT_FALSE(ran.outcome.blocked);
  EXPECT_NE(ran.outcome.error.find("exit code 127"), std::string::npos) << ran.outcome.error;
}

TEST_F(HookRunTest, HooksRunInTheShellSandbox) {
  if (!sandbox_status().landlock()) GTEST_SKIP() << "no Landlock here: " << sandbox_status().landlock_error;
  shell_.sandbox.allow_unsandboxed = false;
  const std::string outside = (h_.outside() / "written-by-hook").string();
  const HookRun ran = run("echo x > " + outside + " || exit 3", Json::object());
  EXPECT_EQ(ran.exit_code, 3) << ran.outcome.error;
  EXPECT_TRUE(ran.sandboxed);
  EXPECT_FALSE(std::filesystem::exists(outside));
}

}  // namespace
}  // namespace agentd::tools
