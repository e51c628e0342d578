// The turn loop (the seed's agent loop), read top to bottom: Session::prompt opens a turn, run_turn
// gathers its context, makes room in the window, then calls the model and runs its tool calls until the
// model stops, and end_turn makes everything durable before the prompt is answered. A slash command's
// turn goes to run_command (session_commands.cpp) instead of the model.
#include <set>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/engine/ids.h"
#include "core/engine/session.h"
#include "core/engine/slash_commands.h"
#include "core/model/price_table.h"
#include "core/model/stream_summary.h"
#include "core/support/clock.h"
#include "core/support/log.h"
#include "core/support/run_off_loop.h"
#include "core/telemetry/otlp_exporter.h"
#include "storage/blob_files.h"
#include "storage/blob_store.h"
#include "storage/span_store.h"
#include "storage/turn_store.h"
#include "storage/usage_store.h"

namespace agentd::core {

namespace asio = boost::asio;
namespace log = support::log;
using support::CancelToken;
using support::Errc;
using support::Error;
using support::Json;
using support::Result;

namespace {

// Spans of one turn go to the spans table as they end, and to the OTLP exporter when there is one.
class TurnSpanSink final : public support::SpanSink {
 public:
  TurnSpanSink(std::shared_ptr<EventLog> events, std::string turn_id, const telemetry::TurnExport* exported)
      : events_(std::move(events)), turn_id_(std::move(turn_id)), exported_(exported) {}
  void record(support::SpanRecord span) override {
    if (exported_ != nullptr) exported_->record(span);
    events_->store([turn = turn_id_, span = std::move(span)](
                       storage::Connection& db) { return storage::SpanStore(db).append(turn, span); },
                   "a span");
  }

