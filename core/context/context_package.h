// The ContextPackage: what retrieve_context (core/context/retrieve.h) found for one turn: the task's kind,
// the workspace's state, budgeted evidence slices with why each was chosen, what was left out and why, and
// the open questions. Rendered once to the text block the model sees, and to JSON for
// `_agentd/context/preview`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/enum_names.h"
#include "core/support/json.h"
#include "core/support/text.h"

namespace agentd::core::context {

// About four bytes per token: the engine's one estimate (core/support/text.h).
using support::estimate_tokens;

enum class TaskKind { bugfix, review, feature, config, question };
std::string_view task_kind_name(TaskKind kind) noexcept;
std::span<const support::EnumName<TaskKind>> enum_names(TaskKind) noexcept;

struct TaskClassification {
  TaskKind kind = TaskKind::question;
  double confidence = 0;             // 0..1: the winner's share of all the evidence for any kind
  std::vector<std::string> signals;  // what decided it: `stack trace (3 frames)`, `word "crash"`
};

// Where a candidate came from. Names (source_name) are stable: they appear in the JSON.
enum class Source {
  stack_trace,     // a path and line parsed from an error stack in the input
  mentioned_path,  // a file name or path written in the input
  glob,            // a glob written in the input, matched against the file index
  test_name,       // a test named in the input (failing-test output, pytest ids, gtest names)
  identifier,      // an identifier from the input, found by the grep engine
  quoted_string,   // a quoted string from the input (an error message), found by the grep engine
  git_changed,     // a file changed in the working tree or the index
  config_file,     // a configuration file, for a configuration task
  report_words,    // the report's words, found with the grep engine and weighted by their rarity (BM25)
  reference,       // defines what a found definition calls: one hop from the report's names
};
std::string_view source_name(Source source) noexcept;
std::span<const support::EnumName<Source>> enum_names(Source) noexcept;

// One part of a score, so a ranking can be explained ("stack frame #1 +130").
struct ScoreTerm {
  double points = 0;
  std::string why;
};

struct Evidence {
  std::string id;              // "E1", "E2", ... in rank order
  std::string path;            // relative to the cwd when under it, else absolute
  std::size_t start_line = 0;  // 1-based, inclusive
  std::size_t end_line = 0;
  std::string reason;  // one line for people and the model
  double score = 0;
  Source source = Source::identifier;  // of the best hit in the slice
  std::vector<ScoreTerm> score_terms;
  std::string text;  // the lines, each "N\t<line>\n"
};

struct OmittedCandidate {
  std::string path;
  std::string reason;  // why it is not evidence: over the budget, binary, denied, not in the workspace...
  double score = 0;
  Source source = Source::identifier;
  std::size_t line = 0;  // 0: the file as a whole
};

// One file of the ranking, whether or not any of it fit the budget: the budget decides what is read, not
// what is ranked. A file ranks by its best slice.
struct RankedFile {
  std::string path;  // as Evidence::path
  double score = 0;
  Source source = Source::identifier;  // of the best hit
  std::vector<ScoreTerm> score_terms;  // of the best slice
  std::string evidence_id;             // the first evidence block showing the file; empty when none does
};

struct ChangedFile {
  std::string path;       // relative to the cwd when under it
  std::string status;     // "modified", "added", "deleted", "renamed", "untracked", "conflicted", "type changed"
  bool staged = false;    // the index differs from HEAD
  bool unstaged = false;  // the working tree differs from the index (or the file is untracked)
};

struct WorkspaceInfo {
  std::string cwd;
  std::vector<std::string> additional_dirs;
  bool git_repository = false;
  std::optional<std::string> branch;  // absent outside a repository; "(detached at abc1234)" when detached
  std::vector<ChangedFile> changed_files;
  std::size_t changed_files_total = 0;  // before any cap
  std::string git_note;                 // why git state is missing or partial ("git not found"), else empty
};

// How the retrieval went, for the preview and the benchmark.
struct RetrievalStats {
  double index_ms = 0;
  double git_ms = 0;
  double search_ms = 0;
  double read_ms = 0;
  double total_ms = 0;
  std::size_t indexed_files = 0;
  std::size_t searched_files = 0;
  std::size_t searched_bytes = 0;  // of the text files searched
  bool search_exhaustive = true;   // every indexed file was searched (false: a focused search of a big tree)
  bool index_refreshed = false;    // the index changed this turn (a first walk or a refresh found changes)
  // How a focused search chose its files: "ready (...)" from the content index, else why not (it is
  // still building, or failed) and that path words chose them. Empty for a whole-tree search.
  std::string content_index;
  std::size_t candidates = 0;  // slices considered
};

struct ContextPackage {
  TaskClassification task;
  WorkspaceInfo workspace;
  std::vector<Evidence> evidence;  // best first
  std::vector<RankedFile> ranked;  // every candidate file, best first, at most ContextLimits::max_ranked
  std::vector<OmittedCandidate> omitted;
  std::size_t omitted_total = 0;  // omitted may be capped; this is how many there were
  std::vector<std::string> open_questions;
  std::uint64_t budget_tokens = 0;
  std::uint64_t used_tokens = 0;  // estimate_tokens(text); never above budget_tokens
  RetrievalStats stats;
  std::string text;  // what the model sees; empty when nothing fits the budget
};

// The JSON of `_agentd/context/preview`: {task, workspace, evidence, ranked, omitted, openQuestions, budget,
// stats, text}. Evidence entries carry {id, path, startLine, endLine, reason, score, source, scoreTerms};
// ranked ones {rank, path, score, source, scoreTerms, evidence (the id, when shown)}.
support::Json to_json(const ContextPackage& package);

// The pieces the text is built from; retrieve.cpp measures each against the budget before keeping it.
std::string render_header(const TaskClassification& task, const WorkspaceInfo& workspace, std::size_t max_changed);
std::string render_evidence(const Evidence& evidence);
std::string render_omitted(const std::vector<OmittedCandidate>& omitted, std::size_t shown, std::size_t total);
std::string render_questions(const std::vector<std::string>& questions);
inline constexpr std::string_view kPackageOpen = "<workspace_context>\n";
inline constexpr std::string_view kPackageClose = "</workspace_context>\n";

}  // namespace agentd::core::context
