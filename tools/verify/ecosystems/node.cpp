// JavaScript/TypeScript: package.json scripts (test, lint, typecheck) run with the project's package
// manager; the test script's runner (node --test, jest, vitest, or a script agentd cannot read) decides
// narrowing (test files appended, jest --findRelatedTests) and how the output is ranked and counted.
// About 500 lines because one package.json discovers three runners, each with its own ranker and summary:
// they are kept together so that the script-to-runner mapping and the runners it names are read at once.
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/support/json.h"
#include "core/support/text.h"
#include "tools/verify/ecosystem.h"
#include "tools/verify/ecosystem_util.h"
#include "tools/verify/locator.h"

// The rankers are ladders of "this kind of line gets that rank": several rungs share a rank on purpose.
// NOLINTBEGIN(bugprone-branch-clone)
namespace agentd::tools::verify {
namespace {

namespace fs = std::filesystem;
using support::Json;

// ---- discover ----

std::string package_manager(const fs::path& dir) {
  if (is_file(dir / "pnpm-lock.yaml")) return "pnpm";
  if (is_file(dir / "yarn.lock")) return "yarn";
  if (is_file(dir / "bun.lockb") || is_file(dir / "bun.lock")) return "bun";
  return "npm";
}

std::string script_command(const std::string& manager, const std::string& name) {
  if (manager == "bun") return "bun run " + name;  // `bun test` is bun's own runner, not the script
  if (name == "test") return manager + " test";
  return manager + " run " + name;
}

RunnerKind script_runner(std::string_view script) {
  if (has_word(script, "vitest")) return RunnerKind::vitest;
  if (has_word(script, "jest")) return RunnerKind::jest;
  if (has_word(script, "node") && contains(script, "--test")) return RunnerKind::node_test;
  return RunnerKind::npm_script;
}

void discover_package_json(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  const auto text = read_text(dir / "package.json");
  if (!text) return;
  auto parsed = support::parse_json(*text);
  if (!parsed || !parsed->is_object()) {
    out.notes.push_back(
        fmt::format("{}package.json is not valid JSON: its scripts were not read", prefix_of(dir, workspace)));
    return;
  }
  const Json* scripts = parsed->find("scripts");
  if (scripts == nullptr || !scripts->is_object()) return;
  const std::string manager = package_manager(dir);
  const std::string prefix = prefix_of(dir, workspace);
  struct Wanted {
    std::string_view name;
    Purpose purpose;
  };
  constexpr std::array<Wanted, 5> kWanted{{{"test", Purpose::test},
                                           {"lint", Purpose::lint},
                                           {"typecheck", Purpose::typecheck},
                                           {"type-check", Purpose::typecheck},
                                           {"check-types", Purpose::typecheck}}};
  for (const Wanted& wanted : kWanted) {
    const Json* script = scripts->find(wanted.name);
    if (script == nullptr || !script->is_string()) continue;
    const std::string& body = script->as_string();
    // npm init's placeholder fails on purpose: it is not a test command.
    if (wanted.purpose == Purpose::test && contains(body, "no test specified")) continue;
    VerificationCommand command;
    command.id = fmt::format("{}npm:{}", prefix, wanted.name);
    command.command = script_command(manager, std::string(wanted.name));
    command.runner = wanted.purpose == Purpose::test ? script_runner(body) : RunnerKind::npm_script;
    command.purpose = wanted.purpose;
    command.cwd = dir;
    command.source = fmt::format("{}package.json scripts.{}", prefix, wanted.name);
    command.script = body;
    out.commands.push_back(std::move(command));
  }
}

// ---- narrow ----

bool is_node_test(const fs::path& file, const fs::path& root) {
  const std::string name = file.filename().string();
  if (contains(name, ".test.") || contains(name, ".spec.") || name.starts_with("test-") || contains(name, "_test.")) {
    return true;
  }
  const std::string rel = relative_to(file, root);
  return rel.starts_with("test/") || rel.starts_with("tests/") || contains(rel, "/__tests__/") ||
         rel.starts_with("__tests__/");
}

fs::path node_test_for(const fs::path& file, const fs::path& root) {
  const std::string stem = file.stem().string();
  std::vector<fs::path> candidates;
  for (const auto& dir : test_dirs_for(file, root)) {
    for (const char* ext : {".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx"}) {
      candidates.push_back(dir / (stem + ".test" + ext));
      candidates.push_back(dir / (stem + ".spec" + ext));
    }
  }
  return first_existing(candidates);
}

// `node --test` with flags only (no files of its own), so appended files replace the default search.
bool node_script_takes_files(std::string_view script) {
  if (contains(script, "&&") || contains(script, ";") || contains(script, "|")) return false;
  const auto parts = words(script);
  bool after_node = false;
  for (std::string_view part : parts) {
    if (!after_node) {
      if (part == "node") after_node = true;
      continue;
    }
    if (!part.starts_with('-')) return false;
  }
  return after_node;
}

std::string npm_args(const VerificationCommand& base, const std::vector<std::string>& args) {
  // npm needs `--` before arguments meant for the script; yarn, pnpm and bun pass them on as they are.
  const bool npm = base.command.starts_with("npm ");
  return base.command + (npm ? " -- " : " ") + join_quoted(args);
}

std::optional<Suggestion> narrow_node(const VerificationCommand& base, const std::vector<fs::path>& files) {
  if (base.runner == RunnerKind::npm_script) {
    return full(base,
                fmt::format("the test script ({}) is not a runner agentd can narrow: running it whole", base.script));
  }
  if (base.runner == RunnerKind::node_test && !node_script_takes_files(base.script)) {
    return full(base, fmt::format("the test script ({}) chooses its own files, so a file cannot be added to it: "
                                  "running it whole",
                                  base.script));
  }
  std::vector<std::string> targets;
  std::vector<std::string> sources_without_tests;
  std::vector<std::string> mapped;
  for (const auto& file : files) {
    const std::string rel = relative_to(file, base.cwd);
    if (rel.empty())
      return full(base, fmt::format("{} is outside {}: running the full command", file.string(), base.cwd.string()));
    if (is_node_test(file, base.cwd)) {
      targets.push_back(rel);
      continue;
    }
    const fs::path test = node_test_for(file, base.cwd);
    if (test.empty()) {
      sources_without_tests.push_back(rel);
      continue;
    }
    targets.push_back(relative_to(test, base.cwd));
    mapped.push_back(fmt::format("{} -> {}", rel, targets.back()));
  }
  if (!sources_without_tests.empty()) {
    if (base.runner == RunnerKind::jest) {
      // jest follows imports itself: it runs every test that depends on the changed files.
      std::vector<std::string> args{"--findRelatedTests"};
      for (const auto& file : files) args.push_back(relative_to(file, base.cwd));
      return narrowed(base, npm_args(base, args),
                      fmt::format("jest --findRelatedTests runs the tests that import {}", list_names(args)));
    }
    return full(base, fmt::format("no test file found for {} (looked for <name>.test.* and <name>.spec.*): "
                                  "running the full command",
                                  list_names(sources_without_tests)));
  }
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  std::string reason = fmt::format("{} runs only {}", runner_kind_name(base.runner), list_names(targets));
  if (!mapped.empty()) reason += fmt::format(" (tests of changed sources: {})", list_names(mapped));
  return narrowed(base, npm_args(base, targets), std::move(reason));
}

// ---- rank, summarise ----

// "# tests 3" (TAP) or "ℹ tests 3" (spec reporter): the word and number after the marker.
std::optional<std::pair<std::string_view, std::int64_t>> node_counter(std::string_view line) {
  line = support::trim(line);
  if (line.starts_with("# ")) {
    line.remove_prefix(2);
  } else if (line.starts_with("\u2139 ")) {
    line.remove_prefix(std::string_view("\u2139 ").size());
  } else {
    return std::nullopt;
  }
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view number = support::trim(line.substr(space + 1));
  if (!is_digits(number)) return std::nullopt;
  return std::make_pair(line.substr(0, space), to_int(number));
}

void rank_node_test(const std::vector<std::string_view>& lines, Ranks& ranks) {
  // TAP: a failing test's YAML block runs from its "not ok" line to the "..." at its indentation.
  std::size_t block_indent = std::string_view::npos;
  std::size_t key_indent = 0;
  int block_rank = kDrop;  // the rank of the current YAML key's continuation lines
  int stack_lines = 0;
  // Spec reporter: a failure's message follows its "✖" line, indented.
  std::size_t spec_indent = std::string_view::npos;
  bool recap = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::string_view t = support::trim(line);
    const std::size_t indent = indent_of(line);
    if (block_indent != std::string_view::npos) {
      if (t == "..." && indent <= block_indent + 2) {
        block_indent = std::string_view::npos;
        continue;
      }
      if (indent == key_indent && !t.empty()) {
        const std::size_t colon = t.find(':');
        const std::string_view key = colon == std::string_view::npos ? t : t.substr(0, colon);
        stack_lines = 0;
        if (key == "location" || key == "expected" || key == "actual" || key == "operator") {
          block_rank = kDetail;
          ranks[i] = kDetail;
        } else if (key == "error") {
          block_rank = kDetail;
          ranks[i] = kDetail;
        } else if (key == "stack") {
          block_rank = kContext;
          ranks[i] = kContext;
        } else {
          block_rank = kDrop;
        }
        continue;
      }
      if (indent > key_indent && block_rank != kDrop && !t.empty()) {
        if (block_rank == kContext) {
          // Stack frames of the test runner itself say nothing about the failure.
          if (contains(t, "node:internal") || contains(t, "node:async_hooks") || ++stack_lines > 4) continue;
        }
        ranks[i] = block_rank;
      }
      continue;
    }
    if (spec_indent != std::string_view::npos) {
      if (!t.empty() && indent <= spec_indent) {
        spec_indent = std::string_view::npos;
      } else {
        if (t.empty()) continue;
        if (t.starts_with("at ")) {
          if (!contains(t, "node:internal") && !contains(t, "node:async_hooks")) ranks[i] = kContext;
        } else {
          ranks[i] = kDetail;
        }
        continue;
      }
    }
    if (t.starts_with("not ok ")) {
      ranks[i] = kSummary;
      // The YAML block that follows is indented two more than the "not ok" line.
      if (i + 1 < lines.size() && support::trim(lines[i + 1]) == "---") {
        block_indent = indent_of(lines[i + 1]);
        key_indent = block_indent;
        block_rank = kDrop;
        ++i;
      }
      continue;
    }
    if (t.starts_with("\u2716")) {  // ✖
      ranks[i] = kSummary;
      // The "✖ failing tests:" recap repeats each failure in full: its names are enough.
      if (contains(t, "failing tests:")) recap = true;
      if (!recap) spec_indent = indent;
      continue;
    }
    if (auto counter = node_counter(line)) {
      const auto& [name, value] = *counter;
      if (name == "tests" || name == "pass" || name == "fail" || (name == "cancelled" && value > 0)) {
        ranks[i] = kSummary;
      }
      continue;
    }
    if (t.starts_with("Could not find") || t.starts_with("Error:") || contains(t, "Error [ERR_")) ranks[i] = kSummary;
    if (t.starts_with("test at ")) ranks[i] = kDetail;  // spec: where a failing test is
  }
}

void rank_jest(const std::vector<std::string_view>& lines, Ranks& ranks) {
  bool in_failure = false;  // after a "●" header, until the summary
  bool first_message = false;
  bool location_taken = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::string_view t = support::trim(line);
    if (t.starts_with("FAIL ")) {
      ranks[i] = kSummary;
      in_failure = false;
      continue;
    }
    if (t.starts_with("PASS ")) {
      in_failure = false;
      continue;
    }
    if (t.starts_with("Test Suites:") || t.starts_with("Tests:") || t.starts_with("No tests found")) {
      ranks[i] = kSummary;
      in_failure = false;
      continue;
    }
    if (t.starts_with("Snapshots:") || t.starts_with("Time:") || t.starts_with("Ran all test suites")) {
      ranks[i] = kContext;
      continue;
    }
    if (t.starts_with("\u25cf ")) {  // ● Suite › test
      ranks[i] = kSummary;
      in_failure = true;
      first_message = true;
      location_taken = false;
      continue;
    }
    if (t.starts_with("\u2715 ")) {  // ✕ test (verbose)
      ranks[i] = kSummary;
      continue;
    }
    if (!in_failure || t.empty()) continue;
    if (t.starts_with("at ")) {
      if (!location_taken && !contains(t, "node_modules") && !contains(t, "node:internal")) {
        ranks[i] = kDetail;
        location_taken = true;
      }
      continue;
    }
    const bool code_frame =
        t.find('|') != std::string_view::npos &&
        (std::isdigit(static_cast<unsigned char>(t.front())) != 0 || t.front() == '>' || t.front() == '|');
    if (code_frame) {
      ranks[i] = t.front() == '>' ? kDetail : kContext;
      continue;
    }
    if (first_message || t.starts_with("Expected") || t.starts_with("Received") || t.starts_with("expect(") ||
        t.starts_with("- ") || t.starts_with("+ ") || contains(t, "Error")) {
      ranks[i] = kDetail;
      first_message = false;
      continue;
    }
    ranks[i] = kContext;
  }
}

