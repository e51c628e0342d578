// One file for compaction's plan, request, answer reader and rendering (compaction.h): they share the
// summary's section table, which must stay the same in all four.
#include "core/memory/compaction.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "core/memory/text_match.h"
#include "core/support/json_reader.h"
#include "core/support/text.h"

namespace agentd::core::memory {

using support::Errc;
using support::Error;
using support::Json;

namespace {

// The sections, in the order the model writes them and render_summary prints them.
enum class Section { goals, decisions, files_touched, open_tasks, errors_seen, notes };
struct SectionInfo {
  Section section;
  std::string_view title;  // as asked for and rendered
  std::string_view key;    // in the stored JSON
};
constexpr std::array<SectionInfo, 6> kSections = {{
    {Section::goals, "Goals", "goals"},
    {Section::decisions, "Decisions", "decisions"},
    {Section::files_touched, "Files touched", "files_touched"},
    {Section::open_tasks, "Open tasks", "open_tasks"},
    {Section::errors_seen, "Errors seen", "errors_seen"},
    {Section::notes, "Notes", "notes"},
}};

// The items of one section; S is CompactionSummary or const CompactionSummary.
template <class S>
auto& items_of(S& s, Section section) {
  switch (section) {
    case Section::goals: return s.goals;
    case Section::decisions: return s.decisions;
    case Section::files_touched: return s.files_touched;
    case Section::open_tasks: return s.open_tasks;
    case Section::errors_seen: return s.errors_seen;
    case Section::notes: break;
  }
  return s.notes;
}

constexpr std::string_view kInstructions =
    R"(You are compacting the earlier part of a coding session so that it can go on within the model's context window. The agent that carries on the work will read your summary instead of the turns below; the latest turns and the project's instructions are kept as they are, so do not repeat them.

Answer with exactly these five sections, in this order, each a markdown heading followed by a list of "- " items, and nothing else:

## Goals
What the user wants, overall and in this part of the session, with the constraints and preferences they stated.
## Decisions
What was decided or agreed and why, including approaches tried and rejected.
## Files touched
One item per file read, created, edited or deleted: the path, then what was done to it or learned from it.
## Open tasks
What is unfinished or was promised next, most urgent first.
## Errors seen
Errors, failing tests and failed commands, with the exact message where it matters, and whether each was resolved.

Write "- none" under a section with nothing to say. Be concrete: keep paths, identifiers, commands, numbers and error messages exactly as they appear. If the transcript starts with an earlier summary, fold its content into yours. Keep the whole summary under {} words.)";

constexpr std::uint64_t kTokensPerTurnMarker = 16;

std::string instructions_text(const CompactionOptions& options) {
  // Roughly 0.75 words per token, less a margin for the headings.
  const std::uint64_t words = std::max<std::uint64_t>(50, options.summary_max_tokens * 3 / 5);
  return fmt::format(kInstructions, words);
}

std::string turn_range(const std::string& first, const std::string& last, std::size_t count) {
  if (count == 1) return fmt::format("turn {}", first);
  return fmt::format("turns {} to {} ({} turns)", first, last, count);
}

// --- parsing the model's answer ------------------------------------------------------------------

// Lowercase letters only, words separated by one space: "**Files  Touched:**" -> "files touched".
std::string normalize_title(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c >= 'a' && c <= 'z') {
      if (space && !out.empty()) out += ' ';
      space = false;
      out += c;
    } else {
      space = true;
    }
  }
  return out;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// Which section a heading names, with the synonyms models drift to; notes for anything else.
