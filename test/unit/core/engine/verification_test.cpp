// The engine's verification helpers: which calls count as verifying, which failure locations a runner
// printed, and whether they concern the files a turn changed.
#include "core/engine/verification.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/engine/project_settings.h"
#include "core/support/json.h"

namespace agentd::core {
namespace {

using support::Json;

Json shell(std::string_view command) {
  Json input = Json::object();
  input["command"] = std::string(command);
  return input;
}

TEST(VerificationHelpers, AutoVerifyNamesRoundTrip) {
  for (AutoVerify mode : {AutoVerify::off, AutoVerify::suggest, AutoVerify::run}) {
    EXPECT_EQ(parse_auto_verify(auto_verify_name(mode)), mode);
  }
  EXPECT_FALSE(parse_auto_verify("always"));
  EXPECT_FALSE(parse_auto_verify("Run"));
}

TEST(VerificationHelpers, WhichCallsVerify) {
  EXPECT_TRUE(is_verification_call("verify", Json::object(), nullptr));
  EXPECT_TRUE(is_verification_call("shell", shell("python3 -m pytest -x tests"), nullptr));
  EXPECT_TRUE(is_verification_call("shell", shell("ctest --test-dir build -R Calc"), nullptr));
  EXPECT_TRUE(is_verification_call("shell", shell("cargo test"), nullptr));
  EXPECT_FALSE(is_verification_call("shell", shell("ls -la"), nullptr));
  EXPECT_FALSE(is_verification_call("shell", Json::object(), nullptr));
  EXPECT_FALSE(is_verification_call("read_file", shell("pytest"), nullptr));
  // A project's own command counts, whatever runner it drives.
  tools::verify::Discovery discovery;
  tools::verify::VerificationCommand check;
  check.command = "./scripts/check-all";
  discovery.commands.push_back(check);
  EXPECT_FALSE(is_verification_call("shell", shell("./scripts/check-all --fast"), nullptr));
  EXPECT_TRUE(is_verification_call("shell", shell("./scripts/check-all --fast"), &discovery));
}

TEST(VerificationHelpers, FailureLocationsFromRunnerOutput) {
  const std::string pytest =
      "FAILED tests/test_calc.py::test_add - assert 5 == 6\n"
      "tests/test_calc.py:7: AssertionError\n"
      "calc/__init__.py:3: in add\n";
  EXPECT_EQ(failure_locations(pytest), (std::vector<std::string>{"tests/test_calc.py", "calc/__init__.py"}));
  const std::string node =
      "not ok 1 - adds\n  location: '/tmp/w/test/calc.test.js:7:1'\n"
      "    at TestContext.<anonymous> (file:///tmp/w/test/calc.test.js:8:10)\n";
  EXPECT_EQ(failure_locations(node), (std::vector<std::string>{"/tmp/w/test/calc.test.js"}));
  const std::string gtest = "/src/calc_test.cpp:12: Failure\nExpected equality of these values:\n";
  EXPECT_EQ(failure_locations(gtest), (std::vector<std::string>{"/src/calc_test.cpp"}));
  // Times, ports and versions are not locations.
  EXPECT_TRUE(failure_locations("started 12:30:05 on localhost:8080, version 1.2.3:4\n").empty());
}

TEST(VerificationHelpers, WhetherAFailureTouchesTheChange) {
  const std::vector<std::string> changed = {"/w/src/calc.js"};
  EXPECT_TRUE(failure_touches_change({"src/calc.js"}, changed));        // the file itself
  EXPECT_TRUE(failure_touches_change({"test/calc.test.js"}, changed));  // its test, by name
  EXPECT_TRUE(failure_touches_change({"/w/test/calc.spec.js"}, changed));
  EXPECT_FALSE(failure_touches_change({"test/more.test.js"}, changed));  // someone else's
  EXPECT_FALSE(failure_touches_change({"lib/xcalc.js"}, changed));       // a name that only ends alike
  EXPECT_TRUE(failure_touches_change({}, changed));                      // cannot tell: assume it does
  EXPECT_TRUE(failure_touches_change({"tests/test_calc.py"}, {"/w/calc.py"}));
  EXPECT_TRUE(failure_touches_change({"pkg/calc_test.go"}, {"/w/pkg/calc.go"}));
}

tools::ToolResult verify_result(std::string_view command, std::string_view status, bool narrowed) {
  tools::ToolResult result;
  Json verification = Json::object();
  verification["command"] = std::string(command);
  verification["status"] = std::string(status);
  verification["narrowed"] = narrowed;
  result.metadata["verification"] = std::move(verification);
  return result;
}

tools::ToolResult shell_result(std::int64_t exit_code, std::string_view ended_by = "exit") {
  tools::ToolResult result;
  result.metadata["exitCode"] = exit_code;
  result.metadata["endedBy"] = std::string(ended_by);
  result.ok = exit_code == 0;
  return result;
}

TEST(TurnVerification, WhatACallRan) {
  auto run = verification_run("verify", Json::object(), verify_result("pytest tests/test_x.py", "failed", true));
  ASSERT_TRUE(run);
  EXPECT_EQ(run->command, "pytest tests/test_x.py");
  EXPECT_EQ(run->status, "failed");
  EXPECT_TRUE(run->narrowed);
  run = verification_run("shell", shell("cargo test"), shell_result(0));
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "passed");
  EXPECT_EQ(verification_run("shell", shell("cargo test"), shell_result(101))->status, "failed");
  EXPECT_EQ(verification_run("shell", shell("cargo test"), shell_result(-1, "timeout"))->status, "timed_out");
  // Not verifications, or nothing to say.
  EXPECT_FALSE(verification_run("shell", shell("ls"), shell_result(0)));
  EXPECT_FALSE(verification_run("verify", Json::object(), tools::ToolResult{}));
}

VerificationPlan plan_with(std::string primary, std::optional<std::string> suggested) {
  VerificationPlan plan;
  tools::verify::VerificationCommand command;
  command.id = "full";
  command.command = std::move(primary);
  plan.discovery.commands.push_back(command);
  if (suggested) {
    tools::verify::Suggestion s;
    s.command = command;
    s.command.command = *suggested;
    s.narrowed = *suggested != command.command;
    s.reason = "tests/test_x.py changed";
    plan.suggestion = s;
  }
  return plan;
}

TEST(TurnVerification, WhatRanAndWhatDidNot) {
  const std::vector<std::string> changed = {"/w/x.py"};
  // Nothing ran: the suggestion is what was not run.
  TurnVerification t = turn_verification(changed, {}, plan_with("pytest", "pytest tests/test_x.py"));
  ASSERT_EQ(t.not_run.size(), 1U);
  EXPECT_EQ(t.not_run[0].command, "pytest tests/test_x.py");
  EXPECT_EQ(verification_line(t), "not verified: `pytest tests/test_x.py` was not run");
  // A narrowed run: the full suite did not run.
  t = turn_verification(changed, {{"pytest tests/test_x.py", "passed", true}}, plan_with("pytest", "pytest x"));
  ASSERT_EQ(t.not_run.size(), 1U);
  EXPECT_EQ(verification_line(t), "verified: `pytest tests/test_x.py` passed; not run: the full suite (`pytest`)");
  // The full command ran (and failed): nothing left out.
  t = turn_verification(changed, {{"pytest tests/test_x.py", "passed", true}, {"pytest", "failed", false}},
                        plan_with("pytest", "pytest x"));
  EXPECT_TRUE(t.not_run.empty());
  EXPECT_EQ(verification_line(t), "verified: `pytest tests/test_x.py` passed, `pytest` failed");
  // A project without any command.
  t = turn_verification(changed, {}, VerificationPlan{});
  EXPECT_EQ(verification_line(t), "not verified: no verification command found");
  EXPECT_EQ(t.changed_files, changed);
}

}  // namespace
}  // namespace agentd::core
