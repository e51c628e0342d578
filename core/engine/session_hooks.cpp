#include "core/engine/session_hooks.h"

#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/engine/events.h"
#include "core/support/log.h"

namespace agentd::core {

namespace asio = boost::asio;
using support::Errc;
using support::Json;
using tools::HookEvent;
using tools::HookOutcome;

namespace {

int permission_rank(std::string_view permission) {
  if (permission == "deny") return 3;
  if (permission == "ask") return 2;
  if (permission == "allow") return 1;
  return 0;
}

void join(std::string& into, const std::string& text) {
  if (text.empty()) return;
  if (!into.empty()) into += "\n\n";
  into += text;
}

}  // namespace

SessionHooks::SessionHooks(HookServices services, asio::strand<asio::any_io_executor> strand)
    : s_(std::move(services)), strand_(std::move(strand)) {}

bool SessionHooks::any(HookEvent event) const {
  for (const auto& hook : s_.settings->hooks) {
    if (hook.event == event) return true;
  }
  return false;
}

asio::awaitable<support::Result<HookOutcome>> SessionHooks::run(HookEvent event, std::string_view subject, Json input,
                                                                support::CancelToken cancel, support::Span& span) {
  HookOutcome combined;
  const std::string event_name(tools::hook_event_name(event));
  input.set("session_id", s_.session_id);
  input.set("transcript_path", "");
  input.set("cwd", s_.cwd);
  input.set("hook_event_name", event_name);
  input.set("permission_mode", s_.permission_mode ? s_.permission_mode() : std::string("default"));
  for (const auto& hook : s_.settings->hooks) {
    if (hook.event != event || !tools::hook_matches(hook, subject)) continue;
    Json hook_input = input;
    if (event == HookEvent::pre_tool_use || event == HookEvent::post_tool_use) {
      // The tool fields in this hook's naming: Claude Code's for a hook from .claude/settings.json.
      Json tool_input = hook_input.contains("tool_input") ? hook_input["tool_input"] : Json::object();
      tools::add_tool_fields(hook_input, hook, subject, tool_input, s_.cwd);
    }
    support::Span hook_span = span.child("hook." + event_name);
    hook_span.set_attribute("command", hook.command);
    hook_span.set_attribute("source", hook.source);
    tools::ToolContext context;
    context.session_id = s_.session_id;
    context.cwd = s_.cwd;
    context.additional_dirs = s_.additional_dirs;
    context.denied_paths = &s_.settings->denied_paths;
    context.cancel = cancel;
    auto ran = co_await tools::run_hook(hook, hook_input, s_.settings->shell, context);
    co_await asio::dispatch(strand_, asio::use_awaitable);
    if (!ran) {
      hook_span.set_status(support::SpanStatus::cancelled);
      co_return std::move(ran).error();
    }
    const HookOutcome& outcome = ran->outcome;
    hook_span.set_attribute("exit_code", ran->exit_code);
    hook_span.set_attribute("duration_ms", static_cast<std::int64_t>(ran->duration.count()));
    hook_span.set_attribute("sandboxed", ran->sandboxed);
    if (outcome.blocked) hook_span.set_attribute("blocked", outcome.reason);
    if (!outcome.permission.empty()) hook_span.set_attribute("permission", outcome.permission);
    if (!outcome.error.empty()) {
      hook_span.set_status(support::SpanStatus::error, outcome.error);
      support::log::warn("session {}: {} (command: {})", s_.session_id, outcome.error, hook.command);
      s_.events->emit(AgentTextEvent{fmt::format("\n[agentd: {}]\n", outcome.error)});
    }
    if (!outcome.system_message.empty()) {
      s_.events->emit(AgentTextEvent{fmt::format("\n[{} hook: {}]\n", event_name, outcome.system_message)});
    }
    join(combined.context, outcome.context);
    if (permission_rank(outcome.permission) > permission_rank(combined.permission)) {
      combined.permission = outcome.permission;
      if (!outcome.reason.empty()) combined.reason = outcome.reason;
    }
    if (outcome.stop && !stop_) {
      stop_ = outcome.stop_reason.empty() ? fmt::format("a {} hook stopped the turn", event_name) : outcome.stop_reason;
    }
    if (outcome.blocked) {
      combined.blocked = true;
      combined.reason = outcome.reason;
      combined.permission.clear();
      break;
    }
  }
  co_return combined;
}

}  // namespace agentd::core