void rank_vitest(const std::vector<std::string_view>& lines, Ranks& ranks) {
  bool in_failure = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::string_view t = support::trim(line);
    if (t.starts_with("Test Files ") || t.starts_with("Tests ") || t.starts_with("No test files found") ||
        t.starts_with("Errors ")) {
      ranks[i] = kSummary;
      in_failure = false;
      continue;
    }
    if (t.starts_with("Start at ") || t.starts_with("Duration ")) {
      ranks[i] = kContext;
      continue;
    }
    if (contains(t, "Failed Tests") || contains(t, "Unhandled Error") || contains(t, "Failed Suites")) {
      ranks[i] = kSummary;  // ⎯⎯⎯ Failed Tests 1 ⎯⎯⎯
      in_failure = true;
      continue;
    }
    if (t.starts_with("FAIL ")) {
      ranks[i] = kSummary;
      in_failure = true;
      continue;
    }
    if (t.starts_with("\u00d7 ")) {  // × test
      ranks[i] = kSummary;
      continue;
    }
    if (t.starts_with("\u2192 ")) {  // → message under a failing test
      ranks[i] = kDetail;
      continue;
    }
    if (t.starts_with("\u276f ")) {  // ❯ file (2 tests | 1 failed), or ❯ file:line:col in a failure
      ranks[i] = has_location(t) ? kDetail : kContext;
      continue;
    }
    if (!in_failure || t.empty()) continue;
    if (t.starts_with("\u23af")) continue;  // ⎯⎯⎯[1/1]⎯ separators
    const std::size_t bar = t.find('|');
    if (bar != std::string_view::npos && bar < 6 &&
        (is_digits(support::trim(t.substr(0, bar))) || support::trim(t.substr(0, bar)).empty())) {
      ranks[i] = kContext;  // code frame
      continue;
    }
    ranks[i] = kDetail;  // AssertionError, - Expected / + Received and the diff
  }
}

