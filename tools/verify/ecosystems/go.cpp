// Go: `go test ./...` from go.mod; narrowed to the packages of the changed files; output ranked by
// go test's "--- FAIL" blocks, panics and build errors, and counted by test (-v) or else by package.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/support/text.h"
#include "tools/verify/ecosystem.h"
#include "tools/verify/ecosystem_util.h"
#include "tools/verify/locator.h"

// The ranker is a ladder of "this kind of line gets that rank": several rungs share a rank on purpose.
// NOLINTBEGIN(bugprone-branch-clone)
namespace agentd::tools::verify {
namespace {

namespace fs = std::filesystem;

// ---- discover ----

void discover_go(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  if (!is_file(dir / "go.mod")) return;
  const std::string prefix = prefix_of(dir, workspace);
  VerificationCommand command;
  command.id = prefix + "go:test";
  command.command = "go test ./...";
  command.runner = RunnerKind::go_test;
  command.cwd = dir;
  command.source = prefix + "go.mod";
  out.commands.push_back(std::move(command));
}

// ---- narrow ----

std::optional<Suggestion> narrow_go(const VerificationCommand& base, const std::vector<fs::path>& files) {
  std::vector<std::string> packages;
  for (const auto& file : files) {
    const fs::path module = nearest_with(file, base.cwd, "go.mod");
    if (module.empty() || module.lexically_normal() != base.cwd.lexically_normal()) {
      return full(base, fmt::format("{} is not in the module at {}: running the full command", file.string(),
                                    base.cwd.string()));
    }
    const std::string dir = relative_to(file.parent_path(), base.cwd);
    packages.push_back(dir.empty() || dir == "." ? "." : "./" + dir + "/...");
  }
  std::sort(packages.begin(), packages.end());
  packages.erase(std::unique(packages.begin(), packages.end()), packages.end());
  return narrowed(base, "go test " + join_quoted(packages),
                  fmt::format("go test runs only the package{} of the changed files: {}",
                              packages.size() == 1 ? "" : "s", list_names(packages)));
}

// ---- rank, summarise ----

void rank_go_test(const std::vector<std::string_view>& lines, Ranks& ranks) {
  bool in_failure = false;
  bool in_panic = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::string_view t = support::trim(line);
    if (t.starts_with("--- FAIL:")) {
      ranks[i] = kSummary;
      in_failure = true;
      continue;
    }
    if (t.starts_with("--- PASS:") || t.starts_with("--- SKIP:") || t.starts_with("=== RUN") ||
        t.starts_with("=== PAUSE") || t.starts_with("=== CONT")) {
      in_failure = false;
      continue;
    }
    if (line.starts_with("FAIL\t") || line.starts_with("FAIL ")) {
      ranks[i] = kSummary;  // "FAIL\texample.com/calc\t0.008s", "[build failed]"
      in_failure = false;
      continue;
    }
    if (line.starts_with("ok  \t") || line.starts_with("ok \t")) {
      ranks[i] = kContext;
      in_failure = false;
      continue;
    }
    if (line.starts_with("?   \t")) {
      ranks[i] = kContext;  // [no test files]
      continue;
    }
    if (t.starts_with("panic:") || t.starts_with("fatal error:")) {
      ranks[i] = kSummary;
      in_panic = true;
      continue;
    }
    if (in_panic) {
      if (t.empty()) continue;
      if (has_location(t)) {
        if (!contains(t, "/src/runtime/") && !contains(t, "/src/testing/")) ranks[i] = kDetail;
      } else if (t.starts_with("goroutine ")) {
        ranks[i] = kContext;
      }
      continue;
    }
    if (line.starts_with("# ")) {
      ranks[i] = kDetail;  // the package a build error is in
      continue;
    }
    if (in_failure && line.starts_with("    ")) {
      ranks[i] = kDetail;  // "    calc_test.go:13: Sub(3, 1) = 4, want 2" and its continuation
      continue;
    }
    if (has_location(line) && !line.starts_with(' ')) ranks[i] = kDetail;  // build errors
  }
}

std::optional<TestCounts> summarise_go_test(const OutputLines& lines) {
  TestCounts counts;
  std::int64_t test_pass = 0, test_fail = 0, test_skip = 0, pkg_ok = 0, pkg_fail = 0, no_files = 0, no_run = 0;
  for (const auto& line : lines) {
    const std::string_view t = support::trim(line);
    if (t.starts_with("--- PASS:")) ++test_pass;
    if (t.starts_with("--- FAIL:")) ++test_fail;
    if (t.starts_with("--- SKIP:")) ++test_skip;
    if (line.starts_with("ok  \t") || line.starts_with("ok \t")) {
      if (contains(line, "[no tests to run]")) {
        ++no_run;
      } else {
        ++pkg_ok;
      }
    }
    if (line.starts_with("FAIL\t")) ++pkg_fail;
    if (line.starts_with("?   \t") && contains(line, "[no test files]")) ++no_files;
  }
  // Test lines count only with -v, where passing tests print "--- PASS" too; without it only
  // failures print, so the packages are what can be counted.
  if (test_pass + test_skip > 0) {
    counts.passed = test_pass;
    counts.failed = test_fail;
    counts.skipped = test_skip;
    return counts;
  }
  if (pkg_ok + pkg_fail > 0) {
    counts.unit = "packages";
    counts.passed = pkg_ok;
    counts.failed = pkg_fail;
    return counts;
  }
  if (no_files + no_run > 0) {
    counts.no_tests = true;
    return counts;
  }
  return std::nullopt;
}

bool guess_go_test(std::string_view command) { return has_word(command, "go") && has_word(command, "test"); }

bool sniff_go_test(std::string_view output) {
  return contains(output, "--- FAIL:") || contains(output, "\nok  \t") || output.starts_with("ok  \t") ||
         contains(output, "\nFAIL\t") || output.starts_with("FAIL\t") || contains(output, "[no test files]");
}

bool root_has_go_mod(const fs::path& root, const Discovery& /*found*/) { return is_file(root / "go.mod"); }

}  // namespace

const Ecosystem& go_ecosystem() {
  static const Ecosystem kGo{
      .name = "go",
      .runners = {{.kind = RunnerKind::go_test,
                   .counts_tests = true,
                   .guess_order = 6,
                   .guess = guess_go_test,
                   .sniff_order = 6,
                   .sniff = sniff_go_test,
                   .rank = rank_go_test,
                   .summarise = summarise_go_test}},
      .stage = DiscoveryStage::manifests,
      .discover = discover_go,
      .root_has_project = root_has_go_mod,
      .language = Language::go,
      .language_name = "Go",
      .extensions = {".go"},
      .narrow = narrow_go,
  };
  return kGo;
}

}  // namespace agentd::tools::verify
// NOLINTEND(bugprone-branch-clone)
