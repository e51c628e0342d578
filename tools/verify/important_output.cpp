// Important-output extraction: each line gets a rank (summary and failing names first, then assertion
// messages and locations, then context such as stacks and code frames, else dropped), and the lines are
// taken by rank until the byte budget is spent, then printed in their original order.
#include "tools/verify/important_output.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/support/text.h"

// The rankers below are ladders of "this kind of line gets that rank": several rungs share a rank on
// purpose, one rung per pattern, so branch-clone findings are expected here.
// NOLINTBEGIN(bugprone-branch-clone)
namespace agentd::tools::verify {
namespace {

// Ranks: lower is more important; kDrop never shows.
constexpr int kSummary = 1;  // summary lines, failing test names
constexpr int kDetail = 2;   // assertion messages, file:line locations, error lines
constexpr int kContext = 3;  // stacks, code frames, progress that places a failure
constexpr int kDrop = 9;

constexpr std::size_t kMaxLineBytes = 400;

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::size_t indent_of(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return i;
}

bool is_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::int64_t to_int(std::string_view text) {
  std::int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// "path/file.ext:12" somewhere in the line (also "file.ext:12:5", "(file.ext:12)").
bool has_location(std::string_view line) {
  std::size_t pos = 0;
  while ((pos = line.find(':', pos)) != std::string_view::npos) {
    const std::size_t colon = pos++;
    if (colon + 1 >= line.size() || std::isdigit(static_cast<unsigned char>(line[colon + 1])) == 0) continue;
    // Before the colon: a name with an extension of 1-5 letters.
    std::size_t i = colon;
    std::size_t letters = 0;
    while (i > 0 && std::isalnum(static_cast<unsigned char>(line[i - 1])) != 0) {
      --i;
      ++letters;
    }
    if (letters == 0 || letters > 5 || i == 0 || line[i - 1] != '.') continue;
    if (i >= 2 && std::isalnum(static_cast<unsigned char>(line[i - 2])) == 0 && line[i - 2] != '_' &&
        line[i - 2] != '-') {
      continue;
    }
    return true;
  }
  return false;
}

// Compiler and build-tool errors, shown whatever the runner: a test command often builds first.
bool is_build_error(std::string_view line) {
  const std::string_view t = support::trim(line);
  return contains(line, ": error:") || contains(line, ": fatal error:") || t.starts_with("error[E") ||
         t.starts_with("error:") || t.starts_with("FAILED: ") || t.starts_with("ninja: build stopped") ||
         contains(line, "make: ***") || contains(line, "make[") || contains(line, "undefined reference to") ||
         t.starts_with("CMake Error");
}

// The (number, word) pairs of a line: "1 failed, 2 passed in 0.03s" -> (1 failed) (2 passed).
std::vector<std::pair<std::int64_t, std::string>> counts_in(std::string_view line) {
  std::vector<std::pair<std::int64_t, std::string>> out;
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (std::isspace(static_cast<unsigned char>(line[i])) != 0 || line[i] == ',' ||
                               line[i] == '|' || line[i] == ';' || line[i] == '(' || line[i] == ')')) {
      ++i;
    }
    const std::size_t start = i;
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) == 0 && line[i] != ',' &&
           line[i] != '|' && line[i] != ';' && line[i] != '(' && line[i] != ')') {
      ++i;
    }
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  for (std::size_t t = 0; t + 1 < tokens.size(); ++t) {
    if (!is_digits(tokens[t])) continue;
    std::string word;
    for (char c : tokens[t + 1]) {
      if (std::isalpha(static_cast<unsigned char>(c)) == 0) break;
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (!word.empty()) out.emplace_back(to_int(tokens[t]), std::move(word));
  }
  return out;
}

void add_counts(TestCounts& counts, const std::vector<std::pair<std::int64_t, std::string>>& pairs) {
  for (const auto& [n, word] : pairs) {
    if (word == "passed" || word == "pass" || word == "xpassed") {
      counts.passed += n;
    } else if (word == "failed" || word == "fail" || word == "error" || word == "errors" || word == "cancelled") {
      counts.failed += n;
    } else if (word == "skipped" || word == "skip" || word == "ignored" || word == "todo" || word == "xfailed" ||
               word == "pending") {
      counts.skipped += n;
    }
  }
}

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

// ---- ranking, one function per runner ----

using Ranks = std::vector<int>;

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

void rank_gtest_ctest(const std::vector<std::string_view>& lines, Ranks& ranks) {
  const bool under_ctest = std::any_of(lines.begin(), lines.end(), [](std::string_view l) {
    return l.starts_with("Test project ") || contains(l, "% tests passed");
  });
  bool in_assertion = false;  // between "file:line: Failure" and the next "[ ... ]" line
  bool in_failed_list = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::string_view t = support::trim(line);
    if (line.starts_with("[")) in_assertion = false;
    if (in_failed_list) {
      if (!t.empty() && (line.starts_with('\t') || line.starts_with(' '))) {
        ranks[i] = kSummary;
        continue;
      }
      in_failed_list = false;
    }
    if (contains(line, "***Failed") || contains(line, "***Exception") || contains(line, "***Timeout") ||
        contains(line, "Not Run") || contains(line, "***Skipped")) {
      ranks[i] = kSummary;
    } else if (contains(line, "% tests passed") || t.starts_with("No tests were found") ||
               t == "Errors while running CTest") {
      ranks[i] = kSummary;
    } else if (t == "The following tests FAILED:" || t.starts_with("The following tests did not run:")) {
      ranks[i] = kSummary;
      in_failed_list = true;
    } else if (line.starts_with("[  FAILED  ]")) {
      ranks[i] = kSummary;
    } else if (line.starts_with("[==========]") && contains(line, " ran.")) {
      ranks[i] = under_ctest ? kContext : kSummary;
    } else if (line.starts_with("[  PASSED  ]") || line.starts_with("[  SKIPPED ]")) {
      ranks[i] = under_ctest ? kContext : kSummary;
    } else if ((contains(line, ": Failure") || contains(line, ": error: ")) && has_location(line)) {
      ranks[i] = kDetail;
      in_assertion = true;
    } else if (in_assertion && !t.empty()) {
      ranks[i] = kDetail;  // "Expected equality of these values:", "Which is: 4"
    } else if (contains(line, "C++ exception") || contains(line, "terminate called") ||
               contains(line, "Segmentation fault") || contains(line, "Aborted")) {
      ranks[i] = kDetail;
    } else if (t.starts_with("Total Test time") || t.starts_with("Test project ")) {
      ranks[i] = kContext;
    } else if (line.starts_with("[ RUN      ]")) {
      // Places an assertion (which test it belongs to) when one follows before the test ends.
      for (std::size_t j = i + 1; j < lines.size() && !lines[j].starts_with("[ RUN"); ++j) {
        if (lines[j].starts_with("[  FAILED  ]")) {
          ranks[i] = kContext;
          break;
        }
        if (lines[j].starts_with("[       OK ]")) break;
      }
    }
  }
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

void rank_cargo_test(const std::vector<std::string_view>& lines, Ranks& ranks) {
  enum class Block { none, stdout_block, failures_list, compile_error, warning };
  Block block = Block::none;
  int code_lines = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::string_view t = support::trim(line);
    if (t.starts_with("test ") && t.ends_with(" FAILED")) {
      ranks[i] = kSummary;
      continue;
    }
    if (t.starts_with("test ") && (t.ends_with(" ok") || t.ends_with(" ignored"))) continue;
    if (t.starts_with("test result:")) {
      ranks[i] = kSummary;
      block = Block::none;
      continue;
    }
    if (t.starts_with("---- ") && t.ends_with(" ----")) {
      ranks[i] = kSummary;  // ---- ops::tests::subtracts stdout ----
      block = Block::stdout_block;
      continue;
    }
    if (t == "failures:") {
      // The second "failures:" lists the names; the first opens the stdout blocks.
      block = Block::failures_list;
      continue;
    }
    if (t.starts_with("Running ") || t.starts_with("Doc-tests ")) {
      ranks[i] = kContext;
      block = Block::none;
      continue;
    }
    if (t.starts_with("error[") || t.starts_with("error:")) {
      ranks[i] = kSummary;
      block = Block::compile_error;
      code_lines = 0;
      continue;
    }
    if (t.starts_with("warning:") || t.starts_with("warning[")) {
      block = Block::warning;
      continue;
    }
    if (t.starts_with("Compiling ") || t.starts_with("Finished ") || t.starts_with("running ")) {
      if (block != Block::stdout_block) block = Block::none;
      continue;
    }
    switch (block) {
      case Block::stdout_block:
        if (t.empty() || t.starts_with("note:")) break;
        if (contains(t, "panicked at") || t.starts_with("assertion") || t.starts_with("left:") ||
            t.starts_with("right:")) {
          ranks[i] = kDetail;
        } else if (t.starts_with("at ")) {
          if (t.starts_with("at ./") || (!contains(t, "/rustc/") && !contains(t, "/.cargo/"))) ranks[i] = kContext;
        } else if (t == "stack backtrace:") {
          ranks[i] = kContext;
        } else if (std::isdigit(static_cast<unsigned char>(t.front())) != 0 && contains(t, ": ")) {
          // A backtrace frame name: shown only when the next line places it in the project.
          if (i + 1 < lines.size() && support::trim(lines[i + 1]).starts_with("at ./")) ranks[i] = kContext;
        } else {
          ranks[i] = kDetail;  // what the test printed
        }
        break;
      case Block::failures_list:
        if (!t.empty()) ranks[i] = kSummary;
        break;
      case Block::compile_error:
        if (t.empty()) {
          block = Block::none;
        } else if (t.starts_with("-->")) {
          ranks[i] = kDetail;
        } else if (++code_lines <= 6) {
          ranks[i] = kContext;
        }
        break;
      case Block::warning:
        if (t.empty()) block = Block::none;
        break;
      case Block::none: break;
    }
  }
}