 private:
  std::shared_ptr<EventLog> events_;
  std::string turn_id_;
  const telemetry::TurnExport* exported_;
};

std::string user_text(const PromptInput& input) {
  std::string text = input.text;
  for (const auto& a : input.attachments) {
    text += fmt::format("\n\n<attachment uri=\"{}\">\n{}\n</attachment>", a.uri, a.text);
  }
  return text;
}

// The assistant's message as the history keeps it: the response's blocks in order.
model::Message assistant_message(const model::StreamSummary& summary) {
  model::Message assistant{model::Role::assistant, {}};
  for (const auto& block : summary.blocks) {
    switch (block.kind) {
      case model::StreamBlock::Kind::text: assistant.content.emplace_back(model::TextBlock{block.text}); break;
      case model::StreamBlock::Kind::thinking:
        assistant.content.emplace_back(model::ThinkingBlock{block.text, block.signature, {}});
        break;
      case model::StreamBlock::Kind::redacted_thinking:
        assistant.content.emplace_back(model::ThinkingBlock{{}, {}, block.redacted_data});
        break;
      case model::StreamBlock::Kind::tool_call: {
        const auto& call = summary.tool_calls.at(block.tool_call);
        assistant.content.emplace_back(model::ToolCallBlock{
            call.id, call.name, call.input.is_object() ? call.input : Json::object(), call.arguments_json});
        break;
      }
    }
  }
  return assistant;
}

void set_retrieval_attributes(support::Span& span, const TurnContext& context) {
  span.set_attribute("instruction_files", context.instructions.files.size());
  span.set_attribute("skills_selected", context.skill_selection.selected_names().size());
  span.set_attribute("facts_selected", context.fact_selection.selected_ids().size());
  span.set_attribute("evidence", context.package ? context.package->evidence.size() : 0);
  span.set_attribute("retrieve_ms", context.retrieve_ms);
  span.set_attribute("skills_ms", context.skills_ms);
  if (context.package) {
    span.set_attribute("task", std::string(context::task_kind_name(context.package->task.kind)));
    span.set_attribute("omitted", context.package->omitted_total);
    span.set_attribute("context_tokens", context.package->used_tokens);
    span.set_attribute("context_budget", context.package->budget_tokens);
    span.set_attribute("indexed_files", context.package->stats.indexed_files);
  } else if (!context.retrieval_note.empty()) {
    span.set_attribute("note", context.retrieval_note);
  }
}

TurnOutcome stopped(StopReason reason) { return TurnOutcome{reason, {}, std::nullopt, std::nullopt}; }

}  // namespace

struct Session::TurnStart {
  std::string id;
  std::string input;
  bool command = false;  // a slash command: answered without the model
  CancelToken cancel;    // the turn's: the prompt's, and session/cancel
};

struct Session::ModelResponse {
  model::StreamResult result;
  model::StreamSummary summary;
  std::set<std::string> announced;  // tool calls the client was told of while they streamed
};

constexpr support::EnumName<StopReason> kStopReasonIds[] = {
    {StopReason::end_turn, "end_turn"},
    {StopReason::max_tokens, "max_tokens"},
    {StopReason::max_turn_requests, "max_turn_requests"},
    {StopReason::refusal, "refusal"},
    {StopReason::cancelled, "cancelled"},
};
static_assert(support::names_every_value(kStopReasonIds, StopReason::cancelled));

std::span<const support::EnumName<StopReason>> enum_names(StopReason) noexcept { return kStopReasonIds; }

std::string_view stop_reason_id(StopReason reason) noexcept { return support::enum_name(reason, "end_turn"); }

asio::awaitable<Result<TurnOutcome>> Session::prompt(PromptInput input, CancelToken cancel) {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  // Without a key the model cannot be called: said before a turn starts, and before the prompt's images
  // are read (a slash command needs no key).
  if (engine_.credentials && !is_slash_command(input.text) && !engine_.credentials->usable(model_)) {
    co_return engine_.credentials->missing(model_, model_spec_);
  }
  std::vector<LoadedImage> images;
  if (!input.images.empty()) {
    if (is_slash_command(input.text)) {
      co_return Error(Errc::invalid_argument, "params.prompt: a slash command takes no images; send them in a prompt");
    }
    auto loaded = co_await load_images(std::move(input.images));
    if (!loaded) co_return std::move(loaded).error();
    images = std::move(*loaded);
  }
  if (running_) {
    co_return Error(Errc::conflict,
                    fmt::format("session {} is already running turn {}; a session runs one turn at a time: "
                                "send session/cancel first, or wait for the turn to end",
                                info_.id, running_->id));
  }
  auto self = shared_from_this();  // the session outlives its running turn, even if closed meanwhile
  const TurnStart turn = begin_turn(input, cancel);
  std::optional<telemetry::TurnExport> exported;
  if (engine_.otlp) exported.emplace(engine_.otlp, input.trace_parent ? input.trace_parent : engine_.trace_parent);
  TurnSpanSink sink(events_, turn.id, exported ? &*exported : nullptr);
  support::Tracer tracer(&sink);
  Result<TurnOutcome> outcome = TurnOutcome{};
  Result<void> saved = support::ok();
  {
    support::Span span = tracer.start("turn.run");
    span.set_attribute("session", info_.id);
    span.set_attribute("turn", turn.id);
    if (exported) span.set_attribute("trace_id", exported->trace_id());  // to find the turn in the collector
    store_images(images);
    emit(UserMessageEvent{user_text(input)});
    std::vector<model::ImageBlock> blocks;
    for (auto& image : images) {
      emit(UserImageEvent{image.block.media_type, image.block.hash, image.block.bytes, image.block.data});
      blocks.push_back(std::move(image.block));
    }
    images.clear();
    if (turn.command) {
      outcome = co_await run_command(input.text, turn.id, turn.cancel, span);
    } else {
      outcome = co_await run_turn(std::move(input), std::move(blocks), turn.id, turn.cancel, span);
      if (outcome) outcome->verification = co_await verification_of_turn();
    }
    if (!outcome) {
      span.set_status(support::SpanStatus::error, outcome.error().message());
    } else {
      span.set_attribute("stop_reason", stop_reason_id(outcome->stop_reason));
      if (outcome->stop_reason == StopReason::cancelled) span.set_status(support::SpanStatus::cancelled);
    }
    span.set_attribute("input_tokens", turn_cost_.usage.total_input_tokens());
    span.set_attribute("output_tokens", turn_cost_.usage.output_tokens);
    if (auto usd = turn_cost_.total_usd()) span.set_attribute("cost_usd", *usd);
    saved = co_await end_turn(turn, outcome, span);
  }
  // A turn that failed reports its own cause (a storage failure among them); saving it may well fail
  // for the same reason, and was logged.
  if (!saved && outcome) co_return std::move(saved).error().context("saving the turn");
  if (outcome) outcome->turn_id = turn.id;
  co_return outcome;
}

Session::TurnStart Session::begin_turn(const PromptInput& input, const CancelToken& cancel) {
  TurnStart turn{new_id("t"), input.text, is_slash_command(input.text), {}};
  running_.emplace(RunningTurn{turn.id, std::make_unique<support::CancelSource>(cancel)});
  turn.cancel = running_->cancel->token();
  events_->set_turn(turn.id);
  // A failure between turns was logged when it happened; this turn stops for its own.
  events_->take_storage_error();
  checkpoints_->begin_turn(turn.id);
  executor_->set_unverified_edits(false);
  executor_->take_verification_runs();  // a slash command's or a context preview's are not this turn's
  hooks_->take_stop();                  // a hook's `continue: false` ends the turn it was given in
  verify_rounds_ = 0;
  verify_runs_ = 0;
  turn_cost_ = CostLedger{};

  storage::TurnRecord record;
  record.id = turn.id;
  record.session_id = info_.id;
  record.seq = ++turn_count_;
  record.input = input.text;
  record.started_at_ms = support::unix_millis_now();
  events_->store([record](storage::Connection& db) { return storage::TurnStore(db).begin(record); },
                 "the turn's record");
  return turn;
}

// response.render: the turn's record closed, everything it wrote durable and delivered; only then is the
// prompt answered (nothing is acknowledged before it is durable).
asio::awaitable<Result<void>> Session::end_turn(const TurnStart& turn, const Result<TurnOutcome>& outcome,
                                                support::Span& span) {
  support::Span render = span.child("response.render");
  std::string turn_meta;
  {
    support::JsonWriter w(turn_meta);
    w.begin_object().member("model", model_spec_).member("modelRequests", turn_cost_.calls);
    w.member("inputTokens", turn_cost_.usage.total_input_tokens())
        .member("outputTokens", turn_cost_.usage.output_tokens);
    w.optional_member("costUsd", turn_cost_.total_usd());
    if (!outcome) w.member("error", outcome.error().message());
    w.end_object();
  }
  const std::string stop = outcome ? std::string(stop_reason_id(outcome->stop_reason)) : std::string("error");
  events_->store(
      [turn_id = turn.id, stop, turn_meta = std::move(turn_meta), ended = support::unix_millis_now()](
          storage::Connection& db) { return storage::TurnStore(db).finish(turn_id, ended, stop, turn_meta); },
      "the turn's end");
  running_.reset();
  if (!turn.command) previous_turn_cost_ = turn_cost_;
  last_turn_id_ = turn.id;
  events_->set_turn({});
  if (auto changed = checkpoints_->turn_changed_files(); !changed.empty()) last_turn_changed_ = std::move(changed);
  checkpoints_->end_turn();
  Result<void> flushed = co_await events_->flush();
  render.set_attribute("last_seq", events_->last_seq());
  if (!flushed) {
    render.set_status(support::SpanStatus::error, flushed.error().message());
    co_return flushed;
  }
  if (auto error = events_->take_storage_error()) co_return *std::move(error);
  co_return support::ok();
}

asio::awaitable<Result<std::vector<LoadedImage>>> Session::load_images(std::vector<PromptImage> images) {
  auto load =
      [images = std::move(images), cwd = info_.cwd, dirs = info_.additional_dirs, denied = settings_.denied_paths,
       blob_dir = storage::blob_directory(engine_.store->worker().path())]() -> Result<std::vector<LoadedImage>> {
    const tools::PathGuard guard(cwd, dirs, denied);
    auto loaded = load_prompt_images(images, guard);
    if (!loaded) return loaded;
    // A large image goes to a blob file here, as a large checkpoint pre-image does: in the database's
    // transaction it would hold the one write lock while many MiB are written. Its bytes are not needed
    // after that.
    for (auto& image : *loaded) {
      if (image.bytes.size() < storage::kBlobFileMinBytes || blob_dir.empty()) continue;
      AGENTD_TRY_VOID(storage::write_blob_file(blob_dir, image.block.hash, image.bytes));
      image.bytes.clear();
      image.bytes.shrink_to_fit();
    }
    return loaded;
  };
  auto loaded = co_await support::run_off_loop(std::move(load));
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!loaded) co_return std::move(loaded).error();  // it names the block: "params.prompt[2]: ..."
  co_return loaded;
}

