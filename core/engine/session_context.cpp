// The parts of Session that shape what the model sees beyond the conversation: gathering the turn's
// context (instructions, skills, facts, the workspace package), compaction, and the slash commands about
// them (the facts themselves are ProjectMemory's). Kept apart from session.cpp, which runs the loop.
#include <algorithm>
#include <charconv>
#include <memory>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/engine/session.h"
#include "core/engine/slash_commands.h"
#include "core/memory/compaction.h"
#include "core/model/stream_summary.h"
#include "core/support/clock.h"
#include "core/support/log.h"
#include "core/support/text.h"
#include "storage/compaction_store.h"
#include "tools/search.h"

namespace agentd::core {

namespace asio = boost::asio;
using support::CancelToken;
using support::Errc;
using support::Error;
using support::Json;
using support::Result;
namespace log = support::log;

namespace {

std::string clip(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  std::size_t cut = max;
  cut = support::utf8_floor(text, cut);  // a UTF-8 boundary
  return fmt::format("{}\n[... {} more bytes]", text.substr(0, cut), text.size() - cut);
}

// A turn as the summarizer reads it. A user message's last block is what the user typed; the blocks
// before it are the turn's gathered context, which the summary need not repeat.
std::string transcript_text(const HistoryTurn& turn) {
  constexpr std::size_t kMaxBlock = 4000;
  std::string out;
  for (const auto& message : turn.messages) {
    if (message.role == model::Role::user) {
      for (auto it = message.content.rbegin(); it != message.content.rend(); ++it) {
        if (const auto* text = std::get_if<model::TextBlock>(&*it)) {
          out += "User: " + clip(text->text, kMaxBlock) + "\n";
          break;
        }
      }
      // The summary cannot carry an image; it can say there was one.
      for (const auto& block : message.content) {
        if (const auto* image = std::get_if<model::ImageBlock>(&block)) {
          out += fmt::format("User attached an image ({}, {}x{})\n", image->media_type, image->width, image->height);
        }
      }
      continue;
    }
    for (const auto& block : message.content) {
      if (const auto* text = std::get_if<model::TextBlock>(&block)) {
        out += "Assistant: " + clip(text->text, kMaxBlock) + "\n";
      } else if (const auto* call = std::get_if<model::ToolCallBlock>(&block)) {
        out += fmt::format("Tool call {}: {}\n", call->name, clip(call->input.dump(), kMaxBlock));
      } else if (const auto* result = std::get_if<model::ToolResultBlock>(&block)) {
        out += fmt::format("Tool result{}: {}\n", result->is_error ? " (error)" : "", clip(result->content, kMaxBlock));
      }
    }
  }
  return out;
}

std::uint64_t turn_tokens(const HistoryTurn& turn) {
  std::uint64_t tokens = 0;
  for (const auto& m : turn.messages) tokens += estimate_tokens(m);
  return tokens;
}

memory::CompactionOptions compaction_options(const model::ModelConfig& model) {
  memory::CompactionOptions options;
  options.context_window = model.context_window;
  // The summarization call and the answer of the next request both need room below the window.
  options.reserve_tokens = std::max<std::uint64_t>(options.reserve_tokens, model.max_output_tokens);
  return options;
}

}  // namespace

asio::awaitable<Result<std::shared_ptr<const TurnContext>>> Session::gather_context(std::string input, bool retrieve,
                                                                                    CancelToken cancel) {
  auto known = co_await memory_->facts();
  if (!known) co_return std::move(known).error();
  TurnContextRequest request;
  request.cwd = info_.cwd;
  request.additional_dirs = info_.additional_dirs;
  request.input = std::move(input);
  request.context_window = model_.context_window;
  request.denied_paths = settings_.denied_paths;
  request.denied_reads = policy_.denied_patterns("", "read");
  request.facts = std::move(*known);
  request.retrieve = retrieve;
  for (const auto& c : slash_commands()) request.reserved_names.emplace_back(c.name);
  auto work = [request = std::move(request), index = index_, cancel]() {
    return std::make_shared<const TurnContext>(gather_turn_context(request, *index, cancel));
  };
  std::shared_ptr<const TurnContext> gathered = co_await tools::run_off_loop(std::move(work));
  co_await asio::dispatch(strand_, asio::use_awaitable);
  co_return gathered;
}

asio::awaitable<Result<Session::ContextPreview>> Session::preview_context(std::string input, CancelToken cancel) {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  // The request's own cancellation ($/cancel_request), and session/cancel.
  support::CancelSource source(cancel);
  const support::CancelRegistration session_cancel = side_cancel_->token().on_cancel([&source] { source.cancel(); });
  auto gathered = co_await gather_context(std::move(input), true, source.token());
  if (source.cancelled()) co_return Error(Errc::cancelled, "the context preview was cancelled");
  if (!gathered) co_return std::move(gathered).error();
  std::string system_prompt = build_system_prompt(gathered->get());
  co_return ContextPreview{std::move(*gathered), std::move(system_prompt)};
}

asio::awaitable<Result<Session::CompactionOutcome>> Session::compact(bool forced, std::uint64_t pinned_tokens,
                                                                     std::uint64_t new_input_tokens,
                                                                     const std::string& turn_id, CancelToken cancel,
                                                                     support::Span& span) {
  const memory::CompactionOptions options = compaction_options(model_);
  memory::CompactionInput input;
  const bool has_summary = !summary_text_.empty();
  if (has_summary) input.turns.push_back(memory::TurnSize{"summary", estimate_tokens(summary_text_), true});
  for (const auto& turn : history_) input.turns.push_back(memory::TurnSize{turn.turn_id, turn_tokens(turn), false});
  input.pinned_tokens = pinned_tokens;
  input.new_input_tokens = new_input_tokens;
  input.forced = forced;
  const memory::CompactionPlan plan = memory::plan_compaction(input, options);
  CompactionOutcome outcome;
  outcome.message = plan.message;
  if (plan.action == memory::CompactionAction::none) co_return outcome;
  if (plan.action == memory::CompactionAction::cannot_fit) {
    outcome.cannot_fit = true;
    co_return outcome;
  }

  const std::size_t offset = has_summary ? 1 : 0;
  const std::size_t history_count = plan.summarize_count - std::min(plan.summarize_count, offset);
  if (history_count == 0) {
    outcome.message = "only the earlier summary is old enough to compact, and it is already a summary";
    co_return outcome;
  }
  support::Span compaction = span.child("context.compact");
  compaction.set_attribute("forced", forced);
  compaction.set_attribute("turns", plan.summarize_count);
  compaction.set_attribute("tokens_before", plan.tokens_before);
  std::vector<memory::TranscriptTurn> transcript;
  if (has_summary) transcript.push_back(memory::TranscriptTurn{summary_first_turn_, summary_text_, true});
  for (std::size_t i = 0; i < history_count; ++i) {
    transcript.push_back(memory::TranscriptTurn{history_[i].turn_id, transcript_text(history_[i]), false});
  }
  const memory::SummaryRequest summary_request = memory::build_summary_request(transcript, options);

  model::ModelRequest request;
  request.system = summary_request.system;
  request.messages.push_back(model::Message{model::Role::user, {model::TextBlock{summary_request.user}}});
  request.max_tokens = static_cast<std::uint32_t>(summary_request.max_output_tokens);
  model::StreamAccumulator acc;
  auto on_event = [&acc](const model::ModelEvent& event) { acc.add(event); };
  if (!client_) client_ = std::make_unique<model::ModelClient>(model_, *engine_.http, engine_.model_options);
  model::StreamResult result = co_await client_->stream(std::move(request), on_event, cancel, &compaction);
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (result.done && result.done->usage) record_usage(*result.done->usage, turn_id, compaction);
  if (!result.ok) {
    if (cancel.cancelled()) {
      compaction.set_status(support::SpanStatus::cancelled);
      co_return outcome;
    }
    const model::ModelError& error = result.error.value_or(model::ModelError{});
    compaction.set_status(support::SpanStatus::error, error.message);
    co_return Error(Errc::unavailable, fmt::format("the summarization call failed ({}): {}",
                                                   model::error_kind_name(error.kind), error.message));
  }
  model::StreamSummary answer = std::move(acc).take();
  auto parsed = memory::parse_summary(answer.text);
  if (!parsed) {
    compaction.set_status(support::SpanStatus::error, parsed.error().message());
    co_return Error(Errc::unavailable, "the model's summary was empty; nothing was compacted");
  }
  for (const auto& w : parsed->warnings) log::debug("session {}: compaction summary: {}", info_.id, w);

  memory::SummaryScope scope;
  scope.first_turn_id = has_summary ? summary_first_turn_ : history_.front().turn_id;
  scope.last_turn_id = history_[history_count - 1].turn_id;
  scope.turn_count = history_count + (has_summary ? summary_turns_ : 0);
  std::string rendered = memory::render_summary(parsed->summary, scope, options.summary_max_tokens);

  storage::CompactionRecord record;
  record.session_id = info_.id;
  record.first_turn_id = scope.first_turn_id;
  record.last_turn_id = scope.last_turn_id;
  record.summary_json = memory::summary_to_json(parsed->summary).dump();
  record.tokens_before = static_cast<std::int64_t>(plan.tokens_before);
  record.tokens_after =
      static_cast<std::int64_t>(plan.tokens_before - plan.summarized_tokens + estimate_tokens(rendered));
  record.created_at_ms = support::unix_millis_now();
  auto job = [record](storage::Connection& db) { return storage::CompactionStore(db).add(record); };
  auto written = co_await engine_.store->write_durable_value<std::int64_t>(std::move(job));
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!written) co_return std::move(written).error().context("storing the compaction");

