#include "core/engine/session.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/engine/ids.h"
#include "core/engine/slash_commands.h"
#include "core/engine/verification.h"
#include "core/memory/compaction.h"
#include "core/model/price_table.h"
#include "core/model/stream_summary.h"
#include "core/support/clock.h"
#include "core/support/log.h"
#include "core/support/task_group.h"
#include "storage/compaction_store.h"
#include "storage/event_store.h"
#include "storage/permission_store.h"
#include "storage/session_store.h"
#include "storage/span_store.h"
#include "storage/turn_store.h"
#include "storage/usage_store.h"
#include "tools/disk_file_access.h"
#include "tools/file_state.h"
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

// Reads through the client when it offers fs/read_text_file (its unsaved buffers are the truth),
// else from disk.
class SessionFileAccess final : public tools::FileAccess {
 public:
  // `deliver_pending` makes the session's events so far reach the client: a client must see the
  // tool_call before the fs/read_text_file request made for it.
  SessionFileAccess(std::string session_id, std::function<std::shared_ptr<Frontend>()> frontend,
                    std::function<asio::awaitable<void>()> deliver_pending)
      : session_id_(std::move(session_id)),
        frontend_(std::move(frontend)),
        deliver_pending_(std::move(deliver_pending)) {}

  asio::awaitable<Result<std::string>> read_text(std::string path, CancelToken cancel) override {
    auto frontend = frontend_();
    if (frontend && frontend->can_read_files()) {
      co_await deliver_pending_();
      co_return co_await frontend->read_text_file(session_id_, std::move(path), std::move(cancel));
    }
    co_return co_await disk_.read_text(std::move(path), std::move(cancel));
  }

 private:
  std::string session_id_;
  std::function<std::shared_ptr<Frontend>()> frontend_;
  std::function<asio::awaitable<void>()> deliver_pending_;
  tools::DiskFileAccess disk_;
};

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
    while (from < tail_.size() && (static_cast<unsigned char>(tail_[from]) & 0xC0) == 0x80) ++from;
    return fmt::format("[... {} bytes before ...]\n{}", total_ - (tail_.size() - from), tail_.substr(from));
  }

 private:
  std::string tail_;
  std::size_t total_ = 0;
};

// Spans of one turn go to the spans table as they end.
class TurnSpanSink final : public support::SpanSink {
 public:
  TurnSpanSink(EngineStore& store, std::string turn_id) : store_(store), turn_id_(std::move(turn_id)) {}
  void record(support::SpanRecord span) override {
    store_.stream([turn = turn_id_, span = std::move(span)](storage::Connection& db) {
      return storage::SpanStore(db).append(turn, span);
    });
  }

 private:
  EngineStore& store_;
  std::string turn_id_;
};

// A tool's resolve() or run() ended in an error instead of a result: cancelled (`when` says at which step),
// or an internal fault, logged and turned into a result the model can recover from.
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

std::string user_text(const PromptInput& input) {
  std::string text = input.text;
  for (const auto& a : input.attachments) {
    text += fmt::format("\n\n<attachment uri=\"{}\">\n{}\n</attachment>", a.uri, a.text);
  }
  return text;
}

}  // namespace

std::string_view stop_reason_id(StopReason reason) noexcept {
  switch (reason) {
    case StopReason::end_turn: return "end_turn";
    case StopReason::max_tokens: return "max_tokens";
    case StopReason::max_turn_requests: return "max_turn_requests";
    case StopReason::refusal: return "refusal";
    case StopReason::cancelled: return "cancelled";
  }
  return "end_turn";
}

void CostLedger::add(const model::Usage& u, std::optional<double> cost) {
  usage.input_tokens += u.input_tokens;
  usage.output_tokens += u.output_tokens;
  usage.cache_write_tokens += u.cache_write_tokens;
  usage.cache_read_tokens += u.cache_read_tokens;
  ++calls;
  if (cost) {
    priced_usd += *cost;
  } else {
    ++unpriced_calls;
  }
}

Session::Session(EngineContext& engine, SessionInfo info, ProjectSettings settings, model::ModelConfig model,
                 std::string model_spec)
    : engine_(engine),
      settings_(std::move(settings)),
      strand_(asio::make_strand(engine.executor)),
      info_(std::move(info)),
      model_(std::move(model)),
      model_spec_(std::move(model_spec)) {
  policy_.set_mode(settings_.default_mode);
  files_ = std::make_unique<SessionFileAccess>(
      info_.id, [this] { return frontend_; },
      [this]() -> asio::awaitable<void> {
        write_events();
        auto delivered = co_await engine_.store->barrier(storage::Durability::process);
        co_await asio::dispatch(strand_, asio::use_awaitable);
        if (!delivered) log::warn("session {}: {}", info_.id, delivered.error().message());
      });
  file_state_ = std::make_unique<tools::FileState>();
  checkpoints_ = std::make_unique<Checkpoints>(*engine.store, info_.id, *file_state_);
  project_ = workspace_root_of(info_.cwd);
  index_ = engine.workspace_index ? engine.workspace_index : std::make_shared<context::WorkspaceIndex>();
}

Session::~Session() = default;

Result<void> Session::install_tools() {
  if (!engine_.install_tools) return support::ok();
  return engine_.install_tools(tools_, settings_);
}

void Session::attach(std::shared_ptr<Frontend> frontend) { frontend_ = std::move(frontend); }
void Session::detach() { frontend_.reset(); }

void Session::cancel() {
  if (running_) {
    log::info("session {}: cancelling turn {}", info_.id, running_->id);
    running_->cancel->cancel();
  }
  side_cancel_->cancel();
  side_cancel_ = std::make_unique<support::CancelSource>();
}