void Session::store_images(std::vector<LoadedImage>& images) {
  for (auto& image : images) {
    events_->store(
        [session = info_.id, hash = image.block.hash, size = image.block.bytes,
         bytes = std::move(image.bytes)](storage::Connection& db) -> Result<void> {
          storage::BlobStore blobs(db);
          if (bytes.size() == size) {
            AGENTD_TRY_VOID(blobs.put(hash, bytes));
          } else {
            AGENTD_TRY_VOID(blobs.put_in_file(hash, size));
          }
          return blobs.attach(session, hash);
        },
        "an image of the prompt");
  }
}

asio::awaitable<Result<TurnOutcome>> Session::run_turn(PromptInput input, std::vector<model::ImageBlock> images,
                                                       std::string turn_id, CancelToken cancel, support::Span& span) {
  // A database that is failing would lose the turn's history. Whether it is back, one write tells (the
  // turn's own record, queued by begin_turn, and whatever waited to be stored); if not, the prompt is
  // refused with the cause.
  if (engine_.store->worker().health().failing || events_->backlogged()) {
    if (auto stored = co_await events_->flush(); !stored) {
      co_return Error(Errc::storage,
                      fmt::format("the database is failing, so the prompt was not run: {}", stored.error().message()));
    }
  }
  // A dollar budget needs a price to be checked: refused, not guessed.
  const std::optional<model::Price> price = model::find_price(model_.model);
  if (auto refused = refuse_unpriced(budgets_, price, model_spec_)) co_return Error(Errc::limit_exceeded, *refused);

  auto prompt_hooks = co_await run_prompt_hooks(input.text, cancel, span);
  if (!prompt_hooks || cancel.cancelled()) co_return stopped(StopReason::cancelled);
  if (prompt_hooks->blocked) {
    emit(AgentTextEvent{
        fmt::format("[agentd: a UserPromptSubmit hook blocked this prompt: {}]", *prompt_hooks->blocked)});
    co_return stopped(StopReason::refusal);
  }
  if (auto stop = hooks_->take_stop()) {
    emit(AgentTextEvent{fmt::format("[agentd: {}]", *stop)});
    co_return stopped(StopReason::end_turn);
  }

  auto context = co_await retrieve_context(input.text, cancel, span);
  if (!context) co_return std::move(context).error().context("gathering the turn's context");
  if (cancel.cancelled()) co_return stopped(StopReason::cancelled);
  last_context_ = *context;

  // MCP servers still starting get a bounded wait; one that failed since the last turn is said once.
  std::string mcp_note = co_await mcp_->prepare_turn(cancel, span);
  if (cancel.cancelled()) co_return stopped(StopReason::cancelled);
  if (!mcp_note.empty()) emit(AgentTextEvent{fmt::format("[agentd: {}]\n\n", mcp_note.substr(0, mcp_note.size() - 1))});
  std::vector<std::string> notes;
  if (!prompt_hooks->context.empty()) notes.push_back(std::move(prompt_hooks->context));
  if (!mcp_note.empty()) notes.push_back(std::move(mcp_note));
  model::Message user = turn_message(**context, std::move(notes), input, std::move(images));

  // Older turns are summarized when this turn would not fit otherwise.
  const auto tools = tool_definitions();
  const std::uint64_t tool_tokens = estimate_tokens(tools);
  {
    const std::string pinned_system =
        render_system_prompt(engine_.system_rules, context->get(), {}, info_.cwd, info_.additional_dirs);
    auto compacted = co_await compact(false, estimate_tokens(pinned_system) + tool_tokens, estimate_tokens(user),
                                      turn_id, cancel, span);
    if (!compacted) co_return std::move(compacted).error().context("compacting the history");
    if (cancel.cancelled()) co_return stopped(StopReason::cancelled);
    if (compacted->cannot_fit) {
      emit(AgentTextEvent{fmt::format("[agentd: {}]", compacted->message)});
      co_return stopped(StopReason::max_tokens);
    }
  }

  history_.push_back(HistoryTurn{turn_id, {}});
  HistoryTurn& current = history_.back();
  append(current, std::move(user), turn_id);
  const std::string system = build_system_prompt(context->get());
  const std::uint64_t fixed_tokens = estimate_tokens(system) + tool_tokens;
  bool stop_hook_active = false;  // the model goes on because a Stop hook said so

  for (std::uint32_t requests = 0;; ++requests) {
    if (cancel.cancelled()) co_return stopped(StopReason::cancelled);
    // History that could not be stored is not built on (nor paid for): before every model call after the
    // first, what the last one streamed is stored (one commit without an fsync), or the turn ends with the
    // cause.
    if (requests > 0) {
      if (auto stored = co_await events_->deliver_pending(); !stored) {
        co_return Error(Errc::storage, fmt::format("the session's history could not be stored, so the turn stopped: {}",
                                                   stored.error().message()));
      }
    }
    if (requests >= settings_.limits.max_turn_requests) {
      emit(
          AgentTextEvent{fmt::format("\n\n[agentd: stopped after {} model requests in one turn (the limit); "
                                     "send another prompt to continue]",
                                     settings_.limits.max_turn_requests)});
      co_return stopped(StopReason::max_turn_requests);
    }
    auto request = next_request(system, tools, fixed_tokens);
    if (!request) {
      emit(AgentTextEvent{request.error().message()});
      co_return stopped(StopReason::max_tokens);
    }
    // The budgets, against this call's worst case: a spent one stops the turn, a tight one shortens the
    // answer the call may give.
    std::uint64_t input_tokens = fixed_tokens;
    for (const auto& m : request->messages) input_tokens += estimate_tokens(m);
    std::uint64_t max_output = model_.max_output_tokens;
    const Spend spend{session_cost_.priced_usd, turn_cost_.priced_usd, turn_cost_.usage.output_tokens};
    if (auto over = check_budgets(budgets_, spend, price, input_tokens, max_output)) {
      emit(AgentTextEvent{fmt::format("\n\n[agentd: stopped: {}]", over->message())});
      TurnOutcome outcome = stopped(over->kind == BudgetKind::turn_output_tokens ? StopReason::max_tokens
                                                                                 : StopReason::max_turn_requests);
      outcome.stopped_by = *over;
      co_return outcome;
    }
    if (max_output < model_.max_output_tokens) request->max_tokens = static_cast<std::uint32_t>(max_output);

    ModelResponse response = co_await call_model(std::move(*request), turn_id, cancel, span);
    if (!response.result.ok) co_return stream_failed(response, current, turn_id, cancel);
    if (model::Message assistant = assistant_message(response.summary); !assistant.content.empty()) {
      append(current, std::move(assistant), turn_id);
    }

    const auto& calls = response.summary.tool_calls;
    const model::StopReason stop = response.result.done->stop_reason;
    if (stop == model::StopReason::max_tokens || stop == model::StopReason::refusal) {
      // The calls of a cut or refused response are not run (a cut one's input may be incomplete), but
      // each gets a result: a call without one makes every later request invalid to the provider.
      if (!calls.empty()) close_unrun_calls(calls, stop == model::StopReason::max_tokens, current, turn_id);
      co_return stopped(stop == model::StopReason::max_tokens ? StopReason::max_tokens : StopReason::refusal);
    }
    if (stop == model::StopReason::pause_turn) continue;  // the provider paused a long turn: resume it
    if (calls.empty()) {
      // The model is done. Edited files nobody verified get verify.auto's treatment; a failure in the
      // changed code goes back to the model for another round.
      auto feedback = co_await auto_verify(turn_id, cancel, span);
      if (cancel.cancelled()) co_return stopped(StopReason::cancelled);
      if (!feedback && hooks_->any(tools::HookEvent::stop)) {
        // Stop hooks may send the model back to work, with their reason as its next instruction.
        Json stop_input = Json::object();
        stop_input.set("stop_hook_active", stop_hook_active);
        auto stop_hooks = co_await hooks_->run(tools::HookEvent::stop, "", std::move(stop_input), cancel, span);
        if (!stop_hooks || cancel.cancelled()) co_return stopped(StopReason::cancelled);
        if (stop_hooks->blocked && !hooks_->take_stop()) {
          stop_hook_active = true;
          feedback = model::Message{
              model::Role::user,
              {model::TextBlock{fmt::format("[A Stop hook did not let the turn end yet: {}]", stop_hooks->reason)}}};
        }
      }
      if (!feedback) co_return stopped(StopReason::end_turn);
      append(current, std::move(*feedback), turn_id);
      continue;
    }

    model::Message results{model::Role::tool, {}};
    for (auto& r : co_await executor_->run_all(calls, cancel, span)) results.content.emplace_back(std::move(r));
    append(current, std::move(results), turn_id);
    if (cancel.cancelled()) co_return stopped(StopReason::cancelled);
    if (auto stop = hooks_->take_stop()) {
      emit(AgentTextEvent{fmt::format("\n\n[agentd: {}]", *stop)});
      co_return stopped(StopReason::end_turn);
    }
  }
}

