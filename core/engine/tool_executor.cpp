#include "core/engine/tool_executor.h"

#include <memory>
#include <optional>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/engine/frontend.h"
#include "core/engine/verification.h"
#include "core/support/clock.h"
#include "core/support/log.h"
#include "core/support/task_group.h"
#include "core/support/text.h"
#include "storage/permission_store.h"
#include "tools/json_schema.h"
#include "tools/sha256.h"

namespace agentd::core {

namespace asio = boost::asio;
namespace log = support::log;
using support::CancelToken;
using support::Errc;
using support::Error;
using support::Json;
using support::Result;

namespace {

// The last part of a call's live output, as the client is shown it while the call runs.
class LiveOutput {
 public:
  static constexpr std::size_t kShownBytes = std::size_t{16} << 10;
  std::chrono::steady_clock::time_point last_sent{};

  void append(std::string_view chunk) {
    total_ += chunk.size();
    tail_.append(chunk);
    if (tail_.size() > 2 * kShownBytes) tail_.erase(0, tail_.size() - kShownBytes);
  }
  std::string text() const {
    if (tail_.size() <= kShownBytes) return tail_;
    // Cut at a line start where one is near, so the view does not open mid-line (or mid-character).
    std::size_t from = tail_.size() - kShownBytes;
    if (const auto nl = tail_.find('\n', from); nl != std::string::npos && nl - from < 512) from = nl + 1;
    from = support::utf8_ceil(tail_, from);
    return fmt::format("[... {} bytes before ...]\n{}", total_ - (tail_.size() - from), tail_.substr(from));
  }

 private:
  std::string tail_;
  std::size_t total_ = 0;
};

// A tool's resolve() or run() ended in an error instead of a result: cancelled (`when` says at which step),
// or an internal fault, logged and turned into a result the model can recover from (tool.h: a call never
// ends the turn).
struct ToolFailure {
  tools::ToolResult result;
  bool cancelled = false;
};
ToolFailure tool_failure(const Error& error, const CancelToken& cancel, std::string_view session, std::string_view tool,
                         std::string_view when) {
  if (error.code() == Errc::cancelled || cancel.cancelled()) {
    return {tools::ToolResult::failure(fmt::format("cancelled by the user {}", when)), true};
  }
  log::error("session {}: tool {} failed internally: {}", session, tool, error.message());
  return {tools::ToolResult::failure(
              fmt::format("{} failed: {} (an internal error; try another way)", tool, error.message())),
          false};
}

std::string input_digest(const Json& input) { return "sha256:" + tools::sha256_hex(input.dump()); }

ToolCallUpdatedEvent update_of(const std::string& id) {
  ToolCallUpdatedEvent update;
  update.id = id;
  return update;
}

// A call's command in the client's terminal (ACP terminal/*): created, shown in the tool call as it
// starts, waited for within the timeout (or killed on it, or on cancellation), read and released.
class FrontendTerminal final : public tools::CommandTerminal {
 public:
  FrontendTerminal(std::shared_ptr<Frontend> frontend, std::shared_ptr<EventLog> events, std::string session_id,
                   std::string call_id, asio::strand<asio::any_io_executor> strand)
      : frontend_(std::move(frontend)),
        events_(std::move(events)),
        session_id_(std::move(session_id)),
        call_id_(std::move(call_id)),
        strand_(std::move(strand)) {}

  const std::optional<std::string>& terminal_id() const noexcept { return terminal_id_; }