std::string Session::emit(EngineEvent event) {
  SequencedEvent sequenced{++seq_, current_turn_id_, std::move(event)};
  storage::EventRecord record;
  record.session_id = info_.id;
  record.seq = sequenced.seq;
  if (!current_turn_id_.empty()) record.turn_id = current_turn_id_;
  record.kind = std::string(event_kind(sequenced.event));
  record.payload_json = event_payload_json(sequenced.event);
  record.created_at_ms = support::unix_millis_now();
  undelivered_.push_back(std::move(sequenced));
  unwritten_.push_back(std::move(record));
  if (!write_scheduled_) {
    write_scheduled_ = true;
    asio::post(strand_, [self = shared_from_this()] { self->write_events(); });
  }
  return {};
}

void Session::write_events() {
  write_scheduled_ = false;
  if (unwritten_.empty()) return;
  const std::int64_t last_seq = unwritten_.back().seq;
  engine_.store->write(
      [records = std::move(unwritten_)](storage::Connection& db) -> Result<void> {
        storage::EventStore store(db);
        for (const auto& record : records) {
          if (auto r = store.append(record); !r) return r;
        }
        return support::ok();
      },
      strand_,
      [self = shared_from_this(), last_seq](const Result<void>& result) {
        if (!result) {
          log::error("session {}: events up to {} were not stored: {}", self->info_.id, last_seq,
                     result.error().message());
          self->storage_error_ = result.error();
        }
        self->deliver_durable(last_seq);
      },
      storage::Durability::process);
  unwritten_.clear();
}

void Session::deliver_durable(std::int64_t up_to) {
  durable_seq_ = std::max(durable_seq_, up_to);
  while (!undelivered_.empty() && undelivered_.front().seq <= durable_seq_) {
    if (frontend_) frontend_->deliver(info_.id, undelivered_.front());
    undelivered_.pop_front();
  }
}

void Session::persist_message(const model::Message& message, const std::string& turn_id) {
  engine_.store->stream([session = info_.id, role = std::string(role_name(message.role)),
                         json = message_to_json(message, turn_id)](storage::Connection& db) -> Result<void> {
    auto seq = storage::SessionStore(db).append_message(session, role, json);
    if (!seq) return std::move(seq).error();
    return {};
  });
}

void Session::persist_metadata() {
  std::string json;
  support::JsonWriter w(json);
  w.begin_object();
  w.member("mode", permission_mode_id(policy_.mode())).member("model", model_spec_);
  w.member("additionalDirectories", info_.additional_dirs);
  w.member("clearedAfterTurn", cleared_after_);
  w.end_object();
  engine_.store->worker().write([id = info_.id, json = std::move(json)](storage::Connection& db) {
    return storage::SessionStore(db).update_metadata(id, json);
  });
}

asio::awaitable<Result<void>> Session::flush() {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  write_events();
  auto result = co_await engine_.store->barrier();
  co_await asio::dispatch(strand_, asio::use_awaitable);
  co_return result;
}

void Session::announce_commands() {
  CommandsEvent event;
  for (const auto& c : slash_commands()) {
    event.commands.push_back(CommandInfo{std::string(c.name), std::string(c.description),
                                         c.hint.empty() ? std::nullopt : std::optional<std::string>(c.hint)});
  }
  emit(std::move(event));
}

asio::awaitable<Result<void>> Session::restore(std::int64_t cleared_after_turn) {
  cleared_after_ = cleared_after_turn;
  struct Loaded {
    std::vector<storage::TurnRecord> turns;
    std::vector<storage::MessageRecord> messages;
    std::int64_t max_seq = 0;
    storage::UsageTotals totals;
    std::optional<storage::CompactionRecord> compaction;
  };
  auto load_job = [id = info_.id](storage::Connection& db) -> Result<Loaded> {
    Loaded l;
    auto turns = storage::TurnStore(db).for_session(id);
    if (!turns) return std::move(turns).error();
    l.turns = std::move(*turns);
    auto messages = storage::SessionStore(db).messages(id);
    if (!messages) return std::move(messages).error();
    l.messages = std::move(*messages);
    auto max_seq = storage::EventStore(db).max_seq(id);
    if (!max_seq) return std::move(max_seq).error();
    l.max_seq = *max_seq;
    auto totals = storage::UsageStore(db).totals(id);
    if (!totals) return std::move(totals).error();
    l.totals = *totals;
    auto compaction = storage::CompactionStore(db).latest(id);
    if (!compaction) return std::move(compaction).error();
    l.compaction = std::move(*compaction);
    return l;
  };
  auto loaded = co_await engine_.store->read<Loaded>(std::move(load_job));
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!loaded) co_return std::move(loaded).error();

  std::map<std::string, std::int64_t, std::less<>> turn_seq;
  for (const auto& t : loaded->turns) {
    turn_seq[t.id] = t.seq;
    turn_count_ = std::max(turn_count_, t.seq);
    last_turn_id_ = t.id;
  }
  history_.clear();
  for (const auto& record : loaded->messages) {
    auto json = support::parse_json(record.content_json);
    if (!json) co_return Error(Errc::storage, "session " + info_.id + ": a stored message is not JSON");
    std::string turn_id;
    auto message = message_from_json(record.role, *json, &turn_id);
    if (!message) co_return std::move(message).error().context("session " + info_.id);
    auto it = turn_seq.find(turn_id);
    if (it != turn_seq.end() && it->second <= cleared_after_) continue;
    if (history_.empty() || history_.back().turn_id != turn_id) history_.push_back(HistoryTurn{turn_id, {}});
    history_.back().messages.push_back(std::move(*message));
  }
  // The latest compaction (after the last /clear) stands in for the turns it covers.
  summary_text_.clear();
  summary_first_turn_.clear();
  summary_turns_ = 0;
  if (const auto& record = loaded->compaction) {
    auto first = turn_seq.find(record->first_turn_id);
    auto last = turn_seq.find(record->last_turn_id);
    auto summary = memory::summary_from_json_text(record->summary_json);
    if (last != turn_seq.end() && last->second > cleared_after_ && summary) {
      const std::int64_t first_seq = first != turn_seq.end() ? first->second : 0;
      std::uint64_t covered = 0;
      for (const auto& t : loaded->turns) covered += t.seq >= first_seq && t.seq <= last->second ? 1 : 0;
      std::erase_if(history_, [&](const HistoryTurn& t) {
        auto it = turn_seq.find(t.turn_id);
        return it != turn_seq.end() && it->second <= last->second;
      });
      summary_first_turn_ = record->first_turn_id;
      summary_turns_ = covered;
      summary_text_ = memory::render_summary(*summary, {record->first_turn_id, record->last_turn_id, covered},
                                             memory::CompactionOptions{}.summary_max_tokens);
    } else if (!summary) {
      log::warn("session {}: compaction {} is unreadable ({}); sending the full history", info_.id, record->id,
                summary.error().message());
    }
  }
  // A turn cut short by a crash may end with tool calls that never got results: close them, so the
  // next request is one every provider accepts.
  for (auto& turn : history_) {
    std::set<std::string> answered;
    for (const auto& m : turn.messages) {
      for (const auto& b : m.content) {
        if (const auto* r = std::get_if<model::ToolResultBlock>(&b)) answered.insert(r->tool_call_id);
      }
    }
    model::Message closing{model::Role::tool, {}};
    for (const auto& m : turn.messages) {
      for (const auto& b : m.content) {
        const auto* call = std::get_if<model::ToolCallBlock>(&b);
        if (call != nullptr && !answered.contains(call->id)) {
          closing.content.emplace_back(
              model::ToolResultBlock{call->id, "The call did not finish: agentd stopped before it ran.", true});
        }
      }
    }
    if (!closing.content.empty()) turn.messages.push_back(std::move(closing));
  }
  seq_ = durable_seq_ = loaded->max_seq;
  session_cost_ = CostLedger{};
  session_cost_.usage.input_tokens = loaded->totals.input_tokens;
  session_cost_.usage.output_tokens = loaded->totals.output_tokens;
  session_cost_.usage.cache_write_tokens = loaded->totals.cache_write_tokens;
  session_cost_.usage.cache_read_tokens = loaded->totals.cache_read_tokens;
  session_cost_.priced_usd = loaded->totals.priced_cost_usd;
  session_cost_.calls = static_cast<std::uint32_t>(loaded->totals.calls);
  session_cost_.unpriced_calls = static_cast<std::uint32_t>(loaded->totals.unpriced_calls);
  co_return Result<void>{};
}

