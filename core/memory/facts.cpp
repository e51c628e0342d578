#include "core/memory/facts.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/memory/text_match.h"
#include "core/support/text.h"

namespace agentd::core::memory {

using support::Errc;
using support::Error;

namespace {

std::string fact_line(const Fact& fact) { return fmt::format("- [fact {}] {}\n", fact.id, fact.text); }

}  // namespace

constexpr support::EnumName<FactVerdict> kFactVerdictNames[] = {
    {FactVerdict::selected, "selected"},
    {FactVerdict::not_relevant, "not relevant"},
    {FactVerdict::over_budget, "over budget"},
};
static_assert(support::names_every_value(kFactVerdictNames, FactVerdict::over_budget));

std::span<const support::EnumName<FactVerdict>> enum_names(FactVerdict) noexcept { return kFactVerdictNames; }

std::string_view fact_verdict_name(FactVerdict verdict) noexcept { return support::enum_name(verdict, "?"); }

std::vector<std::int64_t> FactSelection::selected_ids() const {
  std::vector<std::int64_t> out;
  for (const FactDecision& d : decisions) {
    if (d.verdict == FactVerdict::selected) out.push_back(d.id);
  }
  return out;
}

FactSelection select_facts(std::span<const Fact> facts, std::string_view input, const FactSelectionOptions& options) {
  std::vector<Document> documents;
  documents.reserve(facts.size());
  for (const Fact& f : facts) documents.push_back({DocumentField{"text", 1.0, terms_of(f.text)}});
  const std::vector<Relevance> relevance = score_documents(documents, input);

  std::vector<std::size_t> order(facts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (relevance[a].score != relevance[b].score) return relevance[a].score > relevance[b].score;
    if (facts[a].created_at_ms != facts[b].created_at_ms) return facts[a].created_at_ms > facts[b].created_at_ms;
    return facts[a].id > facts[b].id;
  });

  FactSelection out;
  out.token_budget = options.token_budget;
  for (std::size_t i : order) {
    const Fact& fact = facts[i];
    const Relevance& r = relevance[i];
    FactDecision d;
    d.id = fact.id;
    d.score = r.score;
    d.tokens = estimate_tokens(fact_line(fact));
    const std::string score = format_score(r.score);
    if (r.matches.empty()) {
      d.verdict = FactVerdict::not_relevant;
      d.reason = "not relevant: no word in common with the input";
    } else if (r.score < options.min_score) {
      d.verdict = FactVerdict::not_relevant;
      d.reason = fmt::format("not relevant (score {}, below {}): only {}", score, format_score(options.min_score),
                             describe_matches(r));
    } else if (out.tokens_used + d.tokens > options.token_budget) {
      d.verdict = FactVerdict::over_budget;
      d.reason = fmt::format("over budget (score {}, {} tokens, {} of {} left): {}", score, d.tokens,
                             options.token_budget - out.tokens_used, options.token_budget, describe_matches(r));
    } else {
      d.verdict = FactVerdict::selected;
      out.tokens_used += d.tokens;
      d.reason = fmt::format("selected (score {}): {}", score, describe_matches(r));
    }
    out.decisions.push_back(std::move(d));
  }
  return out;
}

std::string render_facts(std::span<const Fact> facts, const FactSelection& selection) {
  std::string out;
  for (std::int64_t id : selection.selected_ids()) {
    auto it = std::find_if(facts.begin(), facts.end(), [&](const Fact& f) { return f.id == id; });
    if (it == facts.end()) continue;
    if (out.empty()) out = "Facts the user asked you to remember about this project (from /remember):\n";
    out += fact_line(*it);
  }
  return out;
}

support::Result<std::string> normalize_fact_text(std::string_view text, std::size_t max_bytes) {
  const std::size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) {
    return Error(Errc::invalid_argument, "nothing to remember: give the fact after /remember");
  }
  const std::size_t end = text.find_last_not_of(" \t\r\n");
  std::string_view trimmed = text.substr(begin, end - begin + 1);
  if (trimmed.size() > max_bytes) {
    return Error(Errc::invalid_argument, fmt::format("a remembered fact is at most {} bytes; this one has {}: "
                                                     "shorten it, or put long instructions in AGENTS.md",
                                                     max_bytes, trimmed.size()));
  }
  if (!support::is_valid_utf8(trimmed))
    return Error(Errc::invalid_argument, "a remembered fact must be valid UTF-8 text");
  return std::string(trimmed);
}

std::string memory_report(const Instructions& instructions, std::span<const Fact> facts, const FactSelection& last) {
  std::string out;
  if (instructions.files.empty()) {
    out +=
        "Pinned instructions: none (no AGENTS.md or CLAUDE.md from the workspace root to the cwd, and no user "
        "AGENTS.md).\n";
  } else {
    out += fmt::format("Pinned instructions ({} bytes, always included verbatim, never summarized):\n",
                       instructions.bytes());
    for (const InstructionFile& f : instructions.files) {
      out += fmt::format("  {} ({}, {} bytes{})\n", f.path, instruction_scope_name(f.scope), f.text.size(),
                         f.cut ? ", " + f.note : std::string());
    }
  }
  for (const std::string& note : instructions.notes) out += fmt::format("  note: {}\n", note);

  if (facts.empty()) {
    out += "Remembered facts: none (add one with /remember <fact>).\n";
    return out;
  }
  out += fmt::format("Remembered facts ({}; {} of {} tokens used last turn):\n", facts.size(), last.tokens_used,
                     last.token_budget);
  for (const Fact& f : facts) {
    auto it =
        std::find_if(last.decisions.begin(), last.decisions.end(), [&](const FactDecision& d) { return d.id == f.id; });
    const std::string why = it == last.decisions.end() ? std::string("not considered yet") : it->reason;
    out += fmt::format("  [{}] {}\n      {}\n", f.id, f.text, why);
  }
  return out;
}

}  // namespace agentd::core::memory
