// The verify tool on the fixture projects with the real runners: discovery finds the command, the
// smallest one is derived for the changed file, and the run is judged from the runner's real output.
// A test whose toolchain is missing skips with a message.
#include "tools/verify/verify_tool.h"

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/tools/tool_harness.h"
#include "test/unit/verify/verify_test_util.h"
#include "tools/environment.h"
#include "tools/process.h"
#include "tools/verify/discovery.h"

namespace agentd::tools::verify {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using support::Errc;
using support::Json;
using ::testing::HasSubstr;
using ::testing::Not;
using tools::testing::ToolHarness;
using verify::testing::copy_fixture;
using verify::testing::find_program;
using verify::testing::replace_in_file;

// Runs a set-up command (configuring a CMake project, probing a toolchain) to its end.
ProcessResult run_setup(const std::string& command, const fs::path& cwd, std::chrono::milliseconds timeout = 120s) {
  ProcessOptions options;
  options.argv = {"/bin/sh", "-c", command};
  options.cwd = cwd.string();
  options.env = scrubbed_environment({});
  options.timeout = timeout;
  support::CancelSource cancel;
  auto result = tools::testing::run_sync(run_process(options, {}, cancel.token()));
  EXPECT_TRUE(result.has_value()) << command;
  return result ? std::move(*result) : ProcessResult{};
}

class VerifyToolTest : public ::testing::Test {
 protected:
  VerifyToolTest() {
    // Without Landlock the shell machinery refuses by default; these tests are about verification.
    config_.sandbox.allow_unsandboxed = true;
    config_.kill_grace = 200ms;
    tool_ = make_verify_tool(config_);
  }

  ToolResult verify(const Json& input) {
    auto result = h_.run(*tool_, input);
    if (!result) {
      ADD_FAILURE() << "error instead of a result: " << result.error().message();
      return ToolResult::failure(result.error().message());
    }
    return std::move(*result);
  }
  ToolResult verify(const char* input) { return verify(tools::testing::json(input)); }

  const Json& verification(const ToolResult& result) { return result.metadata["verification"]; }

