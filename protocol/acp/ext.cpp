#include "protocol/acp/ext.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace agentd::protocol::acp::ext {

using support::Json;
using support::JsonIn;
using support::JsonWriter;

// ---- params ------------------------------------------------------------------------------------------

bool from_json(const JsonIn& in, SessionRequest& out) { return in.required("sessionId", out.session_id); }
void to_json(JsonWriter& w, const SessionRequest& v) {
  w.begin_object().member("sessionId", v.session_id).end_object();
}

namespace {
constexpr std::string_view trace_format_name(TraceFormat format) {
  return format == TraceFormat::chrome ? "chrome" : "tree";
}
}  // namespace

bool from_json(const JsonIn& in, TraceGetRequest& out) {
  std::optional<std::string> format;
  if (!in.required("sessionId", out.session_id) || !in.optional("turnId", out.turn_id) ||
      !in.optional("format", format)) {
    return false;
  }
  if (!format || *format == "tree") return true;
  if (*format == "chrome") {
    out.format = TraceFormat::chrome;
    return true;
  }
  return in["format"].fail(R"(must be "tree" (the span tree, the default) or "chrome" (the Trace Event format))");
}
void to_json(JsonWriter& w, const TraceGetRequest& v) {
  w.begin_object().member("sessionId", v.session_id).optional_member("turnId", v.turn_id);
  if (v.format != TraceFormat::tree) w.member("format", trace_format_name(v.format));
  w.end_object();
}

bool from_json(const JsonIn& in, PermissionsRevokeRequest& out) {
  return in.required("sessionId", out.session_id) && in.required("approvalId", out.approval_id);
}
void to_json(JsonWriter& w, const PermissionsRevokeRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("approvalId", v.approval_id).end_object();
}

bool from_json(const JsonIn& in, PermissionsAuditRequest& out) {
  if (in.json().is_null()) return true;  // every field is optional, so params may be left out
  if (!in.optional("sessionId", out.session_id) || !in.optional("limit", out.limit)) return false;
  if (out.session_id && out.session_id->empty()) {
    return in["sessionId"].fail("must not be empty; leave it out to read every session's decisions");
  }
  if (out.limit < 1) {
    return in["limit"].fail(fmt::format("must be at least 1, got {} (at most {} entries are returned)", out.limit,
                                        PermissionsAuditRequest::kMaxLimit));
  }
  return true;
}
void to_json(JsonWriter& w, const PermissionsAuditRequest& v) {
  w.begin_object().optional_member("sessionId", v.session_id).member("limit", v.limit).end_object();
}

bool from_json(const JsonIn& in, EventsReplayRequest& out) {
  return in.required("sessionId", out.session_id) && in.optional("since", out.since) && in.optional("limit", out.limit);
}
void to_json(JsonWriter& w, const EventsReplayRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("since", v.since).member("limit", v.limit).end_object();
}

bool from_json(const JsonIn& in, ContextPreviewRequest& out) {
  return in.required("sessionId", out.session_id) && in.required("input", out.input);
}
void to_json(JsonWriter& w, const ContextPreviewRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("input", v.input).end_object();
}

bool from_json(const JsonIn& in, ProjectTrustRequest& out) {
  return in.required("cwd", out.cwd) && in.optional("trusted", out.trusted);
}
void to_json(JsonWriter& w, const ProjectTrustRequest& v) {
  w.begin_object().member("cwd", v.cwd).member("trusted", v.trusted).end_object();
}

bool from_json(const JsonIn& in, VerifyPlanRequest& out) {
  return in.required("sessionId", out.session_id) && in.optional("files", out.files);
}
void to_json(JsonWriter& w, const VerifyPlanRequest& v) {
  w.begin_object().member("sessionId", v.session_id);
  if (!v.files.empty()) w.member("files", v.files);
  w.end_object();
}

bool from_json(const JsonIn& in, MemoryAddRequest& out) {
  return in.required("sessionId", out.session_id) && in.required("text", out.text);
}
void to_json(JsonWriter& w, const MemoryAddRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("text", v.text).end_object();
}

bool from_json(const JsonIn& in, MemoryDeleteRequest& out) {
  return in.required("sessionId", out.session_id) && in.required("id", out.id);
}
void to_json(JsonWriter& w, const MemoryDeleteRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("id", v.id).end_object();
}