  asio::awaitable<Result<tools::TerminalRun>> run(const tools::TerminalCommand& command, CancelToken cancel) override {
    const auto started = support::SteadyClock::now();
    auto created = co_await frontend_->create_terminal(session_id_, command, cancel);
    co_await asio::dispatch(strand_, asio::use_awaitable);
    if (!created) co_return std::move(created).error();
    terminal_id_ = *created;
    ToolCallUpdatedEvent shown = update_of(call_id_);
    shown.terminal_id = *created;
    events_->emit(std::move(shown));

    // The wait ends on the timeout or the turn's cancellation; the terminal is killed then.
    auto stop = std::make_shared<support::CancelSource>(cancel);
    auto timed_out = std::make_shared<bool>(false);
    auto timer = std::make_shared<asio::steady_timer>(strand_);
    if (command.timeout.count() > 0) {
      timer->expires_after(command.timeout);
      timer->async_wait([stop, timed_out](const boost::system::error_code& ec) {
        if (ec) return;
        *timed_out = true;
        stop->cancel();
      });
    }
    auto exited = co_await frontend_->wait_for_terminal_exit(session_id_, *created, stop->token());
    co_await asio::dispatch(strand_, asio::use_awaitable);
    timer->cancel();
    if (!exited) {
      (void)co_await frontend_->kill_terminal(session_id_, *created);
      co_await asio::dispatch(strand_, asio::use_awaitable);
    }
    tools::TerminalRun run;
    run.timed_out = *timed_out;
    if (auto output = co_await frontend_->terminal_output(session_id_, *created)) {
      run.output = std::move(output->output);
      run.truncated = output->truncated;
      if (!exited && output->exit) exited = *output->exit;
    }
    co_await asio::dispatch(strand_, asio::use_awaitable);
    (void)co_await frontend_->release_terminal(session_id_, *created);
    co_await asio::dispatch(strand_, asio::use_awaitable);
    run.duration = std::chrono::duration_cast<std::chrono::milliseconds>(support::SteadyClock::now() - started);
    if (cancel.cancelled()) co_return Error(Errc::cancelled, "cancelled");
    if (exited) {
      run.exit_code = exited->exit_code.value_or(-1);
      run.signal = exited->signal.value_or("");
    } else if (!run.timed_out) {
      co_return std::move(exited).error();
    }
    co_return run;
  }

 private:
  std::shared_ptr<Frontend> frontend_;
  std::shared_ptr<EventLog> events_;
  std::string session_id_;
  std::string call_id_;
  asio::strand<asio::any_io_executor> strand_;
  std::optional<std::string> terminal_id_;
};

}  // namespace

struct ToolCallExecutor::CallRun {
  const model::ToolCallDone& call;
  support::Span span;
  support::SteadyClock::time_point started = support::SteadyClock::now();
  std::optional<std::string> terminal_id;  // the client's terminal the command ran in
};

struct ToolCallExecutor::Decision {
  PermissionDecision verdict;
  std::string decided_by = "policy";  // policy, user, no_client
  std::string digest;                 // of the input decided about
  bool cancelled = false;             // the turn was cancelled while the person was asked
};

ToolCallExecutor::ToolCallExecutor(ToolCallServices services, asio::strand<asio::any_io_executor> strand)
    : s_(std::move(services)), strand_(std::move(strand)) {}

asio::awaitable<model::ToolResultBlock> ToolCallExecutor::execute(const model::ToolCallDone& call, CancelToken cancel,
                                                                  support::Span& span, tools::ToolResult* full) {
  CallRun run{call, span.child("tool." + call.name), support::SteadyClock::now(), std::nullopt};
  run.span.set_attribute("tool_call_id", call.id);

  // Held for the call: an MCP server's tools may leave the registry while it runs.
  const std::shared_ptr<tools::Tool> tool = s_.tools->find(call.name);
  if (auto invalid = check_input(call, tool.get())) co_return finish(run, *invalid);
  tools::ToolContext context = make_context(call, *tool, cancel);

  // The input completed with what will actually run (verify's chosen command): judged, shown, audited and
  // run as one.
  Result<tools::Tool::Resolved> resolved = tools::Tool::Resolved{};
  try {
    // Named, not a temporary: GCC 12 destroys class temporaries passed to a coroutine twice.
    Json input_as_given = call.input.is_object() ? call.input : Json::object();
    resolved = co_await tool->resolve(std::move(input_as_given), context);
  } catch (const std::exception& e) {
    resolved = Error(Errc::internal, e.what());
  }
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!resolved) {
    const ToolFailure failed = tool_failure(resolved.error(), cancel, s_.session_id, call.name, "before it ran");
    co_return finish(run, failed.result, failed.cancelled);
  }
  if (resolved->result) co_return finish(run, *resolved->result);
  const Json input = std::move(resolved->input);