  ShellConfig config_;
  ToolHarness h_;
  std::shared_ptr<Tool> tool_;
};

TEST_F(VerifyToolTest, Spec) {
  const ToolSpec& spec = tool_->spec();
  EXPECT_EQ(spec.name, "verify");
  EXPECT_EQ(spec.kind, ToolKind::execute);
  EXPECT_EQ(spec.base_risk, Risk::execute);
  EXPECT_TRUE(spec.input_schema["properties"].contains("command"));
  EXPECT_TRUE(spec.input_schema["properties"].contains("files"));
  EXPECT_EQ(tool_->title(tools::testing::json(R"({"command": "make check"})"), h_.context), "Verify: make check");
  EXPECT_EQ(tool_->title(tools::testing::json(R"({"files": ["a.py", "b.py"]})"), h_.context), "Verify a.py and 1 more");
  EXPECT_EQ(tool_->title(tools::testing::json("{}"), h_.context), "Verify this turn's changes");
  const ToolResult bad = verify(R"({"command": 3})");
  EXPECT_FALSE(bad.ok);
  EXPECT_THAT(bad.content, HasSubstr("Invalid input for verify"));
}

TEST_F(VerifyToolTest, NodeProjectPassesThenFails) {
  if (find_program("node").empty() || find_program("npm").empty()) GTEST_SKIP() << "node or npm is not installed";
  copy_fixture("node", h_.workspace());

  // This turn changed the test file: only it runs.
  h_.context.changed_files = {h_.path("test/calc.test.js").string()};
  ToolResult result = verify("{}");
  EXPECT_TRUE(result.ok) << result.content;
  const Json& passed = verification(result);
  EXPECT_EQ(passed["command"], Json("npm test -- test/calc.test.js"));
  EXPECT_EQ(passed["exitCode"], Json(0));
  EXPECT_EQ(passed["passed"], Json(true));
  EXPECT_EQ(passed["status"], Json("passed"));
  EXPECT_EQ(passed["runner"], Json("node_test"));
  EXPECT_EQ(passed["source"], Json("package.json scripts.test"));
  EXPECT_EQ(passed["narrowed"], Json(true));
  EXPECT_EQ(passed["counts"]["passed"], Json(2));  // test/more.test.js did not run
  EXPECT_TRUE(passed["durationMs"].is_integer());
  EXPECT_THAT(passed["importantOutput"].as_string(), HasSubstr("# pass 2"));
  EXPECT_EQ(result.summary, "Verification passed (2 passed, 0 failed): npm test -- test/calc.test.js");

  // Break the source; the turn changed src/calc.js, and its test is found by name.
  ASSERT_TRUE(replace_in_file(h_.path("src/calc.js"), "return a - b", "return a + b"));
  h_.context.changed_files = {h_.path("src/calc.js").string()};
  result = verify("{}");
  EXPECT_TRUE(result.ok) << result.content;  // a failing test is information, not a failed call
  const Json& failed = verification(result);
  EXPECT_EQ(failed["command"], Json("npm test -- test/calc.test.js"));
  EXPECT_EQ(failed["passed"], Json(false));
  EXPECT_EQ(failed["status"], Json("failed"));
  EXPECT_EQ(failed["exitCode"], Json(1));
  EXPECT_EQ(failed["counts"]["failed"], Json(1));
  const std::string important = failed["importantOutput"].as_string();
  EXPECT_THAT(important, HasSubstr("not ok 2 - subtracts"));
  EXPECT_THAT(important, HasSubstr("test/calc.test.js:11:1"));
  EXPECT_THAT(important, HasSubstr("4 !== 2"));
  EXPECT_THAT(important, Not(HasSubstr("ok 1 - adds")));
  EXPECT_THAT(result.content, HasSubstr("FAILED: npm test -- test/calc.test.js\n"));
  EXPECT_THAT(result.content, HasSubstr("why this command: node_test runs only test/calc.test.js"));

  // The whole suite, named explicitly: the discovered command keeps its source.
  result = verify(R"({"command": "npm test"})");
  EXPECT_EQ(verification(result)["source"], Json("package.json scripts.test"));
  EXPECT_EQ(verification(result)["counts"]["passed"], Json(2));
  EXPECT_EQ(verification(result)["counts"]["failed"], Json(1));
}

TEST_F(VerifyToolTest, NoTestsFoundIsNotAPass) {
  if (find_program("node").empty() || find_program("npm").empty()) GTEST_SKIP() << "node or npm is not installed";
  h_.write("package.json", R"({"scripts": {"test": "node --test"}})");
  const ToolResult result = verify("{}");
  EXPECT_FALSE(result.ok);
  const Json& v = verification(result);
  EXPECT_EQ(v["exitCode"], Json(0));
  EXPECT_EQ(v["passed"], Json(false));
  EXPECT_EQ(v["status"], Json("no_tests"));
  EXPECT_THAT(result.content, HasSubstr("NO TESTS RAN (not a pass)"));
  EXPECT_EQ(result.summary, "Verification found no tests: npm test");
}

TEST_F(VerifyToolTest, PythonProjectPassesThenFails) {
  copy_fixture("python", h_.workspace());
  // However discovery starts pytest here (python3 -m pytest, or the pytest on PATH), it must work.
  const std::string pytest = discover_verification(h_.workspace()).commands.at(0).command;
  const ProcessResult probe = run_setup(pytest + " --version", h_.workspace(), 30s);
  if (probe.exit_code != 0) GTEST_SKIP() << "pytest is not installed: " << probe.output;
  ToolResult result = verify(R"({"files": ["calc/__init__.py"]})");
  EXPECT_TRUE(result.ok) << result.content;
  EXPECT_EQ(verification(result)["command"], Json(pytest + " tests/test_calc.py"));
  EXPECT_EQ(verification(result)["passed"], Json(true));
  EXPECT_EQ(verification(result)["counts"]["passed"], Json(2));
  ASSERT_TRUE(replace_in_file(h_.path("calc/__init__.py"), "return a - b", "return a + b"));
  result = verify(R"({"files": ["calc/__init__.py"]})");
  EXPECT_EQ(verification(result)["status"], Json("failed"));
  const std::string important = verification(result)["importantOutput"].as_string();
  EXPECT_THAT(important, HasSubstr("test_sub"));
  EXPECT_THAT(important, HasSubstr("tests/test_calc.py:9: AssertionError"));
  EXPECT_THAT(important, HasSubstr("1 failed, 1 passed"));
}

TEST_F(VerifyToolTest, PytestMissingIsNotRun) {
  // A python3 without pytest, and no pytest on PATH: what python3 says then.
  const fs::path bin = h_.path(".bin");
  verify::testing::write_script(bin / "python3", "#!/bin/sh\necho \"$0: No module named pytest\" >&2\nexit 1\n");
  const verify::testing::ScopedPath path(bin.string());
  copy_fixture("python", h_.workspace());
  const ToolResult result = verify("{}");
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(verification(result)["status"], Json("not_run"));
  EXPECT_EQ(verification(result)["passed"], Json(false));
  EXPECT_THAT(verification(result)["note"].as_string(), HasSubstr("pytest is not installed"));
}

TEST_F(VerifyToolTest, RustProjectPassesThenFails) {
  if (find_program("cargo").empty()) GTEST_SKIP() << "cargo is not installed";
  ::setenv("CARGO_NET_OFFLINE", "true", 1);  // no dependencies: nothing to fetch
  copy_fixture("rust", h_.workspace());
  h_.context.changed_files = {h_.path("src/ops.rs").string()};
  ToolResult result = verify("{}");
  EXPECT_TRUE(result.ok) << result.content;
  EXPECT_EQ(verification(result)["command"], Json("cargo test ops::"));
  EXPECT_EQ(verification(result)["passed"], Json(true)) << result.content;
  EXPECT_EQ(verification(result)["counts"]["passed"], Json(1));
  ASSERT_TRUE(replace_in_file(h_.path("src/ops.rs"), "a - b", "a + b"));
  result = verify("{}");
  EXPECT_EQ(verification(result)["status"], Json("failed"));
  EXPECT_EQ(verification(result)["exitCode"], Json(101));
  const std::string important = verification(result)["importantOutput"].as_string();
  EXPECT_THAT(important, HasSubstr("test ops::tests::subtracts ... FAILED"));
  EXPECT_THAT(important, HasSubstr("panicked at src/ops.rs:11:9"));
  EXPECT_THAT(important, HasSubstr("left: 4"));
  EXPECT_THAT(important, HasSubstr("test result: FAILED. 0 passed; 1 failed"));
  // A filter that matches nothing runs zero tests and exits 0: not a pass.
  result = verify(R"({"command": "cargo test no_such_test"})");
  EXPECT_EQ(verification(result)["exitCode"], Json(0));
  EXPECT_EQ(verification(result)["status"], Json("no_tests"));
  EXPECT_EQ(verification(result)["passed"], Json(false));
}

TEST_F(VerifyToolTest, GoProjectPassesThenFails) {
  if (find_program("go").empty()) GTEST_SKIP() << "go is not installed";
  copy_fixture("go", h_.workspace());
  h_.context.changed_files = {h_.path("calc/calc.go").string()};
  ToolResult result = verify("{}");
  EXPECT_EQ(verification(result)["command"], Json("go test ./calc/..."));
  EXPECT_EQ(verification(result)["passed"], Json(true)) << result.content;
  ASSERT_TRUE(replace_in_file(h_.path("calc/calc.go"), "{ return a - b }", "{ return a + b }"));
  result = verify("{}");
  EXPECT_EQ(verification(result)["status"], Json("failed"));
  EXPECT_THAT(verification(result)["importantOutput"].as_string(), HasSubstr("--- FAIL: TestSub"));
}

// One test for the whole CMake flow: the fixture's configure and build (the slow part) happen once.
TEST_F(VerifyToolTest, CmakeGoogleTestProjectPassesThenFails) {
  if (find_program("cmake").empty() || find_program("ctest").empty()) GTEST_SKIP() << "cmake or ctest is not installed";
  copy_fixture("cmake", h_.workspace());
  const std::string generator = find_program("ninja").empty() ? "" : " -G Ninja";
  const ProcessResult configured =
      run_setup("cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug" + generator + " 2>&1", h_.workspace());
  if (configured.exit_code != 0) {
    GTEST_SKIP() << "the CMake + GoogleTest fixture does not configure here (GoogleTest missing?): "
                 << configured.output;
  }
  const ProcessResult built = run_setup("cmake --build build 2>&1", h_.workspace());
  ASSERT_EQ(built.exit_code, 0) << built.output;

  // Discovery sees the build tree; a change to calc.cpp is verified by its test's suite, built alone.
  const Discovery discovery = discover_verification(h_.workspace());
  ASSERT_NE(discovery.find("ctest:build"), nullptr);
  const auto suggestion = suggest_verification(discovery, {h_.path("calc.cpp").string()});
  ASSERT_TRUE(suggestion.has_value());
  EXPECT_EQ(suggestion->command.command,
            "cmake --build build --target calc_test && ctest --test-dir build --output-on-failure --no-tests=error -R "
            "'^(Calc)\\.'");

  h_.context.changed_files = {h_.path("calc.cpp").string()};
  ToolResult result = verify("{}");
  EXPECT_TRUE(result.ok) << result.content;
  EXPECT_EQ(verification(result)["passed"], Json(true)) << result.content;
  EXPECT_EQ(verification(result)["runner"], Json("gtest_ctest"));
  EXPECT_EQ(verification(result)["counts"]["passed"], Json(2));  // Other.AddsZero did not run

  // Break it: the command rebuilds before testing, so the failure shows.
  ASSERT_TRUE(replace_in_file(h_.path("calc.cpp"), "return a - b", "return a + b"));
  result = verify("{}");
  EXPECT_EQ(verification(result)["status"], Json("failed")) << result.content;
  EXPECT_EQ(verification(result)["counts"]["failed"], Json(1));
  std::string important = verification(result)["importantOutput"].as_string();
  EXPECT_THAT(important, HasSubstr("calc_test.cpp:6: Failure"));
  EXPECT_THAT(important, HasSubstr("Which is: 4"));
  EXPECT_THAT(important, HasSubstr("Calc.Subtracts (Failed)"));
  EXPECT_THAT(important, HasSubstr("50% tests passed, 1 tests failed out of 2"));

  // A compile error: failed, with the compiler's message, and no test counts.
  ASSERT_TRUE(replace_in_file(h_.path("calc.cpp"), "int sub(int a, int b) { return a + b; }\n",
                              "int sub(int a, int b) { return a + b; }\nint broken() { return undefined_name; }\n"));
  result = verify("{}");
  EXPECT_EQ(verification(result)["status"], Json("failed"));
  EXPECT_EQ(verification(result)["counts"], Json());
  important = verification(result)["importantOutput"].as_string();
  EXPECT_THAT(important, HasSubstr("calc.cpp:5:"));
  EXPECT_THAT(important, HasSubstr("error:"));
  EXPECT_THAT(important, HasSubstr("undefined_name"));
  EXPECT_THAT(verification(result)["note"].as_string(), HasSubstr("failed before tests ran"));

  // A suite regex that matches nothing: ctest's --no-tests=error makes it plain.
  result = verify(R"({"command": "ctest --test-dir build --no-tests=error -R '^Nothing\\.'"})");
  EXPECT_EQ(verification(result)["status"], Json("no_tests"));
  EXPECT_EQ(verification(result)["passed"], Json(false));
}

TEST_F(VerifyToolTest, NothingToRun) {
  const ToolResult result = verify("{}");
  EXPECT_FALSE(result.ok);
  EXPECT_THAT(result.content, HasSubstr("Not run: no verification command found in " + h_.workspace().string()));
  EXPECT_THAT(result.content, HasSubstr("Call verify again with `command`"));
  EXPECT_EQ(verification(result)["status"], Json("not_run"));
  EXPECT_EQ(verification(result)["passed"], Json(false));
}

TEST_F(VerifyToolTest, MissingRunnerIsNotRun) {
  const ToolResult result = verify(R"({"command": "agentd-no-such-runner --all"})");
  EXPECT_FALSE(result.ok);
  const Json& v = verification(result);
  EXPECT_EQ(v["exitCode"], Json(127));
  EXPECT_EQ(v["status"], Json("not_run"));
  EXPECT_EQ(v["passed"], Json(false));
  EXPECT_EQ(v["source"], Json("given by the caller"));
  EXPECT_THAT(v["note"].as_string(), HasSubstr("not installed or not on PATH"));
  EXPECT_THAT(v["note"].as_string(), HasSubstr("agentd-no-such-runner"));
}

TEST_F(VerifyToolTest, ExitStatusDecidesForScriptsWithoutCounts) {
  h_.write("Makefile", "check:\n\t@echo checking\n\nlint:\n\t@echo bad style; exit 2\n");
  ToolResult result = verify("{}");
  EXPECT_TRUE(result.ok) << result.content;
  EXPECT_EQ(verification(result)["command"], Json("make check"));
  EXPECT_EQ(verification(result)["source"], Json("Makefile target check"));
  EXPECT_EQ(verification(result)["passed"], Json(true));
  EXPECT_THAT(verification(result)["note"].as_string(), HasSubstr("exit status alone"));
  result = verify(R"({"command": "make lint"})");
  EXPECT_EQ(verification(result)["status"], Json("failed"));
  EXPECT_EQ(verification(result)["exitCode"], Json(2));
  EXPECT_THAT(verification(result)["importantOutput"].as_string(), HasSubstr("bad style"));
}

TEST_F(VerifyToolTest, TimeoutIsNotAPass) {
  const ToolResult result = verify(R"({"command": "sleep 5", "timeout_ms": 100})");
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(verification(result)["status"], Json("timed_out"));
  EXPECT_EQ(verification(result)["passed"], Json(false));
  EXPECT_EQ(verification(result)["exitCode"], Json());
}

TEST_F(VerifyToolTest, FilesOutsideTheWorkspaceAreRefused) {
  const ToolResult result = verify(R"({"files": ["../outside/x.py"]})");
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(result.metadata.contains("verification"));
}

TEST_F(VerifyToolTest, Cancelled) {
  h_.cancel.cancel();
  auto result = h_.run(*tool_, R"({"command": "true"})");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), Errc::cancelled);
}