namespace {
bool read_budget_members(const JsonIn& in, Budgets& out) {
  if (!in.optional("sessionUsd", out.session_usd) || !in.optional("turnUsd", out.turn_usd) ||
      !in.optional("turnOutputTokens", out.turn_output_tokens)) {
    return false;
  }
  for (const auto& usd : {std::pair{"sessionUsd", out.session_usd}, std::pair{"turnUsd", out.turn_usd}}) {
    if (usd.second && !(*usd.second > 0)) return in[usd.first].fail("expected a number of dollars above 0");
  }
  if (out.turn_output_tokens && *out.turn_output_tokens == 0) {
    return in["turnOutputTokens"].fail("expected a whole number of tokens above 0");
  }
  return true;
}
void write_budget_members(JsonWriter& w, const Budgets& v) {
  w.optional_member("sessionUsd", v.session_usd).optional_member("turnUsd", v.turn_usd);
  w.optional_member("turnOutputTokens", v.turn_output_tokens);
}
}  // namespace

bool from_json(const JsonIn& in, Budgets& out) { return in.require_object() && read_budget_members(in, out); }
void to_json(JsonWriter& w, const Budgets& v) {
  w.begin_object();
  write_budget_members(w, v);
  w.end_object();
}
bool from_json(const JsonIn& in, SetBudgetRequest& out) {
  if (!in.required("sessionId", out.session_id) || !read_budget_members(in, out.budgets)) return false;
  for (const char* name : {"sessionUsd", "turnUsd", "turnOutputTokens"}) {
    const Json* given = in.json().find(name);
    if (given != nullptr && given->is_null()) out.cleared.emplace_back(name);
  }
  return true;
}
void to_json(JsonWriter& w, const SetBudgetRequest& v) {
  w.begin_object().member("sessionId", v.session_id);
  write_budget_members(w, v.budgets);
  for (const auto& name : v.cleared) w.key(name).null();
  w.end_object();
}

bool from_json(const JsonIn& in, CheckpointsRestoreRequest& out) {
  return in.required("sessionId", out.session_id) && in.required("turnId", out.turn_id);
}
void to_json(JsonWriter& w, const CheckpointsRestoreRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("turnId", v.turn_id).end_object();
}

// ---- results -----------------------------------------------------------------------------------------

bool from_json(const JsonIn& in, TraceSpan& out) {
  return in.required("id", out.id) && in.required("name", out.name) && in.required("startUs", out.start_us) &&
         in.required("durationUs", out.duration_us) && in.required("status", out.status) &&
         in.optional("statusMessage", out.status_message) && in.optional("attributes", out.attributes) &&
         in.optional("children", out.children);
}
void to_json(JsonWriter& w, const TraceSpan& v) {
  w.begin_object().member("id", v.id).member("name", v.name).member("startUs", v.start_us);
  w.member("durationUs", v.duration_us).member("status", v.status);
  if (v.status_message && !v.status_message->empty()) w.member("statusMessage", *v.status_message);
  w.member("attributes", v.attributes.is_object() ? v.attributes : Json::object());
  w.member("children", v.children).end_object();
}

bool from_json(const JsonIn& in, TraceGetResult& out) {
  if (!in.required("turnId", out.turn_id)) return false;
  if (in.json().contains("traceEvents")) return in.optional("traceEvents", out.trace_events);
  return in.required("spans", out.spans);
}
void to_json(JsonWriter& w, const TraceGetResult& v) {
  w.begin_object().member("turnId", v.turn_id);
  if (v.trace_events) {
    w.member("traceEvents", *v.trace_events).member("displayTimeUnit", "ms");
  } else {
    w.member("spans", v.spans);
  }
  w.end_object();
}

namespace {

struct FlatSpan {
  const TraceSpan* span = nullptr;
  std::size_t parent = 0;  // index in the flat list; kNoParent for a root
};
constexpr std::size_t kNoParent = static_cast<std::size_t>(-1);

void flatten(const TraceSpan& span, std::size_t parent, std::vector<FlatSpan>& out) {
  out.push_back(FlatSpan{&span, parent});
  const std::size_t self = out.size() - 1;
  for (const auto& child : span.children) flatten(child, self, out);
}

}  // namespace