std::optional<TestCounts> summarise_node_test(const OutputLines& lines) {
  TestCounts counts;
  std::map<std::string, std::int64_t> values;
  for (const auto& line : lines) {
    if (auto counter = node_counter(line)) values[std::string(counter->first)] = counter->second;
  }
  if (values.count("tests") == 0) return std::nullopt;
  counts.passed = values["pass"];
  counts.failed = values["fail"] + values["cancelled"];
  counts.skipped = values["skipped"] + values["todo"];
  counts.no_tests = values["tests"] == 0;
  return counts;
}

std::optional<TestCounts> summarise_jest(const OutputLines& lines) {
  TestCounts counts;
  for (const auto& line : lines) {
    const std::string_view t = support::trim(line);
    if (t.starts_with("No tests found")) {
      counts.no_tests = true;
      return counts;
    }
    if (t.starts_with("Tests:")) {
      add_counts(counts, counts_in(t.substr(6)));
      counts.no_tests = counts.total() == 0;
      return counts;
    }
  }
  return std::nullopt;
}

std::optional<TestCounts> summarise_vitest(const OutputLines& lines) {
  TestCounts counts;
  for (const auto& line : lines) {
    const std::string_view t = support::trim(line);
    if (t.starts_with("No test files found")) {
      counts.no_tests = true;
      return counts;
    }
    if (t.starts_with("Tests ")) {
      add_counts(counts, counts_in(t.substr(6)));
      counts.no_tests = counts.total() == 0;
      return counts;
    }
  }
  return std::nullopt;
}

