// The parts of Session about verification: the plan a user can ask for (`_agentd/verify/plan`), and
// verify.auto at the end of a turn that changed files without verifying them. Kept apart from
// session.cpp, which runs the loop.
#include <filesystem>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/engine/session.h"
#include "core/engine/verification.h"
#include "core/support/log.h"
#include "tools/search.h"

namespace agentd::core {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using support::CancelToken;
using support::Json;
using support::Result;
namespace log = support::log;

namespace {

std::string relative_list(const std::vector<std::string>& paths, const std::string& cwd, std::size_t max = 5) {
  std::string out;
  for (std::size_t i = 0; i < paths.size() && i < max; ++i) {
    std::string shown = paths[i];
    if (fs::path(shown).is_absolute()) {
      const fs::path rel = fs::path(shown).lexically_relative(cwd);
      if (!rel.empty() && *rel.begin() != "..") shown = rel.string();
    }
    out += (i == 0 ? "" : ", ") + shown;
  }
  if (paths.size() > max) out += fmt::format(" and {} more", paths.size() - max);
  return out;
}

const Json& field(const Json& object, std::string_view name) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  const Json* found = object.find(name);
  return found != nullptr ? *found : kNull;
}

std::string string_of(const Json& value) { return value.is_string() ? value.as_string() : std::string(); }

}  // namespace

asio::awaitable<Result<Session::VerificationReport>> Session::verification_plan(std::vector<std::string> files) {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (files.empty()) {
    files = running_ ? checkpoints_->turn_changed_files() : last_turn_changed_;
  }
  for (auto& f : files) {
    if (!fs::path(f).is_absolute()) f = (fs::path(info_.cwd) / f).lexically_normal().string();
  }
  auto work = [cwd = info_.cwd, files = std::move(files)]() mutable {
    return plan_verification(cwd, std::move(files));
  };
  VerificationPlan plan = co_await tools::run_off_loop(std::move(work));
  co_await asio::dispatch(strand_, asio::use_awaitable);
  co_return VerificationReport{std::move(plan), settings_.verify.mode, settings_.verify.rounds};
}

asio::awaitable<std::optional<TurnVerification>> Session::verification_of_turn() {
  std::vector<VerificationRun> runs = executor_->take_verification_runs();
  std::vector<std::string> changed = checkpoints_->turn_changed_files();
  if (changed.empty()) co_return std::nullopt;
  auto work = [cwd = info_.cwd, changed]() { return plan_verification(cwd, changed); };
  VerificationPlan plan = co_await tools::run_off_loop(std::move(work));
  co_await asio::dispatch(strand_, asio::use_awaitable);
  co_return turn_verification(std::move(changed), std::move(runs), plan);
}

