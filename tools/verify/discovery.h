// Verification discovery: the test, lint and typecheck commands a workspace already has (package.json
// scripts, Makefile targets, CTest build trees, pytest configuration, Cargo, Go modules, a README's
// "Testing" section), each with where it came from, and the smallest of them that covers a set of changed
// files. Only reads files, never runs anything: it is cheap enough to run on every turn.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/enum_names.h"
#include "core/support/json.h"

namespace agentd::tools::verify {

// Which runner a command drives, so its output can be read (important_output.h) and narrowed.
enum class RunnerKind { gtest_ctest, pytest, node_test, jest, vitest, go_test, cargo_test, make, npm_script, other };
std::string_view runner_kind_name(RunnerKind kind) noexcept;  // "gtest_ctest", "pytest", ...
std::optional<RunnerKind> parse_runner_kind(std::string_view name) noexcept;
std::span<const support::EnumName<RunnerKind>> enum_names(RunnerKind) noexcept;
// A guess from a command line the model or a README wrote: "python -m pytest -x" is pytest, "ctest ..."
// is gtest_ctest, "npm run lint" is npm_script; `other` when nothing fits.
RunnerKind guess_runner(std::string_view command) noexcept;
// Runners whose output tells how many tests ran: for them exit 0 without a count is not a pass.
bool runner_counts_tests(RunnerKind kind) noexcept;

// What a command checks.
enum class Purpose { test, lint, typecheck };
std::string_view purpose_name(Purpose purpose) noexcept;
std::span<const support::EnumName<Purpose>> enum_names(Purpose) noexcept;

struct VerificationCommand {
  std::string id;       // stable across turns: "npm:test", "pytest", "ctest:build", "make:check", "readme:1"
  std::string command;  // a /bin/sh command line
  RunnerKind runner = RunnerKind::other;
  Purpose purpose = Purpose::test;
  std::filesystem::path cwd;  // absolute
  std::string source;         // "package.json scripts.test", "Makefile target check", "README.md section \"Testing\""
  std::string script;         // npm scripts: the script's own text ("node --test"), which decides narrowing
};

struct Discovery {
  std::filesystem::path workspace;            // absolute
  std::vector<VerificationCommand> commands;  // test commands first, the preferred one at the front
  // What was found but cannot be run as it is ("CMakeLists.txt enables testing but no build directory has
  // CTestTestfile.cmake: configure and build first").
  std::vector<std::string> notes;

  const VerificationCommand* find(std::string_view id) const noexcept;
  // The first test command, or null when there is none.
  const VerificationCommand* primary() const noexcept;
};

// Reads the workspace's root (and its first-level subdirectories for package.json, Cargo.toml, go.mod
// and pytest configuration when the root has none of that kind). Missing or unreadable files are skipped.
Discovery discover_verification(const std::filesystem::path& workspace);

struct Suggestion {
  VerificationCommand command;  // what to run: narrowed, or the discovered command as it is
  std::string base_id;          // the discovered command it comes from
  bool narrowed = false;
  std::string reason;  // why this command ("tests/test_calc.py changed: pytest runs that file only")
};

// The smallest discovered command that covers `changed_files` (absolute, or relative to the workspace):
// `pytest tests/test_x.py`, `npm test -- test/x.test.js`, `ctest -R '^(Suite)\.'`, `go test ./pkg/...`,
// `cargo test --test x`. Falls back to the full primary command, with the reason, when the runner or the
// files do not allow narrowing. nullopt when the workspace has no test command. Reads the changed files
// (gtest suite names) and checks that candidate test files exist; runs nothing.
std::optional<Suggestion> suggest_verification(const Discovery& discovery,
                                               const std::vector<std::string>& changed_files);

// {id, command, runner, purpose, cwd, source}
support::Json to_json(const VerificationCommand& command);
// {workspace, commands: [...], notes: [...]}
support::Json to_json(const Discovery& discovery);
// {id, command, runner, purpose, cwd, source, baseId, narrowed, reason}
support::Json to_json(const Suggestion& suggestion);

}  // namespace agentd::tools::verify
