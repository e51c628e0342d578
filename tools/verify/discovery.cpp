// Verification discovery and narrowing, the generic part: it asks each ecosystem (tools/verify/ecosystem.h)
// what a workspace has and how a change narrows; reads manifests and build trees, never runs anything.
#include "tools/verify/discovery.h"

#include <algorithm>
#include <map>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "tools/verify/ecosystem.h"
#include "tools/verify/ecosystem_util.h"

namespace agentd::tools::verify {
namespace {

namespace fs = std::filesystem;
using support::Json;

// Changed files no runner narrows to and none needs to see.
bool is_documentation(const fs::path& path) {
  const std::string ext = lower(path.extension().string());
  const std::string name = path.filename().string();
  if (ext == ".md" || ext == ".rst" || ext == ".txt" || ext == ".adoc" || name == "LICENSE" || name == "CHANGELOG") {
    return !(name == "CMakeLists.txt" || name.starts_with("requirements"));
  }
  return false;
}

// The ecosystem whose language `path` is written in, or null.
const Ecosystem* language_of(const fs::path& path) {
  const std::string ext = lower(path.extension().string());
  for (const Ecosystem* ecosystem : ecosystems()) {
    if (!ecosystem->language) continue;
    const auto& exts = ecosystem->extensions;
    if (std::find(exts.begin(), exts.end(), ext) != exts.end()) return ecosystem;
  }
  return nullptr;
}

const VerificationCommand* first_for(const Discovery& discovery, const Ecosystem& ecosystem) {
  for (const auto& command : discovery.commands) {
    if (command.purpose == Purpose::test && ecosystem.owns(command.runner)) return &command;
  }
  return nullptr;
}

}  // namespace

constexpr support::EnumName<RunnerKind> kRunnerKindNames[] = {
    {RunnerKind::gtest_ctest, "gtest_ctest"}, {RunnerKind::pytest, "pytest"},
    {RunnerKind::node_test, "node_test"},     {RunnerKind::jest, "jest"},
    {RunnerKind::vitest, "vitest"},           {RunnerKind::go_test, "go_test"},
    {RunnerKind::cargo_test, "cargo_test"},   {RunnerKind::make, "make"},
    {RunnerKind::npm_script, "npm_script"},   {RunnerKind::other, "other"}};
static_assert(support::names_every_value(kRunnerKindNames, RunnerKind::other));
std::span<const support::EnumName<RunnerKind>> enum_names(RunnerKind) noexcept { return kRunnerKindNames; }

std::string_view runner_kind_name(RunnerKind kind) noexcept { return support::enum_name(kind, "other"); }

std::optional<RunnerKind> parse_runner_kind(std::string_view name) noexcept {
  return support::enum_from_name<RunnerKind>(name);
}

RunnerKind guess_runner(std::string_view command) noexcept {
  static const std::vector<const Runner*> kByGuess = runners_by(&Runner::guess_order);
  for (const Runner* runner : kByGuess) {
    if (runner->guess != nullptr && runner->guess(command)) return runner->kind;
  }
  return RunnerKind::other;
}

bool runner_counts_tests(RunnerKind kind) noexcept {
  const Runner* runner = find_runner(kind);
  return runner != nullptr && runner->counts_tests;
}

constexpr support::EnumName<Purpose> kPurposeNames[] = {
    {Purpose::test, "test"}, {Purpose::lint, "lint"}, {Purpose::typecheck, "typecheck"}};
static_assert(support::names_every_value(kPurposeNames, Purpose::typecheck));
std::span<const support::EnumName<Purpose>> enum_names(Purpose) noexcept { return kPurposeNames; }

std::string_view purpose_name(Purpose purpose) noexcept { return support::enum_name(purpose, "test"); }

const VerificationCommand* Discovery::find(std::string_view id) const noexcept {
  for (const auto& command : commands) {
    if (command.id == id) return &command;
  }
  return nullptr;
}

const VerificationCommand* Discovery::primary() const noexcept {
  for (const auto& command : commands) {
    if (command.purpose == Purpose::test) return &command;
  }
  return nullptr;
}

Discovery discover_verification(const fs::path& workspace) {
  Discovery out;
  std::error_code ec;
  fs::path root = fs::weakly_canonical(workspace, ec);
  if (ec) root = workspace.lexically_normal();
  out.workspace = root;
  if (!is_dir(root)) {
    out.notes.push_back(fmt::format("{} is not a directory", root.string()));
    return out;
  }

  // Test runners first (they can be narrowed), then make targets, then what a README says, then lint
  // and typecheck: the front of the list is what a change is verified with.
  for (const Ecosystem* ecosystem : ecosystems()) {
    if (ecosystem->discover != nullptr && ecosystem->stage == DiscoveryStage::manifests) {
      ecosystem->discover(root, root, out);
    }
  }
  // A monorepo keeps its projects one level down; look there for kinds the root does not have.
  std::vector<const Ecosystem*> below;
  for (const Ecosystem* ecosystem : ecosystems()) {
    if (ecosystem->discover != nullptr && ecosystem->stage == DiscoveryStage::manifests &&
        ecosystem->root_has_project != nullptr && !ecosystem->root_has_project(root, out)) {
      below.push_back(ecosystem);
    }
  }
  std::vector<fs::path> subdirs;
  for (const auto& entry : fs::directory_iterator(root, fs::directory_options::skip_permission_denied, ec)) {
    std::error_code entry_ec;
    if (!entry.is_directory(entry_ec)) continue;
    const std::string name = entry.path().filename().string();
    if (name.starts_with('.') || name == "node_modules" || name == "target" || name == "vendor" ||
        name.starts_with("build") || name == "dist" || name == "venv" || name == "__pycache__") {
      continue;
    }
    subdirs.push_back(entry.path());
  }
  std::sort(subdirs.begin(), subdirs.end());
  for (const auto& dir : subdirs) {
    for (const Ecosystem* ecosystem : below) ecosystem->discover(dir, root, out);
  }
  for (const Ecosystem* ecosystem : ecosystems()) {
    if (ecosystem->discover != nullptr && ecosystem->stage == DiscoveryStage::workspace) {
      ecosystem->discover(root, root, out);
    }
  }
  std::stable_partition(out.commands.begin(), out.commands.end(),
                        [](const VerificationCommand& c) { return c.purpose == Purpose::test; });
  return out;
}

std::optional<Suggestion> suggest_verification(const Discovery& discovery,
                                               const std::vector<std::string>& changed_files) {
  const VerificationCommand* primary = discovery.primary();
  if (primary == nullptr) return std::nullopt;

  // By language, so that a reason lists them in Language's order.
  std::map<Language, std::pair<const Ecosystem*, std::vector<fs::path>>> by_language;
  std::vector<std::string> others;
  for (const auto& name : changed_files) {
    fs::path path = fs::path(name).is_absolute() ? fs::path(name) : discovery.workspace / name;
    path = path.lexically_normal();
    if (relative_to(path, discovery.workspace).empty()) continue;  // outside the workspace
    if (const Ecosystem* ecosystem = language_of(path)) {
      auto& [owner, paths] = by_language[*ecosystem->language];
      owner = ecosystem;
      paths.push_back(path);
      continue;
    }
    if (is_documentation(path)) continue;
    others.push_back(relative_to(path, discovery.workspace));
  }
  if (changed_files.empty()) return full(*primary, "no files changed: the full test command");
  if (!others.empty()) {
    return full(*primary, fmt::format("{} changed (not source code a runner can narrow to, e.g. build or "
                                      "configuration files): the full test command",
                                      list_names(others)));
  }
  if (by_language.empty())
    return full(*primary, "only documentation or files outside the workspace changed: the full test command");
  if (by_language.size() > 1) {
    std::vector<std::string> names;
    names.reserve(by_language.size());
    for (const auto& [language, entry] : by_language) names.emplace_back(entry.first->language_name);
    return full(*primary, fmt::format("the changed files are {}: one narrowed command cannot cover them all; the full "
                                      "test command",
                                      list_names(names)));
  }
  const auto& [ecosystem, paths] = by_language.begin()->second;
  const VerificationCommand* base = first_for(discovery, *ecosystem);
  if (base == nullptr) {
    return full(*primary, fmt::format("{} files changed but no {} test command was discovered: the full test command",
                                      ecosystem->language_name, ecosystem->language_name));
  }
  if (ecosystem->narrow != nullptr) return ecosystem->narrow(*base, paths);
  return full(*base, "the full test command");
}

Json to_json(const VerificationCommand& command) {
  Json out = Json::object();
  out.set("id", command.id);
  out.set("command", command.command);
  out.set("runner", runner_kind_name(command.runner));
  out.set("purpose", purpose_name(command.purpose));
  out.set("cwd", command.cwd.string());
  out.set("source", command.source);
  return out;
}

Json to_json(const Discovery& discovery) {
  Json out = Json::object();
  out.set("workspace", discovery.workspace.string());
  Json commands = Json::array();
  for (const auto& command : discovery.commands) commands.push_back(to_json(command));
  out.set("commands", std::move(commands));
  Json notes = Json::array();
  for (const auto& note : discovery.notes) notes.push_back(note);
  out.set("notes", std::move(notes));
  return out;
}

Json to_json(const Suggestion& suggestion) {
  Json out = to_json(suggestion.command);
  out.set("baseId", suggestion.base_id);
  out.set("narrowed", suggestion.narrowed);
  out.set("reason", suggestion.reason);
  return out;
}

}  // namespace agentd::tools::verify