  // Only now, with the record durable, do later requests send the summary instead of the turns.
  history_.erase(history_.begin(), history_.begin() + static_cast<std::ptrdiff_t>(history_count));
  summary_text_ = std::move(rendered);
  summary_first_turn_ = scope.first_turn_id;
  summary_turns_ = scope.turn_count;
  compaction.set_attribute("tokens_after", record.tokens_after);

  CompactionEvent event;
  event.compaction_id = *written;
  event.first_turn_id = scope.first_turn_id;
  event.last_turn_id = scope.last_turn_id;
  event.turns = scope.turn_count;
  event.tokens_before = static_cast<std::uint64_t>(record.tokens_before);
  event.tokens_after = static_cast<std::uint64_t>(record.tokens_after);
  event.forced = forced;
  event.text = fmt::format(
      "[agentd: compacted {} earlier turn{} into a summary (about {} tokens down to {}); the original "
      "messages stay stored. Pinned instructions and the latest turns were kept as they are.]\n",
      scope.turn_count, scope.turn_count == 1 ? "" : "s", record.tokens_before, record.tokens_after);
  outcome.message = event.text;
  emit(std::move(event));
  outcome.compacted = true;
  session_start_source_ = "compact";
  co_return outcome;
}

// /skills, /memory, /remember, /forget and /compact (slash_commands.cpp has their rows): their model
// call and the context they gather end when the turn is cancelled.
asio::awaitable<std::string> Session::cmd_skills(const CommandCall& call) {
  if (std::shared_ptr<const TurnContext> context = last_context_) {
    co_return skills::skills_report(context->skills, &context->skill_selection);
  }
  // Named, not a temporary: GCC 12 destroys class temporaries passed to a coroutine twice.
  std::string no_input;
  auto gathered = co_await gather_context(std::move(no_input), false, call.cancel);
  if (!gathered) co_return "Cannot list the skills: " + gathered.error().message();
  co_return skills::skills_report((*gathered)->skills, nullptr);
}