Section section_for(std::string_view normalized, bool* known) {
  *known = true;
  if (contains(normalized, "goal") || contains(normalized, "objective") || normalized == "task" ||
      normalized == "request" || contains(normalized, "user request")) {
    return Section::goals;
  }
  if (contains(normalized, "decision") || contains(normalized, "decided")) return Section::decisions;
  if (contains(normalized, "file")) return Section::files_touched;
  if (contains(normalized, "open") || contains(normalized, "todo") || contains(normalized, "to do") ||
      contains(normalized, "next") || contains(normalized, "remaining") || contains(normalized, "pending") ||
      contains(normalized, "task") || contains(normalized, "unfinished")) {
    return Section::open_tasks;
  }
  if (contains(normalized, "error") || contains(normalized, "failure") || contains(normalized, "problem") ||
      contains(normalized, "issue") || contains(normalized, "bug")) {
    return Section::errors_seen;
  }
  *known = normalized == "notes" || normalized == "note" || normalized == "other notes";
  return Section::notes;
}

bool is_none_item(std::string_view item) {
  const std::string n = normalize_title(item);
  return n.empty() || n == "none" || n == "n a" || n == "na" || n == "nothing" || n == "no" || n == "nil" ||
         n == "none yet" || n == "none so far" || n == "none seen" || n == "nothing yet";
}

// A list item's text when `line` starts one ("- x", "* x", "+ x", "• x", "1. x", "1) x").
bool list_item(std::string_view line, std::string_view* text) {
  if (line.size() >= 2 && (line[0] == '-' || line[0] == '*' || line[0] == '+') && (line[1] == ' ' || line[1] == '\t')) {
    *text = support::trim(line.substr(2));
    return true;
  }
  if (line.substr(0, 4) == "\xE2\x80\xA2 ") {  // U+2022 BULLET
    *text = support::trim(line.substr(4));
    return true;
  }
  std::size_t digits = 0;
  while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9') ++digits;
  if (digits > 0 && digits + 1 < line.size() && (line[digits] == '.' || line[digits] == ')') &&
      (line[digits + 1] == ' ' || line[digits + 1] == '\t')) {
    *text = support::trim(line.substr(digits + 2));
    return true;
  }
  return false;
}

struct Heading {
  std::string title;        // as written, without markup
  std::string inline_text;  // "Goals: ship it" -> "ship it"
};

// A heading: "## Goals", "**Goals**", "**Goals:** text", "__Goals__", or "Goals:" / "Goals: text" and
// "1. Goals" when the title is a known section (so ordinary text with a colon is not taken for one).
bool heading(std::string_view line, Heading* out) {
  if (!line.empty() && line[0] == '#') {
    std::size_t hashes = 0;
    while (hashes < line.size() && line[hashes] == '#') ++hashes;
    // As in markdown, a space follows the hashes: "#include <x>" is text, not a heading.
    if (hashes > 6 || (hashes < line.size() && line[hashes] != ' ' && line[hashes] != '\t')) return false;
    std::string_view rest = support::trim(line.substr(hashes));
    // "## Goals:" and "## **Goals**" are the same heading.
    std::string title(rest);
    std::erase(title, '*');
    while (!title.empty() && title.back() == ':') title.pop_back();
    out->title = std::string(support::trim(title));
    out->inline_text.clear();
    return !out->title.empty();
  }
  for (std::string_view mark : {std::string_view("**"), std::string_view("__")}) {
    if (line.substr(0, 2) != mark) continue;
    const std::size_t close = line.find(mark, 2);
    if (close == std::string_view::npos) return false;
    std::string_view title = support::trim(line.substr(2, close - 2));
    std::string_view rest = support::trim(line.substr(close + 2));
    if (!title.empty() && title.back() == ':') title = support::trim(title.substr(0, title.size() - 1));
    if (!rest.empty() && rest.front() == ':') rest = support::trim(rest.substr(1));
    bool known = false;
    section_for(normalize_title(title), &known);
    // A bold phrase that opens ordinary text is not a heading unless it names a section or stands alone.
    if (!known && !rest.empty()) return false;
    out->title = std::string(title);
    out->inline_text = std::string(rest);
    return !out->title.empty();
  }
  std::string_view body = line;
  std::string_view item;
  if (list_item(line, &item)) {
    // "- Goals: x" is an item; "1. Goals" can be a numbered heading.
    if (line[0] < '0' || line[0] > '9') return false;
    body = item;
  }
  const std::size_t colon = body.find(':');
  std::string_view title = support::trim(colon == std::string_view::npos ? body : body.substr(0, colon));
  if (title.size() > 40) return false;
  bool known = false;
  const std::string normalized = normalize_title(title);
  section_for(normalized, &known);
  // Bare words must name a section exactly ("Goals", "Errors seen"), not merely mention one.
  const bool exact = std::any_of(kSections.begin(), kSections.end(),
                                 [&](const SectionInfo& s) { return normalize_title(s.title) == normalized; });
  if (!known || (colon == std::string_view::npos && !exact)) return false;
  // "Files changed:" is a heading; "Then I fixed the parser file:" is a sentence that mentions a section.
  const auto words = static_cast<std::size_t>(std::count(normalized.begin(), normalized.end(), ' ')) + 1;
  if (colon != std::string_view::npos && !exact && (body.size() > colon + 1 || words > 3)) return false;
  out->title = std::string(title);
  out->inline_text =
      colon == std::string_view::npos ? std::string() : std::string(support::trim(body.substr(colon + 1)));
  return true;
}