void rank_generic(const std::vector<std::string_view>& lines, Ranks& ranks) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    std::string l(line);
    std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
    if (contains(l, "error") || contains(l, "fail") || contains(l, "panic") || contains(l, "traceback") ||
        contains(l, "exception") || contains(l, "assert")) {
      ranks[i] = kDetail;
    } else if (has_location(line)) {
      ranks[i] = kContext;
    }
  }
  // The last lines of a run usually say how it ended.
  int taken = 0;
  for (std::size_t i = lines.size(); i > 0 && taken < 5; --i) {
    if (support::trim(lines[i - 1]).empty()) continue;
    ranks[i - 1] = std::min(ranks[i - 1], kSummary);
    ++taken;
  }
}

// Marks build errors (with the lines that show the code) for every runner.
void rank_build_errors(const std::vector<std::string_view>& lines, Ranks& ranks) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!is_build_error(lines[i])) continue;
    ranks[i] = std::min(ranks[i], kDetail);
    // "file.cpp: In function 'int f()':" and "In file included from" place the error that follows.
    for (std::size_t j = i; j > 0 && j + 3 > i; --j) {
      const std::string_view before = lines[j - 1];
      if (contains(before, ": In function") || contains(before, ": In member function") ||
          contains(before, ": In instantiation of") || before.starts_with("In file included from")) {
        ranks[j - 1] = std::min(ranks[j - 1], kContext);
      }
    }
    if (contains(lines[i], ": error:") || contains(lines[i], ": fatal error:")) {
      for (std::size_t j = i + 1; j < lines.size() && j <= i + 3; ++j) {
        const std::string_view t = support::trim(lines[j]);
        if (t.empty() || is_build_error(lines[j]) || has_location(lines[j])) break;
        ranks[j] = std::min(ranks[j], kContext);  // "    5 | int broken() ..." and the caret
      }
    }
  }
}

