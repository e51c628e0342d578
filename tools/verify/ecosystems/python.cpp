// Python: pytest. Discovered from pytest.ini, pyproject.toml, tox.ini, setup.cfg or conftest.py, started
// the way that works here (a project virtualenv, python3 -m pytest, or the pytest on PATH); narrowed
// to the changed test files (or test_<name>.py / <name>_test.py for a changed module); output ranked by
// pytest's sections (FAILURES, short test summary info) and counted from its final "N failed, N passed" line.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/support/spawn.h"
#include "core/support/text.h"
#include "tools/shell_command.h"
#include "tools/verify/ecosystem.h"
#include "tools/verify/ecosystem_util.h"
#include "tools/verify/locator.h"

// The ranker is a ladder of "this kind of line gets that rank": several rungs share a rank on purpose.
// NOLINTBEGIN(bugprone-branch-clone)
namespace agentd::tools::verify {
namespace {

namespace fs = std::filesystem;

// ---- discover ----

// Where pytest is configured in `dir`, as a `source` text; empty when it is not.
std::string pytest_source(const fs::path& dir) {
  if (is_file(dir / "pytest.ini")) return "pytest.ini";
  if (const auto text = read_text(dir / "pyproject.toml")) {
    if (contains(*text, "[tool.pytest.ini_options]")) return "pyproject.toml [tool.pytest.ini_options]";
    if (contains(*text, "[tool.pytest]")) return "pyproject.toml [tool.pytest]";
  }
  if (const auto text = read_text(dir / "tox.ini")) {
    if (contains(*text, "[pytest]")) return "tox.ini [pytest]";
    if (contains(*text, "[tool:pytest]")) return "tox.ini [tool:pytest]";
  }
  if (const auto text = read_text(dir / "setup.cfg")) {
    if (contains(*text, "[tool:pytest]")) return "setup.cfg [tool:pytest]";
  }
  if (is_file(dir / "conftest.py")) return "conftest.py";
  if (const auto text = read_text(dir / "pyproject.toml")) {
    if (contains(*text, "\"pytest") || contains(*text, "'pytest") || contains(*text, "\npytest")) {
      return "pyproject.toml (pytest in its dependencies)";
    }
  }
  return {};
}

// The interpreter a script's "#!" line names ("#!/usr/bin/env python3" looks python3 up in `path`), or
// empty when the file has none.
std::string interpreter_of(const fs::path& script, std::string_view path) {
  const auto head = read_text(script, 256);
  if (!head || !head->starts_with("#!")) return {};
  const auto line = lines_of(*head);
  const auto parts = words(std::string_view(line.front()).substr(2));
  if (parts.empty()) return {};
  if (fs::path(std::string(parts[0])).filename() == "env" && parts.size() > 1) {
    return support::find_in_path(parts[1], path).value_or(std::string());
  }
  return std::string(parts[0]);
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return !a.empty() && !b.empty() && fs::equivalent(a, b, ec);
}

// How pytest is started here, and why. `python3 -m pytest` is preferred (it puts the project's root on
// sys.path, as tests importing the package expect), but only when that python3 has pytest: with pyenv,
// conda or a Homebrew python first on PATH, python3 is often not the interpreter the `pytest` on PATH
// runs under, and then that interpreter is used. Read from files only: the `pytest` script's "#!" line
// against the python3 on PATH.
std::pair<std::string, std::string> pytest_invocation(const fs::path& dir) {
  // A project virtualenv has the project's pytest; the system python3 may have none.
  for (const char* venv : {".venv/bin/python", "venv/bin/python"}) {
    if (is_file(dir / venv)) return {fmt::format("{} -m pytest", venv), {}};
  }
  const char* env_path = std::getenv("PATH");
  const std::string_view path = env_path != nullptr && *env_path != '\0' ? env_path : "/usr/local/bin:/usr/bin:/bin";
  const auto python = support::find_in_path("python3", path);
  const auto pytest = support::find_in_path("pytest", path);
  if (!pytest) {
    return {"python3 -m pytest",
            python ? "no pytest on PATH: `python3 -m pytest` works only if python3 has pytest installed"
                   : "neither python3 nor pytest is on PATH: install pytest (pip install pytest)"};
  }
  const std::string interpreter = interpreter_of(*pytest, path);
  if (!python || interpreter.empty() || same_file(interpreter, *python) || !is_file(interpreter)) {
    return {"python3 -m pytest", {}};
  }
  // That interpreter, with -m: the bare `pytest` script would not put the project's root on sys.path.
  return {shell_quote(interpreter) + " -m pytest",
          fmt::format("{} runs under {}, and the python3 on PATH ({}) may not have pytest: using {} -m pytest", *pytest,
                      interpreter, *python, interpreter)};
}

void discover_pytest(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  const std::string source = pytest_source(dir);
  if (source.empty()) return;
  const std::string prefix = prefix_of(dir, workspace);
  auto [invocation, why] = pytest_invocation(dir);
  if (!why.empty()) out.notes.push_back(fmt::format("{}pytest: {}", prefix, why));
  VerificationCommand command;
  command.id = prefix + "pytest";
  command.command = std::move(invocation);
  command.runner = RunnerKind::pytest;
  command.cwd = dir;
  command.source = prefix + source;
  out.commands.push_back(std::move(command));
}

// ---- narrow ----

bool is_python_test(const fs::path& file) {
  const std::string name = file.filename().string();
  return (name.starts_with("test_") || name.ends_with("_test.py")) && name != "test_.py";
}

fs::path python_test_for(const fs::path& file, const fs::path& root) {
  std::string stem = file.stem().string();
  if (stem == "__init__" || stem == "__main__") stem = file.parent_path().filename().string();
  std::vector<fs::path> candidates;
  for (const auto& dir : test_dirs_for(file, root)) {
    candidates.push_back(dir / ("test_" + stem + ".py"));
    candidates.push_back(dir / (stem + "_test.py"));
  }
  return first_existing(candidates);
}

std::optional<Suggestion> narrow_pytest(const VerificationCommand& base, const std::vector<fs::path>& files) {
  std::vector<std::string> targets;
  std::vector<std::string> mapped;
  for (const auto& file : files) {
    const std::string rel = relative_to(file, base.cwd);
    if (rel.empty())
      return full(base, fmt::format("{} is outside {}: running the full command", file.string(), base.cwd.string()));
    if (file.filename() == "conftest.py") {
      return full(base, fmt::format("{} changed: fixtures there can affect every test", rel));
    }
    if (is_python_test(file)) {
      targets.push_back(rel);
      continue;
    }
    const fs::path test = python_test_for(file, base.cwd);
    if (test.empty()) {
      return full(base, fmt::format("no test file found for {} (looked for test_{}.py and {}_test.py): running the "
                                    "full command",
                                    rel, file.stem().string(), file.stem().string()));
    }
    targets.push_back(relative_to(test, base.cwd));
    mapped.push_back(fmt::format("{} -> {}", rel, targets.back()));
  }
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  std::string reason = fmt::format("pytest runs only {}", list_names(targets));
  if (!mapped.empty()) reason += fmt::format(" (tests of changed sources: {})", list_names(mapped));
  return narrowed(base, base.command + " " + join_quoted(targets), std::move(reason));
}

// ---- rank, summarise ----

void rank_pytest(const std::vector<std::string_view>& lines, Ranks& ranks) {
  enum class Section { none, failures, short_summary, warnings, other };
  Section section = Section::none;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::string_view t = support::trim(line);
    if (t.starts_with("===") && t.ends_with("===")) {
      const std::string_view title = support::trim(
          std::string_view(t).substr(t.find_first_not_of('='), t.find_last_not_of('=') - t.find_first_not_of('=') + 1));
      if (title == "FAILURES" || title == "ERRORS") {
        section = Section::failures;
        ranks[i] = kDetail;
      } else if (title == "short test summary info") {
        section = Section::short_summary;
        ranks[i] = kContext;
      } else if (contains(title, "warnings summary")) {
        section = Section::warnings;
      } else if (contains(title, " in ") || contains(title, "no tests ran")) {
        ranks[i] = kSummary;  // "1 failed, 2 passed in 0.03s"
        section = Section::other;
      } else {
        section = Section::other;
      }
      continue;
    }
    if (t.starts_with("!!!!")) {
      ranks[i] = kSummary;  // "!!! Interrupted: 1 error during collection !!!"
      continue;
    }
    if (t.starts_with("ERROR: ") || contains(line, "No module named pytest")) {
      ranks[i] = kSummary;
      continue;
    }
    switch (section) {
      case Section::failures:
        if (t.starts_with("___") && t.ends_with("___")) {
          ranks[i] = kSummary;  // "_____ test_sub _____": the failing test
        } else if (t.starts_with("E ") || t == "E" || t.starts_with(">")) {
          ranks[i] = kDetail;
        } else if (has_location(line) && !line.starts_with(' ')) {
          ranks[i] = kDetail;  // "tests/test_calc.py:9: AssertionError"
        } else if (contains(line, "Error") || contains(line, "Exception")) {
          ranks[i] = kDetail;
        } else if (!t.empty()) {
          ranks[i] = kContext;
        }
        break;
      case Section::short_summary:
        if (t.starts_with("FAILED ") || t.starts_with("ERROR ")) ranks[i] = kSummary;
        break;
      default:
        if (t.starts_with("collected ") || contains(t, "error") || contains(t, "Error")) ranks[i] = kContext;
        break;
    }
  }
}

std::optional<TestCounts> summarise_pytest(const OutputLines& lines) {
  TestCounts counts;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string_view t = support::trim(*it);
    const std::size_t first = t.find_first_not_of('=');
    const std::size_t last = t.find_last_not_of('=');
    if (first == std::string_view::npos) continue;
    t = support::trim(t.substr(first, last - first + 1));
    if (t.starts_with("no tests ran")) {
      counts.no_tests = true;
      return counts;
    }
    if (!contains(t, " in ")) continue;
    const auto pairs = counts_in(t);
    if (pairs.empty()) continue;
    add_counts(counts, pairs);
    if (counts.total() == 0 &&
        !std::any_of(pairs.begin(), pairs.end(), [](const auto& p) { return p.second == "deselected"; })) {
      continue;
    }
    counts.no_tests = counts.total() == 0;
    return counts;
  }
  return std::nullopt;
}