asio::awaitable<Result<Session::PromptHooks>> Session::run_prompt_hooks(const std::string& text, CancelToken cancel,
                                                                        support::Span& span) {
  PromptHooks out;
  std::string context;
  if (!session_start_source_.empty()) {
    const std::string source = std::exchange(session_start_source_, {});
    if (hooks_->any(tools::HookEvent::session_start)) {
      Json input = Json::object();
      input.set("source", source);
      auto started = co_await hooks_->run(tools::HookEvent::session_start, source, std::move(input), cancel, span);
      if (!started) co_return std::move(started).error();
      if (!started->context.empty()) context = "[SessionStart hook]\n" + started->context;
    }
  }
  if (hooks_->any(tools::HookEvent::user_prompt_submit)) {
    Json input = Json::object();
    input.set("prompt", text);
    auto submitted = co_await hooks_->run(tools::HookEvent::user_prompt_submit, "", std::move(input), cancel, span);
    if (!submitted) co_return std::move(submitted).error();
    if (submitted->blocked) out.blocked = submitted->reason;
    if (!submitted->context.empty()) {
      context += (context.empty() ? "" : "\n\n") + std::string("[UserPromptSubmit hook]\n") + submitted->context;
    }
  }
  out.context = std::move(context);
  co_return out;
}