RunnerKind effective_runner(RunnerKind runner, std::string_view output) {
  if (runner == RunnerKind::make || runner == RunnerKind::npm_script || runner == RunnerKind::other) {
    return sniff_runner(output);
  }
  return runner;
}

std::string cut_line(std::string_view line) {
  if (line.size() <= kMaxLineBytes) return std::string(line);
  std::size_t end = kMaxLineBytes;
  end = support::utf8_floor(line, end);  // keep UTF-8 whole
  return fmt::format("{} [... {} bytes cut]", line.substr(0, end), line.size() - end);
}

// Counts the non-blank lines left out.
std::string gap(std::size_t lines) { return fmt::format("[... {} line{} left out ...]", lines, lines == 1 ? "" : "s"); }

}  // namespace

std::string strip_terminal_codes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\x1b') {
      // CSI: ESC [ parameters final-byte; OSC: ESC ] ... BEL or ESC \; other: ESC and one byte.
      if (i + 1 < text.size() && text[i + 1] == '[') {
        std::size_t j = i + 2;
        while (j < text.size() &&
               (static_cast<unsigned char>(text[j]) < 0x40 || static_cast<unsigned char>(text[j]) > 0x7e)) {
          ++j;
        }
        i = j;
      } else if (i + 1 < text.size() && text[i + 1] == ']') {
        std::size_t j = i + 2;
        while (j < text.size() && text[j] != '\x07' &&
               !(text[j] == '\x1b' && j + 1 < text.size() && text[j + 1] == '\\')) {
          ++j;
        }
        i = (j < text.size() && text[j] == '\x1b') ? j + 1 : j;
      } else {
        ++i;
      }
      continue;
    }
    if (c == '\r') {
      // "\r\n" ends a line; a bare "\r" redraws it: keep only what comes after.
      if (i + 1 < text.size() && text[i + 1] == '\n') continue;
      out.resize(line_start);
      continue;
    }
    out += c;
    if (c == '\n') line_start = out.size();
  }
  return out;
}

