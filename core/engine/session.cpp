#include "core/engine/session.h"

#include <algorithm>
#include <map>
#include <set>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/engine/ids.h"
#include "core/engine/slash_commands.h"
#include "core/memory/compaction.h"
#include "core/model/price_table.h"
#include "core/support/base64.h"
#include "core/support/clock.h"
#include "core/support/log.h"
#include "storage/blob_store.h"
#include "storage/compaction_store.h"
#include "storage/event_store.h"
#include "storage/permission_store.h"
#include "storage/session_store.h"
#include "storage/turn_store.h"
#include "storage/usage_store.h"
#include "tools/disk_file_access.h"
#include "tools/file_state.h"

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
// else from disk. Writes through it when it offers fs/write_text_file as well.
class SessionFileAccess final : public tools::FileAccess {
 public:
  SessionFileAccess(std::string session_id, std::shared_ptr<EventLog> events)
      : session_id_(std::move(session_id)), events_(std::move(events)) {}

  asio::awaitable<Result<std::string>> read_text(std::string path, CancelToken cancel) override {
    const std::shared_ptr<Frontend> frontend = events_->frontend();
    if (frontend && frontend->can_read_files()) {
      // A client must see the tool_call before the fs/read_text_file request made for it.
      if (auto delivered = co_await events_->deliver_pending(); !delivered) co_return std::move(delivered).error();
      co_return co_await frontend->read_text_file(session_id_, std::move(path), std::move(cancel));
    }
    co_return co_await disk_.read_text(std::move(path), std::move(cancel));
  }

  bool reads_buffers() const override {
    const std::shared_ptr<Frontend> frontend = events_->frontend();
    return frontend && frontend->can_read_files();
  }

  bool writes_buffers() const override {
    const std::shared_ptr<Frontend> frontend = events_->frontend();
    return frontend && frontend->can_read_files() && frontend->can_write_files();
  }

  asio::awaitable<Result<void>> write_text(std::string path, std::string text, CancelToken cancel) override {
    const std::shared_ptr<Frontend> frontend = events_->frontend();
    if (!frontend || !frontend->can_write_files()) {
      co_return Error(Errc::unavailable, fmt::format("the editor can no longer write {}", path));
    }
    if (auto delivered = co_await events_->deliver_pending(); !delivered) co_return std::move(delivered).error();
    co_return co_await frontend->write_text_file(session_id_, std::move(path), std::move(text), std::move(cancel));
  }

 private:
  std::string session_id_;
  std::shared_ptr<EventLog> events_;
  tools::DiskFileAccess disk_;
};

}  // namespace

asio::awaitable<Result<void>> Frontend::write_text_file(std::string /*session_id*/, std::string path,
                                                        std::string /*content*/, CancelToken /*cancel*/) {
  co_return Error(Errc::unsupported, fmt::format("this client does not write files ({})", path));
}

