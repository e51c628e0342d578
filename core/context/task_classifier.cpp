#include "core/context/task_classifier.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include <fmt/format.h>

#include "core/support/text.h"

namespace agentd::core::context {
namespace {

// Only the start of a long paste is read for words: a log's ten-thousandth line says nothing new.
constexpr std::size_t kMaxClassifiedBytes = 64 << 10;
constexpr std::size_t kMaxSignals = 6;

struct Cue {
  std::string_view phrase;  // lower case, words separated by single spaces
  TaskKind kind;
  double weight;
};

// Phrases are matched on word boundaries in the lower-cased input with punctuation turned into spaces.
constexpr Cue kCues[] = {
    // bugfix
    {"bug", TaskKind::bugfix, 2},
    {"bugs", TaskKind::bugfix, 2},
    {"fix", TaskKind::bugfix, 2},
    {"crash", TaskKind::bugfix, 3},
    {"crashes", TaskKind::bugfix, 3},
    {"crashed", TaskKind::bugfix, 3},
    {"error", TaskKind::bugfix, 2},
    {"errors", TaskKind::bugfix, 1.5},
    {"exception", TaskKind::bugfix, 2.5},
    {"traceback", TaskKind::bugfix, 3},
    {"segfault", TaskKind::bugfix, 3},
    {"segmentation fault", TaskKind::bugfix, 3},
    {"panic", TaskKind::bugfix, 2.5},
    {"panicked", TaskKind::bugfix, 3},
    {"fails", TaskKind::bugfix, 2},
    {"failed", TaskKind::bugfix, 1.5},
    {"failing", TaskKind::bugfix, 2},
    {"failure", TaskKind::bugfix, 1.5},
    {"broken", TaskKind::bugfix, 2},
    {"regression", TaskKind::bugfix, 2.5},
    {"wrong", TaskKind::bugfix, 1.5},
    {"incorrect", TaskKind::bugfix, 1.5},
    {"hangs", TaskKind::bugfix, 2},
    {"deadlock", TaskKind::bugfix, 2.5},
    {"leak", TaskKind::bugfix, 2},
    {"leaks", TaskKind::bugfix, 2},
    {"doesn t work", TaskKind::bugfix, 2.5},
    {"does not work", TaskKind::bugfix, 2.5},
    {"not working", TaskKind::bugfix, 2.5},
    {"stack trace", TaskKind::bugfix, 2.5},
    {"oops", TaskKind::bugfix, 1.5},
    {"assertion", TaskKind::bugfix, 2},
    {"undefined behavior", TaskKind::bugfix, 2},
    {"null pointer", TaskKind::bugfix, 2.5},
    {"off by one", TaskKind::bugfix, 2},
    {"flaky", TaskKind::bugfix, 2},
    {"debug", TaskKind::bugfix, 1.5},
    {"throws", TaskKind::bugfix, 1.5},
    {"unexpected", TaskKind::bugfix, 1},
    // review
    {"review", TaskKind::review, 3},
    {"reviewing", TaskKind::review, 3},
    {"code review", TaskKind::review, 2},
    {"pull request", TaskKind::review, 3},
    {"pr", TaskKind::review, 1.5},
    {"diff", TaskKind::review, 2},
    {"my changes", TaskKind::review, 3},
    {"these changes", TaskKind::review, 2.5},
    {"the changes", TaskKind::review, 1.5},
    {"uncommitted", TaskKind::review, 2},
    {"staged", TaskKind::review, 2},
    {"look over", TaskKind::review, 2.5},
    {"lgtm", TaskKind::review, 2},
    {"feedback", TaskKind::review, 1.5},
    {"critique", TaskKind::review, 2.5},
    {"audit", TaskKind::review, 2},
    {"before i merge", TaskKind::review, 3},
    {"before merging", TaskKind::review, 3},
    {"check my", TaskKind::review, 2.5},
    {"sanity check", TaskKind::review, 2},
    // feature
    {"add", TaskKind::feature, 2},
    {"adding", TaskKind::feature, 2},
    {"implement", TaskKind::feature, 3},
    {"implementing", TaskKind::feature, 3},
    {"create", TaskKind::feature, 2},
    {"introduce", TaskKind::feature, 2},
    {"support for", TaskKind::feature, 2.5},
    {"new feature", TaskKind::feature, 3},
    {"feature", TaskKind::feature, 2},
    {"extend", TaskKind::feature, 2},
    {"allow", TaskKind::feature, 1.5},
    {"make it", TaskKind::feature, 1.5},
    {"write a", TaskKind::feature, 2},
    {"new endpoint", TaskKind::feature, 2},
    {"new command", TaskKind::feature, 2},
    {"refactor", TaskKind::feature, 2},
    {"rename", TaskKind::feature, 1.5},
    {"should be able to", TaskKind::feature, 2},
    // config
    {"config", TaskKind::config, 3},
    {"configuration", TaskKind::config, 3},
    {"configure", TaskKind::config, 3},
    {"setting", TaskKind::config, 2},
    {"settings", TaskKind::config, 2},
    {"yaml", TaskKind::config, 2},
    {"toml", TaskKind::config, 2},
    {"environment variable", TaskKind::config, 2.5},
    {"env var", TaskKind::config, 2.5},
    {"dockerfile", TaskKind::config, 2.5},
    {"docker compose", TaskKind::config, 2.5},
    {"cmake", TaskKind::config, 2},
    {"makefile", TaskKind::config, 2},
    {"ci", TaskKind::config, 2},
    {"workflow", TaskKind::config, 2},
    {"pipeline", TaskKind::config, 1.5},
    {"github actions", TaskKind::config, 3},
    {"eslint", TaskKind::config, 2.5},
    {"prettier", TaskKind::config, 2},
    {"tsconfig", TaskKind::config, 2.5},
    {"dependency", TaskKind::config, 2},
    {"dependencies", TaskKind::config, 2},
    {"upgrade", TaskKind::config, 1.5},
    {"bump", TaskKind::config, 1.5},
    {"linter", TaskKind::config, 2},
    {"compiler flags", TaskKind::config, 2.5},
    {"build flags", TaskKind::config, 2.5},
    // question
    {"how", TaskKind::question, 1.5},
    {"what", TaskKind::question, 1},
    {"why", TaskKind::question, 1.5},
    {"where", TaskKind::question, 1.5},
    {"which", TaskKind::question, 1},
    {"explain", TaskKind::question, 3},
    {"what does", TaskKind::question, 1.5},
    {"how does", TaskKind::question, 2},
    {"where is", TaskKind::question, 2},
    {"is there", TaskKind::question, 1.5},
    {"understand", TaskKind::question, 2},
    {"describe", TaskKind::question, 2},
    {"overview", TaskKind::question, 2},
    {"walk me through", TaskKind::question, 3},
    {"what is", TaskKind::question, 1.5},
};

// Ties go to the kind whose retrieval is most specific.
constexpr std::array<TaskKind, 5> kTieOrder = {TaskKind::bugfix, TaskKind::review, TaskKind::config, TaskKind::feature,
                                               TaskKind::question};

std::size_t index_of(TaskKind kind) { return static_cast<std::size_t>(kind); }

// " word word ... " : lower case, every run of non-alphanumerics one space, padded at both ends.
std::string normalize(std::string_view input) {
  std::string out = " ";
  out.reserve(input.size() + 2);
  for (const char c : input.substr(0, kMaxClassifiedBytes)) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0) {
      out += support::ascii_lower(c);
    } else if (out.back() != ' ') {
      out += ' ';
    }
  }
  if (out.back() != ' ') out += ' ';
  return out;
}

