#include "core/context/context_package.h"

#include <cmath>

#include <fmt/format.h>

namespace agentd::core::context {
namespace {

// Scores are sums of small terms; one decimal is all the precision they have.
double rounded(double score) { return std::round(score * 10) / 10; }

std::string format_score(double score) { return fmt::format("{:g}", rounded(score)); }

}  // namespace

constexpr support::EnumName<TaskKind> kTaskKindNames[] = {
    {TaskKind::bugfix, "bugfix"}, {TaskKind::review, "review"},     {TaskKind::feature, "feature"},
    {TaskKind::config, "config"}, {TaskKind::question, "question"},
};
static_assert(support::names_every_value(kTaskKindNames, TaskKind::question));

std::span<const support::EnumName<TaskKind>> enum_names(TaskKind) noexcept { return kTaskKindNames; }

std::string_view task_kind_name(TaskKind kind) noexcept { return support::enum_name(kind, "question"); }

constexpr support::EnumName<Source> kSourceNames[] = {
    {Source::stack_trace, "stack_trace"},
    {Source::mentioned_path, "mentioned_path"},
    {Source::glob, "glob"},
    {Source::test_name, "test_name"},
    {Source::identifier, "identifier"},
    {Source::quoted_string, "quoted_string"},
    {Source::git_changed, "git_changed"},
    {Source::config_file, "config_file"},
    {Source::report_words, "report_words"},
    {Source::reference, "reference"},
};
static_assert(support::names_every_value(kSourceNames, Source::reference));

std::span<const support::EnumName<Source>> enum_names(Source) noexcept { return kSourceNames; }

std::string_view source_name(Source source) noexcept { return support::enum_name(source, "identifier"); }

std::string render_header(const TaskClassification& task, const WorkspaceInfo& workspace, std::size_t max_changed) {
  std::string out(kPackageOpen);
  out += fmt::format("Task: {}", task_kind_name(task.kind));
  if (!task.signals.empty()) {
    out += " (";
    for (std::size_t i = 0; i < task.signals.size(); ++i) {
      if (i > 0) out += "; ";
      out += task.signals[i];
    }
    out += ')';
  }
  out += '\n';
  out += fmt::format("Workspace: {}\n", workspace.cwd);
  for (const auto& dir : workspace.additional_dirs) out += fmt::format("Additional directory: {}\n", dir);
  if (workspace.git_repository) {
    out += fmt::format("Branch: {}\n", workspace.branch.value_or("(unknown)"));
    if (!workspace.git_note.empty()) out += fmt::format("Git: {}\n", workspace.git_note);
    if (workspace.changed_files_total == 0) {
      out += "Changed files: none\n";
    } else {
      out += fmt::format("Changed files ({}):", workspace.changed_files_total);
      const std::size_t shown = std::min(max_changed, workspace.changed_files.size());
      for (std::size_t i = 0; i < shown; ++i) {
        const auto& file = workspace.changed_files[i];
        out += fmt::format("{} {} ({}{})", i == 0 ? "" : ",", file.path, file.status,
                           file.staged && file.unstaged ? ", staged and unstaged"
                           : file.staged                ? ", staged"
                                                        : "");
      }
      if (shown < workspace.changed_files_total)
        out += fmt::format(", and {} more", workspace.changed_files_total - shown);
      out += '\n';
    }
  } else {
    out += fmt::format("Git: {}\n", workspace.git_note.empty() ? "not a git repository" : workspace.git_note);
  }
  out += '\n';
  return out;
}

std::string render_evidence(const Evidence& evidence) {
  std::string out = fmt::format("Evidence {}: {}:{}-{}\nReason: {}\n", evidence.id, evidence.path, evidence.start_line,
                                evidence.end_line, evidence.reason);
  out += evidence.text;
  out += '\n';
  return out;
}

std::string render_omitted(const std::vector<OmittedCandidate>& omitted, std::size_t shown, std::size_t total) {
  if (total == 0) return {};
  std::string out = "Omitted candidates:\n";
  for (std::size_t i = 0; i < shown && i < omitted.size(); ++i) {
    const auto& o = omitted[i];
    out += o.line > 0 ? fmt::format("- {}:{} ({}, score {}): {}\n", o.path, o.line, source_name(o.source),
                                    format_score(o.score), o.reason)
                      : fmt::format("- {} ({}, score {}): {}\n", o.path, source_name(o.source), format_score(o.score),
                                    o.reason);
  }
  if (shown < total) out += fmt::format("- and {} more\n", total - shown);
  out += '\n';
  return out;
}

std::string render_questions(const std::vector<std::string>& questions) {
  if (questions.empty()) return {};
  std::string out = "Open questions:\n";
  for (const auto& q : questions) out += fmt::format("- {}\n", q);
  out += '\n';
  return out;
}

support::Json to_json(const ContextPackage& package) {
  using support::Json;
  Json out = Json::object();

  Json task = Json::object();
  task.set("kind", task_kind_name(package.task.kind));
  task.set("confidence", std::round(package.task.confidence * 100) / 100);
  Json signals = Json::array();
  for (const auto& s : package.task.signals) signals.push_back(s);
  task.set("signals", std::move(signals));
  out.set("task", std::move(task));

  const auto& ws = package.workspace;
  Json workspace = Json::object();
  workspace.set("cwd", ws.cwd);
  Json dirs = Json::array();
  for (const auto& d : ws.additional_dirs) dirs.push_back(d);
  workspace.set("additionalDirectories", std::move(dirs));
  workspace.set("gitRepository", ws.git_repository);
  workspace.set("branch", ws.branch ? Json(*ws.branch) : Json());
  Json changed = Json::array();
  for (const auto& f : ws.changed_files) {
    Json file = Json::object();
    file.set("path", f.path);
    file.set("status", f.status);
    file.set("staged", f.staged);
    file.set("unstaged", f.unstaged);
    changed.push_back(std::move(file));
  }
  workspace.set("changedFiles", std::move(changed));
  workspace.set("changedFilesTotal", ws.changed_files_total);
  if (!ws.git_note.empty()) workspace.set("gitNote", ws.git_note);
  out.set("workspace", std::move(workspace));

  const auto terms_json = [](const std::vector<ScoreTerm>& score_terms) {
    Json terms = Json::array();
    for (const auto& t : score_terms) {
      Json term = Json::object();
      term.set("points", rounded(t.points));
      term.set("why", t.why);
      terms.push_back(std::move(term));
    }
    return terms;
  };
  Json evidence = Json::array();
  for (const auto& e : package.evidence) {
    Json item = Json::object();
    item.set("id", e.id);
    item.set("path", e.path);
    item.set("startLine", e.start_line);
    item.set("endLine", e.end_line);
    item.set("reason", e.reason);
    item.set("score", rounded(e.score));
    item.set("source", source_name(e.source));
    item.set("scoreTerms", terms_json(e.score_terms));
    evidence.push_back(std::move(item));
  }
  out.set("evidence", std::move(evidence));

  Json ranked = Json::array();
  for (std::size_t i = 0; i < package.ranked.size(); ++i) {
    const RankedFile& r = package.ranked[i];
    Json item = Json::object();
    item.set("rank", i + 1);
    item.set("path", r.path);
    item.set("score", rounded(r.score));
    item.set("source", source_name(r.source));
    item.set("scoreTerms", terms_json(r.score_terms));
    if (!r.evidence_id.empty()) item.set("evidence", r.evidence_id);
    ranked.push_back(std::move(item));
  }
  out.set("ranked", std::move(ranked));

  Json omitted = Json::array();
  for (const auto& o : package.omitted) {
    Json item = Json::object();
    item.set("path", o.path);
    if (o.line > 0) item.set("line", o.line);
    item.set("reason", o.reason);
    item.set("score", rounded(o.score));
    item.set("source", source_name(o.source));
    omitted.push_back(std::move(item));
  }
  out.set("omitted", std::move(omitted));
  out.set("omittedTotal", package.omitted_total);

  Json questions = Json::array();
  for (const auto& q : package.open_questions) questions.push_back(q);
  out.set("openQuestions", std::move(questions));

  Json budget = Json::object();
  budget.set("tokens", package.budget_tokens);
  budget.set("used", package.used_tokens);
  out.set("budget", std::move(budget));

  const auto& s = package.stats;
  Json stats = Json::object();
  stats.set("indexMs", rounded(s.index_ms));
  stats.set("gitMs", rounded(s.git_ms));
  stats.set("searchMs", rounded(s.search_ms));
  stats.set("readMs", rounded(s.read_ms));
  stats.set("totalMs", rounded(s.total_ms));
  stats.set("indexedFiles", s.indexed_files);
  stats.set("searchedFiles", s.searched_files);
  stats.set("searchedBytes", s.searched_bytes);
  stats.set("searchExhaustive", s.search_exhaustive);
  stats.set("indexRefreshed", s.index_refreshed);
  if (!s.content_index.empty()) stats.set("contentIndex", s.content_index);
  stats.set("candidates", s.candidates);
  out.set("stats", std::move(stats));

  out.set("text", package.text);
  return out;
}

}  // namespace agentd::core::context
