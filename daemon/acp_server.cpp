#include "daemon/acp_server.h"

#include <ctime>
#include <set>
#include <variant>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/model/price_table.h"
#include "core/support/cancel_asio.h"
#include "core/support/log.h"
#include "core/support/version.h"
#include "daemon/trust.h"
#include "protocol/acp/client_methods.h"
#include "protocol/acp/methods.h"
#include "protocol/acp/session.h"
#include "protocol/acp/session_update.h"

namespace agentd::daemon {

namespace acp = protocol::acp;
namespace asio = boost::asio;
namespace log = support::log;
using support::CancelToken;
using support::Errc;
using support::Error;
using support::Json;
using support::Result;

// ---- engine events -> ACP --------------------------------------------------------------------------

namespace {

acp::ToolKind acp_kind(tools::ToolKind kind) {
  switch (kind) {
    case tools::ToolKind::read: return acp::ToolKind::read;
    case tools::ToolKind::edit: return acp::ToolKind::edit;
    case tools::ToolKind::remove: return acp::ToolKind::delete_;
    case tools::ToolKind::move: return acp::ToolKind::move;
    case tools::ToolKind::search: return acp::ToolKind::search;
    case tools::ToolKind::execute: return acp::ToolKind::execute;
    case tools::ToolKind::think: return acp::ToolKind::think;
    case tools::ToolKind::fetch: return acp::ToolKind::fetch;
    case tools::ToolKind::other: return acp::ToolKind::other;
  }
  return acp::ToolKind::other;
}

acp::ToolCallStatus acp_status(core::ToolCallStatus status) {
  switch (status) {
    case core::ToolCallStatus::pending: return acp::ToolCallStatus::pending;
    case core::ToolCallStatus::in_progress: return acp::ToolCallStatus::in_progress;
    case core::ToolCallStatus::completed: return acp::ToolCallStatus::completed;
    case core::ToolCallStatus::failed: return acp::ToolCallStatus::failed;
  }
  return acp::ToolCallStatus::failed;
}

acp::ContentBlock text_block(std::string text) { return acp::TextContent{std::move(text), {}, {}}; }

std::vector<acp::ToolCallContent> tool_content(const std::optional<std::string>& text,
                                               const std::vector<tools::ToolDiff>& diffs) {
  std::vector<acp::ToolCallContent> content;
  if (text && !text->empty()) content.emplace_back(acp::ToolCallContentBlock{text_block(*text), {}});
  for (const auto& d : diffs) content.emplace_back(acp::Diff{d.path, d.old_text, d.new_text, {}});
  return content;
}

std::vector<acp::ToolCallLocation> tool_locations(const std::vector<std::string>& paths) {
  std::vector<acp::ToolCallLocation> locations;
  locations.reserve(paths.size());
  for (const auto& p : paths) locations.push_back(acp::ToolCallLocation{p, std::nullopt, {}});
  return locations;
}

Json agentd_meta(Json inner) {
  Json meta = Json::object();
  meta["agentd"] = std::move(inner);
  return meta;
}

std::vector<acp::SessionConfigOption> config_options(const core::Session& session) {
  acp::SessionConfigOption model;
  model.id = "model";
  model.name = "Model";
  model.description = "The model this session talks to";
  model.category = "model";
  model.current_value = session.model_spec();
  bool listed = false;
  for (const auto& choice : session.settings().model_choices) {
    model.options.push_back(acp::SessionConfigSelectOption{choice, choice, std::nullopt, {}});
    listed = listed || choice == session.model_spec();
  }
  if (!listed) {
    model.options.insert(model.options.begin(),
                         acp::SessionConfigSelectOption{session.model_spec(), session.model_spec(), std::nullopt, {}});
  }
  return {std::move(model)};
}

acp::SessionModeState mode_state(const core::Session& session) {
  acp::SessionModeState state;
  state.current_mode_id = std::string(core::permission_mode_id(session.mode()));
  for (const auto& m : core::permission_modes()) {
    state.available_modes.push_back(
        acp::SessionMode{std::string(m.id), std::string(m.name), std::string(m.description), {}});
  }
  return state;
}

// Every engine event, in ACP terms. `replay` includes the user's own messages (a live client already
// shows what it sent).
std::optional<acp::SessionUpdate> to_update(const core::EngineEvent& event, const core::Session* session, bool replay) {
  struct Visitor {
    const core::Session* session;
    bool replay;
    std::optional<acp::SessionUpdate> operator()(const core::UserMessageEvent& e) const {
      if (!replay) return std::nullopt;
      return acp::UserMessageChunk{text_block(e.text), std::nullopt, {}};
    }
    std::optional<acp::SessionUpdate> operator()(const core::AgentTextEvent& e) const {
      return acp::AgentMessageChunk{text_block(e.text), std::nullopt, {}};
    }
    std::optional<acp::SessionUpdate> operator()(const core::AgentThoughtEvent& e) const {
      return acp::AgentThoughtChunk{text_block(e.text), std::nullopt, {}};
    }
    std::optional<acp::SessionUpdate> operator()(const core::ToolCallStartedEvent& e) const {
      acp::ToolCall call;
      call.tool_call_id = e.id;
      call.title = e.title;
      call.kind = acp_kind(e.kind);
      call.status = acp::ToolCallStatus::pending;
      return call;
    }
    std::optional<acp::SessionUpdate> operator()(const core::ToolCallUpdatedEvent& e) const {
      acp::ToolCallUpdate update;
      update.tool_call_id = e.id;
      if (e.status) update.status = acp_status(*e.status);
      update.title = e.title;
      update.raw_input = e.raw_input;
      auto content = tool_content(e.text, e.diffs);
      if (!content.empty()) update.content = std::move(content);
      if (!e.locations.empty()) update.locations = tool_locations(e.locations);
      if (e.meta.is_object() && e.meta.size() > 0) update.meta = agentd_meta(e.meta);
      return update;
    }
    std::optional<acp::SessionUpdate> operator()(const core::UsageEvent& e) const {
      acp::UsageUpdate update;
      update.used = e.used;
      update.size = e.size;
      if (e.session_cost_usd) update.cost = acp::Cost{*e.session_cost_usd, "USD", {}};
      Json detail = Json::object();
      detail["inputTokens"] = e.call_usage.input_tokens;
      detail["outputTokens"] = e.call_usage.output_tokens;
      detail["cacheReadTokens"] = e.call_usage.cache_read_tokens;
      detail["cacheWriteTokens"] = e.call_usage.cache_write_tokens;
      detail["model"] = e.model;
      if (!e.session_cost_usd) detail["cost"] = "unpriced";
      update.meta = agentd_meta(std::move(detail));
      return update;
    }
    std::optional<acp::SessionUpdate> operator()(const core::CommandsEvent& e) const {
      acp::AvailableCommandsUpdate update;
      for (const auto& c : e.commands) {
        acp::AvailableCommand command{c.name, c.description, std::nullopt, {}};
        if (c.input_hint) command.input = acp::AvailableCommandInput{*c.input_hint, {}};
        update.available_commands.push_back(std::move(command));
      }
      return update;
    }
    std::optional<acp::SessionUpdate> operator()(const core::ModeChangedEvent& e) const {
      return acp::CurrentModeUpdate{e.mode, {}};
    }
    std::optional<acp::SessionUpdate> operator()(const core::ModelChangedEvent& e) const {
      if (session == nullptr) return std::nullopt;
      (void)e;
      return acp::ConfigOptionUpdate{config_options(*session), {}};
    }
    // ACP has no update for compaction: the user reads it as agent text, a client that knows finds the
    // detail in _meta.agentd.compaction.
    std::optional<acp::SessionUpdate> operator()(const core::CompactionEvent& e) const {
      Json detail = Json::object();
      detail["id"] = e.compaction_id;
      detail["firstTurnId"] = e.first_turn_id;
      detail["lastTurnId"] = e.last_turn_id;
      detail["turns"] = e.turns;
      detail["tokensBefore"] = e.tokens_before;
      detail["tokensAfter"] = e.tokens_after;
      detail["forced"] = e.forced;
      Json meta = Json::object();
      meta["compaction"] = std::move(detail);
      return acp::AgentMessageChunk{text_block(e.text), std::nullopt, agentd_meta(std::move(meta))};
    }
  };
  return std::visit(Visitor{session, replay}, event);
}

std::string notification_json(const std::string& session_id, std::int64_t seq, acp::SessionUpdate update) {
  acp::SessionNotification notification;
  notification.session_id = session_id;
  notification.update = std::move(update);
  Json seq_meta = Json::object();
  seq_meta["seq"] = seq;
  notification.meta = agentd_meta(std::move(seq_meta));
  std::string json;
  support::JsonWriter w(json);
  w.value(notification);
  return json;
}

std::string iso8601(std::int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, unix_ms % 1000);
}

Result<core::PromptInput> prompt_input(const std::vector<acp::ContentBlock>& blocks) {
  core::PromptInput input;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto& block = blocks[i];
    if (const auto* text = std::get_if<acp::TextContent>(&block)) {
      if (!input.text.empty()) input.text += "\n";
      input.text += text->text;
    } else if (const auto* link = std::get_if<acp::ResourceLink>(&block)) {
      if (!input.text.empty()) input.text += "\n";
      input.text += fmt::format("[{}]({})", link->name, link->uri);
    } else if (const auto* resource = std::get_if<acp::EmbeddedResource>(&block)) {
      if (const auto* text_resource = std::get_if<acp::TextResourceContents>(&resource->resource)) {
        input.attachments.push_back(core::Attachment{text_resource->uri, text_resource->text});
      } else {
        return Error(Errc::invalid_argument,
                     fmt::format("params.prompt[{}]: binary resources are not supported; send text", i));
      }
    } else {
      return Error(Errc::invalid_argument,
                   fmt::format("params.prompt[{}]: {} content is not supported (see promptCapabilities)", i,
                               acp::content_type_name(block)));
    }
  }
  if (input.text.empty() && input.attachments.empty()) {
    return Error(Errc::invalid_argument, "params.prompt: the prompt is empty");
  }
  return input;
}