Json chrome_trace_events(std::string_view turn_id, const std::vector<TraceSpan>& roots) {
  std::vector<FlatSpan> flat;
  for (const auto& root : roots) flatten(root, kNoParent, flat);
  std::int64_t origin = 0;
  for (std::size_t i = 0; i < flat.size(); ++i) {
    if (i == 0 || flat[i].span->start_us < origin) origin = flat[i].span->start_us;
  }
  auto end_of = [](const TraceSpan& s) { return s.start_us + std::max<std::int64_t>(s.duration_us, 0); };

  // Earliest first and, of spans that start together, the longest first: a parent comes before the
  // children it contains. Each track keeps the ends of the spans open on it, innermost last; a span fits
  // on a track where everything open (after those that ended before it starts) contains it.
  std::vector<std::size_t> order(flat.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const TraceSpan& x = *flat[a].span;
    const TraceSpan& y = *flat[b].span;
    if (x.start_us != y.start_us) return x.start_us < y.start_us;
    return x.duration_us > y.duration_us;
  });
  std::vector<std::vector<std::int64_t>> tracks;
  std::vector<std::size_t> track_of(flat.size(), 0);
  auto fits = [&](std::size_t track, std::int64_t start, std::int64_t end) {
    auto& open = tracks[track];
    while (!open.empty() && open.back() <= start) open.pop_back();
    return open.empty() || open.back() >= end;
  };
  for (const std::size_t i : order) {
    const TraceSpan& s = *flat[i].span;
    const std::int64_t start = s.start_us;
    const std::int64_t end = end_of(s);
    std::size_t chosen = tracks.size();
    if (flat[i].parent != kNoParent && fits(track_of[flat[i].parent], start, end)) {
      chosen = track_of[flat[i].parent];
    } else {
      for (std::size_t t = 0; t < tracks.size(); ++t) {
        if (fits(t, start, end)) {
          chosen = t;
          break;
        }
      }
    }
    if (chosen == tracks.size()) tracks.emplace_back();
    tracks[chosen].push_back(end);
    track_of[i] = chosen;
  }

  Json events = Json::array();
  Json process = Json::object();
  process.set("name", "process_name");
  process.set("ph", "M");
  process.set("pid", 1);
  process.set("tid", 1);
  process["args"].set("name", fmt::format("agentd turn {}", turn_id));
  events.push_back(std::move(process));
  for (std::size_t t = 0; t < tracks.size(); ++t) {
    Json thread = Json::object();
    thread.set("name", "thread_name");
    thread.set("ph", "M");
    thread.set("pid", 1);
    thread.set("tid", static_cast<std::int64_t>(t + 1));
    thread["args"].set("name", t == 0 ? std::string("turn") : fmt::format("concurrent {}", t));
    events.push_back(std::move(thread));
  }
  for (std::size_t i = 0; i < flat.size(); ++i) {
    const TraceSpan& s = *flat[i].span;
    Json event = Json::object();
    event.set("name", s.name);
    event.set("cat", "agentd");
    event.set("ph", "X");
    event.set("ts", s.start_us - origin);
    event.set("dur", std::max<std::int64_t>(s.duration_us, 0));
    event.set("pid", 1);
    event.set("tid", static_cast<std::int64_t>(track_of[i] + 1));
    Json args = s.attributes.is_object() ? s.attributes : Json::object();
    args.set("spanId", s.id);
    args.set("status", s.status);
    if (s.status_message && !s.status_message->empty()) args.set("statusMessage", *s.status_message);
    event.set("args", std::move(args));
    events.push_back(std::move(event));
  }
  return events;
}

bool from_json(const JsonIn& in, CostLedger& out) {
  return in.required("inputTokens", out.input_tokens) && in.required("outputTokens", out.output_tokens) &&
         in.required("cacheWriteTokens", out.cache_write_tokens) &&
         in.required("cacheReadTokens", out.cache_read_tokens) && in.required("modelCalls", out.model_calls) &&
         in.required("unpricedCalls", out.unpriced_calls) && in.optional("costUsd", out.cost_usd) &&
         in.optional("pricedCostUsd", out.priced_cost_usd);
}
void to_json(JsonWriter& w, const CostLedger& v) {
  w.begin_object().member("inputTokens", v.input_tokens).member("outputTokens", v.output_tokens);
  w.member("cacheWriteTokens", v.cache_write_tokens).member("cacheReadTokens", v.cache_read_tokens);
  w.member("modelCalls", v.model_calls).member("unpricedCalls", v.unpriced_calls);
  w.member("costUsd", v.cost_usd);  // null when unpriced: "unknown", never $0
  if (!v.cost_usd) w.member("pricedCostUsd", v.priced_cost_usd);
  w.end_object();
}