// Pinned instructions, skills, facts and the workspace context package, gathered off the loop.
asio::awaitable<Result<std::shared_ptr<const TurnContext>>> Session::retrieve_context(const std::string& input,
                                                                                      CancelToken cancel,
                                                                                      support::Span& span) {
  support::Span retrieve = span.child("context.retrieve");
  auto gathered = co_await gather_context(input, true, std::move(cancel));
  if (!gathered) {
    retrieve.set_status(support::SpanStatus::error, gathered.error().message());
    co_return gathered;
  }
  set_retrieval_attributes(retrieve, **gathered);
  // The seed's tree: skill.select beside context.retrieve under turn.run, the other steps under it.
  std::vector<support::SpanRecord> skills;
  std::vector<support::SpanRecord> steps;
  for (const auto& record : (*gathered)->spans) {
    (record.name == "skill.select" && record.parent_id == 0 ? skills : steps).push_back(record);
  }
  span.adopt(std::move(skills));
  retrieve.adopt(std::move(steps));
  co_return gathered;
}

// Stored as sent, so the next turn's request repeats it byte for byte and the provider's cache of the
// conversation so far still holds.
// The images come right before the user's words, as both providers advise.
model::Message Session::turn_message(const TurnContext& context, std::vector<std::string> notes,
                                     const PromptInput& input, std::vector<model::ImageBlock> images) const {
  model::Message user{model::Role::user, {}};
  for (auto& part : render_turn_preamble(context)) user.content.emplace_back(model::TextBlock{std::move(part)});
  for (auto& note : notes) user.content.emplace_back(model::TextBlock{std::move(note)});
  for (auto& image : images) user.content.emplace_back(std::move(image));
  user.content.emplace_back(model::TextBlock{user_text(input)});
  return user;
}