asio::awaitable<Result<std::string>> Frontend::create_terminal(std::string /*session_id*/,
                                                               tools::TerminalCommand /*command*/,
                                                               CancelToken /*cancel*/) {
  co_return Error(Errc::unsupported, "this client has no terminals");
}
asio::awaitable<Result<Frontend::TerminalExit>> Frontend::wait_for_terminal_exit(std::string /*session_id*/,
                                                                                 std::string /*terminal_id*/,
                                                                                 CancelToken /*cancel*/) {
  co_return Error(Errc::unsupported, "this client has no terminals");
}
asio::awaitable<Result<Frontend::TerminalOutput>> Frontend::terminal_output(std::string /*session_id*/,
                                                                            std::string /*terminal_id*/) {
  co_return Error(Errc::unsupported, "this client has no terminals");
}
asio::awaitable<Result<void>> Frontend::kill_terminal(std::string /*session_id*/, std::string /*terminal_id*/) {
  co_return Error(Errc::unsupported, "this client has no terminals");
}
asio::awaitable<Result<void>> Frontend::release_terminal(std::string /*session_id*/, std::string /*terminal_id*/) {
  co_return Error(Errc::unsupported, "this client has no terminals");
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
  budgets_ = settings_.limits.budgets;
  events_ = std::make_shared<EventLog>(*engine.store, strand_, info_.id);
  files_ = std::make_unique<SessionFileAccess>(info_.id, events_);
  file_state_ = std::make_unique<tools::FileState>();
  checkpoints_ = std::make_unique<Checkpoints>(*engine.store, info_.id, *file_state_);
  ToolCallServices services;
  services.session_id = info_.id;
  services.cwd = info_.cwd;
  services.additional_dirs = info_.additional_dirs;
  services.settings = &settings_;
  services.tools = &tools_;
  services.policy = &policy_;
  services.events = events_;
  services.store = engine.store;
  services.files = files_.get();
  services.file_state = file_state_.get();
  services.checkpoints = checkpoints_.get();
  services.remember_approval = [this](PermissionRule rule) { persist_approval(std::move(rule)); };
  HookServices hook_services;
  hook_services.session_id = info_.id;
  hook_services.cwd = info_.cwd;
  hook_services.additional_dirs = info_.additional_dirs;
  hook_services.settings = &settings_;
  hook_services.events = events_;
  hook_services.permission_mode = [this] { return std::string(permission_mode_id(policy_.mode())); };
  hooks_ = std::make_unique<SessionHooks>(std::move(hook_services), strand_);
  services.hooks = hooks_.get();
  executor_ = std::make_unique<ToolCallExecutor>(std::move(services), strand_);
  project_ = workspace_root_of(info_.cwd);
  memory_ = std::make_unique<ProjectMemory>(*engine.store, strand_, project_, info_.id);
  mcp_ = std::make_unique<McpService>(strand_, tools_, info_.id);
  index_ = engine.workspace_index ? engine.workspace_index : std::make_shared<context::WorkspaceIndex>();
}

Session::~Session() = default;

Result<void> Session::install_tools() {
  if (!engine_.install_tools) return support::ok();
  return engine_.install_tools(tools_, settings_);
}

void Session::start_mcp(std::vector<tools::mcp::ServerConfig> from_client) {
  mcp_->start(settings_.mcp_servers, std::move(from_client), info_.cwd);
}

void Session::stop_mcp_in_background(support::TaskGroup& group) {
  if (!mcp_->started()) return;
  // The coroutine holds the session (whose registry the service keeps) until its servers are gone.
  auto stop = [](std::shared_ptr<Session> session) -> asio::awaitable<void> { co_await session->stop_mcp(); };
  auto self = shared_from_this();  // named: GCC 12 destroys class temporaries passed to a coroutine twice
  group.spawn(stop(self), fmt::format("stopping the MCP servers of session {}", info_.id));
}

asio::awaitable<Result<void>> Session::set_budgets(Budgets budgets) {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (auto refused = refuse_unpriced(budgets, model::find_price(model_.model), model_spec_)) {
    co_return Error(Errc::invalid_argument, *refused);
  }
  budgets_ = budgets;
  persist_metadata();
  co_return support::ok();
}

void Session::attach(std::shared_ptr<Frontend> frontend) { events_->attach(std::move(frontend)); }
void Session::detach() { events_->detach(); }

void Session::cancel() {
  if (running_) {
    log::info("session {}: cancelling turn {}", info_.id, running_->id);
    running_->cancel->cancel();
  }
  side_cancel_->cancel();
  side_cancel_ = std::make_unique<support::CancelSource>();
}

void Session::persist_message(const model::Message& message, const std::string& turn_id) {
  events_->store(
      [session = info_.id, role = std::string(role_name(message.role)),
       json = message_to_json(message, turn_id)](storage::Connection& db) -> Result<void> {
        auto seq = storage::SessionStore(db).append_message(session, role, json);
        if (!seq) return std::move(seq).error();
        return {};
      },
      "a message of the conversation");
}