Error session_not_open(const std::string& id) {
  return Error(Errc::not_found,
               fmt::format("session \"{}\" is not open in this agentd; create it with session/new or open it with "
                           "session/load or session/resume",
                           id));
}

// ---- agentd extension params ----

struct TraceGetParams {
  std::string session_id;
  std::optional<std::string> turn_id;
};
bool from_json(const support::JsonIn& in, TraceGetParams& out) {
  return in.required("sessionId", out.session_id) && in.optional("turnId", out.turn_id);
}
struct SessionParams {
  std::string session_id;
};
bool from_json(const support::JsonIn& in, SessionParams& out) { return in.required("sessionId", out.session_id); }
struct ReplayParams {
  std::string session_id;
  std::int64_t since = 0;
  std::int64_t limit = 10000;
};
bool from_json(const support::JsonIn& in, ReplayParams& out) {
  return in.required("sessionId", out.session_id) && in.optional("since", out.since) && in.optional("limit", out.limit);
}

struct RevokeParams {
  std::string session_id;
  std::int64_t approval_id = 0;
};
bool from_json(const support::JsonIn& in, RevokeParams& out) {
  return in.required("sessionId", out.session_id) && in.required("approvalId", out.approval_id);
}

// `_agentd/permissions/audit`: no sessionId reads every session's decisions. A limit above the cap is
// clamped to it (asking for much is harmless); below 1 it is the client's mistake.
struct AuditParams {
  std::optional<std::string> session_id;
  std::int64_t limit = static_cast<std::int64_t>(storage::PermissionStore::kDefaultAuditLimit);
};
bool from_json(const support::JsonIn& in, AuditParams& out) {
  if (in.json().is_null()) return true;  // every field is optional, so params may be left out
  if (!in.optional("sessionId", out.session_id) || !in.optional("limit", out.limit)) return false;
  if (out.session_id && out.session_id->empty()) {
    return in["sessionId"].fail("must not be empty; leave it out to read every session's decisions");
  }
  if (out.limit < 1) {
    return in["limit"].fail(fmt::format("must be at least 1, got {} (at most {} entries are returned)", out.limit,
                                        storage::PermissionStore::kMaxAuditLimit));
  }
  return true;
}