// Never send what the model must reject for length: history is chosen by budget, newest first.
Result<model::ModelRequest> Session::next_request(const std::string& system,
                                                  const std::vector<model::ToolDefinition>& tools,
                                                  std::uint64_t fixed_tokens) const {
  const std::uint64_t window = model_.context_window;
  const std::uint64_t reserve = fixed_tokens + model_.max_output_tokens;
  const std::uint64_t budget = window > reserve ? window - reserve : 0;
  HistorySelection selection = select_history(history_, budget);
  if (selection.estimated_tokens > budget) {
    return Error(
        Errc::limit_exceeded,
        fmt::format("[agentd: this turn no longer fits in {}'s context window: about {} tokens of history and "
                    "tools, {} reserved for the answer, {} available. Try /compact, /clear, or a new "
                    "session.]",
                    model_.model, selection.estimated_tokens + fixed_tokens, model_.max_output_tokens, window));
  }
  if (selection.dropped_turns > 0) {
    log::info("session {}: {} older turns left out of the request to fit the context window", info_.id,
              selection.dropped_turns);
  }
  model::ModelRequest request;
  request.system = system;
  request.messages = std::move(selection.messages);
  request.tools = tools;
  return request;
}

asio::awaitable<Session::ModelResponse> Session::call_model(model::ModelRequest request, const std::string& turn_id,
                                                            CancelToken cancel, support::Span& span) {
  ModelResponse response;
  model::StreamAccumulator acc;
  auto on_event = [&](const model::ModelEvent& event) {
    acc.add(event);
    if (const auto* text = std::get_if<model::TextDelta>(&event)) {
      if (!text->text.empty()) emit(AgentTextEvent{text->text});
    } else if (const auto* thought = std::get_if<model::ThinkingDelta>(&event)) {
      if (!thought->text.empty()) emit(AgentThoughtEvent{thought->text});
    } else if (const auto* delta = std::get_if<model::ToolCallDelta>(&event)) {
      if (!delta->id.empty() && !delta->name.empty() && response.announced.insert(delta->id).second) {
        auto tool = tools_.find(delta->name);
        emit(ToolCallStartedEvent{delta->id, delta->name, delta->name,
                                  tool ? tool->spec().kind : tools::ToolKind::other});
      }
    }
  };
  // One client per model setting: it seeds its retry jitter once, not per call.
  if (!client_) client_ = std::make_unique<model::ModelClient>(model_, *engine_.http, engine_.model_options);
  response.result = co_await client_->stream(std::move(request), on_event, std::move(cancel), &span);
  co_await asio::dispatch(strand_, asio::use_awaitable);
  response.summary = std::move(acc).take();
  if (response.result.done && response.result.done->usage) record_usage(*response.result.done->usage, turn_id, span);
  co_return response;
}