void add_item(CompactionSummary& summary, Section section, const std::string& note_prefix, std::string text) {
  if (is_none_item(text)) return;
  if (section == Section::notes && !note_prefix.empty()) text = fmt::format("{}: {}", note_prefix, text);
  items_of(summary, section).push_back(std::move(text));
}

// Code fences around the whole answer ("```markdown ... ```") are dropped.
std::string_view strip_fence(std::string_view text) {
  if (text.substr(0, 3) != "```") return text;
  const std::size_t first_line = text.find('\n');
  if (first_line == std::string_view::npos) return text;
  std::string_view body = text.substr(first_line + 1);
  const std::size_t close = body.rfind("```");
  if (close != std::string_view::npos) body = body.substr(0, close);
  return support::trim(body);
}

// A JSON value's items: strings as they are, a string with lines split, objects as "k: v; k: v".
void json_items(const Json& value, std::vector<std::string>& out) {
  auto one = [](const Json& v) -> std::string {
    if (v.is_string()) return v.as_string();
    if (v.is_object()) {
      std::vector<std::string> parts;
      for (const auto& [k, m] : v.as_object()) parts.push_back(m.is_string() ? m.as_string() : m.dump());
      return fmt::format("{}", fmt::join(parts, ": "));
    }
    return v.dump();
  };
  if (value.is_array()) {
    for (const Json& v : value.as_array()) {
      std::string item(support::trim(one(v)));
      if (!is_none_item(item)) out.push_back(std::move(item));
    }
  } else if (value.is_string()) {
    std::string_view rest = value.as_string();
    while (!rest.empty()) {
      const std::size_t nl = rest.find('\n');
      std::string_view line = support::trim(rest.substr(0, nl));
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      std::string_view item_text;
      if (list_item(line, &item_text)) line = item_text;
      if (!is_none_item(line)) out.emplace_back(line);
    }
  } else if (!value.is_null()) {
    out.push_back(one(value));
  }
}

bool parse_json_summary(std::string_view text, ParsedSummary& out, std::vector<bool>& seen) {
  auto json = support::parse_json(text);
  if (!json || !json->is_object()) return false;
  for (const auto& [key, value] : json->as_object()) {
    if (key == "version") continue;
    bool known = false;
    const std::string normalized = normalize_title(key);
    // "files_touched", "filesTouched": split camelCase before normalizing.
    std::string spaced;
    for (char c : key) {
      if (c >= 'A' && c <= 'Z' && !spaced.empty()) spaced += ' ';
      spaced += c;
    }
    const Section section = section_for(normalize_title(spaced), &known);
    if (known) {
      seen[static_cast<std::size_t>(section)] = true;
      json_items(value, items_of(out.summary, section));
    } else {
      std::vector<std::string> items;
      json_items(value, items);
      for (std::string& item : items) add_item(out.summary, Section::notes, normalized, std::move(item));
    }
  }
  return true;
}

