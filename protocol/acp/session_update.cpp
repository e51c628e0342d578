#include "protocol/acp/session_update.h"

#include <array>

#include "protocol/acp/wire_util.h"

namespace agentd::protocol::acp {

using support::Json;
using support::JsonIn;
using support::JsonWriter;

namespace {

constexpr std::array<std::string_view, 10> kToolKinds = {"read",    "edit",  "delete", "move",        "search",
                                                         "execute", "think", "fetch",  "switch_mode", "other"};
constexpr std::array<std::string_view, 4> kToolCallStatuses = {"pending", "in_progress", "completed", "failed"};
constexpr std::array<std::string_view, 3> kPlanPriorities = {"high", "medium", "low"};
constexpr std::array<std::string_view, 3> kPlanStatuses = {"pending", "in_progress", "completed"};
constexpr std::array<std::string_view, 3> kToolCallContentTypes = {"content", "diff", "terminal"};
// In SessionUpdate's alternative order.
constexpr std::array<std::string_view, 11> kUpdateNames = {"user_message_chunk",
                                                           "agent_message_chunk",
                                                           "agent_thought_chunk",
                                                           "tool_call",
                                                           "tool_call_update",
                                                           "plan",
                                                           "available_commands_update",
                                                           "current_mode_update",
                                                           "config_option_update",
                                                           "session_info_update",
                                                           "usage_update"};
static_assert(std::variant_size_v<SessionUpdate> == kUpdateNames.size());
static_assert(std::variant_size_v<ToolCallContent> == kToolCallContentTypes.size());

// ---- each update's fields, without the sessionUpdate tag ----

template <class Chunk>
bool read_chunk(const JsonIn& in, Chunk& out) {
  if (!in.required("content", out.content)) return false;
  detail::read_lenient(in, "messageId", out.message_id);
  detail::read_meta(in, out.meta);
  return true;
}

template <class Chunk>
void write_chunk(JsonWriter& w, const Chunk& v) {
  w.member("content", v.content);
  w.optional_member("messageId", v.message_id);
  detail::write_meta(w, v.meta);
}

bool read_update(const JsonIn& in, UserMessageChunk& out) { return read_chunk(in, out); }
bool read_update(const JsonIn& in, AgentMessageChunk& out) { return read_chunk(in, out); }
bool read_update(const JsonIn& in, AgentThoughtChunk& out) { return read_chunk(in, out); }
void write_update(JsonWriter& w, const UserMessageChunk& v) { write_chunk(w, v); }
void write_update(JsonWriter& w, const AgentMessageChunk& v) { write_chunk(w, v); }
void write_update(JsonWriter& w, const AgentThoughtChunk& v) { write_chunk(w, v); }

// Tool calls come from the agent: the schema reads everything but the id and title leniently.
bool read_update(const JsonIn& in, ToolCall& out) {
  if (!in.required("toolCallId", out.tool_call_id) || !in.required("title", out.title)) return false;
  detail::read_lenient(in, "name", out.name);
  std::optional<ToolKind> kind;
  detail::read_lenient(in, "kind", kind);
  out.kind = kind.value_or(ToolKind::other);
  std::optional<ToolCallStatus> status;
  detail::read_lenient(in, "status", status);
  out.status = status.value_or(ToolCallStatus::pending);
  detail::read_lenient_items(in, "content", out.content);
  detail::read_lenient_items(in, "locations", out.locations);
  detail::read_lenient(in, "rawInput", out.raw_input);
  detail::read_lenient(in, "rawOutput", out.raw_output);
  detail::read_meta(in, out.meta);
  return true;
}

void write_update(JsonWriter& w, const ToolCall& v) {
  w.member("toolCallId", v.tool_call_id).member("title", v.title);
  w.optional_member("name", v.name);
  w.member("kind", v.kind).member("status", v.status);
  detail::write_nonempty(w, "content", v.content);
  detail::write_nonempty(w, "locations", v.locations);
  w.optional_member("rawInput", v.raw_input);
  w.optional_member("rawOutput", v.raw_output);
  detail::write_meta(w, v.meta);
}

bool read_update(const JsonIn& in, ToolCallUpdate& out) {
  if (!in.required("toolCallId", out.tool_call_id)) return false;
  detail::read_lenient(in, "title", out.title);
  detail::read_lenient(in, "name", out.name);
  detail::read_lenient(in, "kind", out.kind);
  detail::read_lenient(in, "status", out.status);
  detail::read_lenient_items(in, "content", out.content);
  detail::read_lenient_items(in, "locations", out.locations);
  detail::read_lenient(in, "rawInput", out.raw_input);
  detail::read_lenient(in, "rawOutput", out.raw_output);
  detail::read_meta(in, out.meta);
  return true;
}

void write_update(JsonWriter& w, const ToolCallUpdate& v) {
  w.member("toolCallId", v.tool_call_id);
  w.optional_member("title", v.title);
  w.optional_member("name", v.name);
  w.optional_member("kind", v.kind);
  w.optional_member("status", v.status);
  w.optional_member("content", v.content);
  w.optional_member("locations", v.locations);
  w.optional_member("rawInput", v.raw_input);
  w.optional_member("rawOutput", v.raw_output);
  detail::write_meta(w, v.meta);
}

bool read_update(const JsonIn& in, Plan& out) {
  if (!in.required("entries", out.entries)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void write_update(JsonWriter& w, const Plan& v) {
  w.member("entries", v.entries);
  detail::write_meta(w, v.meta);
}

bool read_update(const JsonIn& in, AvailableCommandsUpdate& out) {
  if (!in.required("availableCommands", out.available_commands)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void write_update(JsonWriter& w, const AvailableCommandsUpdate& v) {
  w.member("availableCommands", v.available_commands);
  detail::write_meta(w, v.meta);
}

bool read_update(const JsonIn& in, CurrentModeUpdate& out) {
  if (!in.required("currentModeId", out.current_mode_id)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void write_update(JsonWriter& w, const CurrentModeUpdate& v) {
  w.member("currentModeId", v.current_mode_id);
  detail::write_meta(w, v.meta);
}

bool read_update(const JsonIn& in, ConfigOptionUpdate& out) {
  if (!in.required("configOptions", out.config_options)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void write_update(JsonWriter& w, const ConfigOptionUpdate& v) {
  w.member("configOptions", v.config_options);
  detail::write_meta(w, v.meta);
}

// Absent stays unchanged; null means "clear"; a string sets it.
bool read_clearable(const JsonIn& in, std::string_view key, std::optional<std::optional<std::string>>& out) {
  out.reset();
  const Json* member = in.json().find(key);
  if (member == nullptr) return true;
  if (member->is_null()) {
    out.emplace();
    return true;
  }
  std::string value;
  if (!in.required(key, value)) return false;
  out.emplace(std::move(value));
  return true;
}

bool read_update(const JsonIn& in, SessionInfoUpdate& out) {
  if (!read_clearable(in, "title", out.title) || !read_clearable(in, "updatedAt", out.updated_at)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void write_update(JsonWriter& w, const SessionInfoUpdate& v) {
  w.optional_member("title", v.title);
  w.optional_member("updatedAt", v.updated_at);
  detail::write_meta(w, v.meta);
}

bool read_update(const JsonIn& in, UsageUpdate& out) {
  if (!in.required("used", out.used) || !in.required("size", out.size)) return false;
  detail::read_lenient(in, "cost", out.cost);
  detail::read_meta(in, out.meta);
  return true;
}

void write_update(JsonWriter& w, const UsageUpdate& v) {
  w.member("used", v.used).member("size", v.size);
  w.optional_member("cost", v.cost);
  detail::write_meta(w, v.meta);
}

template <class Variant, std::size_t I = 0, class Read>
bool read_alternative(const JsonIn& in, std::size_t index, Variant& out, Read read) {
  if constexpr (I < std::variant_size_v<Variant>) {
    if (index != I) return read_alternative<Variant, I + 1>(in, index, out, read);
    std::variant_alternative_t<I, Variant> value{};
    if (!read(in, value)) return false;
    out = std::move(value);
    return true;
  } else {
    return false;
  }
}

// ---- tool call content, without the type tag ----

bool read_tool_content(const JsonIn& in, ToolCallContentBlock& out) {
  if (!in.required("content", out.content)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

bool read_tool_content(const JsonIn& in, Diff& out) {
  if (!in.required("path", out.path) || !in.required("newText", out.new_text)) return false;
  detail::read_lenient(in, "oldText", out.old_text);
  detail::read_meta(in, out.meta);
  return true;
}

bool read_tool_content(const JsonIn& in, Terminal& out) {
  if (!in.required("terminalId", out.terminal_id)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void write_tool_content(JsonWriter& w, const ToolCallContentBlock& v) { w.member("content", v.content); }

void write_tool_content(JsonWriter& w, const Diff& v) {
  w.member("path", v.path);
  w.optional_member("oldText", v.old_text);
  w.member("newText", v.new_text);
}

void write_tool_content(JsonWriter& w, const Terminal& v) { w.member("terminalId", v.terminal_id); }

}  // namespace

std::string_view session_update_name(const SessionUpdate& update) noexcept { return kUpdateNames[update.index()]; }

std::string_view name(ToolKind v) noexcept { return detail::enum_name(v, kToolKinds); }
std::string_view name(ToolCallStatus v) noexcept { return detail::enum_name(v, kToolCallStatuses); }
std::string_view name(PlanEntryPriority v) noexcept { return detail::enum_name(v, kPlanPriorities); }
std::string_view name(PlanEntryStatus v) noexcept { return detail::enum_name(v, kPlanStatuses); }
bool parse(std::string_view text, ToolKind& out) noexcept { return detail::parse_enum(text, kToolKinds, out); }
bool parse(std::string_view text, ToolCallStatus& out) noexcept {
  return detail::parse_enum(text, kToolCallStatuses, out);
}
bool parse(std::string_view text, PlanEntryPriority& out) noexcept {
  return detail::parse_enum(text, kPlanPriorities, out);
}
bool parse(std::string_view text, PlanEntryStatus& out) noexcept {
  return detail::parse_enum(text, kPlanStatuses, out);
}

bool from_json(const JsonIn& in, ToolKind& out) { return detail::read_enum(in, kToolKinds, "tool kind", out); }
bool from_json(const JsonIn& in, ToolCallStatus& out) {
  return detail::read_enum(in, kToolCallStatuses, "tool call status", out);
}
bool from_json(const JsonIn& in, PlanEntryPriority& out) {
  return detail::read_enum(in, kPlanPriorities, "plan entry priority", out);
}
bool from_json(const JsonIn& in, PlanEntryStatus& out) {
  return detail::read_enum(in, kPlanStatuses, "plan entry status", out);
}
void to_json(JsonWriter& w, ToolKind v) { w.value(name(v)); }
void to_json(JsonWriter& w, ToolCallStatus v) { w.value(name(v)); }
void to_json(JsonWriter& w, PlanEntryPriority v) { w.value(name(v)); }
void to_json(JsonWriter& w, PlanEntryStatus v) { w.value(name(v)); }

bool from_json(const JsonIn& in, ToolCallContent& out) {
  std::string type;
  if (!in.required("type", type)) return false;
  for (std::size_t i = 0; i < kToolCallContentTypes.size(); ++i) {
    if (kToolCallContentTypes[i] == type) {
      return read_alternative(in, i, out,
                              [](const JsonIn& item, auto& value) { return read_tool_content(item, value); });
    }
  }
  return detail::unknown_tag(in["type"], "tool call content type", type);
}

void to_json(JsonWriter& w, const ToolCallContent& v) {
  w.begin_object().member("type", kToolCallContentTypes[v.index()]);
  std::visit(
      [&w](const auto& content) {
        write_tool_content(w, content);
        detail::write_meta(w, content.meta);
      },
      v);
  w.end_object();
}

bool from_json(const JsonIn& in, ToolCallLocation& out) {
  if (!in.required("path", out.path)) return false;
  detail::read_lenient(in, "line", out.line);
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const ToolCallLocation& v) {
  w.begin_object().member("path", v.path);
  w.optional_member("line", v.line);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, ToolCallUpdate& out) { return read_update(in, out); }

void to_json(JsonWriter& w, const ToolCallUpdate& v) {
  w.begin_object();
  write_update(w, v);
  w.end_object();
}

bool from_json(const JsonIn& in, PlanEntry& out) {
  if (!in.required("content", out.content) || !in.required("priority", out.priority) ||
      !in.required("status", out.status)) {
    return false;
  }
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const PlanEntry& v) {
  w.begin_object().member("content", v.content).member("priority", v.priority).member("status", v.status);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, AvailableCommandInput& out) {
  if (!in.required("hint", out.hint)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const AvailableCommandInput& v) {
  w.begin_object().member("hint", v.hint);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, AvailableCommand& out) {
  if (!in.required("name", out.name) || !in.required("description", out.description)) return false;
  detail::read_lenient(in, "input", out.input);
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const AvailableCommand& v) {
  w.begin_object().member("name", v.name).member("description", v.description);
  w.optional_member("input", v.input);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, Cost& out) {
  if (!in.required("amount", out.amount) || !in.required("currency", out.currency)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const Cost& v) {
  w.begin_object().member("amount", v.amount).member("currency", v.currency);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, SessionUpdate& out) {
  std::string tag;
  if (!in.required("sessionUpdate", tag)) return false;
  for (std::size_t i = 0; i < kUpdateNames.size(); ++i) {
    if (kUpdateNames[i] == tag) {
      return read_alternative(in, i, out, [](const JsonIn& item, auto& value) { return read_update(item, value); });
    }
  }
  return detail::unknown_tag(in["sessionUpdate"], "session update", tag);
}

void to_json(JsonWriter& w, const SessionUpdate& v) {
  w.begin_object().member("sessionUpdate", session_update_name(v));
  std::visit([&w](const auto& update) { write_update(w, update); }, v);
  w.end_object();
}

bool from_json(const JsonIn& in, SessionNotification& out) {
  if (!in.required("sessionId", out.session_id) || !in.required("update", out.update)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const SessionNotification& v) {
  w.begin_object().member("sessionId", v.session_id).member("update", v.update);
  detail::write_meta(w, v.meta);
  w.end_object();
}

}  // namespace agentd::protocol::acp
