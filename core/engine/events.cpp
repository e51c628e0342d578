#include "core/engine/events.h"

#include <array>

#include <fmt/format.h>

namespace agentd::core {

using support::Errc;
using support::Error;
using support::Json;
using support::JsonIn;
using support::JsonWriter;

namespace {

constexpr support::EnumName<ToolCallStatus> kStatusNames[] = {
    {ToolCallStatus::pending, "pending"},
    {ToolCallStatus::in_progress, "in_progress"},
    {ToolCallStatus::completed, "completed"},
    {ToolCallStatus::failed, "failed"},
};
static_assert(support::names_every_value(kStatusNames, ToolCallStatus::failed));

std::optional<ToolCallStatus> parse_status(std::string_view name) {
  return support::enum_from_name<ToolCallStatus>(name);
}

void write_usage(JsonWriter& w, const model::Usage& u) {
  w.begin_object();
  w.member("input", u.input_tokens).member("output", u.output_tokens);
  w.member("cacheWrite", u.cache_write_tokens).member("cacheRead", u.cache_read_tokens);
  w.end_object();
}

model::Usage read_usage(const Json& j) {
  model::Usage u;
  auto get = [&](std::string_view key) -> std::uint64_t {
    const Json& v = j[key];
    return v.is_integer() ? v.as_uint64() : 0;
  };
  u.input_tokens = get("input");
  u.output_tokens = get("output");
  u.cache_write_tokens = get("cacheWrite");
  u.cache_read_tokens = get("cacheRead");
  return u;
}

struct PayloadWriter {
  JsonWriter& w;

  void operator()(const UserMessageEvent& e) const { w.member("text", e.text); }
  void operator()(const AgentTextEvent& e) const { w.member("text", e.text); }
  void operator()(const AgentThoughtEvent& e) const { w.member("text", e.text); }
  void operator()(const ToolCallStartedEvent& e) const {
    w.member("id", e.id).member("name", e.name).member("title", e.title);
    w.member("kind", tools::tool_kind_name(e.kind));
  }
  void operator()(const ToolCallUpdatedEvent& e) const {
    w.member("id", e.id);
    if (e.status) w.member("status", tool_call_status_name(*e.status));
    w.optional_member("title", e.title);
    if (e.raw_input) w.member("rawInput", *e.raw_input);
    w.optional_member("text", e.text);
    if (!e.diffs.empty()) {
      w.key("diffs").begin_array();
      for (const auto& d : e.diffs) {
        w.begin_object().member("path", d.path);
        w.optional_member("oldText", d.old_text);
        w.member("newText", d.new_text);
        if (d.first_line > 0) w.member("firstLine", d.first_line);
        if (d.cut) w.member("cut", true);
        w.end_object();
      }
      w.end_array();
    }
    if (!e.locations.empty()) w.member("locations", e.locations);
    if (e.meta.is_object() && e.meta.size() > 0) w.member("meta", e.meta);
    w.optional_member("terminalId", e.terminal_id);
  }
  void operator()(const UsageEvent& e) const {
    w.member("used", e.used).member("size", e.size);
    w.optional_member("sessionCostUsd", e.session_cost_usd);
    w.key("usage");
    write_usage(w, e.call_usage);
    w.member("model", e.model);
  }
  void operator()(const CommandsEvent& e) const {
    w.key("commands").begin_array();
    for (const auto& c : e.commands) {
      w.begin_object().member("name", c.name).member("description", c.description);
      w.optional_member("hint", c.input_hint);
      w.end_object();
    }
    w.end_array();
  }
  void operator()(const ModeChangedEvent& e) const { w.member("mode", e.mode); }
  void operator()(const ModelChangedEvent& e) const { w.member("model", e.model_spec); }
  void operator()(const CompactionEvent& e) const {
    w.member("text", e.text).member("id", e.compaction_id);
    w.member("firstTurn", e.first_turn_id).member("lastTurn", e.last_turn_id).member("turns", e.turns);
    w.member("tokensBefore", e.tokens_before).member("tokensAfter", e.tokens_after).member("forced", e.forced);
  }
  void operator()(const PlanEvent& e) const {
    w.key("entries").begin_array();
    for (const auto& item : e.entries) {
      w.begin_object().member("content", item.content).member("status", support::enum_name(item.status));
      w.member("priority", support::enum_name(item.priority)).end_object();
    }
    w.end_array();
  }
  void operator()(const UserImageEvent& e) const {
    w.member("mediaType", e.media_type).member("hash", e.hash).member("bytes", e.bytes);
  }
};

std::string string_or_empty(const Json& j) { return j.is_string() ? j.as_string() : std::string(); }

}  // namespace

std::span<const support::EnumName<ToolCallStatus>> enum_names(ToolCallStatus) noexcept { return kStatusNames; }

std::string_view tool_call_status_name(ToolCallStatus status) noexcept { return support::enum_name(status); }

std::string_view event_kind(const EngineEvent& event) noexcept {
  static constexpr std::array<std::string_view, std::variant_size_v<EngineEvent>> kKinds = {
      "user_message", "agent_text", "agent_thought", "tool_call", "tool_call_update", "usage", "commands",
      "mode",         "model",      "compaction",    "plan",      "user_image"};
  return kKinds[event.index()];
}

std::string event_payload_json(const EngineEvent& event) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  std::visit(PayloadWriter{w}, event);
  w.end_object();
  return out;
}