asio::awaitable<Result<void>> Session::set_mode(PermissionMode mode) {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (policy_.mode() == mode) co_return Result<void>{};
  policy_.set_mode(mode);
  persist_metadata();
  emit(ModeChangedEvent{std::string(permission_mode_id(mode))});
  co_return co_await flush();
}

asio::awaitable<Result<void>> Session::set_model(std::string spec) {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (running_) {
    co_return Error(Errc::conflict, "the model cannot change while a turn is running; cancel it or wait");
  }
  auto config = settings_.resolve_model(spec);
  if (!config) co_return std::move(config).error();
  model_ = std::move(*config);
  client_.reset();
  model_spec_ = fmt::format("{}:{}", model::provider_name(model_.provider), model_.model);
  persist_metadata();
  emit(ModelChangedEvent{model_spec_});
  co_return co_await flush();
}

asio::awaitable<Result<TurnOutcome>> Session::prompt(PromptInput input, CancelToken cancel) {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (running_) {
    co_return Error(Errc::conflict,
                    fmt::format("session {} is already running turn {}; a session runs one turn at a time: "
                                "send session/cancel first, or wait for the turn to end",
                                info_.id, running_->id));
  }
  auto self = shared_from_this();  // the session outlives its running turn, even if closed meanwhile
  const std::string turn_id = new_id("t");
  running_.emplace(RunningTurn{turn_id, std::make_unique<support::CancelSource>(cancel)});
  const CancelToken turn_cancel = running_->cancel->token();
  current_turn_id_ = turn_id;
  checkpoints_->begin_turn(turn_id);
  unverified_edits_ = false;
  verify_rounds_ = 0;
  verify_runs_ = 0;
  turn_cost_ = CostLedger{};
  const std::int64_t turn_seq = ++turn_count_;
  const std::int64_t started = support::unix_millis_now();

  storage::TurnRecord turn_record;
  turn_record.id = turn_id;
  turn_record.session_id = info_.id;
  turn_record.seq = turn_seq;
  turn_record.input = input.text;
  turn_record.started_at_ms = started;
  engine_.store->stream([turn_record](storage::Connection& db) { return storage::TurnStore(db).begin(turn_record); });

  TurnSpanSink sink(*engine_.store, turn_id);
  support::Tracer tracer(&sink);
  Result<TurnOutcome> outcome = TurnOutcome{};
  Result<void> flushed = support::ok();
  {
    support::Span span = tracer.start("turn.run");
    span.set_attribute("session", info_.id);
    span.set_attribute("turn", turn_id);
    emit(UserMessageEvent{user_text(input)});
    if (is_slash_command(input.text)) {
      outcome = co_await run_command(input.text, turn_id, turn_cancel, span);
    } else {
      outcome = co_await run_turn(std::move(input), turn_id, turn_cancel, span);
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

    // response.render: the turn's record closed, everything it wrote durable and delivered; only
    // then is the prompt answered (nothing is acknowledged before it is durable).
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
    engine_.store->stream(
        [turn_id, stop, turn_meta = std::move(turn_meta), ended = support::unix_millis_now()](storage::Connection& db) {
          return storage::TurnStore(db).finish(turn_id, ended, stop, turn_meta);
        });
    running_.reset();
    if (!is_slash_command(turn_record.input)) previous_turn_cost_ = turn_cost_;
    last_turn_id_ = turn_id;
    current_turn_id_.clear();
    if (auto changed = checkpoints_->turn_changed_files(); !changed.empty()) last_turn_changed_ = std::move(changed);
    checkpoints_->end_turn();
    write_events();
    flushed = co_await engine_.store->barrier();
    co_await asio::dispatch(strand_, asio::use_awaitable);
    render.set_attribute("last_seq", seq_);
    if (!flushed) render.set_status(support::SpanStatus::error, flushed.error().message());
  }
  if (!flushed) co_return std::move(flushed).error().context("saving the turn");
  if (storage_error_) {
    Error e = *std::move(storage_error_);
    storage_error_.reset();
    co_return std::move(e).context("saving the turn");
  }
  if (outcome) outcome->turn_id = turn_id;
  co_return outcome;
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
  engine_.store->stream([record](storage::Connection& db) -> Result<void> {
    auto id = storage::UsageStore(db).append(record);
    if (!id) return std::move(id).error();
    return {};
  });

  UsageEvent event;
  event.used = usage.total_input_tokens() + usage.output_tokens;
  event.size = model_.context_window;
  event.session_cost_usd = session_cost_.total_usd();
  event.call_usage = usage;
  event.model = model_spec_;
  emit(std::move(event));
}

asio::awaitable<Result<TurnOutcome>> Session::run_turn(PromptInput input, std::string turn_id, CancelToken cancel,
                                                       support::Span& span) {
  std::shared_ptr<const TurnContext> context;
  {
    // Pinned instructions, skills, facts and the workspace context package, gathered off the loop.
    support::Span retrieve = span.child("context.retrieve");
    auto gathered = co_await gather_context(input.text, true, cancel);
    if (!gathered) {
      retrieve.set_status(support::SpanStatus::error, gathered.error().message());
      co_return std::move(gathered).error().context("gathering the turn's context");
    }
    context = std::move(*gathered);
    retrieve.set_attribute("instruction_files", context->instructions.files.size());
    retrieve.set_attribute("skills_selected", context->skill_selection.selected_names().size());
    retrieve.set_attribute("facts_selected", context->fact_selection.selected_ids().size());
    retrieve.set_attribute("evidence", context->package ? context->package->evidence.size() : 0);
    retrieve.set_attribute("retrieve_ms", context->retrieve_ms);
    retrieve.set_attribute("skills_ms", context->skills_ms);
    if (context->package) {
      retrieve.set_attribute("task", std::string(context::task_kind_name(context->package->task.kind)));
      retrieve.set_attribute("omitted", context->package->omitted_total);
      retrieve.set_attribute("context_tokens", context->package->used_tokens);
      retrieve.set_attribute("context_budget", context->package->budget_tokens);
      retrieve.set_attribute("indexed_files", context->package->stats.indexed_files);
    } else if (!context->retrieval_note.empty()) {
      retrieve.set_attribute("note", context->retrieval_note);
    }
  }
  if (cancel.cancelled()) co_return TurnOutcome{StopReason::cancelled, {}};
  last_context_ = context;

  // The turn's user message: what this turn adds (skills, facts, the workspace context), then the
  // input. It is stored as sent, so the next turn's request repeats it byte for byte and the
  // provider's cache of the conversation so far still holds.
  // MCP servers still starting get a bounded wait; one that failed since the last turn is said once.
  std::string mcp_note = co_await prepare_mcp(cancel, span);
  if (cancel.cancelled()) co_return TurnOutcome{StopReason::cancelled, {}};

  model::Message user{model::Role::user, {}};
  for (auto& part : render_turn_preamble(*context)) user.content.emplace_back(model::TextBlock{std::move(part)});
  if (!mcp_note.empty()) user.content.emplace_back(model::TextBlock{std::move(mcp_note)});
  user.content.emplace_back(model::TextBlock{user_text(input)});

  const auto tools = tool_definitions();
  const std::uint64_t tool_tokens = estimate_tokens(tools);
  {
    const std::string pinned_system =
        render_system_prompt(engine_.system_rules, context.get(), {}, info_.cwd, info_.additional_dirs);
    auto compacted = co_await compact(false, estimate_tokens(pinned_system) + tool_tokens, estimate_tokens(user),
                                      turn_id, cancel, span);
    if (!compacted) co_return std::move(compacted).error().context("compacting the history");
    if (cancel.cancelled()) co_return TurnOutcome{StopReason::cancelled, {}};
    if (compacted->cannot_fit) {
      emit(AgentTextEvent{fmt::format("[agentd: {}]", compacted->message)});
      co_return TurnOutcome{StopReason::max_tokens, {}};
    }
  }

  persist_message(user, turn_id);
  history_.push_back(HistoryTurn{turn_id, {std::move(user)}});
  HistoryTurn& current = history_.back();
  const std::size_t current_index = history_.size() - 1;

  const std::string system = build_system_prompt(context.get());
  const std::uint64_t fixed_tokens = estimate_tokens(system) + tool_tokens;

  for (std::uint32_t request = 0;; ++request) {
    if (cancel.cancelled()) co_return TurnOutcome{StopReason::cancelled, {}};
    if (request >= settings_.limits.max_turn_requests) {
      emit(
          AgentTextEvent{fmt::format("\n\n[agentd: stopped after {} model requests in one turn (the limit); "
                                     "send another prompt to continue]",
                                     settings_.limits.max_turn_requests)});
      co_return TurnOutcome{StopReason::max_turn_requests, {}};
    }

    // Never send what the model must reject for length: history is chosen by budget, newest first.
    const std::uint64_t window = model_.context_window;
    const std::uint64_t reserve = fixed_tokens + model_.max_output_tokens;
    const std::uint64_t budget = window > reserve ? window - reserve : 0;
    HistorySelection selection = select_history(history_, budget);
    (void)current_index;
    if (selection.estimated_tokens > budget) {
      emit(AgentTextEvent{
          fmt::format("[agentd: this turn no longer fits in {}'s context window: about {} tokens of history and tools, "
                      "{} reserved for the answer, {} available. Try /compact, /clear, or a new session.]",
                      model_.model, selection.estimated_tokens + fixed_tokens, model_.max_output_tokens, window)});
      co_return TurnOutcome{StopReason::max_tokens, {}};
    }
    if (selection.dropped_turns > 0) {
      log::info("session {}: {} older turns left out of the request to fit the context window", info_.id,
                selection.dropped_turns);
    }

    model::ModelRequest req;
    req.system = system;
    req.messages = std::move(selection.messages);
    req.tools = tools;

    model::StreamAccumulator acc;
    std::set<std::string> announced;
    auto on_event = [&](const model::ModelEvent& event) {
      acc.add(event);
      if (const auto* text = std::get_if<model::TextDelta>(&event)) {
        if (!text->text.empty()) emit(AgentTextEvent{text->text});
      } else if (const auto* thought = std::get_if<model::ThinkingDelta>(&event)) {
        if (!thought->text.empty()) emit(AgentThoughtEvent{thought->text});
      } else if (const auto* delta = std::get_if<model::ToolCallDelta>(&event)) {
        if (!delta->id.empty() && !delta->name.empty() && announced.insert(delta->id).second) {
          auto tool = tools_.find(delta->name);
          emit(ToolCallStartedEvent{delta->id, delta->name, delta->name,
                                    tool ? tool->spec().kind : tools::ToolKind::other});
        }
      }
    };
    // One client per model setting: it seeds its retry jitter once, not per call.
    if (!client_) {
      client_ = std::make_unique<model::ModelClient>(model_, *engine_.http, engine_.model_options);
    }
    model::StreamResult result = co_await client_->stream(std::move(req), on_event, cancel, &span);
    co_await asio::dispatch(strand_, asio::use_awaitable);
    model::StreamSummary summary = std::move(acc).take();
    if (result.done && result.done->usage) record_usage(*result.done->usage, turn_id, span);

    if (!result.ok) {
      // Keep what the user already saw: the partial text becomes the assistant's message.
      if (!summary.text.empty()) {
        model::Message partial{model::Role::assistant, {model::TextBlock{summary.text}}};
        persist_message(partial, turn_id);
        current.messages.push_back(std::move(partial));
      }
      for (const auto& id : announced) {
        ToolCallUpdatedEvent update;
        update.id = id;
        update.status = ToolCallStatus::failed;
        update.text = cancel.cancelled() ? "cancelled" : "the model stream failed before the call was complete";
        emit(std::move(update));
      }
      if (cancel.cancelled()) co_return TurnOutcome{StopReason::cancelled, {}};
      const model::ModelError& error = result.error.value_or(model::ModelError{});
      co_return Error(
          Errc::unavailable,
          fmt::format("model error ({}{}): {}", model::error_kind_name(error.kind),
                      error.http_status != 0 ? fmt::format(", HTTP {}", error.http_status) : "", error.message),
          error.http_status);
    }

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
    if (!assistant.content.empty()) {
      persist_message(assistant, turn_id);
      current.messages.push_back(std::move(assistant));
    }

    const model::StopReason stop = result.done->stop_reason;
    if (stop == model::StopReason::max_tokens || stop == model::StopReason::refusal) {
      // The calls of a cut or refused response are not run (a cut one's input may be incomplete), but
      // each gets a result: a call without one makes every later request invalid to the provider.
      if (!summary.tool_calls.empty()) {
        close_unrun_calls(summary.tool_calls, stop == model::StopReason::max_tokens, current, turn_id);
      }
      co_return TurnOutcome{stop == model::StopReason::max_tokens ? StopReason::max_tokens : StopReason::refusal, {}};
    }
    if (stop == model::StopReason::pause_turn) continue;  // the provider paused a long turn: resume it
    if (summary.tool_calls.empty()) {
      // The model is done. Edited files nobody verified get verify.auto's treatment; a failure in the
      // changed code goes back to the model for another round.
      auto feedback = co_await auto_verify(turn_id, cancel, span);
      if (cancel.cancelled()) co_return TurnOutcome{StopReason::cancelled, {}};
      if (!feedback) co_return TurnOutcome{StopReason::end_turn, {}};
      persist_message(*feedback, turn_id);
      current.messages.push_back(std::move(*feedback));
      continue;
    }

    auto results = co_await run_tool_calls(summary.tool_calls, turn_id, cancel, span);
    model::Message tool_message{model::Role::tool, {}};
    for (auto& r : results) tool_message.content.emplace_back(std::move(r));
    persist_message(tool_message, turn_id);
    current.messages.push_back(std::move(tool_message));
    if (cancel.cancelled()) co_return TurnOutcome{StopReason::cancelled, {}};
  }
}

void Session::close_unrun_calls(const std::vector<model::ToolCallDone>& calls, bool cut, HistoryTurn& current,
                                const std::string& turn_id) {
  const std::string why =
      cut ? "not run: your response was cut at the output limit before it ended, so this call may be incomplete. "
            "Make it again; split a large change (a long write_file) into smaller edits."
          : "not run: the response that made this call ended in a refusal.";
  model::Message tool_message{model::Role::tool, {}};
  for (const auto& call : calls) {
    model::ToolResultBlock result;
    result.tool_call_id = call.id;
    result.content = why;
    result.is_error = true;
    tool_message.content.emplace_back(std::move(result));
    ToolCallUpdatedEvent update;
    update.id = call.id;
    update.status = ToolCallStatus::failed;
    update.text = why;
    emit(std::move(update));
  }
  persist_message(tool_message, turn_id);
  current.messages.push_back(std::move(tool_message));
}

asio::awaitable<std::vector<model::ToolResultBlock>> Session::run_tool_calls(
    const std::vector<model::ToolCallDone>& calls, const std::string& turn_id, CancelToken cancel,
    support::Span& span) {
  std::vector<model::ToolResultBlock> results(calls.size());
  // Read-only calls next to each other run in parallel; a mutating call runs alone, in order.
  auto mutating = [&](const model::ToolCallDone& call) {
    auto tool = tools_.find(call.name);
    if (!tool || !call.input.is_object()) return false;
    tools::ToolContext probe;
    probe.cwd = info_.cwd;
    probe.additional_dirs = info_.additional_dirs;
    return tools::is_mutating(tool->assess(call.input, probe).risk);
  };
  std::size_t i = 0;
  while (i < calls.size()) {
    if (mutating(calls[i])) {
      results[i] = co_await execute_tool_call(calls[i], turn_id, cancel, span);
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < calls.size() && !mutating(calls[end])) ++end;
    if (end - i == 1) {
      results[i] = co_await execute_tool_call(calls[i], turn_id, cancel, span);
    } else {
      support::TaskGroup group(strand_);
      for (std::size_t k = i; k < end; ++k) {
        group.spawn(
            [](Session* self, const model::ToolCallDone& call, const std::string& turn, CancelToken token,
               support::Span& parent, model::ToolResultBlock& out) -> asio::awaitable<void> {
              out = co_await self->execute_tool_call(call, turn, token, parent);
            }(this, calls[k], turn_id, cancel, span, results[k]),
            "tool." + calls[k].name);
      }
      co_await group.join();
      co_await asio::dispatch(strand_, asio::use_awaitable);
    }
    i = end;
  }
  co_return results;
}

asio::awaitable<model::ToolResultBlock> Session::execute_tool_call(const model::ToolCallDone& call,
                                                                   const std::string& turn_id, CancelToken cancel,
                                                                   support::Span& span, tools::ToolResult* full) {
  (void)turn_id;
  support::Span tool_span = span.child("tool." + call.name);
  tool_span.set_attribute("tool_call_id", call.id);
  const auto started = support::SteadyClock::now();

  auto finish = [&](const tools::ToolResult& r, bool cancelled = false) {
    ToolCallUpdatedEvent update;
    update.id = call.id;
    update.status = r.ok ? ToolCallStatus::completed : ToolCallStatus::failed;
    update.text = r.summary;
    update.diffs = r.diffs;
    update.locations = r.locations;
    if (r.metadata.is_object() && r.metadata.size() > 0) update.meta = r.metadata;
    emit(std::move(update));
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(support::SteadyClock::now() - started);
    tool_span.set_attribute("ok", r.ok);
    tool_span.set_attribute("duration_ms", static_cast<std::int64_t>(ms.count()));
    if (cancelled) {
      tool_span.set_status(support::SpanStatus::cancelled);
    } else if (!r.ok) {
      tool_span.set_status(support::SpanStatus::error, r.summary);
    }
    return model::ToolResultBlock{call.id, r.content, !r.ok};
  };

  auto tool = tools_.find(call.name);
  if (!tool) {
    std::string valid;
    for (const auto& n : tools_.names()) valid += (valid.empty() ? "" : ", ") + n;
    co_return finish(tools::ToolResult::failure(fmt::format(
        "there is no tool named \"{}\"; the tools you can call are: {}", call.name, valid.empty() ? "(none)" : valid)));
  }
  if (call.input_error) {
    co_return finish(tools::ToolResult::failure(
        fmt::format("the arguments of {} are not valid JSON ({}); send them again as one JSON object", call.name,
                    *call.input_error)));
  }
  const Json input_as_given = call.input.is_object() ? call.input : Json::object();
  if (auto problems = tools::schema_violations(tool->spec().input_schema, input_as_given); !problems.empty()) {
    std::string message = fmt::format("the input of {} does not match its schema:", call.name);
    for (const auto& p : problems) message += "\n- " + p;
    co_return finish(tools::ToolResult::failure(std::move(message)));
  }

  tools::ToolContext context;
  context.session_id = info_.id;
  context.cwd = info_.cwd;
  context.additional_dirs = info_.additional_dirs;
  context.cancel = cancel;
  context.files = files_.get();
  context.file_state = file_state_.get();
  context.journal = checkpoints_.get();
  context.denied_paths = &settings_.denied_paths;
  if (const std::string_view category = tool_category(tool->spec().kind); category == "read") {
    context.denied_reads = policy_.denied_patterns(tool->spec().name, category);
  }
  context.changed_files = checkpoints_->turn_changed_files();

  // Live output (shell): the client sees the end of what the call printed so far, refreshed at most every
  // 100 ms; the finished call's result replaces it. Posted to the strand, so it may come from anywhere.
  context.progress = [self = shared_from_this(), id = call.id,
                      live = std::make_shared<LiveOutput>()](std::string_view chunk) {
    live->append(chunk);
    const auto now = std::chrono::steady_clock::now();
    if (now - live->last_sent < std::chrono::milliseconds(100)) return;
    live->last_sent = now;
    asio::post(self->strand_, [self, id, text = live->text()]() mutable {
      ToolCallUpdatedEvent update;
      update.id = id;
      update.text = std::move(text);
      self->emit(std::move(update));
    });
  };

  // The input completed with what will actually run (verify's chosen command): judged, shown, audited and
  // run as one.
  Result<tools::Tool::Resolved> resolved = tools::Tool::Resolved{};
  try {
    resolved = co_await tool->resolve(input_as_given, context);
  } catch (const std::exception& e) {
    resolved = Error(Errc::internal, e.what());
  }
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!resolved) {
    const ToolFailure failed = tool_failure(resolved.error(), cancel, info_.id, call.name, "before it ran");
    co_return finish(failed.result, failed.cancelled);
  }
  if (resolved->result) co_return finish(*resolved->result);
  const Json input = std::move(resolved->input);

  const tools::RiskAssessment risk = tool->assess(input, context);
  tool_span.set_attribute("risk", tools::risk_names(risk.risk));
  {
    ToolCallUpdatedEvent update;
    update.id = call.id;
    update.title = tool->title(input, context);
    update.raw_input = input;
    update.locations = tool->locations(input, context);
    emit(std::move(update));
  }

  const CallSubject subject = call_subject(tool->spec(), input, info_.cwd);
  const std::string digest = input_digest(input);
  PermissionDecision decision = policy_.decide(subject, risk);
  std::string decided_by = "policy";
  if (decision.verdict == Verdict::ask) {
    support::Span permission = tool_span.child("permission.request");
    if (!frontend_ || !frontend_->can_ask_permission()) {
      decided_by = "no_client";
      if (decision.needs_person) {
        decision = {Verdict::deny, fmt::format("{}, and no client is attached to ask", decision.reason)};
      } else {
        decision = {settings_.headless,
                    fmt::format("{}, and no client is attached to ask, so the headless policy ({}) decides; the "
                                "session's mode is {}",
                                decision.reason, verdict_name(settings_.headless), permission_mode_id(policy_.mode()))};
      }
      permission.set_attribute("answer", "no_client");
    } else {
      PermissionPrompt prompt;
      prompt.session_id = info_.id;
      prompt.tool_call_id = call.id;
      prompt.title = tool->title(input, context);
      prompt.kind = tool->spec().kind;
      prompt.raw_input = input;
      prompt.locations = tool->locations(input, context);
      prompt.diffs = tool->preview(input, context);
      prompt.text = tool->describe(input, context);
      prompt.input_digest = digest;
      prompt.reason = decision.reason;
      prompt.risk = tools::risk_names(risk.risk);
      // The client must see the call (tool_call, its input) before it is asked about it: wait until
      // every earlier event is stored, and so delivered.
      write_events();
      auto delivered = co_await engine_.store->barrier(storage::Durability::process);
      co_await asio::dispatch(strand_, asio::use_awaitable);
      if (!delivered) log::warn("session {}: {}", info_.id, delivered.error().message());
      auto answer = co_await frontend_->ask_permission(std::move(prompt), cancel);
      co_await asio::dispatch(strand_, asio::use_awaitable);
      if (!answer || *answer == PermissionAnswer::cancelled || cancel.cancelled()) {
        permission.set_attribute("answer", "cancelled");
        if (!answer && !cancel.cancelled()) {
          log::warn("session {}: permission request failed: {}", info_.id, answer.error().message());
          decision = {Verdict::deny, "the permission request failed: " + answer.error().message()};
        } else {
          permission.set_status(support::SpanStatus::cancelled);
          co_return finish(tools::ToolResult::failure("cancelled by the user before it ran"), true);
        }
      } else {
        decided_by = "user";
        if (auto rule = PermissionPolicy::rule_for_answer(subject, *answer)) persist_approval(std::move(*rule));
        const bool allowed = *answer == PermissionAnswer::allow_once || *answer == PermissionAnswer::allow_always;
        permission.set_attribute("answer", allowed ? "allow" : "reject");
        decision = allowed ? PermissionDecision{Verdict::allow, "the user allowed it"}
                           : PermissionDecision{Verdict::deny, "the user rejected this call"};
      }
    }
  }
  {
    // The audit trail: every decision, whoever made it, about exactly this input.
    storage::PermissionAuditRecord entry;
    entry.session_id = info_.id;
    if (!current_turn_id_.empty()) entry.turn_id = current_turn_id_;
    entry.tool_call_id = call.id;
    entry.tool = call.name;
    entry.input_digest = digest;
    entry.decision = decision.verdict == Verdict::deny ? "deny" : "allow";
    entry.decided_by = decided_by;
    entry.reason = decision.reason;
    entry.created_at_ms = support::unix_millis_now();
    entry.cwd = info_.cwd;
    entry.risk = tools::risk_names(risk.risk);
    engine_.store->stream([entry = std::move(entry)](storage::Connection& db) -> Result<void> {
      auto id = storage::PermissionStore(db).record(entry);
      if (!id) return std::move(id).error();
      return support::ok();
    });
  }
  if (decision.verdict == Verdict::deny) {
    tool_span.set_attribute("permission", "denied");
    co_return finish(tools::ToolResult::failure(fmt::format(
        "not run: {}. Do not retry the same call; continue another way or ask the user.", decision.reason)));
  }
  {
    ToolCallUpdatedEvent update;
    update.id = call.id;
    update.status = ToolCallStatus::in_progress;
    emit(std::move(update));
  }
  Result<tools::ToolResult> ran = tools::ToolResult{};
  try {
    ran = co_await tool->run(input, context);
  } catch (const std::exception& e) {
    ran = Error(Errc::internal, e.what());
  }
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!ran) {
    const ToolFailure failed = tool_failure(ran.error(), cancel, info_.id, call.name, "while running");
    co_return finish(failed.result, failed.cancelled);
  }
  // What the turn still owes: files changed since the last verification.
  if (!ran->diffs.empty()) unverified_edits_ = true;
  if (is_verification_call(call.name, input, nullptr)) unverified_edits_ = false;
  if (full != nullptr) *full = *ran;
  co_return finish(*ran);
}

