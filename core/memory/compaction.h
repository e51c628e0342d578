// Compaction: when the history no longer leaves room for the next turn, the older turns are replaced in
// later requests by a model-written summary (goals, decisions, files touched, open tasks, errors seen).
// This file plans it (whether, which turns, or that it cannot help), writes the summarization request,
// reads the model's answer into a struct, and renders the summary that stands in for the turns. The model
// call and the storage of the record (storage/compaction_store.h) are the engine's. Pinned text (system
// rules, AGENTS.md) and the latest turns are never summarized.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/enum_names.h"
#include "core/support/json.h"
#include "core/support/result.h"

namespace agentd::core::memory {

struct CompactionOptions {
  std::uint64_t context_window = 200000;
  double threshold = 0.8;  // compact when a request would pass this fraction of the window
  // Room kept free for the compaction call itself (its instructions and the summary it writes): the
  // history is compacted before it passes window - reserve, so the summarization request always fits.
  std::uint64_t reserve_tokens = 8192;
  // What the summary may take in later requests (render_summary keeps it there) and the summarization
  // call's output limit.
  std::uint64_t summary_max_tokens = 2048;
  std::size_t keep_latest = 2;  // the newest turns, never summarized
};

struct TurnSize {
  std::string turn_id;
  std::uint64_t tokens = 0;
  bool summary = false;  // an earlier compaction's summary, standing in for the turns before
};

struct CompactionInput {
  std::vector<TurnSize> turns;      // the history, oldest first, without the turn about to run
  std::uint64_t pinned_tokens = 0;  // all that is sent and never summarized: rules, instructions, skills, tools
  std::uint64_t new_input_tokens = 0;
  bool forced = false;  // /compact: compact even under the threshold
};

enum class CompactionAction { none, compact, cannot_fit };
std::string_view compaction_action_name(CompactionAction action) noexcept;
std::span<const support::EnumName<CompactionAction>> enum_names(CompactionAction) noexcept;

struct CompactionPlan {
  CompactionAction action = CompactionAction::none;
  std::size_t summarize_count = 0;  // compact: turns[0, summarize_count) are summarized
  std::string first_turn_id;        // compact: the oldest and newest turn summarized
  std::string last_turn_id;
  std::uint64_t summarized_tokens = 0;
  std::uint64_t tokens_before = 0;  // pinned + history + new input
  std::uint64_t tokens_after = 0;   // the same with the summary (at its maximum size) in place of the turns
  std::uint64_t limit = 0;          // min(window * threshold, window - reserve)
  std::string message;              // what was decided and why, in words for the client
};

// One step, never a loop: `compact` promises that tokens_after fits the limit (the summary is held to
// summary_max_tokens); when no single compaction can make the request fit, the answer is `cannot_fit`
// with a message saying what takes the room. The engine compacts at most once per turn.
CompactionPlan plan_compaction(const CompactionInput& input, const CompactionOptions& options);

// A turn as the summarizer reads it: the engine renders the messages (user input, assistant text, tool
// calls and their results) to text.
struct TranscriptTurn {
  std::string turn_id;
  std::string text;
  bool summary = false;  // an earlier summary (render_summary's text), folded into the new one
};

struct SummaryRequest {
  std::string system;  // the instructions
  std::string user;    // the transcript
  std::uint64_t max_output_tokens = 0;
  std::uint64_t estimated_tokens = 0;  // system + user
};

SummaryRequest build_summary_request(std::span<const TranscriptTurn> turns, const CompactionOptions& options);
// The request's size apart from the turns' own text (instructions and per-turn markers), which the
// planner adds when it checks that a summarization request fits.
std::uint64_t summary_request_overhead_tokens(std::size_t turn_count) noexcept;

struct CompactionSummary {
  std::vector<std::string> goals;
  std::vector<std::string> decisions;
  std::vector<std::string> files_touched;
  std::vector<std::string> open_tasks;
  std::vector<std::string> errors_seen;
  std::vector<std::string> notes;  // text under headings that are none of the above, kept rather than lost
  bool empty() const noexcept;
};

struct ParsedSummary {
  CompactionSummary summary;
  std::vector<std::string> warnings;  // "missing section: Errors seen", ...
};

// Reads the model's answer: markdown headings (`## Goals`, `**Goals:**`, `Goals:`) with bulleted or plain
// items, or a JSON object with the same sections; synonyms ("Next steps", "Files changed") and a wrapping
// code fence are accepted. Missing sections stay empty (with a warning); "none" items are dropped. Fails
// (parse_error) only when the answer has no text at all.
support::Result<ParsedSummary> parse_summary(std::string_view model_text);

// The stored form (compactions.summary): {"version":1,"goals":[...],"decisions":[...],"files_touched":[...],
// "open_tasks":[...],"errors_seen":[...],"notes":[...]}. Reading tolerates missing sections.
support::Json summary_to_json(const CompactionSummary& summary);
support::Result<CompactionSummary> summary_from_json(const support::Json& json);
support::Result<CompactionSummary> summary_from_json_text(std::string_view json_text);

struct SummaryScope {
  std::string first_turn_id;
  std::string last_turn_id;
  std::size_t turn_count = 0;
};

// The text that replaces the summarized turns in later requests, within `max_tokens` (items are left out,
// longest section first, and the omission is said when it would not fit).
std::string render_summary(const CompactionSummary& summary, const SummaryScope& scope, std::uint64_t max_tokens);

}  // namespace agentd::core::memory