// ---- recognise ----

bool guess_vitest(std::string_view command) { return has_word(command, "vitest"); }
bool guess_jest(std::string_view command) { return has_word(command, "jest"); }
bool guess_node_test(std::string_view command) { return has_word(command, "node") && contains(command, "--test"); }
bool guess_npm_script(std::string_view command) {
  const auto parts = words(command);
  return !parts.empty() && (parts[0] == "npm" || parts[0] == "yarn" || parts[0] == "pnpm" || parts[0] == "bun");
}

bool sniff_jest(std::string_view output) { return contains(output, "Test Suites:") && contains(output, "Tests:"); }
bool sniff_vitest(std::string_view output) {
  return contains(output, "Test Files ") || contains(output, "No test files found, exiting");
}
bool sniff_node_test(std::string_view output) {
  return contains(output, "TAP version") || contains(output, "\n# tests ") || contains(output, "\u2139 tests ");
}

bool root_has_package_json(const fs::path& root, const Discovery& /*found*/) { return is_file(root / "package.json"); }

}  // namespace

const Ecosystem& node_ecosystem() {
  static const Ecosystem kNode{
      .name = "node",
      .runners = {{.kind = RunnerKind::node_test,
                   .counts_tests = true,
                   .guess_order = 5,
                   .guess = guess_node_test,
                   .sniff_order = 7,
                   .sniff = sniff_node_test,
                   .rank = rank_node_test,
                   .summarise = summarise_node_test},
                  {.kind = RunnerKind::jest,
                   .counts_tests = true,
                   .guess_order = 4,
                   .guess = guess_jest,
                   .sniff_order = 3,
                   .sniff = sniff_jest,
                   .rank = rank_jest,
                   .summarise = summarise_jest},
                  {.kind = RunnerKind::vitest,
                   .counts_tests = true,
                   .guess_order = 3,
                   .guess = guess_vitest,
                   .sniff_order = 4,
                   .sniff = sniff_vitest,
                   .rank = rank_vitest,
                   .summarise = summarise_vitest},
                  // A script agentd cannot read: its output is read as the runner it shows.
                  {.kind = RunnerKind::npm_script, .counts_tests = false, .guess_order = 9, .guess = guess_npm_script}},
      .stage = DiscoveryStage::manifests,
      .discover = discover_package_json,
      .root_has_project = root_has_package_json,
      .language = Language::node,
      .language_name = "JavaScript/TypeScript",
      .extensions = {".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts"},
      .narrow = narrow_node,
  };
  return kNode;
}

}  // namespace agentd::tools::verify
// NOLINTEND(bugprone-branch-clone)
