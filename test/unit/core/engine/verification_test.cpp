// The engine's verification helpers: which calls count as verifying, which failure locations a runner
// printed, and whether they concern the files a turn changed.
#include "core/engine/verification.h"

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

}  // namespace
}  // namespace agentd::core