TEST(JudgeVerificationTest, ExitZeroWithoutAnyTestIsNotAPass) {
  ProcessResult process;
  process.ended_by = EndedBy::exit;
  process.exit_code = 0;
  VerificationResult result;
  result.runner = RunnerKind::pytest;
  judge_verification(process, result);
  EXPECT_EQ(result.status, VerificationStatus::no_tests);
  EXPECT_FALSE(result.passed);
  EXPECT_THAT(result.note, HasSubstr("no pytest summary"));

  process.output = "========== 3 skipped in 0.01s ==========\n";
  judge_verification(process, result);
  EXPECT_EQ(result.status, VerificationStatus::no_tests);
  EXPECT_FALSE(result.passed);

  process.output = "========== 3 passed in 0.01s ==========\n";
  judge_verification(process, result);
  EXPECT_EQ(result.status, VerificationStatus::passed);
  EXPECT_TRUE(result.passed);

  process.exit_code = 5;
  process.output = "========== no tests ran in 0.01s ==========\n";
  judge_verification(process, result);
  EXPECT_EQ(result.status, VerificationStatus::no_tests);
  EXPECT_FALSE(result.passed);

  process.ended_by = EndedBy::signal;
  process.exit_code = -1;
  process.signal = 11;
  process.output = "Segmentation fault\n";
  judge_verification(process, result);
  EXPECT_EQ(result.status, VerificationStatus::failed);
  EXPECT_FALSE(result.exit_code.has_value());
}

TEST(JudgeVerificationTest, JsonShape) {
  VerificationResult result;
  result.command = "make test";
  result.exit_code = 0;
  result.duration_ms = 12;
  result.passed = true;
  result.important_output = "ok\n";
  result.runner = RunnerKind::make;
  result.source = "Makefile target test";
  result.status = VerificationStatus::passed;
  result.note = "judged by the exit status alone: the output has no test counts";
  EXPECT_EQ(to_json(result).dump(),
            R"({"command":"make test","exitCode":0,"durationMs":12,"passed":true,"importantOutput":"ok\n",)"
            R"("runner":"make","source":"Makefile target test","status":"passed","counts":null,)"
            R"("note":"judged by the exit status alone: the output has no test counts","reason":"","narrowed":false})");
}

}  // namespace
}  // namespace agentd::tools::verify