void Session::persist_metadata() {
  std::string json;
  support::JsonWriter w(json);
  w.begin_object();
  w.member("mode", permission_mode_id(policy_.mode())).member("model", model_spec_);
  w.member("additionalDirectories", info_.additional_dirs);
  w.member("clearedAfterTurn", cleared_after_);
  if (budgets_ != settings_.limits.budgets) {
    w.key("budgets").begin_object();
    w.optional_member("sessionUsd", budgets_.session_usd).optional_member("turnUsd", budgets_.turn_usd);
    w.optional_member("turnOutputTokens", budgets_.turn_output_tokens);
    w.end_object();
  }
  w.end_object();
  engine_.store->worker().write([id = info_.id, json = std::move(json)](storage::Connection& db) {
    return storage::SessionStore(db).update_metadata(id, json);
  });
}

asio::awaitable<Result<void>> Session::flush() {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  co_return co_await events_->flush();
}

asio::awaitable<Result<void>> Session::announce_commands() {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  CommandsEvent event;
  for (const auto& c : slash_commands()) {
    event.commands.push_back(CommandInfo{std::string(c.name), std::string(c.description),
                                         c.hint.empty() ? std::nullopt : std::optional<std::string>(c.hint)});
  }
  emit(std::move(event));
  co_return co_await events_->deliver_pending();
}

asio::awaitable<Result<void>> Session::restore(std::int64_t cleared_after_turn) {
  cleared_after_ = cleared_after_turn;
  session_start_source_ = "resume";
  struct Loaded {
    std::vector<storage::TurnRecord> turns;
    std::vector<storage::MessageRecord> messages;
    std::int64_t max_seq = 0;
    storage::UsageTotals totals;
    std::optional<storage::CompactionRecord> compaction;
    std::map<std::string, std::string, std::less<>> images;  // hash -> base64, the history's images
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
    auto blobs = storage::BlobStore(db).attached(id);
    if (!blobs) return std::move(blobs).error();
    for (auto& [hash, bytes] : *blobs) l.images.emplace(std::move(hash), support::base64_encode(bytes));
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
    for (auto& block : message->content) {
      auto* image = std::get_if<model::ImageBlock>(&block);
      if (image == nullptr) continue;
      if (auto it = loaded->images.find(image->hash); it != loaded->images.end()) {
        image->data = it->second;
      } else {
        // Sent without its bytes, the request would be refused; the model is told what was there.
        log::warn("session {}: the image {} of a stored message is missing", info_.id, image->hash);
        block = model::TextBlock{
            fmt::format("[an image ({}, {} bytes) that is no longer stored]", image->media_type, image->bytes)};
      }
    }
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
  events_->restore(loaded->max_seq);
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
  switch_mode(mode);
  co_return co_await flush();
}

void Session::switch_mode(PermissionMode mode) {
  policy_.set_mode(mode);
  persist_metadata();
  emit(ModeChangedEvent{std::string(permission_mode_id(mode))});
}

asio::awaitable<Result<void>> Session::set_model(std::string spec) {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (running_) {
    co_return Error(Errc::conflict, "the model cannot change while a turn is running; cancel it or wait");
  }
  if (auto switched = switch_model(spec); !switched) co_return switched;
  co_return co_await flush();
}

Result<void> Session::switch_model(const std::string& spec) {
  auto config = settings_.resolve_model(spec);
  if (!config) return std::move(config).error();
  model_ = std::move(*config);
  client_.reset();
  // Kept as the user spelled it: a name from the config's `models` stays that name (the client's model
  // selector shows the choice that was made, and a session loaded later resolves it again), as the model
  // a session starts with is kept.
  model_spec_ = spec;
  persist_metadata();
  emit(ModelChangedEvent{model_spec_});
  return support::ok();
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