bool guess_pytest(std::string_view command) { return has_word(command, "pytest") || has_word(command, "py.test"); }

bool sniff_pytest(std::string_view output) {
  return contains(output, "test session starts") || contains(output, "short test summary info") ||
         contains(output, "No module named pytest");
}

bool root_has_pytest(const fs::path& /*root*/, const Discovery& found) {
  return std::any_of(found.commands.begin(), found.commands.end(),
                     [](const VerificationCommand& c) { return c.runner == RunnerKind::pytest; });
}

}  // namespace

const Ecosystem& python_ecosystem() {
  static const Ecosystem kPython{
      .name = "python",
      .runners = {{.kind = RunnerKind::pytest,
                   .counts_tests = true,
                   .guess_order = 2,
                   .guess = guess_pytest,
                   .sniff_order = 1,
                   .sniff = sniff_pytest,
                   .rank = rank_pytest,
                   .summarise = summarise_pytest}},
      .stage = DiscoveryStage::manifests,
      .discover = discover_pytest,
      .root_has_project = root_has_pytest,
      .language = Language::python,
      .language_name = "Python",
      .extensions = {".py"},
      .narrow = narrow_pytest,
  };
  return kPython;
}

}  // namespace agentd::tools::verify
// NOLINTEND(bugprone-branch-clone)