asio::awaitable<Result<TurnOutcome>> Session::run_command(const std::string& text, std::string turn_id,
                                                          CancelToken cancel, support::Span& span) {
  SlashCommand command = parse_slash_command(text);
  std::string reply;
  if (auto handled = co_await run_context_command(command.name, command.args, turn_id, cancel, span)) {
    // /compact's model call, and the context /skills and /memory gather, end when the turn is cancelled.
    if (cancel.cancelled()) co_return TurnOutcome{StopReason::cancelled, {}};
    reply = std::move(*handled);
  } else if (command.name == "mcp") {
    reply = mcp_text();
  } else if (command.name == "help") {
    reply = help_text();
  } else if (command.name == "cost") {
    reply = cost_text(session_cost_, previous_turn_cost_, model_spec_);
  } else if (command.name == "model") {
    if (command.args.empty()) {
      reply = fmt::format("Model: {} (context window {} tokens, up to {} output tokens)", model_spec_,
                          model_.context_window, model_.max_output_tokens);
      if (!settings_.model_choices.empty()) {
        reply += "\nChoices:";
        for (const auto& c : settings_.model_choices) reply += "\n  " + c;
      }
    } else {
      auto config = settings_.resolve_model(command.args);
      if (!config) {
        reply = fmt::format("Cannot use model \"{}\": {}", command.args, config.error().message());
      } else {
        model_ = std::move(*config);
        client_.reset();
        model_spec_ = fmt::format("{}:{}", model::provider_name(model_.provider), model_.model);
        persist_metadata();
        emit(ModelChangedEvent{model_spec_});
        reply = "Model set to " + model_spec_;
      }
    }
  } else if (command.name == "mode") {
    if (command.args.empty()) {
      reply = fmt::format("Mode: {}\nModes:", permission_mode_id(policy_.mode()));
      for (const auto& m : permission_modes()) reply += fmt::format("\n  {}: {}", m.id, m.description);
    } else if (auto mode = parse_permission_mode(command.args)) {
      policy_.set_mode(*mode);
      persist_metadata();
      emit(ModeChangedEvent{std::string(permission_mode_id(*mode))});
      reply = fmt::format("Mode set to {}", command.args);
    } else {
      reply = fmt::format("Unknown mode \"{}\"; modes: default, acceptEdits, plan, bypass", command.args);
    }
  } else if (command.name == "permissions") {
    if (command.args.starts_with("revoke")) {
      std::int64_t id = 0;
      const std::string_view rest = std::string_view(command.args).substr(6);
      const auto first = rest.find_first_not_of(' ');
      const auto digits = first == std::string_view::npos ? std::string_view() : rest.substr(first);
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
      if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
        reply = "Usage: /permissions revoke ID (the ids are in /permissions)";
      } else {
        auto revoked = co_await revoke_approval(id);
        reply = revoked ? fmt::format("Approval {} revoked.", id) : "Cannot revoke: " + revoked.error().message();
      }
    } else {
      reply = permissions_text(policy_, settings_.headless, info_.cwd);
    }
  } else if (command.name == "clear") {
    const std::size_t dropped = history_.size();
    history_.clear();
    summary_text_.clear();
    summary_first_turn_.clear();
    summary_turns_ = 0;
    cleared_after_ = turn_count_;
    persist_metadata();
    reply = fmt::format(
        "Context cleared: the model will not see the {} earlier turn{} of this session (they stay "
        "in the session's history).",
        dropped, dropped == 1 ? "" : "s");
  } else if (command.name == "undo") {
    std::optional<std::string> by_turn = turn_id;
    const CancelToken never;
    auto undone = co_await checkpoints_->undo(turn_id, std::move(by_turn), never);
    co_await asio::dispatch(strand_, asio::use_awaitable);
    reply = undone ? undo_text(*undone, info_.cwd) : "Cannot undo: " + undone.error().message();
  } else {
    reply = fmt::format("Unknown command /{}. /help lists the commands.", command.name);
  }
  if (!reply.empty()) emit(AgentTextEvent{reply});
  co_return TurnOutcome{StopReason::end_turn, {}};
}

