// A slash command's turn: Session::run_command finds the command's row in slash_commands() and calls its
// handler, without the model. The handlers about the session's own state are here; those about context
// and memory are in session_context.cpp.
#include <charconv>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/engine/session.h"
#include "core/engine/slash_commands.h"

namespace agentd::core {

namespace asio = boost::asio;
using support::CancelToken;
using support::Result;

asio::awaitable<Result<TurnOutcome>> Session::run_command(const std::string& text, std::string turn_id,
                                                          CancelToken cancel, support::Span& span) {
  const SlashCommand command = parse_slash_command(text);
  const SlashCommandInfo* row = find_slash_command(command.name);
  std::string reply;
  if (row == nullptr) {
    reply = fmt::format("Unknown command /{}. /help lists the commands.", command.name);
  } else {
    const CommandCall call{command.args, turn_id, cancel, span};
    reply = co_await (this->*row->run)(call);
    if (row->cancellable && cancel.cancelled())
      co_return TurnOutcome{StopReason::cancelled, {}, std::nullopt, std::nullopt};
  }
  if (!reply.empty()) emit(AgentTextEvent{reply});
  co_return TurnOutcome{StopReason::end_turn, {}, std::nullopt, std::nullopt};
}

asio::awaitable<std::string> Session::cmd_help(const CommandCall& /*call*/) { co_return help_text(); }

asio::awaitable<std::string> Session::cmd_mcp(const CommandCall& /*call*/) { co_return mcp_->report(); }

asio::awaitable<std::string> Session::cmd_cost(const CommandCall& /*call*/) {
  co_return cost_text(session_cost_, previous_turn_cost_, model_spec_);
}

asio::awaitable<std::string> Session::cmd_model(const CommandCall& call) {
  if (call.args.empty()) {
    std::string reply = fmt::format("Model: {} (context window {} tokens, up to {} output tokens)", model_spec_,
                                    model_.context_window, model_.max_output_tokens);
    if (!settings_.model_choices.empty()) {
      reply += "\nChoices:";
      for (const auto& c : settings_.model_choices) reply += "\n  " + c;
    }
    co_return reply;
  }
  const std::string spec(call.args);
  if (auto switched = switch_model(spec); !switched) {
    co_return fmt::format("Cannot use model \"{}\": {}", spec, switched.error().message());
  }
  co_return "Model set to " + model_spec_;
}

asio::awaitable<std::string> Session::cmd_mode(const CommandCall& call) {
  if (call.args.empty()) {
    std::string reply = fmt::format("Mode: {}\nModes:", permission_mode_id(policy_.mode()));
    for (const auto& m : permission_modes()) reply += fmt::format("\n  {}: {}", m.id, m.description);
    co_return reply;
  }
  auto mode = parse_permission_mode(call.args);
  if (!mode) co_return fmt::format("Unknown mode \"{}\"; modes: default, acceptEdits, plan, bypass", call.args);
  switch_mode(*mode);
  co_return fmt::format("Mode set to {}", call.args);
}

asio::awaitable<std::string> Session::cmd_clear(const CommandCall& /*call*/) {
  const std::size_t dropped = history_.size();
  history_.clear();
  summary_text_.clear();
  summary_first_turn_.clear();
  summary_turns_ = 0;
  cleared_after_ = turn_count_;
  session_start_source_ = "clear";
  persist_metadata();
  co_return fmt::format(
      "Context cleared: the model will not see the {} earlier turn{} of this session (they stay "
      "in the session's history).",
      dropped, dropped == 1 ? "" : "s");
}

asio::awaitable<std::string> Session::cmd_permissions(const CommandCall& call) {
  if (!call.args.starts_with("revoke")) co_return permissions_text(policy_, settings_.headless, info_.cwd);
  std::int64_t id = 0;
  const std::string_view rest = call.args.substr(6);
  const auto first = rest.find_first_not_of(' ');
  const auto digits = first == std::string_view::npos ? std::string_view() : rest.substr(first);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    co_return std::string("Usage: /permissions revoke ID (the ids are in /permissions)");
  }
  auto revoked = co_await revoke_approval(id);
  co_return revoked ? fmt::format("Approval {} revoked.", id) : "Cannot revoke: " + revoked.error().message();
}

asio::awaitable<std::string> Session::cmd_undo(const CommandCall& call) {
  std::optional<std::string> by_turn = call.turn_id;
  const CancelToken never;  // an undo half done is worse than a late one
  auto undone = co_await checkpoints_->undo(call.turn_id, std::move(by_turn), never);
  co_await asio::dispatch(strand_, asio::use_awaitable);
  co_return undone ? undo_text(*undone, info_.cwd) : "Cannot undo: " + undone.error().message();
}

}  // namespace agentd::core