bool from_json(const JsonIn& in, CostGetResult& out) {
  return in.required("model", out.model) && in.required("priceTable", out.price_table) &&
         in.required("session", out.session) && in.required("lastTurn", out.last_turn);
}
void to_json(JsonWriter& w, const CostGetResult& v) {
  w.begin_object().member("model", v.model).member("priceTable", v.price_table);
  w.member("session", v.session).member("lastTurn", v.last_turn).end_object();
}

bool from_json(const JsonIn& in, PermissionRuleInfo& out) {
  return in.required("rule", out.rule) && in.required("verdict", out.verdict) && in.required("source", out.source) &&
         in.optional("approvalId", out.approval_id);
}
void to_json(JsonWriter& w, const PermissionRuleInfo& v) {
  w.begin_object().member("rule", v.rule).member("verdict", v.verdict).member("source", v.source);
  w.optional_member("approvalId", v.approval_id).end_object();
}

bool from_json(const JsonIn& in, PermissionsListResult& out) {
  return in.required("project", out.project) && in.required("mode", out.mode) &&
         in.required("headless", out.headless) && in.required("rules", out.rules);
}
void to_json(JsonWriter& w, const PermissionsListResult& v) {
  w.begin_object().member("project", v.project).member("mode", v.mode).member("headless", v.headless);
  w.member("rules", v.rules).end_object();
}

bool from_json(const JsonIn& in, PermissionAuditEntry& out) {
  return in.required("id", out.id) && in.required("time", out.time) && in.required("sessionId", out.session_id) &&
         in.optional("turnId", out.turn_id) && in.required("toolCallId", out.tool_call_id) &&
         in.required("tool", out.tool) && in.required("inputDigest", out.input_digest) &&
         in.required("decision", out.decision) && in.required("decidedBy", out.decided_by) &&
         in.required("reason", out.reason) && in.optional("cwd", out.cwd) && in.optional("risk", out.risk);
}
void to_json(JsonWriter& w, const PermissionAuditEntry& v) {
  w.begin_object().member("id", v.id).member("time", v.time).member("sessionId", v.session_id);
  w.optional_member("turnId", v.turn_id).member("toolCallId", v.tool_call_id).member("tool", v.tool);
  w.member("inputDigest", v.input_digest).member("decision", v.decision).member("decidedBy", v.decided_by);
  w.member("reason", v.reason);
  if (!v.cwd.empty()) w.member("cwd", v.cwd);
  w.member("risk", v.risk).end_object();
}

bool from_json(const JsonIn& in, PermissionsAuditResult& out) { return in.required("entries", out.entries); }
void to_json(JsonWriter& w, const PermissionsAuditResult& v) {
  w.begin_object().member("entries", v.entries).end_object();
}

bool from_json(const JsonIn& in, EventsReplayResult& out) {
  return in.required("events", out.events) && in.required("lastSeq", out.last_seq);
}
void to_json(JsonWriter& w, const EventsReplayResult& v) {
  w.begin_object().member("events", v.events).member("lastSeq", v.last_seq).end_object();
}

bool from_json(const JsonIn& in, ProjectTrustResult& out) {
  return in.required("project", out.project) && in.required("file", out.file) && in.required("trusted", out.trusted) &&
         in.required("digest", out.digest) && in.required("settings", out.settings) &&
         in.required("trustFile", out.trust_file);
}
void to_json(JsonWriter& w, const ProjectTrustResult& v) {
  w.begin_object().member("project", v.project).member("file", v.file).member("trusted", v.trusted);
  w.member("digest", v.digest).member("settings", v.settings).member("trustFile", v.trust_file).end_object();
}

namespace {
void write_fact_members(JsonWriter& w, const MemoryFact& v) {
  w.member("id", v.id).member("text", v.text).member("createdAt", v.created_at);
}
}  // namespace