asio::awaitable<std::string> Session::cmd_memory(const CommandCall& call) {
  std::string last_input = last_context_ ? last_context_->input : std::string();
  auto gathered = co_await gather_context(std::move(last_input), false, call.cancel);
  if (!gathered) co_return "Cannot show the memory: " + gathered.error().message();
  const TurnContext& now = **gathered;
  // The selection shown is the last turn's (what the model was given); the files are as they are now.
  const memory::FactSelection& last = last_context_ ? last_context_->fact_selection : now.fact_selection;
  std::string report = memory::memory_report(now.instructions, now.facts, last);
  if (!summary_text_.empty()) {
    report += fmt::format("\n\nCompaction: {} earlier turn{} (from {}) are sent as a summary.", summary_turns_,
                          summary_turns_ == 1 ? "" : "s", summary_first_turn_);
  }
  co_return report;
}

asio::awaitable<std::string> Session::cmd_remember(const CommandCall& call) {
  if (support::trim(call.args).empty())
    co_return std::string("Usage: /remember TEXT (a fact to keep for this project)");
  std::string text(call.args);  // named: GCC 12 destroys class temporaries passed to a coroutine twice
  auto fact = co_await memory_->remember(std::move(text));
  if (!fact) co_return "Not remembered: " + fact.error().message();
  co_return fmt::format("Remembered (fact {}) for {}: {}", fact->id, project_, fact->text);
}

asio::awaitable<std::string> Session::cmd_forget(const CommandCall& call) {
  const std::string_view digits = support::trim(call.args);
  std::int64_t id = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    co_return std::string("Usage: /forget ID (the ids are in /memory)");
  }
  auto removed = co_await memory_->forget(id);
  if (!removed) co_return "Cannot forget: " + removed.error().message();
  co_return fmt::format("Fact {} forgotten.", id);
}

asio::awaitable<std::string> Session::cmd_compact(const CommandCall& call) {
  const std::string pinned =
      render_system_prompt(engine_.system_rules, last_context_.get(), {}, info_.cwd, info_.additional_dirs);
  const std::uint64_t tool_tokens = estimate_tokens(tool_definitions());
  auto compacted =
      co_await compact(true, estimate_tokens(pinned) + tool_tokens, 0, call.turn_id, call.cancel, call.span);
  if (!compacted) co_return "Compaction failed: " + compacted.error().message();
  // A compaction tells the client itself (its event); otherwise say why nothing happened.
  if (compacted->compacted) co_return std::string();
  co_return "Nothing compacted: " + compacted->message;
}

}  // namespace agentd::core
