// The engine's own event stream: what a session tells whoever drives it (the ACP binding, the CLI, a
// test), in engine terms, never ACP's. Every event gets a per-session sequence number that only grows,
// is written to the events log before it is delivered, and can be replayed from the log (session/load,
// _agentd/events/replay). to_json/from_json here define the log's payload format.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/model/model_event.h"
#include "core/support/enum_names.h"
#include "core/support/json.h"
#include "core/support/json_reader.h"
#include "core/support/json_writer.h"
#include "tools/tool.h"

namespace agentd::core {

enum class ToolCallStatus { pending, in_progress, completed, failed };
std::string_view tool_call_status_name(ToolCallStatus status) noexcept;
std::span<const support::EnumName<ToolCallStatus>> enum_names(ToolCallStatus) noexcept;

// The user's input of a turn. Logged for replay; live clients already show what they sent.
struct UserMessageEvent {
  std::string text;
};
struct AgentTextEvent {
  std::string text;
};
struct AgentThoughtEvent {
  std::string text;
};
// A tool call the model started: announced as soon as its id and name are known.
struct ToolCallStartedEvent {
  std::string id;
  std::string name;
  std::string title;
  tools::ToolKind kind = tools::ToolKind::other;
};
// Anything that changed about a call; absent fields did not change.
struct ToolCallUpdatedEvent {
  std::string id;
  std::optional<ToolCallStatus> status;
  std::optional<std::string> title;
  std::optional<support::Json> raw_input;
  std::optional<std::string> text;  // result text for the client (a summary, or output so far)
  std::vector<tools::ToolDiff> diffs;
  std::vector<std::string> locations;
  support::Json meta;  // structured detail (EditResult...), an object or null
  // The client's terminal the call's command runs in (ACP terminal/create): shown live by the editor.
  std::optional<std::string> terminal_id;
};
// After each model call: how full the context is and what the session has cost so far.
struct UsageEvent {
  std::uint64_t used = 0;                  // tokens in context after the call (input incl. cache + output)
  std::uint64_t size = 0;                  // the model's context window
  std::optional<double> session_cost_usd;  // absent when any call of the session was unpriced
  model::Usage call_usage;                 // this call's tokens
  std::string model;
};
struct CommandInfo {
  std::string name;
  std::string description;
  std::optional<std::string> input_hint;
};
struct CommandsEvent {
  std::vector<CommandInfo> commands;
};
struct ModeChangedEvent {
  std::string mode;
};
struct ModelChangedEvent {
  std::string model_spec;  // "anthropic:claude-sonnet-4-5"
};

// Older turns were replaced by a summary in later requests (compaction); `text` says so to the user.
struct CompactionEvent {
  std::string text;
  std::int64_t compaction_id = 0;
  std::string first_turn_id;
  std::string last_turn_id;
  std::uint64_t turns = 0;  // summarized by this compaction
  std::uint64_t tokens_before = 0;
  std::uint64_t tokens_after = 0;
  bool forced = false;  // /compact
};

// The model's plan as it is now (todo_write): the whole list, which replaces the one before.
struct PlanEvent {
  std::vector<tools::PlanItem> entries;
};

// An image of the user's prompt, after its UserMessageEvent. The log keeps its blob's hash, never the
// bytes; `data` (base64) is set when it is emitted and when the log is read back (from the session's
// blobs), and is empty when the blob is gone.
struct UserImageEvent {
  std::string media_type;
  std::string hash;
  std::uint64_t bytes = 0;
  std::string data;
};

using EngineEvent = std::variant<UserMessageEvent, AgentTextEvent, AgentThoughtEvent, ToolCallStartedEvent,
                                 ToolCallUpdatedEvent, UsageEvent, CommandsEvent, ModeChangedEvent, ModelChangedEvent,
                                 CompactionEvent, PlanEvent, UserImageEvent>;

// The log's `kind` column: "user_message", "agent_text", ...
std::string_view event_kind(const EngineEvent& event) noexcept;

struct SequencedEvent {
  std::int64_t seq = 0;
  std::string turn_id;  // empty outside a turn
  EngineEvent event;
};

// Payload JSON (without the kind), and back from the log's kind + payload.
std::string event_payload_json(const EngineEvent& event);
support::Result<EngineEvent> event_from_log(std::string_view kind, const support::Json& payload);
// Ids a copied log refers to, old -> new (session/fork copies a session under new ids).
struct LogRenames {
  std::map<std::string, std::string, std::less<>> turns;
  std::map<std::int64_t, std::int64_t> compactions;
};
// Renames what a logged payload refers to (a compaction's record and range of turns); ids `renames`
// does not know are left as they are.
void rename_event_refs(std::string_view kind, support::Json& payload, const LogRenames& renames);

}  // namespace agentd::core