  const tools::RiskAssessment risk = tool->assess(input, context);
  run.span.set_attribute("risk", tools::risk_names(risk.risk));
  announce(call, *tool, input, context);

  // PreToolUse hooks: a block is the call's result; their permission answer goes to decide().
  std::string hook_permission;
  if (s_.hooks != nullptr && s_.hooks->any(tools::HookEvent::pre_tool_use)) {
    Json hook_input = Json::object();
    hook_input.set("tool_input", input);
    hook_input.set("tool_use_id", call.id);
    auto pre =
        co_await s_.hooks->run(tools::HookEvent::pre_tool_use, call.name, std::move(hook_input), cancel, run.span);
    if (!pre) co_return finish(run, tools::ToolResult::failure("cancelled by the user before it ran"), true);
    if (pre->blocked) {
      run.span.set_attribute("permission", "hook_denied");
      Decision blocked;
      blocked.verdict = {Verdict::deny, "a PreToolUse hook blocked it: " + pre->reason};
      blocked.decided_by = "hook";
      blocked.digest = input_digest(input);
      audit(call, blocked, risk);
      co_return finish(run, tools::ToolResult::failure(
                                fmt::format("not run: a PreToolUse hook blocked this call: {}", pre->reason)));
    }
    hook_permission = pre->permission;
  }

  const Decision decision = co_await decide(call, *tool, input, context, risk, hook_permission, cancel, run.span);
  if (decision.cancelled)
    co_return finish(run, tools::ToolResult::failure("cancelled by the user before it ran"), true);
  audit(call, decision, risk);
  if (decision.verdict.verdict == Verdict::deny) {
    run.span.set_attribute("permission", "denied");
    co_return finish(run, tools::ToolResult::failure(fmt::format(
                              "not run: {}. Do not retry the same call; continue another way or ask the user.",
                              decision.verdict.reason)));
  }

  support::SpanBuffer steps;  // the tool's own steps (fs.atomic_write), adopted under the call's span
  context.spans = &steps;
  // A command the editor can show: in its terminal, when it offers them.
  std::unique_ptr<FrontendTerminal> terminal;
  if (const std::shared_ptr<Frontend> frontend = s_.events->frontend();
      tool->spec().kind == tools::ToolKind::execute && frontend && frontend->can_run_terminals()) {
    terminal = std::make_unique<FrontendTerminal>(frontend, s_.events, s_.session_id, call.id, strand_);
    context.terminal = terminal.get();
  }
  if (tool->spec().kind == tools::ToolKind::execute) {
    if (const Json* command = input.find("command"); command != nullptr && command->is_string()) {
      run.span.set_attribute("command", *command);
    }
  }
  auto ran = co_await this->run(call, *tool, input, context);
  context.spans = nullptr;
  context.terminal = nullptr;
  if (terminal && terminal->terminal_id()) run.terminal_id = terminal->terminal_id();
  run.span.adopt(steps.records());
  if (!ran) {
    const ToolFailure failed = tool_failure(ran.error(), cancel, s_.session_id, call.name, "while running");
    co_return finish(run, failed.result, failed.cancelled);
  }
  // What the turn still owes: files changed since the last verification.
  if (!ran->diffs.empty()) unverified_edits_ = true;
  if (auto verification = verification_run(call.name, input, *ran)) {
    unverified_edits_ = false;
    verification_runs_.push_back(std::move(*verification));
  }
  if (s_.hooks != nullptr && s_.hooks->any(tools::HookEvent::post_tool_use)) {
    co_await after_call(call, input, *ran, cancel, run.span);
  }
  if (full != nullptr) *full = *ran;
  co_return finish(run, *ran);
}