void parse_markdown_summary(std::string_view text, ParsedSummary& out, std::vector<bool>& seen, bool* any_heading) {
  Section current = Section::notes;
  std::string note_prefix;
  bool in_item = false;  // the last line added to an item, so a following plain line continues it
  std::vector<std::string>* last_items = nullptr;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    std::string_view raw = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const bool indented = !raw.empty() && (raw[0] == ' ' || raw[0] == '\t');
    std::string_view line = support::trim(raw);
    if (line.empty()) {
      in_item = false;
      continue;
    }
    if (line == "---" || line == "***" || line.substr(0, 3) == "```") continue;
    Heading h;
    std::string_view item_text;
    const bool is_item = list_item(line, &item_text);
    if (!(indented && is_item) && heading(line, &h)) {
      bool known = false;
      const std::string normalized = normalize_title(h.title);
      current = section_for(normalized, &known);
      note_prefix = known ? std::string() : h.title;
      if (known) seen[static_cast<std::size_t>(current)] = true;
      *any_heading = true;
      in_item = false;
      if (!h.inline_text.empty()) {
        const std::size_t before = items_of(out.summary, current).size();
        add_item(out.summary, current, note_prefix, h.inline_text);
        in_item = items_of(out.summary, current).size() > before;
        last_items = &items_of(out.summary, current);
      }
      continue;
    }
    if (is_item && indented && in_item && last_items != nullptr && !last_items->empty()) {
      // A nested item belongs to the one above it: "- a.cpp" / "  - renamed parse()".
      last_items->back() += "; ";
      last_items->back() += item_text;
      continue;
    }
    if (is_item) {
      const std::size_t before = items_of(out.summary, current).size();
      add_item(out.summary, current, note_prefix, std::string(item_text));
      last_items = &items_of(out.summary, current);
      in_item = last_items->size() > before;
      continue;
    }
    // A plain line: it continues the item above it, or is an item of its own.
    if (in_item && last_items != nullptr && !last_items->empty()) {
      last_items->back() += ' ';
      last_items->back() += line;
      continue;
    }
    const std::size_t before = items_of(out.summary, current).size();
    add_item(out.summary, current, note_prefix, std::string(line));
    last_items = &items_of(out.summary, current);
    in_item = last_items->size() > before;
  }
}

std::vector<std::string> strings_at(const Json& json, std::string_view key, std::string* error) {
  std::vector<std::string> out;
  const Json* v = json.find(key);
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_array()) {
    *error = fmt::format("summary.{}: expected an array of strings, got {}", key, v->type_name());
    return out;
  }
  for (const Json& item : v->as_array()) {
    if (!item.is_string()) {
      *error = fmt::format("summary.{}: expected an array of strings, found {}", key, item.type_name());
      return {};
    }
    out.push_back(item.as_string());
  }
  return out;
}

std::string render_text(const CompactionSummary& summary, const SummaryScope& scope, std::size_t left_out,
                        std::uint64_t max_tokens) {
  std::string out = fmt::format(
      "[Summary of the earlier conversation, {}, compacted by agentd. It stands in for those turns; their full "
      "messages are kept in the session store.]\n",
      turn_range(scope.first_turn_id, scope.last_turn_id, scope.turn_count));
  for (const SectionInfo& info : kSections) {
    const auto& items = items_of(summary, info.section);
    if (info.section == Section::notes && items.empty()) continue;
    out += fmt::format("\n{}:\n", info.title);
    if (items.empty()) out += "- none\n";
    for (const std::string& item : items) out += fmt::format("- {}\n", item);
  }
  if (left_out > 0) {
    out += fmt::format("\n[agentd: {} item{} left out to keep the summary within {} tokens.]\n", left_out,
                       left_out == 1 ? "" : "s", max_tokens);
  }
  return out;
}

}  // namespace

