#include "daemon/acp_updates.h"

#include <ctime>
#include <variant>

#include <fmt/format.h>

#include "protocol/acp/ext.h"

namespace agentd::daemon {

namespace acp = protocol::acp;
namespace ext = protocol::acp::ext;

namespace {

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

struct UpdateVisitor {
  const core::Session* session;
  bool replay;

  std::optional<acp::SessionUpdate> operator()(const core::UserMessageEvent& e) const {
    if (!replay) return std::nullopt;
    return acp::UserMessageChunk{text_block(e.text), std::nullopt, {}};
  }
  std::optional<acp::SessionUpdate> operator()(const core::UserImageEvent& e) const {
    if (!replay) return std::nullopt;
    if (e.data.empty()) {
      return acp::UserMessageChunk{
          text_block(fmt::format("[an image ({}, {} bytes) that is no longer stored]", e.media_type, e.bytes)),
          std::nullopt,
          {}};
    }
    return acp::UserMessageChunk{acp::ImageContent{e.data, e.media_type, std::nullopt, {}, {}}, std::nullopt, {}};
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
    // The editor's live terminal card; it stays in the content when the call ends.
    if (e.terminal_id) content.emplace(content.begin(), acp::Terminal{*e.terminal_id, {}});
    if (!content.empty()) update.content = std::move(content);
    if (!e.locations.empty()) update.locations = tool_locations(e.locations);
    if (e.meta.is_object() && e.meta.size() > 0) update.meta = ext::agentd_meta(e.meta);
    return update;
  }
  std::optional<acp::SessionUpdate> operator()(const core::UsageEvent& e) const {
    acp::UsageUpdate update;
    update.used = e.used;
    update.size = e.size;
    if (e.session_cost_usd) update.cost = acp::Cost{*e.session_cost_usd, "USD", {}};
    update.meta = ext::to_meta(ext::UsageMeta{e.call_usage.input_tokens, e.call_usage.output_tokens,
                                              e.call_usage.cache_read_tokens, e.call_usage.cache_write_tokens, e.model,
                                              !e.session_cost_usd});
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
  std::optional<acp::SessionUpdate> operator()(const core::ModelChangedEvent& /*e*/) const {
    if (session == nullptr) return std::nullopt;
    return acp::ConfigOptionUpdate{config_options(*session), {}};
  }
  // ACP has no update for compaction: the user reads it as agent text, a client that knows finds the
  // detail in _meta.agentd.compaction.
  std::optional<acp::SessionUpdate> operator()(const core::CompactionEvent& e) const {
    auto meta = ext::to_meta(ext::CompactionMeta{e.compaction_id, e.first_turn_id, e.last_turn_id, e.turns,
                                                 e.tokens_before, e.tokens_after, e.forced});
    return acp::AgentMessageChunk{text_block(e.text), std::nullopt, std::move(meta)};
  }
  std::optional<acp::SessionUpdate> operator()(const core::PlanEvent& e) const {
    acp::Plan plan;
    for (const auto& item : e.entries) {
      acp::PlanEntry entry;
      entry.content = item.content;
      switch (item.priority) {
        case tools::PlanPriority::high: entry.priority = acp::PlanEntryPriority::high; break;
        case tools::PlanPriority::medium: entry.priority = acp::PlanEntryPriority::medium; break;
        case tools::PlanPriority::low: entry.priority = acp::PlanEntryPriority::low; break;
      }
      switch (item.status) {
        case tools::PlanStatus::pending: entry.status = acp::PlanEntryStatus::pending; break;
        case tools::PlanStatus::in_progress: entry.status = acp::PlanEntryStatus::in_progress; break;
        case tools::PlanStatus::completed: entry.status = acp::PlanEntryStatus::completed; break;
      }
      plan.entries.push_back(std::move(entry));
    }
    return plan;
  }
};

}  // namespace

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

std::vector<acp::ToolCallContent> tool_content(const std::optional<std::string>& text,
                                               const std::vector<tools::ToolDiff>& diffs) {
  std::vector<acp::ToolCallContent> content;
  if (text && !text->empty()) content.emplace_back(acp::ToolCallContentBlock{text_block(*text), {}});
  for (const auto& d : diffs) {
    // An excerpt of a large file says where it starts; ACP's diff content otherwise means whole texts.
    support::Json meta;
    if (d.first_line > 0) {
      support::Json excerpt = support::Json::object();
      excerpt.set("firstLine", d.first_line);
      excerpt.set("cut", d.cut);
      support::Json agentd = support::Json::object();
      agentd.set("excerpt", std::move(excerpt));
      meta = support::Json::object();
      meta.set("agentd", std::move(agentd));
    }
    content.emplace_back(acp::Diff{d.path, d.old_text, d.new_text, std::move(meta)});
  }
  return content;
}

std::vector<acp::ToolCallLocation> tool_locations(const std::vector<std::string>& paths) {
  std::vector<acp::ToolCallLocation> locations;
  locations.reserve(paths.size());
  for (const auto& p : paths) locations.push_back(acp::ToolCallLocation{p, std::nullopt, {}});
  return locations;
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

support::Json project_trust_meta(const core::Session& session) {
  const auto& untrusted = session.settings().untrusted;
  if (!untrusted) return support::Json();
  return ext::to_meta(ext::ProjectTrustMeta{false, untrusted->project, untrusted->file, untrusted->digest,
                                            untrusted->ignored, untrusted->message});
}

std::optional<acp::SessionUpdate> to_update(const core::EngineEvent& event, const core::Session* session, bool replay) {
  return std::visit(UpdateVisitor{session, replay}, event);
}

acp::SessionNotification notification(const std::string& session_id, std::int64_t seq, acp::SessionUpdate update) {
  acp::SessionNotification notification;
  notification.session_id = session_id;
  notification.update = std::move(update);
  notification.meta = ext::to_meta(ext::UpdateMeta{seq});
  return notification;
}

std::string iso8601(std::int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, unix_ms % 1000);
}

}  // namespace agentd::daemon