asio::awaitable<std::vector<model::ToolResultBlock>> ToolCallExecutor::run_all(
    const std::vector<model::ToolCallDone>& calls, CancelToken cancel, support::Span& span) {
  std::vector<model::ToolResultBlock> results(calls.size());
  std::size_t i = 0;
  while (i < calls.size()) {
    std::size_t end = i + 1;
    if (!is_mutating(calls[i])) {
      while (end < calls.size() && !is_mutating(calls[end])) ++end;
    }
    if (end - i == 1) {
      results[i] = co_await execute(calls[i], cancel, span);
    } else {
      support::TaskGroup group(strand_);
      for (std::size_t k = i; k < end; ++k) {
        group.spawn(
            [](ToolCallExecutor* self, const model::ToolCallDone& call, CancelToken token, support::Span& parent,
               model::ToolResultBlock& out) -> asio::awaitable<void> {
              out = co_await self->execute(call, token, parent);
            }(this, calls[k], cancel, span, results[k]),
            "tool." + calls[k].name);
      }
      co_await group.join();
      co_await asio::dispatch(strand_, asio::use_awaitable);
    }
    i = end;
  }
  co_return results;
}

bool ToolCallExecutor::is_mutating(const model::ToolCallDone& call) const {
  const std::shared_ptr<tools::Tool> tool = s_.tools->find(call.name);
  if (!tool || !call.input.is_object()) return false;
  tools::ToolContext probe;
  probe.cwd = s_.cwd;
  probe.additional_dirs = s_.additional_dirs;
  return tools::is_mutating(tool->assess(call.input, probe).risk);
}

std::optional<tools::ToolResult> ToolCallExecutor::check_input(const model::ToolCallDone& call,
                                                               const tools::Tool* tool) const {
  if (tool == nullptr) {
    std::string valid;
    for (const auto& n : s_.tools->names()) valid += (valid.empty() ? "" : ", ") + n;
    return tools::ToolResult::failure(fmt::format("there is no tool named \"{}\"; the tools you can call are: {}",
                                                  call.name, valid.empty() ? "(none)" : valid));
  }
  if (call.input_error) {
    return tools::ToolResult::failure(
        fmt::format("the arguments of {} are not valid JSON ({}); send them again as one JSON object", call.name,
                    *call.input_error));
  }
  const Json input = call.input.is_object() ? call.input : Json::object();
  if (auto problems = tools::schema_violations(tool->spec().input_schema, input); !problems.empty()) {
    std::string message = fmt::format("the input of {} does not match its schema:", call.name);
    for (const auto& p : problems) message += "\n- " + p;
    return tools::ToolResult::failure(std::move(message));
  }
  return std::nullopt;
}

tools::ToolContext ToolCallExecutor::make_context(const model::ToolCallDone& call, const tools::Tool& tool,
                                                  CancelToken cancel) const {
  tools::ToolContext context;
  context.session_id = s_.session_id;
  context.cwd = s_.cwd;
  context.additional_dirs = s_.additional_dirs;
  context.cancel = std::move(cancel);
  context.files = s_.files;
  context.file_state = s_.file_state;
  context.journal = s_.checkpoints;
  context.denied_paths = &s_.settings->denied_paths;
  if (const std::string_view category = tool_category(tool.spec().kind); category == "read") {
    context.denied_reads = s_.policy->denied_patterns(tool.spec().name, category);
  }
  context.changed_files = s_.checkpoints->turn_changed_files();
  // Live output (shell): the client sees the end of what the call printed so far, refreshed at most every
  // 100 ms; the finished call's result replaces it. Posted to the strand, so it may come from anywhere.
  context.progress = [events = s_.events, strand = strand_, id = call.id,
                      live = std::make_shared<LiveOutput>()](std::string_view chunk) {
    live->append(chunk);
    const auto now = std::chrono::steady_clock::now();
    if (now - live->last_sent < std::chrono::milliseconds(100)) return;
    live->last_sent = now;
    asio::post(strand, [events, id, text = live->text()]() mutable {
      ToolCallUpdatedEvent update = update_of(id);
      update.text = std::move(text);
      events->emit(std::move(update));
    });
  };
  return context;
}

void ToolCallExecutor::announce(const model::ToolCallDone& call, const tools::Tool& tool, const Json& input,
                                const tools::ToolContext& context) {
  ToolCallUpdatedEvent update = update_of(call.id);
  update.title = tool.title(input, context);
  update.raw_input = input;
  update.locations = tool.locations(input, context);
  s_.events->emit(std::move(update));
}