Result<TurnOutcome> Session::stream_failed(const ModelResponse& response, HistoryTurn& current,
                                           const std::string& turn_id, const CancelToken& cancel) {
  // Keep what the user already saw: the partial text becomes the assistant's message.
  if (!response.summary.text.empty()) {
    append(current, model::Message{model::Role::assistant, {model::TextBlock{response.summary.text}}}, turn_id);
  }
  for (const auto& id : response.announced) {
    ToolCallUpdatedEvent update;
    update.id = id;
    update.status = ToolCallStatus::failed;
    update.text = cancel.cancelled() ? "cancelled" : "the model stream failed before the call was complete";
    emit(std::move(update));
  }
  if (cancel.cancelled()) return stopped(StopReason::cancelled);
  const model::ModelError& error = response.result.error.value_or(model::ModelError{});
  // A key the provider refused (or none at all) is the client's to fix with authenticate.
  return Error(error.kind == model::ErrorKind::auth ? Errc::auth_required : Errc::unavailable,
               fmt::format("model error ({}{}): {}", model::error_kind_name(error.kind),
                           error.http_status != 0 ? fmt::format(", HTTP {}", error.http_status) : "", error.message),
               error.http_status);
}

void Session::append(HistoryTurn& current, model::Message message, const std::string& turn_id) {
  persist_message(message, turn_id);
  current.messages.push_back(std::move(message));
}

