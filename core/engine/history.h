// The conversation history as the engine keeps it: provider-neutral model::Messages, grouped by turn,
// stored one row per message in SQLite as the JSON defined here, and chosen by token budget for each
// model request (newest turns first; a turn is kept or dropped whole, so every tool call keeps its result).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model_client.h"
#include "core/support/json.h"
#include "core/support/result.h"
#include "core/support/text.h"

namespace agentd::core {

// Storage form of one message: {"turn": "<turn id>", "content": [blocks...]}; role is a column. An image
// is stored as its blob's hash, type and size: message_from_json gives it back without `data`, which the
// loader fills from the session's blobs.
std::string message_to_json(const model::Message& message, std::string_view turn_id);
support::Result<model::Message> message_from_json(std::string_view role, const support::Json& json,
                                                  std::string* turn_id = nullptr);
std::string_view role_name(model::Role role) noexcept;
// The turn a stored message belongs to ("" when it names none), and the same message moved to another
// turn (session/fork copies a history under new turn ids).
std::string message_turn_id(const support::Json& json);
void set_message_turn_id(support::Json& json, std::string_view turn_id);

// A rough token estimate (bytes / 4, rounded up) used before sending, when no usage is known yet.
// Conservative for English and code; providers' counts replace it as soon as a call reports usage.
using support::estimate_tokens;  // of text (core/support/text.h); the overloads below build on it
std::uint64_t estimate_tokens(const model::Message& message) noexcept;
// What the tool definitions of a request cost: names, descriptions and schemas.
std::uint64_t estimate_tokens(const std::vector<model::ToolDefinition>& tools);

struct HistoryTurn {
  std::string turn_id;
  std::vector<model::Message> messages;
};

struct HistorySelection {
  std::vector<model::Message> messages;  // oldest first
  std::size_t dropped_turns = 0;         // oldest turns left out to fit
  std::uint64_t estimated_tokens = 0;
};

// Newest turns first, while they fit in `budget` tokens; a turn is never split. The last turn (the one
// in progress) is always included: when it alone does not fit, `estimated_tokens` exceeds the budget
// and the caller must stop.
HistorySelection select_history(const std::vector<HistoryTurn>& turns, std::uint64_t budget);

}  // namespace agentd::core