bool from_json(const JsonIn& in, DatabaseStatus& out) {
  return in.required("ok", out.ok) && in.required("failedWrites", out.failed_writes) &&
         in.optional("lastError", out.last_error) && in.optional("lastErrorAt", out.last_error_at);
}
void to_json(JsonWriter& w, const DatabaseStatus& v) {
  w.begin_object().member("ok", v.ok).member("failedWrites", v.failed_writes);
  w.optional_member("lastError", v.last_error).optional_member("lastErrorAt", v.last_error_at).end_object();
}

bool from_json(const JsonIn& in, TelemetryStatus& out) {
  return in.required("endpoint", out.endpoint) && in.required("exportedSpans", out.exported_spans) &&
         in.required("droppedSpans", out.dropped_spans) && in.required("failedRequests", out.failed_requests) &&
         in.optional("lastError", out.last_error);
}
void to_json(JsonWriter& w, const TelemetryStatus& v) {
  w.begin_object().member("endpoint", v.endpoint).member("exportedSpans", v.exported_spans);
  w.member("droppedSpans", v.dropped_spans).member("failedRequests", v.failed_requests);
  w.optional_member("lastError", v.last_error).end_object();
}

bool from_json(const JsonIn& in, StatusResult& out) {
  return in.required("version", out.version) && in.required("openSessions", out.open_sessions) &&
         in.required("database", out.database) && in.optional("telemetry", out.telemetry);
}
void to_json(JsonWriter& w, const StatusResult& v) {
  w.begin_object().member("version", v.version).member("openSessions", v.open_sessions);
  w.member("database", v.database);
  if (v.telemetry) w.member("telemetry", *v.telemetry);
  w.end_object();
}

bool from_json(const JsonIn& in, MemoryFact& out) {
  return in.required("id", out.id) && in.required("text", out.text) && in.required("createdAt", out.created_at);
}
void to_json(JsonWriter& w, const MemoryFact& v) {
  w.begin_object();
  write_fact_members(w, v);
  w.end_object();
}

bool from_json(const JsonIn& in, MemoryAddResult& out) {
  return from_json(in, out.fact) && in.required("project", out.project);
}
void to_json(JsonWriter& w, const MemoryAddResult& v) {
  w.begin_object();
  write_fact_members(w, v.fact);
  w.member("project", v.project).end_object();
}

bool from_json(const JsonIn& in, MemoryListResult& out) {
  return in.required("project", out.project) && in.required("facts", out.facts);
}
void to_json(JsonWriter& w, const MemoryListResult& v) {
  w.begin_object().member("project", v.project).member("facts", v.facts).end_object();
}

bool from_json(const JsonIn& in, CheckpointFileChange& out) {
  return in.required("path", out.path) && in.required("change", out.change) &&
         in.optional("beforeHash", out.before_hash) && in.optional("afterHash", out.after_hash);
}
void to_json(JsonWriter& w, const CheckpointFileChange& v) {
  w.begin_object().member("path", v.path).member("change", v.change);
  w.member("beforeHash", v.before_hash).member("afterHash", v.after_hash).end_object();
}

bool from_json(const JsonIn& in, Checkpoint& out) {
  return in.required("turnId", out.turn_id) && in.required("seq", out.seq) && in.required("kind", out.kind) &&
         in.optional("restoresTurnId", out.restores_turn_id) && in.required("undone", out.undone) &&
         in.required("createdAt", out.created_at) && in.required("files", out.files);
}
void to_json(JsonWriter& w, const Checkpoint& v) {
  w.begin_object().member("turnId", v.turn_id).member("seq", v.seq).member("kind", v.kind);
  w.optional_member("restoresTurnId", v.restores_turn_id).member("undone", v.undone);
  w.member("createdAt", v.created_at).member("files", v.files).end_object();
}

bool from_json(const JsonIn& in, CheckpointsListResult& out) { return in.required("checkpoints", out.checkpoints); }
void to_json(JsonWriter& w, const CheckpointsListResult& v) {
  w.begin_object().member("checkpoints", v.checkpoints).end_object();
}

