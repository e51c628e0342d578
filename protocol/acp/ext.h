// agentd's extensions to ACP as typed structs: the params and results of the `_agentd/*` methods
// (names in ext_methods.h), and the payloads agentd puts under `_meta.agentd` of ACP messages. As with
// the ACP types, each wire type is read by one from_json and written by one to_json (or, for `_meta`
// payloads, which ACP types carry as Json, built by one to_meta); wire names live in ext.cpp only.
// The daemon writes results and reads params; the `agent` CLI does the opposite with the same structs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/json.h"
#include "core/support/json_reader.h"
#include "core/support/json_writer.h"
#include "protocol/acp/session_update.h"

namespace agentd::protocol::acp::ext {

// ---- params ------------------------------------------------------------------------------------------

// Methods that name a session and nothing else: cost/get, permissions/list, memory/list,
// checkpoints/list.
struct SessionRequest {
  std::string session_id{};
};

// How _agentd/trace/get answers: the span tree, or the Trace Event format that Perfetto and
// chrome://tracing open.
enum class TraceFormat { tree, chrome };

struct TraceGetRequest {
  std::string session_id{};
  std::optional<std::string> turn_id{};  // absent or empty: the session's last turn
  TraceFormat format = TraceFormat::tree;
};

struct PermissionsRevokeRequest {
  std::string session_id{};
  std::int64_t approval_id = 0;
};

// No sessionId reads every session's decisions; params may be left out entirely. A limit below 1 is
// refused; one above kMaxLimit is clamped (asking for much is harmless).
struct PermissionsAuditRequest {
  static constexpr std::int64_t kDefaultLimit = 100;
  static constexpr std::int64_t kMaxLimit = 1000;
  std::optional<std::string> session_id{};
  std::int64_t limit = kDefaultLimit;
};

struct EventsReplayRequest {
  std::string session_id{};
  std::int64_t since = 0;  // events with a greater seq
  std::int64_t limit = 10000;
};

struct ContextPreviewRequest {
  std::string session_id{};
  std::string input{};
};

// {cwd, trusted: false} withdraws the trust.
struct ProjectTrustRequest {
  std::string cwd{};
  bool trusted = true;
};

struct VerifyPlanRequest {
  std::string session_id{};
  std::vector<std::string> files{};  // empty: the files the session changed
};

struct MemoryAddRequest {
  std::string session_id{};
  std::string text{};
};

struct MemoryDeleteRequest {
  std::string session_id{};
  std::int64_t id = 0;
};

// A session's budgets in force; an absent one is no limit.
struct Budgets {
  std::optional<double> session_usd{};
  std::optional<double> turn_usd{};
  std::optional<std::uint64_t> turn_output_tokens{};
};
// Sets the budgets given (sessionUsd, turnUsd, turnOutputTokens beside sessionId), removes those given
// as null, and leaves the others as they are.
struct SetBudgetRequest {
  std::string session_id{};
  Budgets budgets{};
  std::vector<std::string> cleared{};  // the names given as null
};

struct CheckpointsRestoreRequest {
  std::string session_id{};
  std::string turn_id{};
};

// ---- results -----------------------------------------------------------------------------------------
// _agentd/context/preview and _agentd/verify/plan answer with the engine's own JSON, passed through.
// _agentd/ping, permissions/revoke and memory/delete answer {} (acp::Empty).

struct TraceSpan {
  std::uint64_t id = 0;
  std::string name{};
  std::int64_t start_us = 0;  // Unix epoch microseconds
  std::int64_t duration_us = 0;
  std::string status{};                         // "ok", "error", "cancelled"
  std::optional<std::string> status_message{};  // written only when non-empty
  support::Json attributes{};                   // an object
  std::vector<TraceSpan> children{};            // in start order
};

struct TraceGetResult {
  std::string turn_id{};
  std::vector<TraceSpan> spans{};  // the roots (format tree)
  // Format chrome: the events, written as `traceEvents` (with `displayTimeUnit`) in place of `spans`, so
  // the result as it is opens in Perfetto or chrome://tracing.
  std::optional<support::Json> trace_events{};
};

// The Trace Event format's events for a span tree: one complete ("X") event per span, its attributes
// and status as args, times in microseconds from the first span's start. A track (tid) holds only
// spans that nest, as the format requires, so spans that overlap without nesting (parallel tool calls)
// get a track of their own; a span stays on its parent's track when it fits there.
support::Json chrome_trace_events(std::string_view turn_id, const std::vector<TraceSpan>& roots);

struct CostLedger {
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
  std::uint64_t cache_write_tokens = 0;
  std::uint64_t cache_read_tokens = 0;
  std::uint64_t model_calls = 0;
  std::uint64_t unpriced_calls = 0;
  std::optional<double> cost_usd{};  // null when any call was unpriced; then pricedCostUsd is written
  double priced_cost_usd = 0;        // what the priced calls cost
};

struct CostGetResult {
  std::string model{};
  std::string price_table{};  // the price table's version
  CostLedger session{};
  CostLedger last_turn{};
};

struct PermissionRuleInfo {
  std::string rule{};
  std::string verdict{};  // "allow", "ask", "deny"
  std::string source{};
  std::optional<std::int64_t> approval_id{};  // a persisted (revocable) approval
};

struct PermissionsListResult {
  std::string project{};
  std::string mode{};
  std::string headless{};  // the verdict when no client can be asked
  std::vector<PermissionRuleInfo> rules{};
};

struct PermissionAuditEntry {
  std::int64_t id = 0;
  std::int64_t time = 0;  // Unix epoch milliseconds
  std::string session_id{};
  std::optional<std::string> turn_id{};
  std::string tool_call_id{};
  std::string tool{};
  std::string input_digest{};
  std::string decision{};    // "allow" | "deny"
  std::string decided_by{};  // "policy" | "user" | "no_client"
  std::string reason{};
  std::string cwd{};   // written only when known
  std::string risk{};  // "execute|network"; empty when not assessed
};

struct PermissionsAuditResult {
  std::vector<PermissionAuditEntry> entries{};  // newest first
};

struct EventsReplayResult {
  std::vector<SessionNotification> events{};  // as session/update sent (or would have sent) them
  std::int64_t last_seq = 0;                  // the seq to ask `since` next time
};

struct ProjectTrustResult {
  std::string project{};
  std::string file{};
  bool trusted = false;
  std::string digest{};
  std::vector<std::string> settings{};  // the loosening settings, "mode = bypass"
  std::string trust_file{};
};

// Whether the session history is being stored: `_agentd/status`'s `database`, and `_meta.agentd.database`
// of initialize's answer.
struct DatabaseStatus {
  bool ok = true;  // false: the latest write failed and none has committed since
  std::uint64_t failed_writes = 0;
  std::optional<std::string> last_error{};      // the latest failure's cause
  std::optional<std::int64_t> last_error_at{};  // Unix epoch milliseconds
};

// OpenTelemetry export (present only when agentd exports): spans accepted by the collector, spans lost
// (a full queue, a failed request), failed requests and the latest failure.
struct TelemetryStatus {
  std::string endpoint{};
  std::uint64_t exported_spans = 0;
  std::uint64_t dropped_spans = 0;
  std::uint64_t failed_requests = 0;
  std::optional<std::string> last_error{};
};

struct StatusResult {
  std::string version{};
  std::uint64_t open_sessions = 0;
  DatabaseStatus database{};
  std::optional<TelemetryStatus> telemetry{};
};

struct MemoryFact {
  std::int64_t id = 0;
  std::string text{};
  std::string created_at{};  // ISO 8601
};

// The fact's members and the project it belongs to, in one object.
struct MemoryAddResult {
  MemoryFact fact{};
  std::string project{};
};

struct MemoryListResult {
  std::string project{};
  std::vector<MemoryFact> facts{};
};

struct CheckpointFileChange {
  std::string path{};
  std::string change{};                      // "created", "modified", "removed"
  std::optional<std::string> before_hash{};  // null when created
  std::optional<std::string> after_hash{};   // null when removed
};

struct Checkpoint {
  std::string turn_id{};
  std::int64_t seq = 0;
  std::string kind{};  // "turn", "restore"
  std::optional<std::string> restores_turn_id{};
  bool undone = false;
  std::string created_at{};  // ISO 8601
  std::vector<CheckpointFileChange> files{};
};

struct CheckpointsListResult {
  std::vector<Checkpoint> checkpoints{};
};

struct RestoredFile {
  std::string path{};
  std::string action{};                 // "restored", "removed", "unchanged", "conflict", "failed"
  std::optional<std::string> detail{};  // why, for conflicts and failures
};

struct CheckpointsRestoreResult {
  std::string restored_turn_id{};
  std::optional<std::string> checkpoint_id{};  // null when the restore wrote nothing
  std::vector<RestoredFile> files{};
  std::uint64_t conflicts = 0;
};

bool from_json(const support::JsonIn& in, SessionRequest& out);
bool from_json(const support::JsonIn& in, TraceGetRequest& out);
bool from_json(const support::JsonIn& in, PermissionsRevokeRequest& out);
bool from_json(const support::JsonIn& in, PermissionsAuditRequest& out);
bool from_json(const support::JsonIn& in, EventsReplayRequest& out);
bool from_json(const support::JsonIn& in, ContextPreviewRequest& out);
bool from_json(const support::JsonIn& in, ProjectTrustRequest& out);
bool from_json(const support::JsonIn& in, VerifyPlanRequest& out);
bool from_json(const support::JsonIn& in, MemoryAddRequest& out);
bool from_json(const support::JsonIn& in, MemoryDeleteRequest& out);
bool from_json(const support::JsonIn& in, Budgets& out);
bool from_json(const support::JsonIn& in, SetBudgetRequest& out);
bool from_json(const support::JsonIn& in, CheckpointsRestoreRequest& out);
bool from_json(const support::JsonIn& in, TraceSpan& out);
bool from_json(const support::JsonIn& in, TraceGetResult& out);
bool from_json(const support::JsonIn& in, CostLedger& out);
bool from_json(const support::JsonIn& in, CostGetResult& out);
bool from_json(const support::JsonIn& in, PermissionRuleInfo& out);
bool from_json(const support::JsonIn& in, PermissionsListResult& out);
bool from_json(const support::JsonIn& in, PermissionAuditEntry& out);
bool from_json(const support::JsonIn& in, PermissionsAuditResult& out);
bool from_json(const support::JsonIn& in, EventsReplayResult& out);
bool from_json(const support::JsonIn& in, ProjectTrustResult& out);
bool from_json(const support::JsonIn& in, MemoryFact& out);
bool from_json(const support::JsonIn& in, DatabaseStatus& out);
bool from_json(const support::JsonIn& in, TelemetryStatus& out);
bool from_json(const support::JsonIn& in, StatusResult& out);
bool from_json(const support::JsonIn& in, MemoryAddResult& out);
bool from_json(const support::JsonIn& in, MemoryListResult& out);
bool from_json(const support::JsonIn& in, CheckpointFileChange& out);
bool from_json(const support::JsonIn& in, Checkpoint& out);
bool from_json(const support::JsonIn& in, CheckpointsListResult& out);
bool from_json(const support::JsonIn& in, RestoredFile& out);
bool from_json(const support::JsonIn& in, CheckpointsRestoreResult& out);

void to_json(support::JsonWriter& w, const SessionRequest& v);
void to_json(support::JsonWriter& w, const TraceGetRequest& v);
void to_json(support::JsonWriter& w, const PermissionsRevokeRequest& v);
void to_json(support::JsonWriter& w, const PermissionsAuditRequest& v);
void to_json(support::JsonWriter& w, const EventsReplayRequest& v);
void to_json(support::JsonWriter& w, const ContextPreviewRequest& v);
void to_json(support::JsonWriter& w, const ProjectTrustRequest& v);
void to_json(support::JsonWriter& w, const VerifyPlanRequest& v);
void to_json(support::JsonWriter& w, const MemoryAddRequest& v);
void to_json(support::JsonWriter& w, const MemoryDeleteRequest& v);
void to_json(support::JsonWriter& w, const Budgets& v);
void to_json(support::JsonWriter& w, const SetBudgetRequest& v);
void to_json(support::JsonWriter& w, const CheckpointsRestoreRequest& v);
void to_json(support::JsonWriter& w, const TraceSpan& v);
void to_json(support::JsonWriter& w, const TraceGetResult& v);
void to_json(support::JsonWriter& w, const CostLedger& v);
void to_json(support::JsonWriter& w, const CostGetResult& v);
void to_json(support::JsonWriter& w, const PermissionRuleInfo& v);
void to_json(support::JsonWriter& w, const PermissionsListResult& v);
void to_json(support::JsonWriter& w, const PermissionAuditEntry& v);
void to_json(support::JsonWriter& w, const PermissionsAuditResult& v);
void to_json(support::JsonWriter& w, const EventsReplayResult& v);
void to_json(support::JsonWriter& w, const ProjectTrustResult& v);
void to_json(support::JsonWriter& w, const MemoryFact& v);
void to_json(support::JsonWriter& w, const DatabaseStatus& v);
void to_json(support::JsonWriter& w, const TelemetryStatus& v);
void to_json(support::JsonWriter& w, const StatusResult& v);
void to_json(support::JsonWriter& w, const MemoryAddResult& v);
void to_json(support::JsonWriter& w, const MemoryListResult& v);
void to_json(support::JsonWriter& w, const CheckpointFileChange& v);
void to_json(support::JsonWriter& w, const Checkpoint& v);
void to_json(support::JsonWriter& w, const CheckpointsListResult& v);
void to_json(support::JsonWriter& w, const RestoredFile& v);
void to_json(support::JsonWriter& w, const CheckpointsRestoreResult& v);

// ---- `_meta.agentd` payloads ---------------------------------------------------------------------------
// ACP types carry `_meta` as Json, so these are built as Json: to_meta(v) is the whole `_meta` object,
// {"agentd": {...}} (with the payload one level down, under kKey, when kKey is not empty).

// initialize's answer: whether the database is storing history (as _agentd/status says).
struct InitializeMeta {
  static constexpr std::string_view kKey{};
  DatabaseStatus database{};
};

// authenticate's request: the API key for the method's variable, for this process only. Without it,
// agentd uses the variable from its environment.
struct AuthenticateMeta {
  static constexpr std::string_view kKey{};
  std::optional<std::string> api_key{};
};

// session/fork's request: the turn the fork's history ends with (that turn included); without it, the
// source's history up to its last finished turn.
struct ForkSessionMeta {
  static constexpr std::string_view kKey{};
  std::optional<std::string> turn_id{};
};

// An auth method of initialize's answer: the environment variable it is about.
struct AuthMethodMeta {
  static constexpr std::string_view kKey{};
  std::string env_var{};
};

// session/update notifications: the per-session sequence number clients replay from.
struct UpdateMeta {
  static constexpr std::string_view kKey{};
  std::int64_t seq = 0;
};

// What a turn that changed files verified (session/prompt's response).
struct VerificationRunInfo {
  std::string command{};
  std::string status{};  // passed, failed, no_tests, not_run, timed_out
  bool narrowed = false;
};
struct NotRunInfo {
  std::string command{};
  std::string reason{};
};
struct TurnVerificationInfo {
  std::vector<std::string> changed_files{};  // absolute
  std::vector<VerificationRunInfo> runs{};
  std::vector<NotRunInfo> not_run{};
  std::string summary{};  // one line for people: "verified: `pytest tests/test_x.py` passed; not run: ..."
};

// The budget that stopped a turn.
struct StoppedByInfo {
  std::string budget{};  // sessionUsd, turnUsd, turnOutputTokens
  double limit = 0;
  double spent = 0;  // dollars or tokens
  std::string message{};
};

// session/prompt's response: the turn it ran, for a turn that changed files what verified them, and for
// a turn a budget stopped, which one.
struct PromptMeta {
  static constexpr std::string_view kKey{};
  std::string turn_id{};
  std::optional<TurnVerificationInfo> verification{};
  std::optional<StoppedByInfo> stopped_by{};
};

// usage_update: the one model call's tokens.
struct UsageMeta {
  static constexpr std::string_view kKey{};
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
  std::uint64_t cache_read_tokens = 0;
  std::uint64_t cache_write_tokens = 0;
  std::string model{};
  bool unpriced = false;  // written as "cost": "unpriced"
};

// An agent_message_chunk that reports a compaction (ACP has no update for it).
struct CompactionMeta {
  static constexpr std::string_view kKey = "compaction";
  std::int64_t id = 0;
  std::string first_turn_id{};
  std::string last_turn_id{};
  std::uint64_t turns = 0;
  std::uint64_t tokens_before = 0;
  std::uint64_t tokens_after = 0;
  bool forced = false;
};

// session/new, load and resume of a project whose loosening settings were ignored.
struct ProjectTrustMeta {
  static constexpr std::string_view kKey = "projectTrust";
  bool trusted = false;
  std::string project{};
  std::string file{};
  std::string digest{};
  std::vector<std::string> ignored{};
  std::string message{};
};

// session/request_permission: what the approval is bound to, and why the policy asks.
struct PermissionRequestMeta {
  static constexpr std::string_view kKey{};
  std::string input_digest{};
  std::string reason{};
  std::string risk{};
};

// {"agentd": inner}: for payloads the engine builds itself (a tool call update's details).
support::Json agentd_meta(support::Json inner);

support::Json to_meta(const InitializeMeta& v);
support::Json to_meta(const AuthenticateMeta& v);
support::Json to_meta(const AuthMethodMeta& v);
support::Json to_meta(const ForkSessionMeta& v);
support::Json to_meta(const UpdateMeta& v);
support::Json to_meta(const PromptMeta& v);
support::Json to_meta(const UsageMeta& v);
support::Json to_meta(const CompactionMeta& v);
support::Json to_meta(const ProjectTrustMeta& v);
support::Json to_meta(const PermissionRequestMeta& v);

bool from_json(const support::JsonIn& in, UpdateMeta& out);
bool from_json(const support::JsonIn& in, AuthenticateMeta& out);
bool from_json(const support::JsonIn& in, AuthMethodMeta& out);
bool from_json(const support::JsonIn& in, ForkSessionMeta& out);
bool from_json(const support::JsonIn& in, VerificationRunInfo& out);
bool from_json(const support::JsonIn& in, NotRunInfo& out);
bool from_json(const support::JsonIn& in, TurnVerificationInfo& out);
bool from_json(const support::JsonIn& in, StoppedByInfo& out);
bool from_json(const support::JsonIn& in, PromptMeta& out);
bool from_json(const support::JsonIn& in, UsageMeta& out);
bool from_json(const support::JsonIn& in, CompactionMeta& out);
bool from_json(const support::JsonIn& in, ProjectTrustMeta& out);
bool from_json(const support::JsonIn& in, PermissionRequestMeta& out);

// The payload T in a message's `_meta`, when it is there and reads as T.
template <class T>
std::optional<T> read_meta(const support::Json& meta) {
  const support::Json* at = meta.find("agentd");
  if (at != nullptr && !T::kKey.empty()) at = at->find(T::kKey);
  if (at == nullptr) return std::nullopt;
  auto value = support::read_json<T>(*at, "_meta.agentd");
  return value ? std::optional<T>(std::move(*value)) : std::nullopt;
}

}  // namespace agentd::protocol::acp::ext