constexpr support::EnumName<CompactionAction> kCompactionActionNames[] = {
    {CompactionAction::none, "none"},
    {CompactionAction::compact, "compact"},
    {CompactionAction::cannot_fit, "cannot_fit"},
};
static_assert(support::names_every_value(kCompactionActionNames, CompactionAction::cannot_fit));

std::span<const support::EnumName<CompactionAction>> enum_names(CompactionAction) noexcept {
  return kCompactionActionNames;
}

std::string_view compaction_action_name(CompactionAction action) noexcept { return support::enum_name(action, "?"); }

std::uint64_t summary_request_overhead_tokens(std::size_t turn_count) noexcept {
  static const std::uint64_t kBase = estimate_tokens(instructions_text(CompactionOptions{})) + 64;
  return kBase + kTokensPerTurnMarker * turn_count;
}

CompactionPlan plan_compaction(const CompactionInput& input, const CompactionOptions& options) {
  CompactionPlan plan;
  std::uint64_t history = 0;
  for (const TurnSize& t : input.turns) history += t.tokens;
  plan.tokens_before = input.pinned_tokens + history + input.new_input_tokens;
  plan.tokens_after = plan.tokens_before;

  if (!(options.threshold > 0.0 && options.threshold <= 1.0)) {
    plan.action = CompactionAction::cannot_fit;
    plan.message =
        fmt::format("compaction threshold {} is not a fraction in (0, 1]: fix the configuration", options.threshold);
    return plan;
  }
  const std::uint64_t window = options.context_window;
  if (window <= options.reserve_tokens + options.summary_max_tokens) {
    plan.action = CompactionAction::cannot_fit;
    plan.message = fmt::format(
        "the {}-token context window leaves no room beside the {}-token compaction reserve and the {}-token "
        "summary: use a model with a larger window or lower the reserve",
        window, options.reserve_tokens, options.summary_max_tokens);
    return plan;
  }
  const auto by_threshold = static_cast<std::uint64_t>(std::floor(static_cast<double>(window) * options.threshold));
  plan.limit = std::min(by_threshold, window - options.reserve_tokens);
  const std::string limit_words =
      plan.limit < by_threshold
          ? fmt::format(
                "the limit of {} tokens (the {}-token context window less the {}-token reserve kept for "
                "compaction)",
                plan.limit, window, options.reserve_tokens)
          : fmt::format("the limit of {} tokens ({}% of the {}-token context window)", plan.limit,
                        format_score(options.threshold * 100), window);

  if (!input.forced && plan.tokens_before <= plan.limit) {
    plan.message = fmt::format("no compaction needed: the request needs about {} tokens, within {}", plan.tokens_before,
                               limit_words);
    return plan;
  }

  const std::size_t n = input.turns.size();
  const std::size_t keep = std::min(options.keep_latest, n);
  const std::size_t candidates = n - keep;
  std::uint64_t kept_tokens = 0;
  for (std::size_t i = candidates; i < n; ++i) kept_tokens += input.turns[i].tokens;
  // What takes the room when compaction cannot help, so the user knows what to shrink.
  auto what_stays = [&](std::uint64_t older_left) {
    std::string s = fmt::format("pinned text (system rules, instructions, skills, tools) {}, the latest {} turn{} {}",
                                input.pinned_tokens, keep, keep == 1 ? "" : "s", kept_tokens);
    if (older_left > 0) s += fmt::format(", older turns too large for one summarization request {}", older_left);
    s += fmt::format(", the new input {}", input.new_input_tokens);
    return s;
  };
  constexpr std::string_view kAdvice =
      "Shorten the input, trim large pinned instructions (AGENTS.md) or skills, or start a new session.";

  // Only an earlier summary older than the kept turns: summarizing it again frees nothing.
  const bool only_summary = candidates == 1 && input.turns[0].summary;
  if (candidates == 0 || only_summary) {
    const std::string why = candidates == 0
                                ? fmt::format("the history has {} turn{} and the latest {} are never summarized", n,
                                              n == 1 ? "" : "s", options.keep_latest)
                                : fmt::format("everything before the latest {} turns is already summarized", keep);
    if (input.forced && plan.tokens_before <= plan.limit) {
      plan.message = fmt::format("nothing to compact: {}", why);
      return plan;
    }
    plan.action = CompactionAction::cannot_fit;
    plan.message = fmt::format(
        "cannot free enough room: the request needs about {} tokens, over {}, and {}. What takes the room: {}. {}",
        plan.tokens_before, limit_words, why, what_stays(0), kAdvice);
    return plan;
  }

  // The oldest turns, as many as one summarization request can hold: their text, the instructions and
  // markers, and the summary it writes must fit the window.
  std::size_t count = 0;
  std::uint64_t summarized = 0;
  while (count < candidates) {
    const std::uint64_t next = summarized + input.turns[count].tokens;
    if (next + summary_request_overhead_tokens(count + 1) + options.summary_max_tokens > window) break;
    summarized = next;
    ++count;
  }
  std::uint64_t older_left = 0;
  for (std::size_t i = count; i < candidates; ++i) older_left += input.turns[i].tokens;
  if (count == 0) {
    plan.action = CompactionAction::cannot_fit;
    plan.message = fmt::format(
        "cannot free enough room: the oldest turn ({}, about {} tokens) is too large to summarize in one request "
        "of the {}-token context window. {}",
        input.turns[0].turn_id, input.turns[0].tokens, window, kAdvice);
    return plan;
  }
  plan.tokens_after = plan.tokens_before - summarized + options.summary_max_tokens;
  if (plan.tokens_after > plan.limit) {
    plan.action = CompactionAction::cannot_fit;
    plan.message = fmt::format(
        "cannot free enough room: even with {} summarized, the request would need about {} tokens, over {}. "
        "What takes the room: {}. {}",
        turn_range(input.turns[0].turn_id, input.turns[count - 1].turn_id, count), plan.tokens_after, limit_words,
        what_stays(older_left), kAdvice);
    plan.tokens_after = plan.tokens_before;
    return plan;
  }
  plan.action = CompactionAction::compact;
  plan.summarize_count = count;
  plan.first_turn_id = input.turns[0].turn_id;
  plan.last_turn_id = input.turns[count - 1].turn_id;
  plan.summarized_tokens = summarized;
  const std::string what = fmt::format("summarizing {} (about {} tokens) and keeping the latest {} as they are",
                                       turn_range(plan.first_turn_id, plan.last_turn_id, count), summarized, n - count);
  if (input.forced) {
    plan.message = fmt::format("compacting on request: {}; about {} tokens before, at most {} after", what,
                               plan.tokens_before, plan.tokens_after);
  } else {
    plan.message = fmt::format("compacting: the request would need about {} tokens, over {}; {}; at most {} after",
                               plan.tokens_before, limit_words, what, plan.tokens_after);
  }
  return plan;
}

