// Hooks: programs the user configured to run at points of a session (Claude Code's command hooks, in
// the same format). A hook gets the event as JSON on stdin and answers with its exit code and output:
// 0 goes on (stdout may be JSON with a decision, or text to add to the model's context), 2 blocks with
// stderr as the reason, anything else is a failure the user is told of and the session goes on.
// This file holds the parts without sessions: the configuration format, which hook matches which tool,
// what an answer means, and running one hook as the shell tool runs a command (sandboxed, scrubbed
// environment, timeout, process tree killed).
#pragma once

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/support/enum_names.h"
#include "core/support/json.h"
#include "core/support/result.h"
#include "tools/builtin/shell.h"
#include "tools/tool.h"

namespace agentd::tools {

enum class HookEvent { session_start, user_prompt_submit, pre_tool_use, post_tool_use, stop };
// Claude Code's names: "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop".
std::string_view hook_event_name(HookEvent event) noexcept;
std::optional<HookEvent> parse_hook_event(std::string_view name) noexcept;
std::span<const support::EnumName<HookEvent>> enum_names(HookEvent) noexcept;

inline constexpr std::chrono::milliseconds kHookDefaultTimeout{60000};
inline constexpr std::chrono::milliseconds kHookMaxTimeout{600000};

struct HookCommand {
  HookEvent event = HookEvent::pre_tool_use;
  // Tool events: which tools, as Claude Code reads it: empty or "*" all, a plain name exactly that tool,
  // anything else a regular expression that must match the whole name. SessionStart: the source
  // ("startup", "resume", "clear", "compact") the same way. Ignored for the other events.
  std::string matcher;
  std::string command;  // run with /bin/sh -c
  std::chrono::milliseconds timeout = kHookDefaultTimeout;
  std::string source;  // the file it was read from
  // Read from a .claude/settings.json: the hook sees tools by Claude Code's names (Bash, Edit, ...) and
  // their inputs with Claude Code's field names added (file_path), so a user's existing hooks keep working.
  bool claude_names = false;
  // Run in the shell tool's sandbox. Only the user's own config may turn it off for a hook.
  bool sandbox = true;
  bool operator==(const HookCommand&) const = default;
};

// Parses a `hooks` object: {"PreToolUse": [{"matcher": "shell", "hooks": [{"type": "command", "command":
// "...", "timeout": 30}]}], ...}. `timeout` is in seconds, as Claude Code has it. `allow_unsandboxed`
// permits the agentd extension `"sandbox": false` on a command. Errors name the field ("hooks.Stop[0].
// hooks[1].command: ...") for the caller to put behind its file name.
support::Result<std::vector<HookCommand>> parse_hooks(const support::Json& hooks, std::string_view source,
                                                      bool claude_names, bool allow_unsandboxed);

// Claude Code's name for a builtin tool ("shell" -> "Bash"), or the name itself (MCP tools are named
// alike in both).
std::string_view claude_tool_name(std::string_view tool) noexcept;

// Whether `hook` applies to a call of `tool` (agentd's name), or to a SessionStart from `source`.
bool hook_matches(const HookCommand& hook, std::string_view tool_or_source);

// The tool fields of a hook's input as the hook reads them: {"tool_name", "tool_input"}, with Claude
// Code's names and an absolute `file_path` for a hook of claude_names.
void add_tool_fields(support::Json& input, const HookCommand& hook, std::string_view tool,
                     const support::Json& tool_input, const std::string& cwd);

// What a hook's run means for the session.
struct HookOutcome {
  bool blocked = false;  // exit 2, or a decision "block"/"deny": the reason goes to the model
  std::string reason;
  std::string context;  // text to add to the model's context (stdout of SessionStart and UserPromptSubmit, or
                        // additionalContext)
  // PreToolUse's permissionDecision: "allow" (no need to ask), "deny", "ask" (ask even where the policy
  // would allow).
  std::string permission;
  bool stop = false;  // "continue": false: the turn ends here; stop_reason says why to the user
  std::string stop_reason;
  std::string error;           // the hook failed (another exit code, a timeout, output that is not its JSON): for the
                               // user; the session goes on
  std::string system_message;  // "systemMessage": for the user
};

// The outcome from how a hook ended: `exit_code` -1 when it did not exit on its own (`failure` says
// why: a timeout, a signal, a sandbox that could not be set up).
HookOutcome interpret_hook_result(HookEvent event, int exit_code, std::string_view failure, std::string_view out,
                                  std::string_view err);

// Runs one hook with `input` on stdin, in `context.cwd`, under `shell`'s sandbox policy and environment
// (the sandbox switched off when the hook says so), killed with its whole tree after its timeout.
// Never fails: a hook that cannot run is an outcome with `error`. Errc::cancelled only when the turn
// was cancelled.
struct HookRun {
  HookOutcome outcome;
  int exit_code = -1;
  std::chrono::milliseconds duration{0};
  bool sandboxed = false;
};
boost::asio::awaitable<support::Result<HookRun>> run_hook(const HookCommand& hook, const support::Json& input,
                                                          const ShellConfig& shell, ToolContext& context);

}  // namespace agentd::tools