asio::awaitable<ToolCallExecutor::Decision> ToolCallExecutor::decide(
    const model::ToolCallDone& call, const tools::Tool& tool, const Json& input, const tools::ToolContext& context,
    const tools::RiskAssessment& risk, std::string_view hook_permission, CancelToken cancel, support::Span& span) {
  const CallSubject subject = call_subject(tool.spec(), input, s_.cwd);
  Decision d;
  d.digest = input_digest(input);
  d.verdict = s_.policy->decide(subject, risk);
  // A PreToolUse hook may answer for the person ("allow"), except where only a person may, and may ask
  // where the policy would not; it never lifts a deny.
  if (hook_permission == "allow" && d.verdict.verdict == Verdict::ask && !d.verdict.needs_person) {
    d.verdict = {Verdict::allow, "a PreToolUse hook allowed it"};
    d.decided_by = "hook";
  } else if (hook_permission == "ask" && d.verdict.verdict == Verdict::allow) {
    d.verdict = {Verdict::ask, "a PreToolUse hook asks you to confirm it"};
  }
  if (d.verdict.verdict != Verdict::ask) co_return d;

  support::Span permission = span.child("permission.request");
  const std::shared_ptr<Frontend> frontend = s_.events->frontend();
  if (!frontend || !frontend->can_ask_permission()) {
    d.decided_by = "no_client";
    permission.set_attribute("answer", "no_client");
    if (d.verdict.needs_person) {
      d.verdict = {Verdict::deny, fmt::format("{}, and no client is attached to ask", d.verdict.reason)};
    } else {
      d.verdict = {
          s_.settings->headless,
          fmt::format("{}, and no client is attached to ask, so the headless policy ({}) decides; the "
                      "session's mode is {}",
                      d.verdict.reason, verdict_name(s_.settings->headless), permission_mode_id(s_.policy->mode()))};
    }
    co_return d;
  }
  PermissionPrompt prompt;
  prompt.session_id = s_.session_id;
  prompt.tool_call_id = call.id;
  prompt.title = tool.title(input, context);
  prompt.kind = tool.spec().kind;
  prompt.raw_input = input;
  prompt.locations = tool.locations(input, context);
  {
    support::Span preview = permission.child("permission.diff_preview");
    prompt.diffs = co_await tool.preview(input, context);
    co_await asio::dispatch(strand_, asio::use_awaitable);
    preview.set_attribute("files", static_cast<std::uint64_t>(prompt.diffs.size()));
  }
  prompt.text = tool.describe(input, context);
  prompt.input_digest = d.digest;
  prompt.reason = d.verdict.reason;
  prompt.risk = tools::risk_names(risk.risk);
  // The client must see the call (tool_call, its input) before it is asked about it; a call it cannot
  // be shown (the database is failing) is not asked about.
  if (auto delivered = co_await s_.events->deliver_pending(); !delivered) {
    permission.set_attribute("answer", "not_asked");
    d.verdict = {Verdict::deny, "the call could not be shown to the user (" + delivered.error().message() + ")"};
    co_return d;
  }
  auto answer = co_await frontend->ask_permission(std::move(prompt), cancel);
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!answer || *answer == PermissionAnswer::cancelled || cancel.cancelled()) {
    permission.set_attribute("answer", "cancelled");
    if (!answer && !cancel.cancelled()) {
      log::warn("session {}: permission request failed: {}", s_.session_id, answer.error().message());
      d.verdict = {Verdict::deny, "the permission request failed: " + answer.error().message()};
    } else {
      permission.set_status(support::SpanStatus::cancelled);
      d.cancelled = true;
    }
    co_return d;
  }
  d.decided_by = "user";
  if (auto rule = PermissionPolicy::rule_for_answer(subject, *answer)) s_.remember_approval(std::move(*rule));
  const bool allowed = *answer == PermissionAnswer::allow_once || *answer == PermissionAnswer::allow_always;
  permission.set_attribute("answer", allowed ? "allow" : "reject");
  d.verdict = allowed ? PermissionDecision{Verdict::allow, "the user allowed it"}
                      : PermissionDecision{Verdict::deny, "the user rejected this call"};
  co_return d;
}