support::Result<EngineEvent> event_from_log(std::string_view kind, const Json& p) {
  if (!p.is_object()) return Error(Errc::parse_error, fmt::format("event {}: payload is not an object", kind));
  if (kind == "user_message") return EngineEvent(UserMessageEvent{string_or_empty(p["text"])});
  if (kind == "agent_text") return EngineEvent(AgentTextEvent{string_or_empty(p["text"])});
  if (kind == "agent_thought") return EngineEvent(AgentThoughtEvent{string_or_empty(p["text"])});
  if (kind == "tool_call") {
    return EngineEvent(ToolCallStartedEvent{string_or_empty(p["id"]), string_or_empty(p["name"]),
                                            string_or_empty(p["title"]),
                                            tools::parse_tool_kind(string_or_empty(p["kind"]))});
  }
  if (kind == "tool_call_update") {
    ToolCallUpdatedEvent e;
    e.id = string_or_empty(p["id"]);
    if (p["status"].is_string()) e.status = parse_status(p["status"].as_string());
    if (p["title"].is_string()) e.title = p["title"].as_string();
    if (p.contains("rawInput")) e.raw_input = p["rawInput"];
    if (p["text"].is_string()) e.text = p["text"].as_string();
    if (p["terminalId"].is_string()) e.terminal_id = p["terminalId"].as_string();
    if (p["diffs"].is_array()) {
      for (const Json& d : p["diffs"].as_array()) {
        tools::ToolDiff diff;
        diff.path = string_or_empty(d["path"]);
        if (d["oldText"].is_string()) diff.old_text = d["oldText"].as_string();
        diff.new_text = string_or_empty(d["newText"]);
        if (d["firstLine"].is_integer() && d["firstLine"].as_int64() > 0)
          diff.first_line = static_cast<std::size_t>(d["firstLine"].as_int64());
        diff.cut = d["cut"].is_bool() && d["cut"].as_bool();
        e.diffs.push_back(std::move(diff));
      }
    }
    if (p["locations"].is_array()) {
      for (const Json& l : p["locations"].as_array()) e.locations.push_back(string_or_empty(l));
    }
    if (p["meta"].is_object()) e.meta = p["meta"];
    return EngineEvent(std::move(e));
  }
  if (kind == "usage") {
    UsageEvent e;
    e.used = p["used"].is_integer() ? p["used"].as_uint64() : 0;
    e.size = p["size"].is_integer() ? p["size"].as_uint64() : 0;
    if (p["sessionCostUsd"].is_number()) e.session_cost_usd = p["sessionCostUsd"].as_double();
    e.call_usage = read_usage(p["usage"]);
    e.model = string_or_empty(p["model"]);
    return EngineEvent(std::move(e));
  }
  if (kind == "commands") {
    CommandsEvent e;
    if (p["commands"].is_array()) {
      for (const Json& c : p["commands"].as_array()) {
        CommandInfo info{string_or_empty(c["name"]), string_or_empty(c["description"]), std::nullopt};
        if (c["hint"].is_string()) info.input_hint = c["hint"].as_string();
        e.commands.push_back(std::move(info));
      }
    }
    return EngineEvent(std::move(e));
  }
  if (kind == "mode") return EngineEvent(ModeChangedEvent{string_or_empty(p["mode"])});
  if (kind == "model") return EngineEvent(ModelChangedEvent{string_or_empty(p["model"])});
  if (kind == "compaction") {
    CompactionEvent e;
    auto count = [&](std::string_view key) -> std::uint64_t { return p[key].is_integer() ? p[key].as_uint64() : 0; };
    e.text = string_or_empty(p["text"]);
    e.compaction_id = p["id"].is_integer() ? p["id"].as_int64() : 0;
    e.first_turn_id = string_or_empty(p["firstTurn"]);
    e.last_turn_id = string_or_empty(p["lastTurn"]);
    e.turns = count("turns");
    e.tokens_before = count("tokensBefore");
    e.tokens_after = count("tokensAfter");
    e.forced = p["forced"].is_bool() && p["forced"].as_bool();
    return EngineEvent(std::move(e));
  }
  if (kind == "plan") {
    PlanEvent e;
    if (p["entries"].is_array()) {
      for (const Json& entry : p["entries"].as_array()) {
        tools::PlanItem item;
        item.content = string_or_empty(entry["content"]);
        item.status = support::enum_from_name<tools::PlanStatus>(string_or_empty(entry["status"]))
                          .value_or(tools::PlanStatus::pending);
        item.priority = support::enum_from_name<tools::PlanPriority>(string_or_empty(entry["priority"]))
                            .value_or(tools::PlanPriority::medium);
        e.entries.push_back(std::move(item));
      }
    }
    return EngineEvent(std::move(e));
  }
  if (kind == "user_image") {
    UserImageEvent e;
    e.media_type = string_or_empty(p["mediaType"]);
    e.hash = string_or_empty(p["hash"]);
    e.bytes = p["bytes"].is_integer() ? p["bytes"].as_uint64() : 0;
    return EngineEvent(std::move(e));
  }
  return Error(Errc::parse_error, fmt::format("unknown event kind \"{}\" in the log", kind));
}

void rename_event_refs(std::string_view kind, Json& payload, const LogRenames& renames) {
  if (kind != "compaction" || !payload.is_object()) return;
  for (const char* key : {"firstTurn", "lastTurn"}) {
    if (!payload[key].is_string()) continue;
    if (auto it = renames.turns.find(payload[key].as_string()); it != renames.turns.end()) payload.set(key, it->second);
  }
  if (payload["id"].is_integer()) {
    if (auto it = renames.compactions.find(payload["id"].as_int64()); it != renames.compactions.end()) {
      payload.set("id", it->second);
    }
  }
}

}  // namespace agentd::core