SummaryRequest build_summary_request(std::span<const TranscriptTurn> turns, const CompactionOptions& options) {
  SummaryRequest request;
  request.system = instructions_text(options);
  request.max_output_tokens = options.summary_max_tokens;
  const std::string first = turns.empty() ? std::string() : turns.front().turn_id;
  const std::string last = turns.empty() ? std::string() : turns.back().turn_id;
  request.user = fmt::format("Summarize this transcript of {}, oldest first.\n", turn_range(first, last, turns.size()));
  for (const TranscriptTurn& t : turns) {
    const std::string_view tag = t.summary ? "earlier-summary" : "turn";
    request.user += fmt::format("\n<{} id=\"{}\">\n", tag, t.turn_id);
    request.user += t.text;
    if (!t.text.empty() && t.text.back() != '\n') request.user += '\n';
    request.user += fmt::format("</{}>\n", tag);
  }
  request.user += "\nNow write the summary, with the five sections.\n";
  request.estimated_tokens = estimate_tokens(request.system) + estimate_tokens(request.user);
  return request;
}

bool CompactionSummary::empty() const noexcept {
  return goals.empty() && decisions.empty() && files_touched.empty() && open_tasks.empty() && errors_seen.empty() &&
         notes.empty();
}

support::Result<ParsedSummary> parse_summary(std::string_view model_text) {
  std::string_view text = support::trim(model_text);
  if (text.empty()) return Error(Errc::parse_error, "the model's summary was empty: nothing to compact with");
  text = strip_fence(text);

  ParsedSummary out;
  std::vector<bool> seen(kSections.size(), false);
  bool any_heading = false;
  if (text.front() == '{' && parse_json_summary(text, out, seen)) {
    any_heading = true;
  } else {
    parse_markdown_summary(text, out, seen, &any_heading);
  }
  if (!any_heading) {
    out.warnings.push_back("no sections recognized: the whole answer is kept under Notes");
  }
  for (const SectionInfo& info : kSections) {
    if (info.section == Section::notes) continue;
    if (!seen[static_cast<std::size_t>(info.section)]) {
      out.warnings.push_back(fmt::format("missing section: {}", info.title));
    }
  }
  if (out.summary.empty()) {
    out.warnings.push_back("the summary has no items (every section is empty or \"none\")");
  }
  return out;
}