Json audit_json(const std::vector<storage::PermissionAuditRecord>& records) {
  Json list = Json::array();
  for (const auto& r : records) {
    Json j = Json::object();
    j["id"] = r.id;
    j["time"] = r.created_at_ms;
    j["sessionId"] = r.session_id;
    if (r.turn_id) j["turnId"] = *r.turn_id;
    j["toolCallId"] = r.tool_call_id;
    j["tool"] = r.tool;
    j["inputDigest"] = r.input_digest;
    j["decision"] = r.decision;
    j["decidedBy"] = r.decided_by;
    j["reason"] = r.reason;
    if (!r.cwd.empty()) j["cwd"] = r.cwd;
    j["risk"] = r.risk;
    list.push_back(std::move(j));
  }
  Json result = Json::object();
  result["entries"] = std::move(list);
  return result;
}

Json rules_json(const std::vector<core::PermissionRule>& rules) {
  Json list = Json::array();
  for (const auto& rule : rules) {
    Json j = Json::object();
    j["rule"] = rule.text();
    j["verdict"] = std::string(core::verdict_name(rule.verdict));
    j["source"] = rule.source;
    if (rule.approval_id) j["approvalId"] = *rule.approval_id;
    list.push_back(std::move(j));
  }
  return list;
}

struct PreviewParams {
  std::string session_id;
  std::string input;
};
bool from_json(const support::JsonIn& in, PreviewParams& out) {
  return in.required("sessionId", out.session_id) && in.required("input", out.input);
}
// The client's MCP servers as the MCP client takes them. Only stdio ones: initialize says
// mcpCapabilities {http: false, sse: false}, so any other is the client's mistake and refused.
Result<std::vector<tools::mcp::ServerConfig>> mcp_configs(const std::vector<acp::McpServer>& servers) {
  std::vector<tools::mcp::ServerConfig> out;
  for (const auto& server : servers) {
    const auto* stdio = std::get_if<acp::McpServerStdio>(&server);
    if (stdio == nullptr) {
      const std::string& name = std::holds_alternative<acp::McpServerHttp>(server)
                                    ? std::get<acp::McpServerHttp>(server).name
                                    : std::get<acp::McpServerSse>(server).name;
      return Error(Errc::invalid_argument,
                   fmt::format("MCP server \"{}\": only stdio servers are supported (agentd's initialize answer "
                               "says mcpCapabilities http and sse are false)",
                               name));
    }
    if (stdio->name.empty() || stdio->command.empty()) {
      return Error(Errc::invalid_argument, "an MCP server needs a name and a command");
    }
    tools::mcp::ServerConfig config;
    config.name = stdio->name;
    config.command = stdio->command;
    config.args = stdio->args;
    for (const auto& e : stdio->env) config.env.emplace_back(e.name, e.value);
    out.push_back(std::move(config));
  }
  return out;
}

struct ProjectTrustParams {
  std::string cwd;
  bool trusted = true;
};
bool from_json(const support::JsonIn& in, ProjectTrustParams& out) {
  return in.required("cwd", out.cwd) && in.optional("trusted", out.trusted);
}

// `_meta.agentd.projectTrust` for a session whose project's loosening settings were ignored.
Json project_trust_meta(const core::Session& session) {
  const auto& untrusted = session.settings().untrusted;
  if (!untrusted) return Json();
  Json trust = Json::object();
  trust["trusted"] = false;
  trust["project"] = untrusted->project;
  trust["file"] = untrusted->file;
  trust["digest"] = untrusted->digest;
  Json ignored = Json::array();
  for (const auto& i : untrusted->ignored) ignored.push_back(Json(i));
  trust["ignored"] = std::move(ignored);
  trust["message"] = untrusted->message;
  Json meta = Json::object();
  meta["projectTrust"] = std::move(trust);
  return agentd_meta(std::move(meta));
}

struct VerifyPlanParams {
  std::string session_id;
  std::vector<std::string> files;
};
bool from_json(const support::JsonIn& in, VerifyPlanParams& out) {
  return in.required("sessionId", out.session_id) && in.optional("files", out.files);
}
struct FactAddParams {
  std::string session_id;
  std::string text;
};
bool from_json(const support::JsonIn& in, FactAddParams& out) {
  return in.required("sessionId", out.session_id) && in.required("text", out.text);
}
struct FactDeleteParams {
  std::string session_id;
  std::int64_t id = 0;
};
bool from_json(const support::JsonIn& in, FactDeleteParams& out) {
  return in.required("sessionId", out.session_id) && in.required("id", out.id);
}

Json fact_json(const core::memory::Fact& fact) {
  Json j = Json::object();
  j["id"] = fact.id;
  j["text"] = fact.text;
  j["createdAt"] = iso8601(fact.created_at_ms);
  return j;
}

