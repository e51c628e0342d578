#include "core/engine/history.h"

#include <fmt/format.h>

#include "core/model/image.h"
#include "core/support/enum_names.h"
#include "core/support/json_writer.h"

namespace agentd::core {

using support::Errc;
using support::Error;
using support::Json;
using support::JsonWriter;

namespace {

struct BlockWriter {
  JsonWriter& w;
  void operator()(const model::TextBlock& b) const {
    w.begin_object().member("type", "text").member("text", b.text).end_object();
  }
  void operator()(const model::ThinkingBlock& b) const {
    w.begin_object().member("type", "thinking").member("text", b.text).member("signature", b.signature);
    if (!b.redacted_data.empty()) w.member("redacted", b.redacted_data);
    w.end_object();
  }
  void operator()(const model::ToolCallBlock& b) const {
    w.begin_object().member("type", "tool_call").member("id", b.id).member("name", b.name);
    w.member("input", b.input).member("arguments", b.arguments_json).end_object();
  }
  void operator()(const model::ToolResultBlock& b) const {
    w.begin_object().member("type", "tool_result").member("toolCallId", b.tool_call_id);
    w.member("content", b.content).member("isError", b.is_error).end_object();
  }
  // The bytes are the session's blob `hash`; a message is a row, not a file.
  void operator()(const model::ImageBlock& b) const {
    w.begin_object().member("type", "image").member("mediaType", b.media_type).member("hash", b.hash);
    w.member("bytes", b.bytes).member("width", b.width).member("height", b.height).end_object();
  }
};

std::string str(const Json& j) { return j.is_string() ? j.as_string() : std::string(); }
std::uint64_t uint_or_zero(const Json& j) {
  return j.is_number() && j.as_double() > 0 ? static_cast<std::uint64_t>(j.as_double()) : 0;
}

std::uint64_t block_tokens(const model::ContentBlock& block) {
  struct Visitor {
    std::uint64_t operator()(const model::TextBlock& b) const { return estimate_tokens(b.text); }
    std::uint64_t operator()(const model::ThinkingBlock& b) const {
      return estimate_tokens(b.text) + estimate_tokens(b.signature) + estimate_tokens(b.redacted_data);
    }
    std::uint64_t operator()(const model::ToolCallBlock& b) const {
      return estimate_tokens(b.name) + estimate_tokens(b.arguments_json.empty() ? b.input.dump() : b.arguments_json);
    }
    std::uint64_t operator()(const model::ToolResultBlock& b) const { return estimate_tokens(b.content); }
    std::uint64_t operator()(const model::ImageBlock& b) const { return model::image_tokens(b.width, b.height); }
  };
  return std::visit(Visitor{}, block) + 4;  // per-block framing
}

}  // namespace

constexpr support::EnumName<model::Role> kRoleNames[] = {
    {model::Role::user, "user"},
    {model::Role::assistant, "assistant"},
    {model::Role::tool, "tool"},
};
static_assert(support::names_every_value(kRoleNames, model::Role::tool));

std::string_view role_name(model::Role role) noexcept {
  return support::enum_name<model::Role>(kRoleNames, role, "user");
}

std::string message_to_json(const model::Message& message, std::string_view turn_id) {
  std::string out;
  JsonWriter w(out);
  w.begin_object().member("turn", turn_id).key("content").begin_array();
  for (const auto& block : message.content) std::visit(BlockWriter{w}, block);
  w.end_array().end_object();
  return out;
}

std::string message_turn_id(const Json& json) { return str(json["turn"]); }

void set_message_turn_id(Json& json, std::string_view turn_id) { json.set("turn", std::string(turn_id)); }

support::Result<model::Message> message_from_json(std::string_view role, const Json& json, std::string* turn_id) {
  model::Message m;
  if (role == "user") {
    m.role = model::Role::user;
  } else if (role == "assistant") {
    m.role = model::Role::assistant;
  } else if (role == "tool") {
    m.role = model::Role::tool;
  } else {
    return Error(Errc::parse_error, fmt::format("stored message has unknown role \"{}\"", role));
  }
  if (turn_id != nullptr) *turn_id = message_turn_id(json);
  const Json& content = json["content"];
  if (!content.is_array()) return Error(Errc::parse_error, "stored message has no content array");
  for (const Json& b : content.as_array()) {
    const std::string type = str(b["type"]);
    if (type == "text") {
      m.content.emplace_back(model::TextBlock{str(b["text"])});
    } else if (type == "thinking") {
      m.content.emplace_back(model::ThinkingBlock{str(b["text"]), str(b["signature"]), str(b["redacted"])});
    } else if (type == "tool_call") {
      m.content.emplace_back(model::ToolCallBlock{str(b["id"]), str(b["name"]), b["input"], str(b["arguments"])});
    } else if (type == "tool_result") {
      const Json& is_error = b["isError"];
      m.content.emplace_back(
          model::ToolResultBlock{str(b["toolCallId"]), str(b["content"]), is_error.is_bool() && is_error.as_bool()});
    } else if (type == "image") {
      model::ImageBlock image;
      image.media_type = str(b["mediaType"]);
      image.hash = str(b["hash"]);
      image.bytes = uint_or_zero(b["bytes"]);
      image.width = static_cast<std::uint32_t>(uint_or_zero(b["width"]));
      image.height = static_cast<std::uint32_t>(uint_or_zero(b["height"]));
      m.content.emplace_back(std::move(image));
    } else {
      return Error(Errc::parse_error, fmt::format("stored message has unknown block type \"{}\"", type));
    }
  }
  return m;
}

std::uint64_t estimate_tokens(const model::Message& message) noexcept {
  std::uint64_t total = 4;  // role framing
  for (const auto& block : message.content) total += block_tokens(block);
  return total;
}

HistorySelection select_history(const std::vector<HistoryTurn>& turns, std::uint64_t budget) {
  HistorySelection selection;
  std::size_t first_kept = turns.size();
  std::uint64_t used = 0;
  for (std::size_t i = turns.size(); i-- > 0;) {
    std::uint64_t cost = 0;
    for (const auto& m : turns[i].messages) cost += estimate_tokens(m);
    const bool newest = i + 1 == turns.size();
    if (!newest && used + cost > budget) break;
    used += cost;
    first_kept = i;
  }
  selection.dropped_turns = first_kept;
  selection.estimated_tokens = used;
  for (std::size_t i = first_kept; i < turns.size(); ++i) {
    selection.messages.insert(selection.messages.end(), turns[i].messages.begin(), turns[i].messages.end());
  }
  return selection;
}

std::uint64_t estimate_tokens(const std::vector<model::ToolDefinition>& tools) {
  std::uint64_t tokens = 0;
  for (const auto& t : tools) {
    tokens += estimate_tokens(t.name) + estimate_tokens(t.description) + estimate_tokens(t.input_schema.dump());
  }
  return tokens;
}

}  // namespace agentd::core
