// Remembered facts for a turn: which of the project's stored facts (storage/memory_store.h) are relevant
// to the input, within a token budget, each with a score and a reason that /memory shows. Also the text
// they become in the request, and the checks a new fact's text passes before it is stored.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/memory/instructions.h"
#include "core/support/enum_names.h"
#include "core/support/result.h"

namespace agentd::core::memory {

struct Fact {
  std::int64_t id = 0;
  std::string text;
  std::int64_t created_at_ms = 0;
};

enum class FactVerdict { selected, not_relevant, over_budget };
std::string_view fact_verdict_name(FactVerdict verdict) noexcept;
std::span<const support::EnumName<FactVerdict>> enum_names(FactVerdict) noexcept;

struct FactDecision {
  std::int64_t id = 0;
  double score = 0;
  FactVerdict verdict = FactVerdict::not_relevant;
  std::string reason;  // "selected (score 2): text: ninja, build"
  std::uint64_t tokens = 0;
};

struct FactSelectionOptions {
  std::uint64_t token_budget = 1000;
  double min_score = 1.0;  // one word shared with the input, if no other fact has it too
};

struct FactSelection {
  std::vector<FactDecision> decisions;  // every fact, best first (ties: newest first)
  std::uint64_t tokens_used = 0;
  std::uint64_t token_budget = 0;
  std::vector<std::int64_t> selected_ids() const;  // in the order they go into the request
};

FactSelection select_facts(std::span<const Fact> facts, std::string_view input, const FactSelectionOptions& options);

// The selected facts as they go into the request; empty when none was selected.
std::string render_facts(std::span<const Fact> facts, const FactSelection& selection);

// The text of `/remember <text>` as it will be stored: trimmed; refused (invalid_argument) when empty,
// longer than `max_bytes`, or not valid UTF-8.
support::Result<std::string> normalize_fact_text(std::string_view text, std::size_t max_bytes = 4000);

// The reply to /memory: the pinned instruction files (path, size, cut or not), the notes about files left
// out, and every fact with what happened to it in the last selection.
std::string memory_report(const Instructions& instructions, std::span<const Fact> facts, const FactSelection& last);

}  // namespace agentd::core::memory