bool from_json(const JsonIn& in, RestoredFile& out) {
  return in.required("path", out.path) && in.required("action", out.action) && in.optional("detail", out.detail);
}
void to_json(JsonWriter& w, const RestoredFile& v) {
  w.begin_object().member("path", v.path).member("action", v.action);
  if (v.detail && !v.detail->empty()) w.member("detail", *v.detail);
  w.end_object();
}

bool from_json(const JsonIn& in, CheckpointsRestoreResult& out) {
  return in.required("restoredTurnId", out.restored_turn_id) && in.optional("checkpointId", out.checkpoint_id) &&
         in.required("files", out.files) && in.required("conflicts", out.conflicts);
}
void to_json(JsonWriter& w, const CheckpointsRestoreResult& v) {
  w.begin_object().member("restoredTurnId", v.restored_turn_id).member("checkpointId", v.checkpoint_id);
  w.member("files", v.files).member("conflicts", v.conflicts).end_object();
}

// ---- `_meta.agentd` payloads ---------------------------------------------------------------------------

namespace {

template <class T>
Json wrap(const T&, Json payload) {
  if (!T::kKey.empty()) {
    Json keyed = Json::object();
    keyed[T::kKey] = std::move(payload);
    payload = std::move(keyed);
  }
  return agentd_meta(std::move(payload));
}

}  // namespace

Json agentd_meta(Json inner) {
  Json meta = Json::object();
  meta["agentd"] = std::move(inner);
  return meta;
}

Json to_meta(const InitializeMeta& v) {
  Json database = Json::object();
  database["ok"] = v.database.ok;
  database["failedWrites"] = v.database.failed_writes;
  if (v.database.last_error) database["lastError"] = *v.database.last_error;
  if (v.database.last_error_at) database["lastErrorAt"] = *v.database.last_error_at;
  Json j = Json::object();
  j["database"] = std::move(database);
  return wrap(v, std::move(j));
}

Json to_meta(const UpdateMeta& v) {
  Json j = Json::object();
  j["seq"] = v.seq;
  return wrap(v, std::move(j));
}
bool from_json(const JsonIn& in, UpdateMeta& out) { return in.required("seq", out.seq); }

bool from_json(const JsonIn& in, VerificationRunInfo& out) {
  return in.required("command", out.command) && in.required("status", out.status) &&
         in.optional("narrowed", out.narrowed);
}
bool from_json(const JsonIn& in, NotRunInfo& out) {
  return in.required("command", out.command) && in.required("reason", out.reason);
}
bool from_json(const JsonIn& in, TurnVerificationInfo& out) {
  return in.required("changedFiles", out.changed_files) && in.required("runs", out.runs) &&
         in.required("notRun", out.not_run) && in.required("summary", out.summary);
}

Json to_meta(const AuthenticateMeta& v) {
  Json j = Json::object();
  if (v.api_key) j["apiKey"] = *v.api_key;
  return agentd_meta(std::move(j));
}
bool from_json(const JsonIn& in, AuthenticateMeta& out) {
  return in.require_object() && in.optional("apiKey", out.api_key);
}

Json to_meta(const ForkSessionMeta& v) {
  Json j = Json::object();
  if (v.turn_id) j["turnId"] = *v.turn_id;
  return agentd_meta(std::move(j));
}
bool from_json(const JsonIn& in, ForkSessionMeta& out) {
  return in.require_object() && in.optional("turnId", out.turn_id);
}

Json to_meta(const AuthMethodMeta& v) {
  Json j = Json::object();
  j["envVar"] = v.env_var;
  return agentd_meta(std::move(j));
}
bool from_json(const JsonIn& in, AuthMethodMeta& out) {
  return in.require_object() && in.required("envVar", out.env_var);
}