asio::awaitable<void> ToolCallExecutor::after_call(const model::ToolCallDone& call, const Json& input,
                                                   tools::ToolResult& result, CancelToken cancel, support::Span& span) {
  Json hook_input = Json::object();
  hook_input.set("tool_input", input);
  hook_input.set("tool_use_id", call.id);
  Json response = Json::object();
  response.set("ok", result.ok);
  response.set("content", result.content);
  if (result.metadata.is_object()) response.set("metadata", result.metadata);
  hook_input.set("tool_response", std::move(response));
  auto post = co_await s_.hooks->run(tools::HookEvent::post_tool_use, call.name, std::move(hook_input), cancel, span);
  if (!post) co_return;  // cancelled: the call ran, its result stands
  // The call ran either way; a block tells the model what the hook objects to.
  if (post->blocked) result.content += fmt::format("\n\n[PostToolUse hook: {}]", post->reason);
  if (!post->context.empty()) result.content += fmt::format("\n\n[PostToolUse hook: {}]", post->context);
}

void ToolCallExecutor::audit(const model::ToolCallDone& call, const Decision& decision,
                             const tools::RiskAssessment& risk) {
  storage::PermissionAuditRecord entry;
  entry.session_id = s_.session_id;
  if (!s_.events->turn().empty()) entry.turn_id = s_.events->turn();
  entry.tool_call_id = call.id;
  entry.tool = call.name;
  entry.input_digest = decision.digest;
  entry.decision = decision.verdict.verdict == Verdict::deny ? "deny" : "allow";
  entry.decided_by = decision.decided_by;
  entry.reason = decision.verdict.reason;
  entry.created_at_ms = support::unix_millis_now();
  entry.cwd = s_.cwd;
  entry.risk = tools::risk_names(risk.risk);
  s_.events->store(
      [entry = std::move(entry)](storage::Connection& db) -> Result<void> {
        auto id = storage::PermissionStore(db).record(entry);
        if (!id) return std::move(id).error();
        return support::ok();
      },
      "a permission audit row");
}

asio::awaitable<Result<tools::ToolResult>> ToolCallExecutor::run(const model::ToolCallDone& call, tools::Tool& tool,
                                                                 const Json& input, tools::ToolContext& context) {
  ToolCallUpdatedEvent update = update_of(call.id);
  update.status = ToolCallStatus::in_progress;
  s_.events->emit(std::move(update));
  Result<tools::ToolResult> ran = tools::ToolResult{};
  try {
    ran = co_await tool.run(input, context);
  } catch (const std::exception& e) {
    ran = Error(Errc::internal, e.what());
  }
  co_await asio::dispatch(strand_, asio::use_awaitable);
  co_return ran;
}

model::ToolResultBlock ToolCallExecutor::finish(CallRun& run, const tools::ToolResult& r, bool cancelled) {
  ToolCallUpdatedEvent update = update_of(run.call.id);
  update.status = r.ok ? ToolCallStatus::completed : ToolCallStatus::failed;
  update.text = r.summary;
  update.diffs = r.diffs;
  update.locations = r.locations;
  update.terminal_id = run.terminal_id;  // the terminal card stays with the finished call
  if (r.metadata.is_object() && r.metadata.size() > 0) update.meta = r.metadata;
  s_.events->emit(std::move(update));
  if (r.ok && r.plan) s_.events->emit(PlanEvent{*r.plan});
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(support::SteadyClock::now() - run.started);
  run.span.set_attribute("ok", r.ok);
  run.span.set_attribute("duration_ms", static_cast<std::int64_t>(ms.count()));
  if (cancelled) {
    run.span.set_status(support::SpanStatus::cancelled);
  } else if (!r.ok) {
    run.span.set_status(support::SpanStatus::error, r.summary);
  }
  return model::ToolResultBlock{run.call.id, r.content, !r.ok};
}

}  // namespace agentd::core
