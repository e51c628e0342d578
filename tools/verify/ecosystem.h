// The interface every ecosystem under tools/verify/ecosystems/ fills in: how it discovers a workspace's
// commands, narrows them to changed files, and, for each runner it owns, how that runner is recognised
// and how its output is ranked and counted. discovery.cpp and important_output.cpp are the generic
// drivers that loop over the registry below; a new runner is one new file plus a line in ecosystem.cpp.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "tools/verify/discovery.h"
#include "tools/verify/important_output.h"

namespace agentd::tools::verify {

// How much a line of output matters: lower is more important; kDrop never shows.
constexpr int kSummary = 1;  // summary lines, failing test names
constexpr int kDetail = 2;   // assertion messages, file:line locations, error lines
constexpr int kContext = 3;  // stacks, code frames, progress that places a failure
constexpr int kDrop = 9;

using OutputLines = std::vector<std::string_view>;  // terminal codes already stripped
using Ranks = std::vector<int>;                     // one per line, kDrop to start with

// One test runner: how a command line or an output shows it, and how its output is read. When several
// runners match, the one with the lowest order wins ("vitest" before "jest", "ctest" before any word).
struct Runner {
  RunnerKind kind = RunnerKind::other;
  bool counts_tests = false;  // its output tells how many tests ran (exit 0 without a count is no pass)
  int guess_order = 0;
  bool (*guess)(std::string_view command) = nullptr;  // the command line drives this runner
  int sniff_order = 0;
  bool (*sniff)(std::string_view output) = nullptr;  // the output was printed by this runner
  // Ranks the lines (kDrop to start with); nullptr: the output is read as the runner it shows (sniff),
  // and failing that by the generic ranker.
  void (*rank)(const OutputLines& lines, Ranks& ranks) = nullptr;
  // The counts of the runner's summary, nullopt when the output has none.
  std::optional<TestCounts> (*summarise)(const OutputLines& lines) = nullptr;
};

// The kinds of changed source files narrowing tells apart, in the order a reason lists them.
enum class Language { python, node, rust, go, cpp };

// When discovery reads an ecosystem: manifests first (the root, then first-level subdirectories for the
// kinds the root lacks), then what describes the whole workspace (make targets, the README), which may
// look at what the manifests gave.
enum class DiscoveryStage { manifests, workspace };

struct Ecosystem {
  std::string_view name{};  // "python", "node", ...: for tests and logs
  std::vector<Runner> runners{};

  DiscoveryStage stage = DiscoveryStage::manifests;
  // Adds what `dir` has (commands and notes) to `out`; `workspace` names ids and sources ("web/npm:test").
  void (*discover)(const std::filesystem::path& dir, const std::filesystem::path& workspace, Discovery& out) = nullptr;
  // Whether the root already has a project of this kind (asked after the root was read); nullptr: only
  // the root is read. When it says no, each first-level subdirectory is read.
  bool (*root_has_project)(const std::filesystem::path& root, const Discovery& found) = nullptr;

  // The changed files this ecosystem narrows for (by extension, lower case with the dot: ".py").
  std::optional<Language> language{};
  std::string_view language_name{};  // "Python", for reasons
  std::vector<std::string_view> extensions{};
  // The smallest command of `base` (a test command of one of `runners`) that covers `files` (absolute, all
  // of this language), or `base` itself with the reason.
  std::optional<Suggestion> (*narrow)(const VerificationCommand& base,
                                      const std::vector<std::filesystem::path>& files) = nullptr;

  bool owns(RunnerKind kind) const noexcept;
};

// Every ecosystem, in discovery order (package.json, pytest, Cargo, Go, CMake, then make and README):
// the front of a Discovery's list is what a change is verified with, so this order is behaviour.
const std::vector<const Ecosystem*>& ecosystems();

// The entry for `kind`, or null for `other`.
const Runner* find_runner(RunnerKind kind) noexcept;

// Every runner of every ecosystem, sorted by `order` (&Runner::guess_order or &Runner::sniff_order).
std::vector<const Runner*> runners_by(int Runner::*order);

// Each ecosystem, defined in tools/verify/ecosystems/<name>.cpp.
const Ecosystem& node_ecosystem();
const Ecosystem& python_ecosystem();
const Ecosystem& rust_ecosystem();
const Ecosystem& go_ecosystem();
const Ecosystem& cpp_ecosystem();
const Ecosystem& make_ecosystem();
const Ecosystem& readme_ecosystem();

}  // namespace agentd::tools::verify