Json summary_to_json(const CompactionSummary& summary) {
  Json out = Json::object();
  out.set("version", 1);
  for (const SectionInfo& info : kSections) {
    Json items = Json::array();
    for (const std::string& item : items_of(summary, info.section)) items.push_back(item);
    out.set(info.key, std::move(items));
  }
  return out;
}

support::Result<CompactionSummary> summary_from_json(const Json& json) {
  if (!json.is_object()) {
    return Error(Errc::parse_error, fmt::format("summary: expected an object, got {}", json.type_name()));
  }
  CompactionSummary out;
  std::string error;
  for (const SectionInfo& info : kSections) {
    items_of(out, info.section) = strings_at(json, info.key, &error);
    if (!error.empty()) return Error(Errc::parse_error, error);
  }
  return out;
}

support::Result<CompactionSummary> summary_from_json_text(std::string_view json_text) {
  auto json = support::parse_json(json_text);
  if (!json) return std::move(json).error().context("summary");
  return summary_from_json(*json);
}

std::string render_summary(const CompactionSummary& summary, const SummaryScope& scope, std::uint64_t max_tokens) {
  std::string text = render_text(summary, scope, 0, max_tokens);
  if (estimate_tokens(text) <= max_tokens) return text;
  // Too long: leave out items, always the last of the longest section, until it fits.
  CompactionSummary cut = summary;
  std::size_t left_out = 0;
  while (estimate_tokens(text) > max_tokens) {
    std::vector<std::string>* longest = nullptr;
    std::size_t longest_bytes = 0;
    for (const SectionInfo& info : kSections) {
      auto& items = items_of(cut, info.section);
      std::size_t bytes = 0;
      for (const std::string& item : items) bytes += item.size();
      if (!items.empty() && bytes > longest_bytes) {
        longest = &items;
        longest_bytes = bytes;
      }
    }
    if (longest == nullptr) break;
    longest->pop_back();
    ++left_out;
    text = render_text(cut, scope, left_out, max_tokens);
  }
  if (estimate_tokens(text) > max_tokens) {
    // Even the headings do not fit: a hard cut, at a character boundary.
    std::size_t at = static_cast<std::size_t>(std::min<std::uint64_t>(text.size(), max_tokens * 4));
    at = support::utf8_floor(text, at);
    text.resize(at);
  }
  return text;
}

}  // namespace agentd::core::memory