void Session::close_unrun_calls(const std::vector<model::ToolCallDone>& calls, bool cut, HistoryTurn& current,
                                const std::string& turn_id) {
  const std::string why =
      cut ? "not run: your response was cut at the output limit before it ended, so this call may be incomplete. "
            "Make it again; split a large change (a long write_file) into smaller edits."
          : "not run: the response that made this call ended in a refusal.";
  model::Message tool_message{model::Role::tool, {}};
  for (const auto& call : calls) {
    tool_message.content.emplace_back(model::ToolResultBlock{call.id, why, true});
    ToolCallUpdatedEvent update;
    update.id = call.id;
    update.status = ToolCallStatus::failed;
    update.text = why;
    emit(std::move(update));
  }
  append(current, std::move(tool_message), turn_id);
}

std::string Session::build_system_prompt(const TurnContext* context) const {
  return render_system_prompt(engine_.system_rules, context, summary_text_, info_.cwd, info_.additional_dirs);
}

std::vector<model::ToolDefinition> Session::tool_definitions() const {
  std::vector<model::ToolDefinition> defs;
  for (const tools::ToolSpec* spec : tools_.specs()) {
    defs.push_back(model::ToolDefinition{spec->name, spec->description, spec->input_schema});
  }
  return defs;
}

void Session::record_usage(const model::Usage& usage, const std::string& turn_id, support::Span& span) {
  std::optional<double> cost;
  if (auto price = model::find_price(model_.model)) cost = model::cost_usd(usage, *price);
  session_cost_.add(usage, cost);
  turn_cost_.add(usage, cost);
  span.set_attribute("cost_usd", cost ? Json(*cost) : Json("unpriced"));

  storage::UsageRecord record;
  record.session_id = info_.id;
  record.turn_id = turn_id;
  record.provider = std::string(model::provider_name(model_.provider));
  record.model = model_.model;
  record.input_tokens = static_cast<std::int64_t>(usage.input_tokens);
  record.output_tokens = static_cast<std::int64_t>(usage.output_tokens);
  record.cache_write_tokens = static_cast<std::int64_t>(usage.cache_write_tokens);
  record.cache_read_tokens = static_cast<std::int64_t>(usage.cache_read_tokens);
  record.cost_usd = cost;
  record.created_at_ms = support::unix_millis_now();
  events_->store(
      [record](storage::Connection& db) -> Result<void> {
        auto id = storage::UsageStore(db).append(record);
        if (!id) return std::move(id).error();
        return {};
      },
      "the model call's usage");

  UsageEvent event;
  event.used = usage.total_input_tokens() + usage.output_tokens;
  event.size = model_.context_window;
  event.session_cost_usd = session_cost_.total_usd();
  event.call_usage = usage;
  event.model = model_spec_;
  emit(std::move(event));
}

}  // namespace agentd::core