struct CheckpointRestoreParams {
  std::string session_id;
  std::string turn_id;
};
bool from_json(const support::JsonIn& in, CheckpointRestoreParams& out) {
  return in.required("sessionId", out.session_id) && in.required("turnId", out.turn_id);
}

Json optional_json(const std::optional<std::string>& value) { return value ? Json(*value) : Json(); }

Json checkpoints_json(const std::vector<core::CheckpointInfo>& checkpoints) {
  Json list = Json::array();
  for (const auto& c : checkpoints) {
    Json j = Json::object();
    j["turnId"] = c.id;
    j["seq"] = c.seq;
    j["kind"] = storage::checkpoint_kind_name(c.kind);
    if (c.restores) j["restoresTurnId"] = *c.restores;
    j["undone"] = c.undone;
    j["createdAt"] = iso8601(c.created_at_ms);
    Json files = Json::array();
    for (const auto& f : c.files) {
      Json file = Json::object();
      file["path"] = f.path;
      file["change"] = !f.before_hash ? "created" : (!f.after_hash ? "removed" : "modified");
      file["beforeHash"] = optional_json(f.before_hash);
      file["afterHash"] = optional_json(f.after_hash);
      files.push_back(std::move(file));
    }
    j["files"] = std::move(files);
    list.push_back(std::move(j));
  }
  Json result = Json::object();
  result["checkpoints"] = std::move(list);
  return result;
}

Json restore_json(const core::RestoreReport& report) {
  Json result = Json::object();
  result["restoredTurnId"] = report.target;
  result["checkpointId"] = report.checkpoint_id.empty() ? Json() : Json(report.checkpoint_id);
  Json files = Json::array();
  for (const auto& f : report.files) {
    Json file = Json::object();
    file["path"] = f.path;
    file["action"] = core::restore_action_name(f.action);
    if (!f.detail.empty()) file["detail"] = f.detail;
    files.push_back(std::move(file));
  }
  result["files"] = std::move(files);
  result["conflicts"] = report.count(core::RestoreAction::conflict);
  return result;
}

Json ledger_json(const core::CostLedger& ledger) {
  Json j = Json::object();
  j["inputTokens"] = ledger.usage.input_tokens;
  j["outputTokens"] = ledger.usage.output_tokens;
  j["cacheWriteTokens"] = ledger.usage.cache_write_tokens;
  j["cacheReadTokens"] = ledger.usage.cache_read_tokens;
  j["modelCalls"] = ledger.calls;
  j["unpricedCalls"] = ledger.unpriced_calls;
  if (auto usd = ledger.total_usd()) {
    j["costUsd"] = *usd;
  } else {
    j["costUsd"] = nullptr;
    j["pricedCostUsd"] = ledger.priced_usd;
  }
  return j;
}

Json span_tree(const std::vector<support::SpanRecord>& spans) {
  // Children under their parents, in start order; spans whose parent is missing become roots.
  std::map<std::uint64_t, std::vector<const support::SpanRecord*>> children;
  std::set<std::uint64_t> ids;
  for (const auto& s : spans) ids.insert(s.id);
  for (const auto& s : spans) children[ids.contains(s.parent_id) ? s.parent_id : 0].push_back(&s);
  std::function<Json(const support::SpanRecord&)> node = [&](const support::SpanRecord& s) {  // NOLINT
    Json j = Json::object();
    j["id"] = s.id;
    j["name"] = s.name;
    j["startUs"] = s.start_us;
    j["durationUs"] = s.end_us - s.start_us;
    j["status"] = support::span_status_name(s.status);
    if (!s.status_message.empty()) j["statusMessage"] = s.status_message;
    j["attributes"] = Json(s.attributes);
    Json kids = Json::array();
    for (const auto* c : children[s.id]) kids.push_back(node(*c));
    j["children"] = std::move(kids);
    return j;
  };
  Json roots = Json::array();
  for (const auto* r : children[0]) roots.push_back(node(*r));
  return roots;
}

}  // namespace

// ---- the frontend: engine -> client ---------------------------------------------------------------

class AcpFrontend final : public core::Frontend {
 public:
  AcpFrontend(protocol::Peer& peer, core::SessionManager& sessions) : peer_(&peer), sessions_(sessions) {}

  void disconnect() { peer_ = nullptr; }
  void set_client(const acp::ClientCapabilities& caps) { caps_ = caps; }

  void deliver(const std::string& session_id, const core::SequencedEvent& event) override {
    if (peer_ == nullptr) return;
    auto session = sessions_.find(session_id);
    auto update = to_update(event.event, session.get(), false);
    if (!update) return;
    peer_->notify_raw(acp::method::kSessionUpdate, notification_json(session_id, event.seq, std::move(*update)));
  }

  // Replays logged events (session/load): the same notifications, user messages included.
  void replay(const std::string& session_id, const std::vector<core::SequencedEvent>& events) {
    if (peer_ == nullptr) return;
    auto session = sessions_.find(session_id);
    for (const auto& event : events) {
      // Commands advertised in the past are stale state, not history: the session announces its current
      // ones once it is loaded.
      if (std::holds_alternative<core::CommandsEvent>(event.event)) continue;
      auto update = to_update(event.event, session.get(), true);
      if (!update) continue;
      peer_->notify_raw(acp::method::kSessionUpdate, notification_json(session_id, event.seq, std::move(*update)));
    }
  }

  bool can_ask_permission() const override { return peer_ != nullptr; }

