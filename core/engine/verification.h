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

// The source paths a runner's important output names as failing (`tests/test_x.py:12`,
// `FAILED tests/test_x.py::test_y`, `src/calc.js:3:9`), relative as printed, each once: the shared
// locator's failure_paths (tools/verify/locator.h).
std::vector<std::string> failure_locations(std::string_view important_output);

// Whether a failure concerns the changed files: a location is a changed file, or a test of one
// (test_calc.py, calc.test.js, calc_test.go for calc.*). With no locations it cannot tell, and says yes.
bool failure_touches_change(const std::vector<std::string>& locations, const std::vector<std::string>& changed_files);

}  // namespace agentd::core