Json to_meta(const PromptMeta& v) {
  Json j = Json::object();
  j["turnId"] = v.turn_id;
  if (v.verification) {
    const TurnVerificationInfo& t = *v.verification;
    Json changed = Json::array();
    for (const auto& file : t.changed_files) changed.push_back(file);
    Json runs = Json::array();
    for (const auto& run : t.runs) {
      Json r = Json::object();
      r["command"] = run.command;
      r["status"] = run.status;
      r["narrowed"] = run.narrowed;
      runs.push_back(std::move(r));
    }
    Json not_run = Json::array();
    for (const auto& skipped : t.not_run) {
      Json n = Json::object();
      n["command"] = skipped.command;
      n["reason"] = skipped.reason;
      not_run.push_back(std::move(n));
    }
    Json verification = Json::object();
    verification["changedFiles"] = std::move(changed);
    verification["runs"] = std::move(runs);
    verification["notRun"] = std::move(not_run);
    verification["summary"] = t.summary;
    j["verification"] = std::move(verification);
  }
  if (v.stopped_by) {
    Json stopped = Json::object();
    stopped["budget"] = v.stopped_by->budget;
    stopped["limit"] = v.stopped_by->limit;
    stopped["spent"] = v.stopped_by->spent;
    stopped["message"] = v.stopped_by->message;
    j["stoppedBy"] = std::move(stopped);
  }
  return wrap(v, std::move(j));
}
bool from_json(const JsonIn& in, StoppedByInfo& out) {
  return in.required("budget", out.budget) && in.required("limit", out.limit) && in.required("spent", out.spent) &&
         in.required("message", out.message);
}
bool from_json(const JsonIn& in, PromptMeta& out) {
  return in.required("turnId", out.turn_id) && in.optional("verification", out.verification) &&
         in.optional("stoppedBy", out.stopped_by);
}

Json to_meta(const UsageMeta& v) {
  Json j = Json::object();
  j["inputTokens"] = v.input_tokens;
  j["outputTokens"] = v.output_tokens;
  j["cacheReadTokens"] = v.cache_read_tokens;
  j["cacheWriteTokens"] = v.cache_write_tokens;
  j["model"] = v.model;
  if (v.unpriced) j["cost"] = "unpriced";
  return wrap(v, std::move(j));
}
bool from_json(const JsonIn& in, UsageMeta& out) {
  std::optional<std::string> cost;
  if (!in.required("inputTokens", out.input_tokens) || !in.required("outputTokens", out.output_tokens) ||
      !in.required("cacheReadTokens", out.cache_read_tokens) ||
      !in.required("cacheWriteTokens", out.cache_write_tokens) || !in.required("model", out.model) ||
      !in.optional("cost", cost)) {
    return false;
  }
  out.unpriced = cost == "unpriced";
  return true;
}

Json to_meta(const CompactionMeta& v) {
  Json j = Json::object();
  j["id"] = v.id;
  j["firstTurnId"] = v.first_turn_id;
  j["lastTurnId"] = v.last_turn_id;
  j["turns"] = v.turns;
  j["tokensBefore"] = v.tokens_before;
  j["tokensAfter"] = v.tokens_after;
  j["forced"] = v.forced;
  return wrap(v, std::move(j));
}
bool from_json(const JsonIn& in, CompactionMeta& out) {
  return in.required("id", out.id) && in.required("firstTurnId", out.first_turn_id) &&
         in.required("lastTurnId", out.last_turn_id) && in.required("turns", out.turns) &&
         in.required("tokensBefore", out.tokens_before) && in.required("tokensAfter", out.tokens_after) &&
         in.optional("forced", out.forced);
}

Json to_meta(const ProjectTrustMeta& v) {
  Json j = Json::object();
  j["trusted"] = v.trusted;
  j["project"] = v.project;
  j["file"] = v.file;
  j["digest"] = v.digest;
  Json ignored = Json::array();
  for (const auto& i : v.ignored) ignored.push_back(Json(i));
  j["ignored"] = std::move(ignored);
  j["message"] = v.message;
  return wrap(v, std::move(j));
}
bool from_json(const JsonIn& in, ProjectTrustMeta& out) {
  return in.required("trusted", out.trusted) && in.required("project", out.project) && in.required("file", out.file) &&
         in.required("digest", out.digest) && in.optional("ignored", out.ignored) &&
         in.required("message", out.message);
}

Json to_meta(const PermissionRequestMeta& v) {
  Json j = Json::object();
  j["inputDigest"] = v.input_digest;
  j["reason"] = v.reason;
  j["risk"] = v.risk;
  return wrap(v, std::move(j));
}
bool from_json(const JsonIn& in, PermissionRequestMeta& out) {
  return in.optional("inputDigest", out.input_digest) && in.optional("reason", out.reason) &&
         in.optional("risk", out.risk);
}

}  // namespace agentd::protocol::acp::ext