asio::awaitable<std::optional<model::Message>> Session::auto_verify(const std::string& turn_id, CancelToken cancel,
                                                                    support::Span& span) {
  if (settings_.verify.mode == AutoVerify::off || !executor_->unverified_edits()) co_return std::nullopt;
  std::vector<std::string> changed = checkpoints_->turn_changed_files();
  if (changed.empty()) co_return std::nullopt;
  executor_->set_unverified_edits(false);  // whatever happens below, this turn's edits have been dealt with

  support::Span vspan = span.child("verify.auto");
  vspan.set_attribute("mode", std::string(auto_verify_name(settings_.verify.mode)));
  vspan.set_attribute("changed_files", changed.size());
  auto work = [cwd = info_.cwd, changed]() { return plan_verification(cwd, changed); };
  VerificationPlan plan = co_await tools::run_off_loop(std::move(work));
  co_await asio::dispatch(strand_, asio::use_awaitable);

  const std::string files_text = relative_list(changed, info_.cwd);
  if (!plan.suggestion) {
    vspan.set_attribute("outcome", "no_command");
    // Only `run` says so: a suggestion of nothing would be noise after every edit of a project without tests.
    if (settings_.verify.mode != AutoVerify::run) co_return std::nullopt;
    emit(AgentTextEvent{
        fmt::format("\n\n[agentd: this turn changed {}, and no verification command was found in this project "
                    "(package.json scripts, Makefile, CTest, pytest, Cargo, Go, README); nothing was verified]",
                    files_text)});
    co_return std::nullopt;
  }
  const tools::verify::Suggestion& suggestion = *plan.suggestion;
  vspan.set_attribute("command", suggestion.command.command);
  if (settings_.verify.mode == AutoVerify::suggest) {
    vspan.set_attribute("outcome", "suggested");
    emit(AgentTextEvent{
        fmt::format("\n\n[agentd: this turn changed {} and did not verify it. Suggested verification: `{}` ({}). "
                    "Set verify.auto to \"run\" to have agentd run it.]",
                    files_text, suggestion.command.command, suggestion.reason)});
    co_return std::nullopt;
  }

  auto tool = tools_.find("verify");
  if (!tool) {
    vspan.set_attribute("outcome", "no_tool");
    emit(AgentTextEvent{"\n\n[agentd: verify.auto is \"run\" but this session has no verify tool; not verified]"});
    co_return std::nullopt;
  }
  // The run is a tool call like the model's: the client sees it, permissions and the sandbox apply.
  ++verify_runs_;
  model::ToolCallDone call;
  call.id = fmt::format("agentd-verify-{}-{}", turn_id, verify_runs_);
  call.name = "verify";
  call.input = Json::object();
  emit(ToolCallStartedEvent{call.id, call.name, call.name, tool->spec().kind});
  tools::ToolResult result;
  model::ToolResultBlock block = co_await executor_->execute(call, cancel, vspan, &result);
  if (cancel.cancelled()) co_return std::nullopt;

  const Json& verification = field(result.metadata, "verification");
  const std::string status = string_of(field(verification, "status"));
  const std::string command = string_of(field(verification, "command"));
  vspan.set_attribute("outcome", status.empty() ? std::string("not_run") : status);
  if (status == "passed") co_return std::nullopt;
  if (status != "failed") {
    emit(AgentTextEvent{fmt::format("\n\n[agentd: auto-verification did not give a result: {}]", result.summary)});
    co_return std::nullopt;
  }
  const std::vector<std::string> locations = failure_locations(string_of(field(verification, "importantOutput")));
  if (!failure_touches_change(locations, changed)) {
    // Not this turn's doing: said, not chased (the model is not asked to fix code it did not touch).
    vspan.set_attribute("related", false);
    emit(AgentTextEvent{
        fmt::format("\n\n[agentd: `{}` fails, but in code this turn did not change ({}); this turn changed {}. "
                    "Reported, not chased.]",
                    command, relative_list(locations, info_.cwd), files_text)});
    co_return std::nullopt;
  }
  vspan.set_attribute("related", true);
  if (verify_rounds_ >= settings_.verify.rounds) {
    emit(AgentTextEvent{fmt::format("\n\n[agentd: `{}` still fails after {} fix round{}; stopping here]", command,
                                    verify_rounds_, verify_rounds_ == 1 ? "" : "s")});
    co_return std::nullopt;
  }
  ++verify_rounds_;
  log::info("session {}: auto-verification failed; fix round {} of {}", info_.id, verify_rounds_,
            settings_.verify.rounds);
  model::Message feedback{model::Role::user, {}};
  feedback.content.emplace_back(model::TextBlock{fmt::format(
      "[agentd auto-verification, fix round {} of {}] After your changes to {}, agentd ran `{}` and it "
      "failed:\n\n{}\n\n"
      "If your change caused this, fix it; agentd runs the verification again when you stop. If the failure is in "
      "code your change did not touch, say so and do not widen the change.",
      verify_rounds_, settings_.verify.rounds, files_text, command, block.content)});
  co_return feedback;
}

}  // namespace agentd::core
