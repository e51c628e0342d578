// Rust: `cargo test` from Cargo.toml; narrowed to one package (-p), the changed integration tests
// (--test) or the changed modules' test paths; output ranked by cargo's blocks (a failing test's stdout,
// the failures list, compile errors) and counted from every "test result:" line.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/support/text.h"
#include "tools/shell_command.h"
#include "tools/verify/ecosystem.h"
#include "tools/verify/ecosystem_util.h"

// The ranker is a ladder of "this kind of line gets that rank": several rungs share a rank on purpose.
// NOLINTBEGIN(bugprone-branch-clone)
namespace agentd::tools::verify {
namespace {

namespace fs = std::filesystem;

// ---- discover ----

void discover_cargo(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  if (!is_file(dir / "Cargo.toml")) return;
  const std::string prefix = prefix_of(dir, workspace);
  VerificationCommand command;
  command.id = prefix + "cargo:test";
  command.command = "cargo test";
  command.runner = RunnerKind::cargo_test;
  command.cwd = dir;
  command.source = prefix + "Cargo.toml";
  out.commands.push_back(std::move(command));
}

// ---- narrow ----

std::string cargo_package_name(const fs::path& dir) {
  const auto text = read_text(dir / "Cargo.toml");
  if (!text) return {};
  bool in_package = false;
  for (std::string_view line : lines_of(*text)) {
    line = support::trim(line);
    if (line.starts_with('[')) {
      in_package = line == "[package]";
      continue;
    }
    if (in_package && line.starts_with("name")) {
      const std::size_t quote = line.find('"');
      const std::size_t end = quote == std::string_view::npos ? quote : line.find('"', quote + 1);
      if (end != std::string_view::npos) return std::string(line.substr(quote + 1, end - quote - 1));
    }
  }
  return {};
}

std::optional<Suggestion> narrow_cargo(const VerificationCommand& base, const std::vector<fs::path>& files) {
  std::set<std::string> packages;
  std::vector<std::string> test_targets;
  std::vector<std::string> filters;
  std::vector<std::string> whole_crate;
  for (const auto& file : files) {
    const fs::path crate = nearest_with(file, base.cwd, "Cargo.toml");
    if (crate.empty()) return full(base, fmt::format("{} is in no crate: running the full command", file.string()));
    const std::string package =
        crate.lexically_normal() == base.cwd.lexically_normal() ? "" : cargo_package_name(crate);
    packages.insert(package);
    const std::string rel = relative_to(file, crate);
    std::vector<std::string> parts;
    for (const auto& part : fs::path(rel)) parts.push_back(part.string());
    if (parts.size() >= 2 && parts[0] == "tests") {
      test_targets.push_back(parts.size() == 2 ? fs::path(parts[1]).stem().string() : parts[1]);
    } else if (parts.size() >= 2 && parts[0] == "src" && parts[1] != "bin" && parts.back() != "lib.rs" &&
               parts.back() != "main.rs") {
      std::string module;
      for (std::size_t i = 1; i < parts.size(); ++i) {
        std::string piece = i + 1 == parts.size() ? fs::path(parts[i]).stem().string() : parts[i];
        if (piece == "mod") continue;
        if (!module.empty()) module += "::";
        module += piece;
      }
      filters.push_back(module + "::");
    } else {
      whole_crate.push_back(rel);
    }
  }
  std::string command = base.command;
  std::string scope;
  if (packages.size() == 1 && !packages.begin()->empty()) {
    command += " -p " + shell_quote(*packages.begin());
    scope = fmt::format(" in package {}", *packages.begin());
  } else if (packages.size() > 1) {
    return full(base, "the changed files are in several crates: running the full command");
  }
  if (!whole_crate.empty()) {
    if (!scope.empty())
      return narrowed(base, command, fmt::format("{} changed: every test{}", list_names(whole_crate), scope));
    return full(base, fmt::format("{} changed: it affects the whole crate", list_names(whole_crate)));
  }
  std::sort(filters.begin(), filters.end());
  filters.erase(std::unique(filters.begin(), filters.end()), filters.end());
  std::sort(test_targets.begin(), test_targets.end());
  test_targets.erase(std::unique(test_targets.begin(), test_targets.end()), test_targets.end());
  if (!filters.empty() && !test_targets.empty()) {
    if (!scope.empty())
      return narrowed(base, command, fmt::format("unit and integration tests changed: every test{}", scope));
    return full(base, "both unit tests (src/) and integration tests (tests/) changed: running the full command");
  }
  if (!test_targets.empty()) {
    for (const auto& target : test_targets) command += " --test " + shell_quote(target);
    return narrowed(base, command,
                    fmt::format("cargo test runs only the integration test{} {}{}", test_targets.size() == 1 ? "" : "s",
                                list_names(test_targets), scope));
  }
  if (filters.size() == 1) {
    command += " " + shell_quote(filters.front());
  } else {
    command += " -- " + join_quoted(filters);
  }
  return narrowed(
      base, command,
      fmt::format("cargo test runs only the tests whose path starts with {}{}", list_names(filters), scope));
}

// ---- rank, summarise ----

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

std::optional<TestCounts> summarise_cargo_test(const OutputLines& lines) {
  TestCounts counts;
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

bool guess_cargo_test(std::string_view command) {
  return has_word(command, "cargo") && (has_word(command, "test") || has_word(command, "t"));
}

bool sniff_cargo_test(std::string_view output) {
  return contains(output, "test result: ") && contains(output, "running ");
}

bool root_has_cargo(const fs::path& root, const Discovery& /*found*/) { return is_file(root / "Cargo.toml"); }

}  // namespace

const Ecosystem& rust_ecosystem() {
  static const Ecosystem kRust{
      .name = "rust",
      .runners = {{.kind = RunnerKind::cargo_test,
                   .counts_tests = true,
                   .guess_order = 7,
                   .guess = guess_cargo_test,
                   .sniff_order = 5,
                   .sniff = sniff_cargo_test,
                   .rank = rank_cargo_test,
                   .summarise = summarise_cargo_test}},
      .stage = DiscoveryStage::manifests,
      .discover = discover_cargo,
      .root_has_project = root_has_cargo,
      .language = Language::rust,
      .language_name = "Rust",
      .extensions = {".rs"},
      .narrow = narrow_cargo,
  };
  return kRust;
}

}  // namespace agentd::tools::verify
// NOLINTEND(bugprone-branch-clone)