  asio::awaitable<Result<core::PermissionAnswer>> ask_permission(core::PermissionPrompt prompt,
                                                                 CancelToken cancel) override {
    if (peer_ == nullptr) co_return Error(Errc::unavailable, "the client is gone");
    acp::RequestPermissionRequest request;
    request.session_id = prompt.session_id;
    request.tool_call.tool_call_id = prompt.tool_call_id;
    request.tool_call.title = prompt.title;
    request.tool_call.kind = acp_kind(prompt.kind);
    request.tool_call.status = acp::ToolCallStatus::pending;
    request.tool_call.raw_input = prompt.raw_input;
    auto content = tool_content(prompt.text, prompt.diffs);
    if (!content.empty()) request.tool_call.content = std::move(content);
    if (!prompt.locations.empty()) request.tool_call.locations = tool_locations(prompt.locations);
    request.options = {
        acp::PermissionOption{"allow_once", "Allow", acp::PermissionOptionKind::allow_once, {}},
        acp::PermissionOption{
            "allow_always", "Always allow (remembered for this project)", acp::PermissionOptionKind::allow_always, {}},
        acp::PermissionOption{"reject_once", "Reject", acp::PermissionOptionKind::reject_once, {}},
        acp::PermissionOption{"reject_always",
                              "Always reject (remembered for this project)",
                              acp::PermissionOptionKind::reject_always,
                              {}},
    };
    Json meta = Json::object();
    meta["inputDigest"] = prompt.input_digest;
    meta["reason"] = prompt.reason;
    meta["risk"] = prompt.risk;
    request.meta = agentd_meta(std::move(meta));
    std::string params_json;
    support::JsonWriter w(params_json);
    w.value(request);
    auto params = support::parse_json(params_json);
    if (!params) co_return Error(Errc::internal, "permission request: " + params.error().message());

    support::CancelBridge bridge(cancel, peer_->executor());
    auto answer = co_await peer_->async_call(std::string(acp::method::kSessionRequestPermission), std::move(*params),
                                             asio::bind_cancellation_slot(bridge.slot(), asio::use_awaitable));
    if (cancel.cancelled()) co_return core::PermissionAnswer::cancelled;
    if (!answer) co_return std::move(answer).error();
    auto response = support::read_json<acp::RequestPermissionResponse>(*answer, "result");
    if (!response) co_return std::move(response).error();
    if (std::holds_alternative<acp::CancelledPermissionOutcome>(response->outcome)) {
      co_return core::PermissionAnswer::cancelled;
    }
    const std::string& option = std::get<acp::SelectedPermissionOutcome>(response->outcome).option_id;
    if (option == "allow_once") co_return core::PermissionAnswer::allow_once;
    if (option == "allow_always") co_return core::PermissionAnswer::allow_always;
    if (option == "reject_once") co_return core::PermissionAnswer::reject_once;
    if (option == "reject_always") co_return core::PermissionAnswer::reject_always;
    co_return Error(Errc::invalid_argument, fmt::format("the client chose an option we did not offer: \"{}\"", option));
  }

  bool can_read_files() const override { return peer_ != nullptr && caps_.fs.read_text_file; }

  asio::awaitable<Result<std::string>> read_text_file(std::string session_id, std::string path,
                                                      CancelToken cancel) override {
    if (peer_ == nullptr) co_return Error(Errc::unavailable, "the client is gone");
    Json params = Json::object();
    params["sessionId"] = session_id;
    params["path"] = path;
    support::CancelBridge bridge(cancel, peer_->executor());
    auto answer = co_await peer_->async_call(std::string(acp::method::kFsReadTextFile), std::move(params),
                                             asio::bind_cancellation_slot(bridge.slot(), asio::use_awaitable));
    if (!answer) co_return std::move(answer).error();
    auto response = support::read_json<acp::ReadTextFileResponse>(*answer, "result");
    if (!response) co_return std::move(response).error();
    co_return std::move(response->content);
  }

 private:
  protocol::Peer* peer_;
  core::SessionManager& sessions_;
  acp::ClientCapabilities caps_;
};

// ---- the method table: client -> engine ------------------------------------------------------------