void Session::persist_approval(PermissionRule rule) {
  rule.source = fmt::format("approved in session {}", info_.id);
  storage::ApprovalRecord record;
  record.project = info_.cwd;
  record.rule = rule.text();
  record.verdict = std::string(verdict_name(rule.verdict));
  record.session_id = info_.id;
  record.created_at_ms = support::unix_millis_now();
  auto approval_id = std::make_shared<std::int64_t>(0);
  engine_.store->write(
      [record = std::move(record), approval_id](storage::Connection& db) -> Result<void> {
        auto id = storage::PermissionStore(db).add_approval(record);
        if (!id) return std::move(id).error();
        *approval_id = *id;
        return support::ok();
      },
      strand_,
      [self = shared_from_this(), text = rule.text(), approval_id](const Result<void>& stored) {
        if (!stored) {
          log::warn("session {}: the approval {} was not saved; it holds for this session only: {}", self->info_.id,
                    text, stored.error().message());
          return;
        }
        self->policy_.set_approval_id(text, *approval_id);  // now revocable
      });
  // The answer covers this session's next calls at once, before it is stored.
  policy_.add_rule(std::move(rule));
}

asio::awaitable<Result<void>> Session::load_permissions() {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  auto read_job = [project = info_.cwd](storage::Connection& db) {
    return storage::PermissionStore(db).approvals(project);
  };
  auto approvals = co_await engine_.store->read<std::vector<storage::ApprovalRecord>>(std::move(read_job));
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!approvals) co_return std::move(approvals).error().context("reading the project's approvals");
  std::vector<PermissionRule> rules = settings_.permission_rules;
  for (const auto& a : *approvals) {
    const auto verdict = parse_verdict(a.verdict);
    auto rule = parse_permission_rule(
        a.rule, verdict.value_or(Verdict::deny),
        a.session_id ? fmt::format("approved in session {}", *a.session_id) : std::string("approved"));
    if (!rule) {
      log::warn("session {}: approval {} (\"{}\") is not a rule agentd understands; ignored", info_.id, a.id, a.rule);
      continue;
    }
    rule->approval_id = a.id;
    rules.push_back(std::move(*rule));
  }
  policy_.set_rules(std::move(rules));
  co_return support::ok();
}

