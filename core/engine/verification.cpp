#include "core/engine/verification.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "core/engine/project_settings.h"
#include "tools/verify/locator.h"

namespace agentd::core {

namespace fs = std::filesystem;
using support::Json;
namespace verify = tools::verify;

constexpr support::EnumName<AutoVerify> kAutoVerifyNames[] = {
    {AutoVerify::off, "off"}, {AutoVerify::suggest, "suggest"}, {AutoVerify::run, "run"}};
static_assert(support::names_every_value(kAutoVerifyNames, AutoVerify::run));
std::span<const support::EnumName<AutoVerify>> enum_names(AutoVerify) noexcept { return kAutoVerifyNames; }

std::string_view auto_verify_name(AutoVerify mode) noexcept { return support::enum_name(mode, "suggest"); }

std::optional<AutoVerify> parse_auto_verify(std::string_view name) noexcept {
  return support::enum_from_name<AutoVerify>(name);
}

VerificationPlan plan_verification(const std::string& workspace, std::vector<std::string> files) {
  VerificationPlan plan;
  plan.discovery = verify::discover_verification(workspace);
  plan.files = std::move(files);
  plan.suggestion = verify::suggest_verification(plan.discovery, plan.files);
  return plan;
}

Json to_json(const VerificationPlan& plan) {
  Json out = verify::to_json(plan.discovery);
  Json files = Json::array();
  for (const auto& f : plan.files) files.push_back(f);
  out["files"] = std::move(files);
  out["suggested"] = plan.suggestion ? verify::to_json(*plan.suggestion) : Json();
  return out;
}

std::string render_verification_context(const VerificationPlan& plan) {
  if (plan.discovery.commands.empty()) return {};
  std::string out =
      "Verification commands this project has (run the smallest relevant one after editing, "
      "with the verify tool):\n";
  constexpr std::size_t kShown = 6;
  for (std::size_t i = 0; i < plan.discovery.commands.size() && i < kShown; ++i) {
    const auto& c = plan.discovery.commands[i];
    std::string where;
    if (!c.cwd.empty() && c.cwd != fs::path(plan.discovery.workspace)) {
      where = fmt::format(" in {}", c.cwd.lexically_relative(plan.discovery.workspace).string());
    }
    out += fmt::format("- `{}`{} ({}, {})\n", c.command, where, verify::purpose_name(c.purpose), c.source);
  }
  if (plan.discovery.commands.size() > kShown)
    out += fmt::format("- ... and {} more\n", plan.discovery.commands.size() - kShown);
  return out;
}

bool is_verification_call(std::string_view tool, const Json& input, const verify::Discovery* discovery) {
  if (tool == "verify") return true;
  if (tool != "shell") return false;
  const Json* command = input.find("command");
  if (command == nullptr || !command->is_string()) return false;
  const std::string& text = command->as_string();
  if (verify::guess_runner(text) != verify::RunnerKind::other) return true;
  if (discovery != nullptr) {
    for (const auto& known : discovery->commands) {
      if (text.find(known.command) != std::string::npos) return true;
    }
  }
  return false;
}

namespace {

// "calc" from test_calc.py, calc_test.py, calc.test.js, calc.spec.ts, calc_test.go, calc_test.cpp.
std::string subject_stem(const std::string& path) {
  std::string stem = fs::path(path).stem().string();
  for (std::string_view suffix : {".test", ".spec", "_test", "_tests", "-test", "Test", "_spec"}) {
    if (stem.size() > suffix.size() && stem.ends_with(suffix)) {
      stem.resize(stem.size() - suffix.size());
      return stem;
    }
  }
  for (std::string_view prefix : {"test_", "tests_"}) {
    if (stem.size() > prefix.size() && stem.starts_with(prefix)) return stem.substr(prefix.size());
  }
  return stem;
}

bool same_file(const std::string& location, const std::string& changed) {
  // Printed paths are relative to wherever the runner ran; compare by trailing components.
  const std::string loc = fs::path(location).lexically_normal().generic_string();
  const std::string abs = fs::path(changed).lexically_normal().generic_string();
  if (loc == abs) return true;
  return abs.size() > loc.size() && abs.ends_with(loc) && abs[abs.size() - loc.size() - 1] == '/';
}

}  // namespace

std::vector<std::string> failure_locations(std::string_view output) { return verify::failure_paths(output); }

std::optional<VerificationRun> verification_run(std::string_view tool, const Json& input,
                                                const tools::ToolResult& result) {
  if (!is_verification_call(tool, input, nullptr)) return std::nullopt;
  const auto text = [](const Json* value) { return value != nullptr && value->is_string() ? value->as_string() : ""; };
  VerificationRun run;
  if (tool == "verify") {
    const Json* verification = result.metadata.find("verification");
    if (verification == nullptr || !verification->is_object()) return std::nullopt;
    run.command = text(verification->find("command"));
    run.status = text(verification->find("status"));
    const Json* narrowed = verification->find("narrowed");
    run.narrowed = narrowed != nullptr && narrowed->is_bool() && narrowed->as_bool();
    if (run.command.empty() || run.status.empty()) return std::nullopt;
    return run;
  }
  run.command = text(input.find("command"));
  const Json* exit_code = result.metadata.find("exitCode");
  const std::string ended_by = text(result.metadata.find("endedBy"));
  if (ended_by == "timeout") {
    run.status = "timed_out";
  } else if (exit_code != nullptr && exit_code->is_integer()) {
    run.status = exit_code->as_int64() == 0 ? "passed" : "failed";
  } else {
    run.status = result.ok ? "passed" : "failed";
  }
  return run;
}

TurnVerification turn_verification(std::vector<std::string> changed_files, std::vector<VerificationRun> runs,
                                   const VerificationPlan& plan) {
  TurnVerification turn;
  turn.changed_files = std::move(changed_files);
  turn.runs = std::move(runs);
  if (turn.runs.empty()) {
    if (plan.suggestion) {
      turn.not_run.push_back(
          {plan.suggestion->command.command, "suggested for the changed files: " + plan.suggestion->reason});
    }
    return turn;
  }
  const verify::VerificationCommand* full = plan.discovery.primary();
  const bool full_ran = full != nullptr && std::any_of(turn.runs.begin(), turn.runs.end(), [&](const auto& run) {
                          return !run.narrowed && run.command == full->command;
                        });
  if (full != nullptr && !full_ran) turn.not_run.push_back({full->command, "the full suite"});
  return turn;
}

std::string verification_line(const TurnVerification& turn) {
  std::string out;
  if (turn.runs.empty()) {
    if (turn.not_run.empty()) return "not verified: no verification command found";
    return fmt::format("not verified: `{}` was not run", turn.not_run.front().command);
  }
  out = "verified: ";
  for (std::size_t i = 0; i < turn.runs.size(); ++i) {
    const auto& run = turn.runs[i];
    out += fmt::format("{}`{}` {}", i == 0 ? "" : ", ", run.command,
                       run.status == "passed"      ? "passed"
                       : run.status == "failed"    ? "failed"
                       : run.status == "no_tests"  ? "ran no tests"
                       : run.status == "timed_out" ? "timed out"
                                                   : "did not run");
  }
  for (std::size_t i = 0; i < turn.not_run.size(); ++i) {
    const auto& skipped = turn.not_run[i];
    out += fmt::format("{}{} (`{}`)", i == 0 ? "; not run: " : ", ", skipped.reason, skipped.command);
  }
  return out;
}

bool failure_touches_change(const std::vector<std::string>& locations, const std::vector<std::string>& changed_files) {
  if (locations.empty()) return true;
  for (const auto& loc : locations) {
    for (const auto& changed : changed_files) {
      if (same_file(loc, changed)) return true;
      if (subject_stem(loc) == subject_stem(changed)) return true;
    }
  }
  return false;
}

}  // namespace agentd::core