AcpServer::AcpServer(protocol::Peer& peer, core::SessionManager& sessions)
    : peer_(peer),
      sessions_(sessions),
      frontend_(std::make_shared<AcpFrontend>(peer, sessions)),
      prompts_(peer.executor()) {
  using Token = CancelToken;
  peer_.on_request<acp::InitializeRequest, acp::InitializeResponse>(
      std::string(acp::method::kInitialize), [this](const acp::InitializeRequest& r) { return initialize(r); });
  peer_.on_request<acp::Empty, acp::Empty>("_agentd/ping", [](const acp::Empty&) { return acp::Empty{}; });
  // ACP's handshake comes first: capabilities decide what the rest may use (fs/* through the editor,
  // the protocol version). A ping is allowed before it, for liveness checks.
  peer_.set_request_gate([this](std::string_view method) -> std::optional<protocol::RpcError> {
    if (client_ || method == acp::method::kInitialize || method == "_agentd/ping") return std::nullopt;
    return protocol::RpcError{protocol::error_code::kInvalidRequest,
                              fmt::format("Invalid request: {} before initialize; send initialize first", method),
                              std::nullopt};
  });

  peer_.on_request_async<acp::NewSessionRequest, acp::NewSessionResponse>(
      std::string(acp::method::kSessionNew),
      [this](acp::NewSessionRequest r, Token) -> asio::awaitable<Result<acp::NewSessionResponse>> {
        // Named, not a temporary: GCC 12 destroys class temporaries passed to a coroutine twice.
        auto servers = mcp_configs(r.mcp_servers);
        if (!servers) co_return std::move(servers).error();
        core::NewSessionParams params{r.cwd, r.additional_directories, std::move(*servers)};
        auto session = co_await sessions_.create(std::move(params));
        if (!session) co_return std::move(session).error();
        (*session)->attach(frontend_);
        asio::post((*session)->strand(), [s = *session] { s->announce_commands(); });
        acp::NewSessionResponse response;
        response.session_id = (*session)->id();
        response.modes = mode_state(**session);
        response.config_options = config_options(**session);
        response.meta = project_trust_meta(**session);
        co_return response;
      });

  peer_.on_request_async<acp::LoadSessionRequest, acp::LoadSessionResponse>(
      std::string(acp::method::kSessionLoad),
      [this](acp::LoadSessionRequest r, Token) -> asio::awaitable<Result<acp::LoadSessionResponse>> {
        auto servers = mcp_configs(r.mcp_servers);
        if (!servers) co_return std::move(servers).error();
        auto session = co_await sessions_.load(r.session_id, std::move(*servers));
        if (!session) co_return std::move(session).error();
        if ((*session)->info().cwd != r.cwd) {
          log::info("session {}: loaded with cwd {}, stored cwd {} is kept", r.session_id, r.cwd,
                    (*session)->info().cwd);
        }
        // The whole stored history, as notifications, before the answer (ACP session/load).
        auto events = co_await sessions_.events(r.session_id, 0, 0);
        if (!events) co_return std::move(events).error();
        frontend_->replay(r.session_id, *events);
        (*session)->attach(frontend_);
        asio::post((*session)->strand(), [s = *session] { s->announce_commands(); });
        acp::LoadSessionResponse response;
        response.modes = mode_state(**session);
        response.config_options = config_options(**session);
        response.meta = project_trust_meta(**session);
        co_return response;
      });

  peer_.on_request_async<acp::ResumeSessionRequest, acp::ResumeSessionResponse>(
      std::string(acp::method::kSessionResume),
      [this](acp::ResumeSessionRequest r, Token) -> asio::awaitable<Result<acp::ResumeSessionResponse>> {
        auto servers = mcp_configs(r.mcp_servers);
        if (!servers) co_return std::move(servers).error();
        auto session = co_await sessions_.load(r.session_id, std::move(*servers));
        if (!session) co_return std::move(session).error();
        (*session)->attach(frontend_);
        acp::ResumeSessionResponse response;
        response.modes = mode_state(**session);
        response.config_options = config_options(**session);
        response.meta = project_trust_meta(**session);
        co_return response;
      });

  peer_.on_request_async<acp::ListSessionsRequest, acp::ListSessionsResponse>(
      std::string(acp::method::kSessionList),
      [this](acp::ListSessionsRequest r, Token) -> asio::awaitable<Result<acp::ListSessionsResponse>> {
        auto page = co_await sessions_.list(r.cwd, r.cursor);
        if (!page) co_return std::move(page).error();
        acp::ListSessionsResponse response;
        for (const auto& s : page->sessions) {
          acp::SessionInfo info;
          info.session_id = s.id;
          info.cwd = s.cwd;
          info.additional_directories = s.additional_dirs;
          info.title = s.title;
          info.updated_at = iso8601(s.updated_at_ms);
          response.sessions.push_back(std::move(info));
        }
        response.next_cursor = page->next_cursor;
        co_return response;
      });

  peer_.on_request<acp::CloseSessionRequest, acp::CloseSessionResponse>(
      std::string(acp::method::kSessionClose),
      [this](const acp::CloseSessionRequest& r) -> Result<acp::CloseSessionResponse> {
        if (auto closed = sessions_.close(r.session_id); !closed) return std::move(closed).error();
        return acp::CloseSessionResponse{};
      });

  peer_.on_request_async<acp::DeleteSessionRequest, acp::DeleteSessionResponse>(
      std::string(acp::method::kSessionDelete),
      [this](acp::DeleteSessionRequest r, Token) -> asio::awaitable<Result<acp::DeleteSessionResponse>> {
        auto removed = co_await sessions_.remove(r.session_id);
        if (!removed) co_return std::move(removed).error();
        co_return acp::DeleteSessionResponse{};
      });

  peer_.on_request_async<acp::SetSessionModeRequest, acp::SetSessionModeResponse>(
      std::string(acp::method::kSessionSetMode),
      [this](acp::SetSessionModeRequest r, Token) -> asio::awaitable<Result<acp::SetSessionModeResponse>> {
        auto session = sessions_.find(r.session_id);
        if (!session) co_return session_not_open(r.session_id);
        auto mode = core::parse_permission_mode(r.mode_id);
        if (!mode) {
          co_return Error(
              Errc::invalid_argument,
              fmt::format("params.modeId: unknown mode \"{}\" (default, acceptEdits, plan, bypass)", r.mode_id));
        }
        if (auto set = co_await session->set_mode(*mode); !set) co_return std::move(set).error();
        co_return acp::SetSessionModeResponse{};
      });

  peer_.on_request_async<acp::SetSessionConfigOptionRequest, acp::SetSessionConfigOptionResponse>(
      std::string(acp::method::kSessionSetConfigOption),
      [this](acp::SetSessionConfigOptionRequest r,
             Token) -> asio::awaitable<Result<acp::SetSessionConfigOptionResponse>> {
        auto session = sessions_.find(r.session_id);
        if (!session) co_return session_not_open(r.session_id);
        if (r.config_id != "model") {
          co_return Error(Errc::invalid_argument,
                          fmt::format("params.configId: unknown option \"{}\" (agentd offers: model)", r.config_id));
        }
        const auto* value = std::get_if<std::string>(&r.value);
        if (value == nullptr) co_return Error(Errc::invalid_argument, "params.value: the model option takes a string");
        if (auto set = co_await session->set_model(*value); !set) co_return std::move(set).error();
        co_return acp::SetSessionConfigOptionResponse{config_options(*session), {}};
      });

  // session/prompt is answered when its turn ends, which may be long after: the turn runs in our task
  // group, and a $/cancel_request for the prompt cancels the turn (answered `cancelled`, not an error).
  peer_.on_request_raw(std::string(acp::method::kSessionPrompt), [this](const Json& params,
                                                                        protocol::Responder responder) {
    auto request = support::read_json<acp::PromptRequest>(params, "params");
    if (!request) {
      responder.fail(protocol::RpcError{protocol::error_code::kInvalidParams, request.error().message(), std::nullopt});
      return;
    }
    auto session = sessions_.find(request->session_id);
    if (!session) {
      responder.fail(session_not_open(request->session_id));
      return;
    }
    auto input = prompt_input(request->prompt);
    if (!input) {
      responder.fail(protocol::RpcError{protocol::error_code::kInvalidParams, input.error().message(), std::nullopt});
      return;
    }
    prompts_.spawn(
        [](std::shared_ptr<core::Session> s, core::PromptInput in, protocol::Responder r) -> asio::awaitable<void> {
          support::CancelSource source(r.cancel_token());
          CancelToken token = source.token();
          auto outcome = co_await s->prompt(std::move(in), std::move(token));
          if (!outcome) {
            r.fail(outcome.error());
            co_return;
          }
          acp::PromptResponse response;
          acp::parse(core::stop_reason_id(outcome->stop_reason), response.stop_reason);
          Json meta = Json::object();
          meta["turnId"] = outcome->turn_id;
          response.meta = agentd_meta(std::move(meta));
          r.answer(Result<acp::PromptResponse>(std::move(response)));
        }(std::move(session), std::move(*input), std::move(responder)),
        "session/prompt");
  });

  peer_.on_notification<acp::CancelNotification>(std::string(acp::method::kSessionCancel),
                                                 [this](const acp::CancelNotification& n) {
                                                   if (auto session = sessions_.find(n.session_id)) {
                                                     session->cancel();
                                                   } else {
                                                     log::warn("session/cancel for unknown session {}", n.session_id);
                                                   }
                                                 });

  // ---- agentd extensions ----
  peer_.on_request_async<TraceGetParams, Json>(
      "_agentd/trace/get", [this](TraceGetParams p, Token) -> asio::awaitable<Result<Json>> {
        std::string turn = p.turn_id.value_or("");
        if (turn.empty()) {
          auto session = sessions_.find(p.session_id);
          if (!session) co_return session_not_open(p.session_id);
          turn = session->last_turn_id();
          if (turn.empty()) co_return Error(Errc::not_found, "the session has no turns yet");
        }
        auto spans = co_await sessions_.spans(turn);
        if (!spans) co_return std::move(spans).error();
        if (spans->empty()) co_return Error(Errc::not_found, fmt::format("no trace for turn \"{}\"", turn));
        Json result = Json::object();
        result["turnId"] = turn;
        result["spans"] = span_tree(*spans);
        co_return result;
      });

  peer_.on_request<SessionParams, Json>("_agentd/cost/get", [this](const SessionParams& p) -> Result<Json> {
    auto session = sessions_.find(p.session_id);
    if (!session) return session_not_open(p.session_id);
    Json result = Json::object();
    result["model"] = session->model_spec();
    result["priceTable"] = core::model::kPriceTableVersion;
    result["session"] = ledger_json(session->cost());
    result["lastTurn"] = ledger_json(session->last_turn_cost());
    return result;
  });

  peer_.on_request_async<SessionParams, Json>(
      "_agentd/permissions/list", [this](SessionParams p, Token) -> asio::awaitable<Result<Json>> {
        auto session = sessions_.find(p.session_id);
        if (!session) co_return session_not_open(p.session_id);
        auto rules = co_await session->permission_rules();
        Json result = Json::object();
        result["project"] = session->info().cwd;
        result["mode"] = std::string(core::permission_mode_id(session->mode()));
        result["headless"] = std::string(core::verdict_name(session->settings().headless));
        result["rules"] = rules_json(rules);
        co_return result;
      });

  peer_.on_request_async<RevokeParams, Json>("_agentd/permissions/revoke",
                                             [this](RevokeParams p, Token) -> asio::awaitable<Result<Json>> {
                                               auto session = sessions_.find(p.session_id);
                                               if (!session) co_return session_not_open(p.session_id);
                                               auto revoked = co_await session->revoke_approval(p.approval_id);
                                               if (!revoked) co_return std::move(revoked).error();
                                               co_return Json::object();
                                             });

  // The audit is read from storage, not from an open session: it outlives deleted sessions, so an
  // unknown sessionId is an empty list, not an error.
  peer_.on_request_async<AuditParams, Json>(
      "_agentd/permissions/audit", [this](AuditParams p, Token) -> asio::awaitable<Result<Json>> {
        auto records = co_await sessions_.permission_audit(std::move(p.session_id), static_cast<std::size_t>(p.limit));
        if (!records) co_return std::move(records).error();
        co_return audit_json(*records);
      });

  peer_.on_request_async<ReplayParams, Json>(
      "_agentd/events/replay", [this](ReplayParams p, Token) -> asio::awaitable<Result<Json>> {
        auto events = co_await sessions_.events(p.session_id, p.since, static_cast<int>(p.limit));
        if (!events) co_return std::move(events).error();
        auto session = sessions_.find(p.session_id);
        Json list = Json::array();
        std::int64_t last = p.since;
        for (const auto& e : *events) {
          last = e.seq;
          auto update = to_update(e.event, session.get(), true);
          if (!update) continue;
          auto parsed = support::parse_json(notification_json(p.session_id, e.seq, std::move(*update)));
          if (parsed) list.push_back(std::move(*parsed));
        }
        Json result = Json::object();
        result["events"] = std::move(list);
        result["lastSeq"] = last;
        co_return result;
      });

  peer_.on_request_async<PreviewParams, Json>(
      "_agentd/context/preview", [this](PreviewParams p, Token cancel) -> asio::awaitable<Result<Json>> {
        auto session = sessions_.find(p.session_id);
        if (!session) co_return session_not_open(p.session_id);
        co_return co_await session->preview_context(std::move(p.input), std::move(cancel));
      });

  // Trust a project's loosening settings as its config file has them now (daemon/trust.h); sessions
  // started afterwards get them. {cwd, trusted: false} withdraws the trust.
  peer_.on_request<ProjectTrustParams, Json>("_agentd/project/trust", [](const ProjectTrustParams& p) -> Result<Json> {
    auto state = trust_project(p.cwd, p.trusted);
    if (!state) return std::move(state).error();
    Json result = Json::object();
    result["project"] = state->project;
    result["file"] = state->file;
    result["trusted"] = state->trusted;
    result["digest"] = state->digest;
    Json settings = Json::array();
    for (const auto& l : state->loosenings) settings.push_back(Json(l.text()));
    result["settings"] = std::move(settings);
    result["trustFile"] = state->trust_file;
    log::info("project {} {} (settings digest {})", state->project, state->trusted ? "trusted" : "no longer trusted",
              state->digest);
    return result;
  });

  peer_.on_request_async<VerifyPlanParams, Json>("_agentd/verify/plan",
                                                 [this](VerifyPlanParams p, Token) -> asio::awaitable<Result<Json>> {
                                                   auto session = sessions_.find(p.session_id);
                                                   if (!session) co_return session_not_open(p.session_id);
                                                   co_return co_await session->verification_plan(std::move(p.files));
                                                 });

  peer_.on_request_async<FactAddParams, Json>("_agentd/memory/add",
                                              [this](FactAddParams p, Token) -> asio::awaitable<Result<Json>> {
                                                auto session = sessions_.find(p.session_id);
                                                if (!session) co_return session_not_open(p.session_id);
                                                auto fact = co_await session->remember(std::move(p.text));
                                                if (!fact) co_return std::move(fact).error();
                                                Json result = fact_json(*fact);
                                                result["project"] = session->project();
                                                co_return result;
                                              });

  peer_.on_request_async<SessionParams, Json>("_agentd/memory/list",
                                              [this](SessionParams p, Token) -> asio::awaitable<Result<Json>> {
                                                auto session = sessions_.find(p.session_id);
                                                if (!session) co_return session_not_open(p.session_id);
                                                auto facts = co_await session->facts();
                                                if (!facts) co_return std::move(facts).error();
                                                Json list = Json::array();
                                                for (const auto& f : *facts) list.push_back(fact_json(f));
                                                Json result = Json::object();
                                                result["project"] = session->project();
                                                result["facts"] = std::move(list);
                                                co_return result;
                                              });

  peer_.on_request_async<FactDeleteParams, Json>("_agentd/memory/delete",
                                                 [this](FactDeleteParams p, Token) -> asio::awaitable<Result<Json>> {
                                                   auto session = sessions_.find(p.session_id);
                                                   if (!session) co_return session_not_open(p.session_id);
                                                   auto removed = co_await session->forget(p.id);
                                                   if (!removed) co_return std::move(removed).error();
                                                   co_return Json::object();
                                                 });

  peer_.on_request_async<SessionParams, Json>("_agentd/checkpoints/list",
                                              [this](SessionParams p, Token) -> asio::awaitable<Result<Json>> {
                                                auto session = sessions_.find(p.session_id);
                                                if (!session) co_return session_not_open(p.session_id);
                                                auto checkpoints = co_await session->checkpoints();
                                                if (!checkpoints) co_return std::move(checkpoints).error();
                                                co_return checkpoints_json(*checkpoints);
                                              });

  peer_.on_request_async<CheckpointRestoreParams, Json>(
      "_agentd/checkpoints/restore", [this](CheckpointRestoreParams p, Token) -> asio::awaitable<Result<Json>> {
        auto session = sessions_.find(p.session_id);
        if (!session) co_return session_not_open(p.session_id);
        auto report = co_await session->restore_checkpoint(std::move(p.turn_id));
        if (!report) co_return std::move(report).error();
        co_return restore_json(*report);
      });
}