asio::awaitable<std::vector<PermissionRule>> Session::permission_rules() {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  co_return policy_.rules();
}

asio::awaitable<Result<void>> Session::revoke_approval(std::int64_t approval_id) {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  auto revoke_job = [project = info_.cwd, approval_id](storage::Connection& db) {
    return storage::PermissionStore(db).revoke(project, approval_id);
  };
  auto revoked = co_await engine_.store->write_durable(std::move(revoke_job));
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!revoked) co_return revoked;
  policy_.remove_approval(approval_id);
  co_return support::ok();
}

asio::awaitable<Result<std::vector<CheckpointInfo>>> Session::checkpoints() { co_return co_await checkpoints_->list(); }

asio::awaitable<Result<RestoreReport>> Session::restore_checkpoint(std::string turn_id) {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (running_) {
    co_return Error(Errc::conflict, fmt::format("session {} is running turn {}; files are restored between turns: "
                                                "send session/cancel first, or wait",
                                                info_.id, running_->id));
  }
  // Held like a turn, so that no prompt starts while files are being put back.
  std::string restore_id = new_id("r");
  running_.emplace(RunningTurn{restore_id, std::make_unique<support::CancelSource>()});
  const CancelToken cancel = running_->cancel->token();
  std::optional<std::string> no_turn;
  auto report = co_await checkpoints_->restore(std::move(turn_id), restore_id, std::move(no_turn), cancel);
  co_await asio::dispatch(strand_, asio::use_awaitable);
  running_.reset();
  co_return report;
}

}  // namespace agentd::core
