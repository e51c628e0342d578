// ACP v1 `session/update`: the notification that streams a turn to the client (message and thought
// chunks, tool calls and their updates, plan, commands, mode, config, session info, usage). Every
// update and the notification itself may carry `_meta`; agentd numbers updates in the notification's
// `_meta.agentd.seq`, which the caller fills.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/support/json.h"
#include "core/support/json_reader.h"
#include "core/support/json_writer.h"
#include "protocol/acp/content.h"
#include "protocol/acp/session.h"

namespace agentd::protocol::acp {

enum class ToolKind { read, edit, delete_, move, search, execute, think, fetch, switch_mode, other };
enum class ToolCallStatus { pending, in_progress, completed, failed };
enum class PlanEntryPriority { high, medium, low };
enum class PlanEntryStatus { pending, in_progress, completed };

// ---- tool call content ------------------------------------------------------------------------------

// {"type":"content"}: any content block (usually text) the tool produced.
struct ToolCallContentBlock {
  ContentBlock content{};
  support::Json meta{};
};

// {"type":"diff"}: an edit. `old_text` is absent for a new file.
struct Diff {
  std::string path{};  // absolute
  std::optional<std::string> old_text{};
  std::string new_text{};
  support::Json meta{};
};

// {"type":"terminal"}: live output of a terminal created with terminal/create.
struct Terminal {
  std::string terminal_id{};
  support::Json meta{};
};

using ToolCallContent = std::variant<ToolCallContentBlock, Diff, Terminal>;

struct ToolCallLocation {
  std::string path{};  // absolute
  std::optional<std::uint32_t> line{};
  support::Json meta{};
};

// ---- the updates --------------------------------------------------------------------------------------

// Three update kinds share ACP's ContentChunk shape; one template, instantiated per kind, so the variant
// knows which is which and the shape is written once.
enum class ChunkKind { user_message, agent_message, agent_thought };
template <ChunkKind Kind>
struct ContentChunk {
  ContentBlock content{};
  std::optional<std::string> message_id{};
  support::Json meta{};
};
using UserMessageChunk = ContentChunk<ChunkKind::user_message>;
using AgentMessageChunk = ContentChunk<ChunkKind::agent_message>;
using AgentThoughtChunk = ContentChunk<ChunkKind::agent_thought>;

// "tool_call": a new tool call. `content` and `locations` are written only when non-empty.
struct ToolCall {
  std::string tool_call_id{};
  std::string title{};
  std::optional<std::string> name{};  // the tool's programmatic name (new in the 2.4.0 schema)
  ToolKind kind = ToolKind::other;
  ToolCallStatus status = ToolCallStatus::pending;
  std::vector<ToolCallContent> content{};
  std::vector<ToolCallLocation> locations{};
  std::optional<support::Json> raw_input{};
  std::optional<support::Json> raw_output{};
  support::Json meta{};
};

// "tool_call_update" (and the toolCall of session/request_permission): only what changed. `content`
// and `locations`, when present, replace the whole collection.
struct ToolCallUpdate {
  std::string tool_call_id{};
  std::optional<std::string> title{};
  std::optional<std::string> name{};
  std::optional<ToolKind> kind{};
  std::optional<ToolCallStatus> status{};
  std::optional<std::vector<ToolCallContent>> content{};
  std::optional<std::vector<ToolCallLocation>> locations{};
  std::optional<support::Json> raw_input{};
  std::optional<support::Json> raw_output{};
  support::Json meta{};
};

struct PlanEntry {
  std::string content{};
  PlanEntryPriority priority = PlanEntryPriority::medium;
  PlanEntryStatus status = PlanEntryStatus::pending;
  support::Json meta{};
};

// "plan": the complete plan each time (the client replaces what it showed).
struct Plan {
  std::vector<PlanEntry> entries{};
  support::Json meta{};
};

// Free-text input a command takes after its name ("unstructured", the only kind the schema has).
struct AvailableCommandInput {
  std::string hint{};
  support::Json meta{};
};

struct AvailableCommand {
  std::string name{};  // without the slash
  std::string description{};
  std::optional<AvailableCommandInput> input{};
  support::Json meta{};
};

struct AvailableCommandsUpdate {
  std::vector<AvailableCommand> available_commands{};
  support::Json meta{};
};

struct CurrentModeUpdate {
  std::string current_mode_id{};
  support::Json meta{};
};

struct ConfigOptionUpdate {
  std::vector<SessionConfigOption> config_options{};
  support::Json meta{};
};

// A partial update: the outer optional empty means "unchanged" (omitted); an inner empty optional is
// written as null, which tells the client to clear the field.
struct SessionInfoUpdate {
  std::optional<std::optional<std::string>> title{};
  std::optional<std::optional<std::string>> updated_at{};
  support::Json meta{};
};

struct Cost {
  double amount = 0;
  std::string currency{};  // ISO 4217, e.g. "USD"
  support::Json meta{};
};

// "usage_update": context window use and the session's cumulative cost.
struct UsageUpdate {
  std::uint64_t used = 0;  // tokens in context
  std::uint64_t size = 0;  // context window
  std::optional<Cost> cost{};
  support::Json meta{};
};

using SessionUpdate =
    std::variant<UserMessageChunk, AgentMessageChunk, AgentThoughtChunk, ToolCall, ToolCallUpdate, Plan,
                 AvailableCommandsUpdate, CurrentModeUpdate, ConfigOptionUpdate, SessionInfoUpdate, UsageUpdate>;

// params of `session/update`.
struct SessionNotification {
  std::string session_id{};
  SessionUpdate update{};
  support::Json meta{};  // the caller sets {"agentd":{"seq":N}}
};

// The update's wire tag ("agent_message_chunk", ...).
std::string_view session_update_name(const SessionUpdate& update) noexcept;

std::string_view name(ToolKind v) noexcept;
std::string_view name(ToolCallStatus v) noexcept;
std::string_view name(PlanEntryPriority v) noexcept;
std::string_view name(PlanEntryStatus v) noexcept;
bool parse(std::string_view text, ToolKind& out) noexcept;
bool parse(std::string_view text, ToolCallStatus& out) noexcept;
bool parse(std::string_view text, PlanEntryPriority& out) noexcept;
bool parse(std::string_view text, PlanEntryStatus& out) noexcept;

bool from_json(const support::JsonIn& in, ToolKind& out);
bool from_json(const support::JsonIn& in, ToolCallStatus& out);
bool from_json(const support::JsonIn& in, PlanEntryPriority& out);
bool from_json(const support::JsonIn& in, PlanEntryStatus& out);
bool from_json(const support::JsonIn& in, ToolCallContent& out);
bool from_json(const support::JsonIn& in, ToolCallLocation& out);
bool from_json(const support::JsonIn& in, ToolCallUpdate& out);
bool from_json(const support::JsonIn& in, PlanEntry& out);
bool from_json(const support::JsonIn& in, AvailableCommandInput& out);
bool from_json(const support::JsonIn& in, AvailableCommand& out);
bool from_json(const support::JsonIn& in, Cost& out);
// Reads the tagged update; an unknown `sessionUpdate` fails naming it.
bool from_json(const support::JsonIn& in, SessionUpdate& out);
bool from_json(const support::JsonIn& in, SessionNotification& out);

void to_json(support::JsonWriter& w, ToolKind v);
void to_json(support::JsonWriter& w, ToolCallStatus v);
void to_json(support::JsonWriter& w, PlanEntryPriority v);
void to_json(support::JsonWriter& w, PlanEntryStatus v);
void to_json(support::JsonWriter& w, const ToolCallContent& v);
void to_json(support::JsonWriter& w, const ToolCallLocation& v);
void to_json(support::JsonWriter& w, const PlanEntry& v);
void to_json(support::JsonWriter& w, const AvailableCommandInput& v);
void to_json(support::JsonWriter& w, const AvailableCommand& v);
void to_json(support::JsonWriter& w, const Cost& v);
// A ToolCallUpdate on its own (as session/request_permission's toolCall), without the sessionUpdate tag.
void to_json(support::JsonWriter& w, const ToolCallUpdate& v);
void to_json(support::JsonWriter& w, const SessionUpdate& v);
void to_json(support::JsonWriter& w, const SessionNotification& v);

}  // namespace agentd::protocol::acp