AcpServer::~AcpServer() { frontend_->disconnect(); }

void AcpServer::cancel_all() {
  sessions_.cancel_all();
  prompts_.cancel_all();
}

asio::awaitable<void> AcpServer::join() { co_await prompts_.join(); }

Result<acp::InitializeResponse> AcpServer::initialize(const acp::InitializeRequest& request) {
  client_ = request;
  frontend_->set_client(request.client_capabilities);
  if (request.client_info) {
    log::info("client {} {} (ACP version {})", request.client_info->name, request.client_info->version,
              request.protocol_version);
  }
  acp::InitializeResponse response;
  response.protocol_version = acp::negotiate_version(request.protocol_version);
  // Capabilities are what works today, nothing more: no images or audio, no MCP yet (servers offered
  // in session/new are logged and ignored until the MCP issue lands).
  response.agent_capabilities.load_session = true;
  response.agent_capabilities.prompt.embedded_context = true;
  response.agent_capabilities.session.list = true;
  response.agent_capabilities.session.resume = true;
  response.agent_capabilities.session.close = true;
  response.agent_capabilities.session.delete_session = true;
  response.agent_capabilities.session.additional_directories = true;
  response.agent_info = acp::Implementation{"agentd", "agentd", support::kVersion};
  return response;
}

}  // namespace agentd::daemon
