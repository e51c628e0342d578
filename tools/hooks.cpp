#include "tools/hooks.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <re2/re2.h>

#include "core/support/text.h"

namespace agentd::tools {

namespace {

using support::Errc;
using support::Error;
using support::Json;

constexpr support::EnumName<HookEvent> kHookEventNames[] = {
    {HookEvent::session_start, "SessionStart"},
    {HookEvent::user_prompt_submit, "UserPromptSubmit"},
    {HookEvent::pre_tool_use, "PreToolUse"},
    {HookEvent::post_tool_use, "PostToolUse"},
    {HookEvent::stop, "Stop"},
};
static_assert(support::names_every_value(kHookEventNames, HookEvent::stop));

// agentd's builtin tools by Claude Code's names.
constexpr std::pair<std::string_view, std::string_view> kClaudeNames[] = {
    {"shell", "Bash"}, {"read_file", "Read"}, {"write_file", "Write"}, {"edit_file", "Edit"},
    {"glob", "Glob"},  {"grep", "Grep"},      {"list_dir", "LS"},      {"todo_write", "TodoWrite"},
};

constexpr std::size_t kReasonBytes = std::size_t{8} << 10;  // of a hook's text that reaches the model

bool plain_name(std::string_view matcher) {
  return std::all_of(matcher.begin(), matcher.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool matches(std::string_view matcher, std::string_view name) {
  if (matcher.empty() || matcher == "*") return true;
  if (plain_name(matcher)) return matcher == name;
  const RE2 re(matcher, RE2::Quiet);
  return re.ok() && RE2::FullMatch(name, re);
}

std::string trimmed(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty() && (text.front() == '\n' || text.front() == ' ')) text.remove_prefix(1);
  std::string out(support::utf8_prefix(text, kReasonBytes));
  if (out.size() < text.size()) out += "\n[... cut]";
  return out;
}

std::string string_member(const Json& object, std::string_view key) {
  const Json* v = object.find(key);
  return v != nullptr && v->is_string() ? v->as_string() : std::string();
}

}  // namespace

std::string_view hook_event_name(HookEvent event) noexcept { return support::enum_name(event, "PreToolUse"); }

std::optional<HookEvent> parse_hook_event(std::string_view name) noexcept {
  for (const auto& [value, text] : kHookEventNames) {
    if (text == name) return value;
  }
  return std::nullopt;
}

std::span<const support::EnumName<HookEvent>> enum_names(HookEvent) noexcept { return kHookEventNames; }

support::Result<std::vector<HookCommand>> parse_hooks(const Json& hooks, std::string_view source, bool claude_names,
                                                      bool allow_unsandboxed) {
  auto fail = [](std::string field, std::string_view message) -> support::Result<std::vector<HookCommand>> {
    return Error(Errc::invalid_argument, fmt::format("{}: {}", field, message));
  };
  if (!hooks.is_object()) {
    return fail("hooks",
                "expected an object of events: {\"PreToolUse\": [{\"matcher\": \"shell\", \"hooks\": "
                "[{\"type\": \"command\", \"command\": \"...\"}]}]}");
  }
  std::vector<HookCommand> out;
  for (const auto& [name, groups] : hooks.as_object()) {
    const std::string field = fmt::format("hooks.{}", name);
    const auto event = parse_hook_event(name);
    if (!event) {
      return fail(field, "unknown event (known: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop)");
    }
    if (!groups.is_array()) return fail(field, "expected a list of {\"matcher\", \"hooks\"} groups");
    for (std::size_t g = 0; g < groups.as_array().size(); ++g) {
      const Json& group = groups.as_array()[g];
      const std::string group_field = fmt::format("{}[{}]", field, g);
      if (!group.is_object()) return fail(group_field, "expected {\"matcher\": ..., \"hooks\": [...]}");
      std::string matcher;
      const Json* list = nullptr;
      for (const auto& [key, value] : group.as_object()) {
        if (key == "matcher") {
          if (!value.is_string()) return fail(group_field + ".matcher", "expected a tool name or pattern");
          matcher = value.as_string();
          if (!matcher.empty() && matcher != "*" && !plain_name(matcher)) {
            const RE2 re(matcher, RE2::Quiet);
            if (!re.ok()) {
              return fail(group_field + ".matcher", fmt::format("not a valid regular expression ({})", re.error()));
            }
          }
        } else if (key == "hooks") {
          list = &value;
        } else {
          return fail(fmt::format("{}.{}", group_field, key), "unknown setting (known: matcher, hooks)");
        }
      }
      if (list == nullptr || !list->is_array()) return fail(group_field + ".hooks", "expected a list of commands");
      for (std::size_t h = 0; h < list->as_array().size(); ++h) {
        const Json& entry = list->as_array()[h];
        const std::string hook_field = fmt::format("{}.hooks[{}]", group_field, h);
        if (!entry.is_object()) return fail(hook_field, "expected {\"type\": \"command\", \"command\": \"...\"}");
        HookCommand hook;
        hook.event = *event;
        hook.matcher = matcher;
        hook.source = std::string(source);
        hook.claude_names = claude_names;
        for (const auto& [key, value] : entry.as_object()) {
          const std::string sub = fmt::format("{}.{}", hook_field, key);
          if (key == "type") {
            if (!value.is_string() || value.as_string() != "command") {
              return fail(sub, "only \"command\" hooks are supported");
            }
          } else if (key == "command") {
            if (!value.is_string() || value.as_string().empty()) return fail(sub, "expected the command line to run");
            hook.command = value.as_string();
          } else if (key == "timeout") {
            if (!value.is_number() || value.as_double() <= 0 ||
                value.as_double() * 1000 > static_cast<double>(kHookMaxTimeout.count())) {
              return fail(sub,
                          fmt::format("expected seconds, more than 0 and at most {}", kHookMaxTimeout.count() / 1000));
            }
            hook.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(value.as_double() * 1000));
          } else if (key == "sandbox") {
            if (!value.is_bool()) return fail(sub, "expected true or false");
            if (!value.as_bool() && !allow_unsandboxed) {
              return fail(sub, "only your own config (not a project's) can run a hook outside the sandbox");
            }
            hook.sandbox = value.as_bool();
          } else {
            return fail(sub, "unknown setting (known: type, command, timeout, sandbox)");
          }
        }
        if (hook.command.empty()) return fail(hook_field, "a hook needs a command");
        out.push_back(std::move(hook));
      }
    }
  }
  return out;
}

std::string_view claude_tool_name(std::string_view tool) noexcept {
  for (const auto& [ours, theirs] : kClaudeNames) {
    if (ours == tool) return theirs;
  }
  return tool;
}

bool hook_matches(const HookCommand& hook, std::string_view tool_or_source) {
  switch (hook.event) {
    case HookEvent::pre_tool_use:
    case HookEvent::post_tool_use:
      // Either name: a hook written for agentd says "shell", one written for Claude Code "Bash".
      return matches(hook.matcher, tool_or_source) || matches(hook.matcher, claude_tool_name(tool_or_source));
    case HookEvent::session_start: return matches(hook.matcher, tool_or_source);
    case HookEvent::user_prompt_submit:
    case HookEvent::stop: return true;
  }
  return true;
}

void add_tool_fields(Json& input, const HookCommand& hook, std::string_view tool, const Json& tool_input,
                     const std::string& cwd) {
  Json given = tool_input.is_object() ? tool_input : Json::object();
  if (hook.claude_names) {
    input.set("tool_name", claude_tool_name(tool));
    if (const Json* path = given.find("path"); path != nullptr && path->is_string() && !given.contains("file_path")) {
      given.set("file_path", (std::filesystem::path(cwd) / path->as_string()).lexically_normal().string());
    }
  } else {
    input.set("tool_name", tool);
  }
  input.set("tool_input", std::move(given));
}

HookOutcome interpret_hook_result(HookEvent event, int exit_code, std::string_view failure, std::string_view out,
                                  std::string_view err) {
  HookOutcome outcome;
  const std::string name(hook_event_name(event));
  if (exit_code == 2) {
    outcome.blocked = true;
    outcome.reason = trimmed(err);
    if (outcome.reason.empty()) outcome.reason = fmt::format("blocked by a {} hook (it gave no reason)", name);
    return outcome;
  }
  if (exit_code != 0) {
    const std::string why = exit_code < 0 ? std::string(failure) : fmt::format("exit code {}", exit_code);
    const std::string said = trimmed(err.empty() ? out : err);
    outcome.error = said.empty() ? fmt::format("{} hook failed ({})", name, why)
                                 : fmt::format("{} hook failed ({}): {}", name, why, said);
    return outcome;
  }
  std::string_view text = out;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\t')) text.remove_prefix(1);
  if (!text.starts_with('{')) {
    // Plain text: context for the two events that add it, nothing for the others.
    if (event == HookEvent::session_start || event == HookEvent::user_prompt_submit) outcome.context = trimmed(out);
    return outcome;
  }
  auto parsed = support::parse_json(text);
  if (!parsed || !parsed->is_object()) {
    outcome.error = fmt::format("{} hook printed output that is not a JSON object; ignored", name);
    return outcome;
  }
  const Json& answer = *parsed;
  if (const Json* go_on = answer.find("continue"); go_on != nullptr && go_on->is_bool() && !go_on->as_bool()) {
    outcome.stop = true;
    outcome.stop_reason = trimmed(string_member(answer, "stopReason"));
  }
  outcome.system_message = trimmed(string_member(answer, "systemMessage"));
  const std::string decision = string_member(answer, "decision");
  std::string reason = trimmed(string_member(answer, "reason"));
  if (decision == "block" || (event == HookEvent::pre_tool_use && decision == "deny")) {
    outcome.blocked = true;
    outcome.reason = reason.empty() ? fmt::format("blocked by a {} hook (it gave no reason)", name) : reason;
  } else if (event == HookEvent::pre_tool_use && decision == "approve") {
    outcome.permission = "allow";
  }
  if (const Json* specific = answer.find("hookSpecificOutput"); specific != nullptr && specific->is_object()) {
    outcome.context = trimmed(string_member(*specific, "additionalContext"));
    if (event == HookEvent::pre_tool_use) {
      const std::string permission = string_member(*specific, "permissionDecision");
      const std::string why = trimmed(string_member(*specific, "permissionDecisionReason"));
      if (permission == "deny") {
        outcome.blocked = true;
        outcome.reason = why.empty() ? "denied by a PreToolUse hook" : why;
      } else if (permission == "allow" || permission == "ask") {
        outcome.permission = permission;
        if (!why.empty()) outcome.reason = why;
      } else if (!permission.empty()) {
        outcome.error = fmt::format(
            "PreToolUse hook answered permissionDecision \"{}\" (expected allow, deny or ask); "
            "ignored",
            permission);
      }
    }
  }
  if (outcome.blocked) outcome.permission.clear();
  return outcome;
}

boost::asio::awaitable<support::Result<HookRun>> run_hook(const HookCommand& hook, const Json& input,
                                                          const ShellConfig& shell, ToolContext& context) {
  ShellConfig config = shell;
  if (!hook.sandbox) config.sandbox.require = false;
  CommandRequest request;
  request.command = hook.command;
  request.cwd = context.cwd;
  request.timeout = hook.timeout;
  request.stdin_text = input.dump();
  request.stdin_text += '\n';
  request.separate_stderr = true;
  request.capture_head_bytes = std::size_t{64} << 10;
  request.capture_tail_bytes = 0;
  ToolContext quiet = context;  // a hook's output is not a tool call's live output
  quiet.progress = nullptr;
  HookRun run;
  auto ran = co_await run_command(config, request, quiet, "the hook");
  if (!ran) {
    if (ran.error().code() == Errc::cancelled) co_return std::move(ran).error();
    run.outcome = interpret_hook_result(hook.event, -1, ran.error().message(), {}, {});
    co_return run;
  }
  if (!ran->refused.empty()) {
    run.outcome = interpret_hook_result(hook.event, -1, ran->refused, {}, {});
    co_return run;
  }
  const ProcessResult& process = ran->process;
  run.duration = process.duration;
  run.sandboxed = ran->unsandboxed.empty();
  run.exit_code = process.ended_by == EndedBy::exit ? process.exit_code : -1;
  std::string failure;
  if (process.ended_by == EndedBy::timeout) {
    failure = fmt::format("timed out after {} s and was killed", std::chrono::duration<double>(hook.timeout).count());
  } else if (process.ended_by == EndedBy::signal) {
    failure = fmt::format("killed by signal {}", process.signal);
  }
  run.outcome = interpret_hook_result(hook.event, run.exit_code, failure, process.output, ran->stderr_text);
  co_return run;
}

}  // namespace agentd::tools