RunnerKind sniff_runner(std::string_view output) {
  if (contains(output, "test session starts") || contains(output, "short test summary info") ||
      contains(output, "No module named pytest")) {
    return RunnerKind::pytest;
  }
  if (contains(output, "% tests passed") || contains(output, "No tests were found!!!") ||
      contains(output, "[==========]")) {
    return RunnerKind::gtest_ctest;
  }
  if (contains(output, "Test Suites:") && contains(output, "Tests:")) return RunnerKind::jest;
  if (contains(output, "Test Files ") || contains(output, "No test files found, exiting")) return RunnerKind::vitest;
  if (contains(output, "test result: ") && contains(output, "running ")) return RunnerKind::cargo_test;
  if (contains(output, "--- FAIL:") || contains(output, "\nok  \t") || output.starts_with("ok  \t") ||
      contains(output, "\nFAIL\t") || output.starts_with("FAIL\t") || contains(output, "[no test files]")) {
    return RunnerKind::go_test;
  }
  if (contains(output, "TAP version") || contains(output, "\n# tests ") || contains(output, "\u2139 tests ")) {
    return RunnerKind::node_test;
  }
  return RunnerKind::other;
}

std::optional<TestCounts> parse_summary(RunnerKind runner, std::string_view raw) {
  const std::string text = strip_terminal_codes(raw);
  const auto lines = split(text);
  runner = effective_runner(runner, text);
  TestCounts counts;
  switch (runner) {
    case RunnerKind::pytest: {
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
    case RunnerKind::gtest_ctest: {
      for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        const std::string_view t = support::trim(*it);
        if (t.starts_with("No tests were found")) {
          counts.no_tests = true;
          return counts;
        }
        const std::size_t mark = t.find("% tests passed, ");
        if (mark == std::string_view::npos) continue;
        // "67% tests passed, 1 tests failed out of 3"
        const auto pairs = counts_in(t.substr(mark));
        const std::size_t out_of = t.rfind("out of ");
        if (pairs.empty() || out_of == std::string_view::npos) continue;
        const std::int64_t total = to_int(support::trim(t.substr(out_of + 7)));
        counts.failed = pairs.front().first;
        counts.passed = total - counts.failed;
        counts.no_tests = total == 0;
        return counts;
      }
      // A gtest binary on its own.
      bool found = false;
      for (const auto& line : lines) {
        if (line.starts_with("[==========]") && contains(line, " ran.")) {
          const auto pairs = counts_in(line.substr(12));
          if (!pairs.empty()) {
            found = true;
            counts.no_tests = pairs.front().first == 0;
          }
        } else if (line.starts_with("[  PASSED  ]")) {
          const auto pairs = counts_in(line.substr(12));
          if (!pairs.empty()) counts.passed = pairs.front().first;
        } else if (line.starts_with("[  FAILED  ]") && contains(line, "listed below")) {
          const auto pairs = counts_in(line.substr(12));
          if (!pairs.empty()) counts.failed = pairs.front().first;
        } else if (line.starts_with("[  SKIPPED ]") && contains(line, "test")) {
          const auto pairs = counts_in(line.substr(12));
          if (!pairs.empty() && !contains(line, "listed below")) counts.skipped = pairs.front().first;
        }
      }
      if (!found) return std::nullopt;
      return counts;
    }
    case RunnerKind::node_test: {
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
    case RunnerKind::jest: {
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
    case RunnerKind::vitest: {
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
    case RunnerKind::go_test: {
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
    case RunnerKind::cargo_test: {
      bool found = false;
      for (const auto& line : lines) {
        const std::string_view t = support::trim(line);
        if (!t.starts_with("test result:")) continue;
        found = true;
        add_counts(counts, counts_in(t));
      }
      if (!found) return std::nullopt;
      counts.no_tests = counts.total() == 0;
      return counts;
    }
    case RunnerKind::make:
    case RunnerKind::npm_script:
    case RunnerKind::other: {
      // The plain line any runner may print: "N passed, N failed" (", N skipped"), maybe after "Word:".
      for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        std::string_view t = support::trim(*it);
        const std::size_t colon = t.find(':');
        if (colon != std::string_view::npos && t.substr(0, colon).find(' ') == std::string_view::npos) {
          t = support::trim(t.substr(colon + 1));
        }
        const auto pairs = counts_in(t);
        if (pairs.size() < 2 || pairs[0].second != "passed" || pairs[1].second != "failed") continue;
        if (!is_digits(t.substr(0, t.find(' ')))) continue;
        add_counts(counts, pairs);
        counts.no_tests = counts.total() == 0;
        return counts;
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string extract_important_output(RunnerKind runner, std::string_view raw, std::size_t max_bytes) {
  const std::string text = strip_terminal_codes(raw);
  auto lines = split(text);
  while (!lines.empty() && support::trim(lines.back()).empty()) lines.pop_back();
  if (lines.empty()) return {};
  runner = effective_runner(runner, text);
  Ranks ranks(lines.size(), kDrop);
  switch (runner) {
    case RunnerKind::pytest: rank_pytest(lines, ranks); break;
    case RunnerKind::gtest_ctest: rank_gtest_ctest(lines, ranks); break;
    case RunnerKind::node_test: rank_node_test(lines, ranks); break;
    case RunnerKind::jest: rank_jest(lines, ranks); break;
    case RunnerKind::vitest: rank_vitest(lines, ranks); break;
    case RunnerKind::go_test: rank_go_test(lines, ranks); break;
    case RunnerKind::cargo_test: rank_cargo_test(lines, ranks); break;
    case RunnerKind::make:
    case RunnerKind::npm_script:
    case RunnerKind::other: rank_generic(lines, ranks); break;
  }
  rank_build_errors(lines, ranks);
  // The capture's own cut ("[... N bytes of output omitted ...]") tells the reader the output was longer.
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].starts_with("[... ") && contains(lines[i], "bytes of output omitted")) ranks[i] = kSummary;
  }

  // Take whole ranks while they fit; a marker costs about 32 bytes.
  std::vector<std::string> shown(lines.size());
  std::vector<bool> keep(lines.size(), false);
  std::size_t used = 0;
  constexpr std::size_t kMarkerBytes = 32;
  for (int rank : {kSummary, kDetail, kContext}) {
    std::size_t cost = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (ranks[i] == rank) cost += std::min(lines[i].size(), kMaxLineBytes + 24) + 1 + kMarkerBytes;
    }
    if (used + cost <= max_bytes) {
      for (std::size_t i = 0; i < lines.size(); ++i) keep[i] = keep[i] || ranks[i] == rank;
      used += cost;
      continue;
    }
    // This rank does not fit whole: take its lines from the start and from the end (the end holds the
    // summary, the start the first failure), as many as fit.
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (ranks[i] == rank) members.push_back(i);
    }
    std::size_t front = 0;
    std::size_t back = members.size();
    bool from_front = false;
    while (front < back) {
      const std::size_t index = from_front ? members[front] : members[back - 1];
      const std::size_t line_cost = std::min(lines[index].size(), kMaxLineBytes + 24) + 1 + kMarkerBytes;
      if (used + line_cost > max_bytes) break;
      used += line_cost;
      keep[index] = true;
      if (from_front) {
        ++front;
      } else {
        --back;
      }
      from_front = !from_front;
    }
    break;
  }

  // Blank lines left out are not worth a marker; a gap of blank lines only disappears.
  std::string out;
  std::size_t skipped = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!keep[i]) {
      if (!support::trim(lines[i]).empty()) ++skipped;
      continue;
    }
    if (skipped > 0) {
      out += gap(skipped);
      out += '\n';
      skipped = 0;
    }
    out += cut_line(lines[i]);
    out += '\n';
  }
  if (skipped > 0) {
    out += gap(skipped);
    out += '\n';
  }
  if (out.size() > max_bytes) {
    // Only when lines were cut to kMaxLineBytes and the estimate was off: a hard cut, UTF-8 kept whole.
    std::size_t end = max_bytes;
    end = support::utf8_floor(out, end);
    out.resize(end);
  }
  return out;
}

}  // namespace agentd::tools::verify
// NOLINTEND(bugprone-branch-clone)
