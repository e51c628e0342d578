// The handlers of agentd's `_agentd/*` extension methods (bound in acp_server.cpp's table): what ACP
// lacks (trace, cost, permissions, event replay, context, trust, verification, memory, checkpoints),
// turned from engine results into the typed results of protocol/acp/ext.h.
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/engine/project_settings.h"
#include "core/engine/turn_context.h"
#include "core/engine/verification.h"
#include "core/model/price_table.h"
#include "core/support/log.h"
#include "core/support/version.h"
#include "core/telemetry/otlp_exporter.h"
#include "daemon/acp_server.h"
#include "daemon/acp_updates.h"
#include "daemon/trust.h"
#include "storage/permission_store.h"

namespace agentd::daemon {

namespace acp = protocol::acp;
namespace ext = protocol::acp::ext;
namespace log = support::log;
using support::CancelToken;
using support::Errc;
using support::Error;
using support::Result;

// The wire documents the audit's limits; the store is what enforces them.
static_assert(ext::PermissionsAuditRequest::kDefaultLimit ==
              static_cast<std::int64_t>(storage::PermissionStore::kDefaultAuditLimit));
static_assert(ext::PermissionsAuditRequest::kMaxLimit ==
              static_cast<std::int64_t>(storage::PermissionStore::kMaxAuditLimit));

namespace {

using SpanChildren = std::map<std::uint64_t, std::vector<const support::SpanRecord*>>;

ext::TraceSpan trace_span(const support::SpanRecord& s, const SpanChildren& children) {
  ext::TraceSpan span;
  span.id = s.id;
  span.name = s.name;
  span.start_us = s.start_us;
  span.duration_us = s.end_us - s.start_us;
  span.status = std::string(support::span_status_name(s.status));
  if (!s.status_message.empty()) span.status_message = s.status_message;
  span.attributes = support::Json(s.attributes);
  if (auto kids = children.find(s.id); kids != children.end()) {
    for (const auto* c : kids->second) span.children.push_back(trace_span(*c, children));
  }
  return span;
}

// Children under their parents, in start order; spans whose parent is missing become roots.
std::vector<ext::TraceSpan> span_tree(const std::vector<support::SpanRecord>& spans) {
  SpanChildren children;
  std::set<std::uint64_t> ids;
  for (const auto& s : spans) ids.insert(s.id);
  for (const auto& s : spans) children[ids.contains(s.parent_id) ? s.parent_id : 0].push_back(&s);
  std::vector<ext::TraceSpan> roots;
  if (auto top = children.find(0); top != children.end()) {
    for (const auto* r : top->second) roots.push_back(trace_span(*r, children));
  }
  return roots;
}

ext::CostLedger cost_ledger(const core::CostLedger& ledger) {
  return ext::CostLedger{ledger.usage.input_tokens,
                         ledger.usage.output_tokens,
                         ledger.usage.cache_write_tokens,
                         ledger.usage.cache_read_tokens,
                         ledger.calls,
                         ledger.unpriced_calls,
                         ledger.total_usd(),
                         ledger.priced_usd};
}

ext::MemoryFact memory_fact(const core::memory::Fact& fact) {
  return ext::MemoryFact{fact.id, fact.text, iso8601(fact.created_at_ms)};
}

ext::Checkpoint checkpoint(const core::CheckpointInfo& c) {
  ext::Checkpoint out;
  out.turn_id = c.id;
  out.seq = c.seq;
  out.kind = std::string(storage::checkpoint_kind_name(c.kind));
  out.restores_turn_id = c.restores;
  out.undone = c.undone;
  out.created_at = iso8601(c.created_at_ms);
  for (const auto& f : c.files) {
    const char* change = !f.before_hash ? "created" : (!f.after_hash ? "removed" : "modified");
    out.files.push_back(ext::CheckpointFileChange{f.path, change, f.before_hash, f.after_hash});
  }
  return out;
}

ext::CheckpointsRestoreResult restore_result(const core::RestoreReport& report) {
  ext::CheckpointsRestoreResult out;
  out.restored_turn_id = report.target;
  if (!report.checkpoint_id.empty()) out.checkpoint_id = report.checkpoint_id;
  for (const auto& f : report.files) {
    ext::RestoredFile file{f.path, std::string(core::restore_action_name(f.action)), std::nullopt};
    if (!f.detail.empty()) file.detail = f.detail;
    out.files.push_back(std::move(file));
  }
  out.conflicts = report.count(core::RestoreAction::conflict);
  return out;
}

}  // namespace

Result<acp::Empty> AcpServer::on_ping(const acp::Empty& /*unused*/) { return acp::Empty{}; }

ext::DatabaseStatus AcpServer::database_status() const {
  const storage::DbWorker::Health health = sessions_.database_health();
  ext::DatabaseStatus status;
  status.ok = !health.failing;
  status.failed_writes = health.failed_writes;
  if (health.last_error) {
    status.last_error = health.last_error->message();
    status.last_error_at = health.last_error_at_ms;
  }
  return status;
}

Result<ext::StatusResult> AcpServer::on_status(const acp::Empty& /*unused*/) {
  ext::StatusResult status{std::string(support::kVersion), sessions_.open_sessions(), database_status(), {}};
  if (const auto& exporter = sessions_.exporter()) {
    const auto stats = exporter->stats();
    status.telemetry = ext::TelemetryStatus{exporter->config().endpoint, stats.exported, stats.dropped,
                                            stats.failed_requests, stats.last_error};
  }
  return status;
}

AcpServer::Async<ext::TraceGetResult> AcpServer::on_trace_get(ext::TraceGetRequest p, CancelToken) {
  // The session is needed only to find its last turn: a named turn's trace is read from storage.
  std::string turn = p.turn_id.value_or("");
  if (turn.empty()) {
    auto session = with_session(p.session_id);
    if (!session) co_return std::move(session).error();
    turn = (*session)->last_turn_id();
    if (turn.empty()) co_return Error(Errc::not_found, "the session has no turns yet");
  }
  auto spans = co_await sessions_.spans(turn);
  if (!spans) co_return std::move(spans).error();
  if (spans->empty()) co_return Error(Errc::not_found, fmt::format("no trace for turn \"{}\"", turn));
  ext::TraceGetResult result{turn, span_tree(*spans), std::nullopt};
  if (p.format == ext::TraceFormat::chrome) {
    result.trace_events = ext::chrome_trace_events(turn, result.spans);
    result.spans.clear();
  }
  co_return result;
}

Result<ext::CostGetResult> AcpServer::on_cost_get(core::Session& session, const ext::SessionRequest& /*unused*/) {
  return ext::CostGetResult{session.model_spec(), std::string(core::model::kPriceTableVersion),
                            cost_ledger(session.cost()), cost_ledger(session.last_turn_cost())};
}

AcpServer::Async<ext::PermissionsListResult> AcpServer::on_permissions_list(SessionPtr session, ext::SessionRequest,
                                                                            CancelToken) {
  auto rules = co_await session->permission_rules();
  ext::PermissionsListResult result;
  result.project = session->info().cwd;
  result.mode = std::string(core::permission_mode_id(session->mode()));
  result.headless = std::string(core::verdict_name(session->settings().headless));
  for (const auto& rule : rules) {
    result.rules.push_back(ext::PermissionRuleInfo{rule.text(), std::string(core::verdict_name(rule.verdict)),
                                                   rule.source, rule.approval_id});
  }
  co_return result;
}

AcpServer::Async<acp::Empty> AcpServer::on_permissions_revoke(SessionPtr session, ext::PermissionsRevokeRequest p,
                                                              CancelToken) {
  auto revoked = co_await session->revoke_approval(p.approval_id);
  if (!revoked) co_return std::move(revoked).error();
  co_return acp::Empty{};
}

// The audit is read from storage, not from an open session: it outlives deleted sessions, so an
// unknown sessionId is an empty list, not an error.
AcpServer::Async<ext::PermissionsAuditResult> AcpServer::on_permissions_audit(ext::PermissionsAuditRequest p,
                                                                              CancelToken) {
  auto records = co_await sessions_.permission_audit(std::move(p.session_id), static_cast<std::size_t>(p.limit));
  if (!records) co_return std::move(records).error();
  ext::PermissionsAuditResult result;
  for (const auto& r : *records) {
    result.entries.push_back(ext::PermissionAuditEntry{r.id, r.created_at_ms, r.session_id, r.turn_id, r.tool_call_id,
                                                       r.tool, r.input_digest, r.decision, r.decided_by, r.reason,
                                                       r.cwd, r.risk});
  }
  co_return result;
}

// The notifications a client missed, as session/update sent them; works for a closed session too.
AcpServer::Async<ext::EventsReplayResult> AcpServer::on_events_replay(ext::EventsReplayRequest p, CancelToken) {
  auto events = co_await sessions_.events(p.session_id, p.since, static_cast<int>(p.limit));
  if (!events) co_return std::move(events).error();
  auto session = sessions_.find(p.session_id);
  ext::EventsReplayResult result;
  result.last_seq = p.since;
  for (const auto& e : *events) {
    result.last_seq = e.seq;
    auto update = to_update(e.event, session.get(), true);
    if (!update) continue;
    result.events.push_back(notification(p.session_id, e.seq, std::move(*update)));
  }
  co_return result;
}

// The context package, selections and texts as core::turn_context_json shapes them, with the session.
AcpServer::Async<support::Json> AcpServer::on_context_preview(SessionPtr session, ext::ContextPreviewRequest p,
                                                              CancelToken cancel) {
  auto preview = co_await session->preview_context(std::move(p.input), std::move(cancel));
  if (!preview) co_return std::move(preview).error();
  support::Json out = core::turn_context_json(*preview->context, preview->system_prompt);
  out["sessionId"] = session->id();
  out["project"] = session->project();
  co_return out;
}

// Trust a project's loosening settings as its config file has them now (daemon/trust.h); sessions
// started afterwards get them. {cwd, trusted: false} withdraws the trust.
Result<ext::ProjectTrustResult> AcpServer::on_project_trust(const ext::ProjectTrustRequest& p) {
  auto state = trust_project(p.cwd, p.trusted);
  if (!state) return std::move(state).error();
  ext::ProjectTrustResult result{state->project, state->file, state->trusted, state->digest, {}, state->trust_file};
  for (const auto& l : state->loosenings) result.settings.push_back(l.text());
  log::info("project {} {} (settings digest {})", state->project, state->trusted ? "trusted" : "no longer trusted",
            state->digest);
  return result;
}

// The discovery and suggestion as core::to_json(VerificationPlan) shapes them, with verify.auto's settings.
AcpServer::Async<support::Json> AcpServer::on_verify_plan(SessionPtr session, ext::VerifyPlanRequest p, CancelToken) {
  auto report = co_await session->verification_plan(std::move(p.files));
  if (!report) co_return std::move(report).error();
  support::Json out = core::to_json(report->plan);
  out["auto"] = std::string(core::auto_verify_name(report->mode));
  out["rounds"] = report->rounds;
  co_return out;
}

AcpServer::Async<ext::MemoryAddResult> AcpServer::on_memory_add(SessionPtr session, ext::MemoryAddRequest p,
                                                                CancelToken) {
  auto fact = co_await session->memory().remember(std::move(p.text));
  if (!fact) co_return std::move(fact).error();
  co_return ext::MemoryAddResult{memory_fact(*fact), session->project()};
}

AcpServer::Async<ext::MemoryListResult> AcpServer::on_memory_list(SessionPtr session, ext::SessionRequest,
                                                                  CancelToken) {
  auto facts = co_await session->memory().facts();
  if (!facts) co_return std::move(facts).error();
  ext::MemoryListResult result;
  result.project = session->project();
  for (const auto& f : *facts) result.facts.push_back(memory_fact(f));
  co_return result;
}

AcpServer::Async<acp::Empty> AcpServer::on_memory_delete(SessionPtr session, ext::MemoryDeleteRequest p, CancelToken) {
  auto removed = co_await session->memory().forget(p.id);
  if (!removed) co_return std::move(removed).error();
  co_return acp::Empty{};
}

AcpServer::Async<ext::Budgets> AcpServer::on_session_set_budget(SessionPtr session, ext::SetBudgetRequest p,
                                                                CancelToken) {
  core::Budgets budgets = session->budgets();
  if (p.budgets.session_usd) budgets.session_usd = p.budgets.session_usd;
  if (p.budgets.turn_usd) budgets.turn_usd = p.budgets.turn_usd;
  if (p.budgets.turn_output_tokens) budgets.turn_output_tokens = p.budgets.turn_output_tokens;
  for (const auto& name : p.cleared) {
    if (name == "sessionUsd") budgets.session_usd.reset();
    if (name == "turnUsd") budgets.turn_usd.reset();
    if (name == "turnOutputTokens") budgets.turn_output_tokens.reset();
  }
  auto set = co_await session->set_budgets(budgets);
  if (!set) co_return std::move(set).error();
  const core::Budgets& now = session->budgets();
  co_return ext::Budgets{now.session_usd, now.turn_usd, now.turn_output_tokens};
}

AcpServer::Async<ext::CheckpointsListResult> AcpServer::on_checkpoints_list(SessionPtr session, ext::SessionRequest,
                                                                            CancelToken) {
  auto checkpoints = co_await session->checkpoints();
  if (!checkpoints) co_return std::move(checkpoints).error();
  ext::CheckpointsListResult result;
  for (const auto& c : *checkpoints) result.checkpoints.push_back(checkpoint(c));
  co_return result;
}

AcpServer::Async<ext::CheckpointsRestoreResult> AcpServer::on_checkpoints_restore(SessionPtr session,
                                                                                  ext::CheckpointsRestoreRequest p,
                                                                                  CancelToken) {
  auto report = co_await session->restore_checkpoint(std::move(p.turn_id));
  if (!report) co_return std::move(report).error();
  co_return restore_result(*report);
}

}  // namespace agentd::daemon
