// The engine's side of verification (DESIGN.md section 3, "verification feedback"): what a project would
// run for a set of files (`_agentd/verify/plan`, the turn's context), whether a tool call verified the
// turn's edits, whether a failure lies in the code the turn changed, and the texts auto-verification
// sends to the model and the user. The discovery and the runners are tools/verify's; nothing here runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/json.h"
#include "tools/tool.h"
#include "tools/verify/discovery.h"

namespace agentd::core {

struct VerificationPlan {
  tools::verify::Discovery discovery;
  std::vector<std::string> files;                       // absolute, what the suggestion covers
  std::optional<tools::verify::Suggestion> suggestion;  // nullopt: no test command known
};

// Blocking (reads manifests and the changed files): run it off the event loop.
VerificationPlan plan_verification(const std::string& workspace, std::vector<std::string> files);

// {workspace, files, commands, notes, suggested: Suggestion or null}
support::Json to_json(const VerificationPlan& plan);

// The short part of a turn's context that tells the model how this project verifies itself; empty when
// discovery found nothing.
std::string render_verification_context(const VerificationPlan& plan);

// Whether a call checks the turn's work: the verify tool, or a shell command that drives a test runner or
// one of the project's discovered commands.
bool is_verification_call(std::string_view tool, const support::Json& input, const tools::verify::Discovery* discovery);

// One verification a turn ran: the verify tool's, with its status, or a shell command that drives a test
// runner, passed or failed by its exit code.
struct VerificationRun {
  std::string command;
  std::string status;     // passed, failed, no_tests, not_run, timed_out (the verify tool's statuses)
  bool narrowed = false;  // the verify tool ran the smallest command for the changed files
};

// The run a call that ran was, when it was a verification (is_verification_call); nullopt otherwise.
std::optional<VerificationRun> verification_run(std::string_view tool, const support::Json& input,
                                                const tools::ToolResult& result);

// What a turn that changed files verified, and what it did not: the answer to "is this change checked?"
// that the prompt's answer carries (_meta.agentd.verification) and the CLI prints after it.
struct TurnVerification {
  struct NotRun {
    std::string command;
    std::string reason;  // "the full suite", "suggested for the changed files: ..."
  };
  std::vector<std::string> changed_files;  // absolute
  std::vector<VerificationRun> runs;       // in the order they ran
  std::vector<NotRun> not_run;
};

// The turn's record from its changed files, its runs and the project's plan for those files: with no
// run, the suggested command was not run; when no run was the project's full test command, that was not.
TurnVerification turn_verification(std::vector<std::string> changed_files, std::vector<VerificationRun> runs,
                                   const VerificationPlan& plan);

// One line for people: "verified: `pytest tests/test_x.py` passed; not run: the full suite (`pytest`)",
// "not verified: `npm test` was not run", "not verified: no verification command found".
std::string verification_line(const TurnVerification& turn);

// The source paths a runner's important output names as failing (`tests/test_x.py:12`,
// `FAILED tests/test_x.py::test_y`, `src/calc.js:3:9`), relative as printed, each once: the shared
// locator's failure_paths (tools/verify/locator.h).
std::vector<std::string> failure_locations(std::string_view important_output);

// Whether a failure concerns the changed files: a location is a changed file, or a test of one
// (test_calc.py, calc.test.js, calc_test.go for calc.*). With no locations it cannot tell, and says yes.
bool failure_touches_change(const std::vector<std::string>& locations, const std::vector<std::string>& changed_files);

}  // namespace agentd::core