std::size_t count_phrase(const std::string& text, std::string_view phrase) {
  const std::string needle = fmt::format(" {} ", phrase);
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size() - 1)) {
    ++count;
  }
  return count;
}

}  // namespace

bool is_config_path(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  static constexpr std::array<std::string_view, 30> kNames = {
      "CMakeLists.txt",   "CMakePresets.json",  "Makefile",
      "makefile",         "GNUmakefile",        "Dockerfile",
      "Containerfile",    "docker-compose.yml", "docker-compose.yaml",
      "compose.yaml",     "package.json",       "tsconfig.json",
      "pyproject.toml",   "setup.cfg",          "setup.py",
      "tox.ini",          "Cargo.toml",         "go.mod",
      "pom.xml",          "build.gradle",       "build.gradle.kts",
      "settings.gradle",  "meson.build",        "BUILD",
      "BUILD.bazel",      "WORKSPACE",          "Gemfile",
      "requirements.txt", ".editorconfig",      "Jenkinsfile"};
  if (std::find(kNames.begin(), kNames.end(), base) != kNames.end()) return true;
  if (path.starts_with(".github/workflows/") || path.find("/.github/workflows/") != std::string_view::npos) return true;
  if (base.starts_with(".eslintrc") || base.starts_with(".prettierrc") || base.starts_with(".clang-")) return true;
  for (std::string_view ext : {".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".properties", ".cmake"}) {
    if (base.ends_with(ext)) return true;
  }
  return false;
}

TaskClassification classify_task(std::string_view input, const InputSignals& signals) {
  std::array<double, 5> score{};
  std::array<std::vector<std::pair<double, std::string>>, 5> why;
  const std::string text = normalize(input);
  for (const Cue& cue : kCues) {
    const std::size_t n = count_phrase(text, cue.phrase);
    if (n == 0) continue;
    // Repeats count, but less: "error" ten times in a log is not ten times the evidence.
    const double points = cue.weight * (1.0 + 0.25 * static_cast<double>(std::min<std::size_t>(n - 1, 4)));
    score[index_of(cue.kind)] += points;
    why[index_of(cue.kind)].emplace_back(points, fmt::format("word \"{}\"", cue.phrase));
  }
  if (signals.stack_frames > 0) {
    const double points = 6 + static_cast<double>(std::min<std::size_t>(signals.stack_frames - 1, 3));
    score[index_of(TaskKind::bugfix)] += points;
    why[index_of(TaskKind::bugfix)].emplace_back(
        points, fmt::format("stack trace ({} frame{})", signals.stack_frames, signals.stack_frames == 1 ? "" : "s"));
  }
  if (signals.failing_tests > 0) {
    score[index_of(TaskKind::bugfix)] += 3;
    why[index_of(TaskKind::bugfix)].emplace_back(
        3, fmt::format("test output ({} test{})", signals.failing_tests, signals.failing_tests == 1 ? "" : "s"));
  }
  if (signals.config_paths > 0) {
    const double points = 3.0 * static_cast<double>(std::min<std::size_t>(signals.config_paths, 3));
    score[index_of(TaskKind::config)] += points;
    why[index_of(TaskKind::config)].emplace_back(
        points, fmt::format("configuration file{} named", signals.config_paths == 1 ? "" : "s"));
  }
  // A question mark at the end, or a question word at the start, is a question.
  std::string_view trimmed = input;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back())) != 0) trimmed.remove_suffix(1);
  if (trimmed.ends_with('?')) {
    score[index_of(TaskKind::question)] += 2;
    why[index_of(TaskKind::question)].emplace_back(2, "ends with '?'");
  }
  for (std::string_view start :
       {" how ", " what ", " why ", " where ", " which ", " can ", " does ", " is ", " explain "}) {
    if (text.starts_with(start)) {
      score[index_of(TaskKind::question)] += 2;
      why[index_of(TaskKind::question)].emplace_back(
          2, fmt::format("starts with \"{}\"", start.substr(1, start.size() - 2)));
      break;
    }
  }

  TaskClassification out;
  double total = 0;
  for (const double s : score) total += s;
  if (total == 0) {
    out.kind = TaskKind::question;
    out.confidence = 0;
    out.signals.emplace_back("no signal words; taken as a question");
    return out;
  }
  TaskKind best = kTieOrder[0];
  for (const TaskKind kind : kTieOrder) {
    if (score[index_of(kind)] > score[index_of(best)]) best = kind;
  }
  out.kind = best;
  out.confidence = score[index_of(best)] / total;
  auto& reasons = why[index_of(best)];
  std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < reasons.size() && i < kMaxSignals; ++i) out.signals.push_back(reasons[i].second);
  return out;
}

}  // namespace agentd::core::context
