#include "tools/verify/important_output.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/verify/verify_test_util.h"

namespace agentd::tools::verify {
namespace {

using testing::fixture_dir;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::read_all;

// Real output of the real runners (test/fixtures/verify/output/README.md says how it was made).
std::string captured(const std::string& name) {
  const std::string text = read_all(fixture_dir("output") / (name + ".txt"));
  EXPECT_FALSE(text.empty()) << "missing fixture " << name;
  return text;
}

std::string important(RunnerKind runner, const std::string& name, std::size_t max_bytes = 8192) {
  return extract_important_output(runner, captured(name), max_bytes);
}

void expect_counts(RunnerKind runner, const std::string& name, std::int64_t passed, std::int64_t failed,
                   std::string_view unit = "tests") {
  const auto counts = parse_summary(runner, captured(name));
  ASSERT_TRUE(counts.has_value()) << name;
  EXPECT_EQ(counts->passed, passed) << name;
  EXPECT_EQ(counts->failed, failed) << name;
  EXPECT_FALSE(counts->no_tests) << name;
  EXPECT_EQ(counts->unit, unit) << name;
}

void expect_no_tests(RunnerKind runner, const std::string& name) {
  const auto counts = parse_summary(runner, captured(name));
  ASSERT_TRUE(counts.has_value()) << name;
  EXPECT_TRUE(counts->no_tests) << name;
  EXPECT_EQ(counts->total(), 0) << name;
}

TEST(ImportantOutputTest, PytestFailureKeepsNameAssertionLocationAndSummary) {
  const std::string out = important(RunnerKind::pytest, "pytest_fail");
  EXPECT_THAT(out, HasSubstr("___ test_sub ___"));
  EXPECT_THAT(out, HasSubstr(">       assert sub(3, 1) == 2\n"));
  EXPECT_THAT(out, HasSubstr("E       assert 4 == 2\n"));
  EXPECT_THAT(out, HasSubstr("tests/test_calc.py:9: AssertionError\n"));
  EXPECT_THAT(out, HasSubstr("FAILED tests/test_calc.py::test_sub - assert 4 == 2\n"));
  EXPECT_THAT(out, HasSubstr("1 failed, 2 passed in 0.03s"));
  // The header and progress lines are cut, and say so.
  EXPECT_THAT(out, Not(HasSubstr("platform linux")));
  EXPECT_THAT(out, Not(HasSubstr("tests/test_more.py .")));
  EXPECT_THAT(out, HasSubstr("lines left out ...]"));
  expect_counts(RunnerKind::pytest, "pytest_fail", 2, 1);
}

TEST(ImportantOutputTest, PytestPassAndNoTestsAndCollectionError) {
  const std::string pass = important(RunnerKind::pytest, "pytest_pass");
  EXPECT_THAT(pass, HasSubstr("3 passed in"));
  EXPECT_THAT(pass, Not(HasSubstr("rootdir:")));
  expect_counts(RunnerKind::pytest, "pytest_pass", 3, 0);
  expect_no_tests(RunnerKind::pytest, "pytest_no_tests");
  EXPECT_THAT(important(RunnerKind::pytest, "pytest_no_tests"), HasSubstr("no tests ran"));

  const std::string error = important(RunnerKind::pytest, "pytest_collection_error");
  EXPECT_THAT(error, HasSubstr("ERROR collecting tests/test_broken.py"));
  EXPECT_THAT(error, HasSubstr("E   ModuleNotFoundError: No module named 'nothere_module'"));
  EXPECT_THAT(error, HasSubstr("tests/test_broken.py:1: in <module>"));
  EXPECT_THAT(error, HasSubstr("Interrupted: 1 error during collection"));
  expect_counts(RunnerKind::pytest, "pytest_collection_error", 0, 1);

  EXPECT_EQ(important(RunnerKind::pytest, "pytest_missing"), "/usr/bin/python3: No module named pytest\n");
  EXPECT_FALSE(parse_summary(RunnerKind::pytest, captured("pytest_missing")).has_value());
}

TEST(ImportantOutputTest, CtestWithGoogleTestKeepsTheAssertionAndTheFailedList) {
  const std::string out = important(RunnerKind::gtest_ctest, "ctest_fail");
  EXPECT_THAT(out, HasSubstr("2/3 Test #2: Calc.Subtracts ...................***Failed"));
  EXPECT_THAT(out, HasSubstr("/tmp/h-verify-cap/cmake/calc_test.cpp:6: Failure\n"
                             "Expected equality of these values:\n"
                             "  sub(3, 1)\n"
                             "    Which is: 4\n"
                             "  2\n"));
  EXPECT_THAT(out, HasSubstr("[  FAILED  ] Calc.Subtracts"));
  EXPECT_THAT(out, HasSubstr("67% tests passed, 1 tests failed out of 3"));
  EXPECT_THAT(out, HasSubstr("The following tests FAILED:\n\t  2 - Calc.Subtracts (Failed)\n"));
  // Passing tests are not what anyone looks at.
  EXPECT_THAT(out, Not(HasSubstr("Calc.Adds")));
  EXPECT_THAT(out, Not(HasSubstr("Other.AddsZero")));
  expect_counts(RunnerKind::gtest_ctest, "ctest_fail", 2, 1);
  expect_counts(RunnerKind::gtest_ctest, "ctest_pass", 3, 0);
  expect_no_tests(RunnerKind::gtest_ctest, "ctest_no_tests");
  EXPECT_THAT(important(RunnerKind::gtest_ctest, "ctest_no_tests"), HasSubstr("No tests were found!!!"));
}

TEST(ImportantOutputTest, GoogleTestBinaryAlone) {
  const std::string out = important(RunnerKind::gtest_ctest, "gtest_fail");
  EXPECT_THAT(out, HasSubstr("calc_test.cpp:6: Failure"));
  EXPECT_THAT(out, HasSubstr("[  FAILED  ] 1 test, listed below:"));
  EXPECT_THAT(out, Not(HasSubstr("[       OK ] Calc.Adds")));
  expect_counts(RunnerKind::gtest_ctest, "gtest_fail", 1, 1);
}

TEST(ImportantOutputTest, BuildErrorBeforeTestsKeepsTheCompilerMessage) {
  const std::string out = important(RunnerKind::gtest_ctest, "ctest_build_error");
  EXPECT_THAT(out, HasSubstr("calc.cpp: In function"));
  EXPECT_THAT(out, HasSubstr("calc.cpp:5:23: error: \u2018undefined_name\u2019 was not declared in this scope\n"
                             "    5 | int broken() { return undefined_name; }\n"));
  EXPECT_THAT(out, HasSubstr("ninja: build stopped"));
  EXPECT_THAT(out, Not(HasSubstr("/usr/bin/c++")));  // the compiler command line
  EXPECT_FALSE(parse_summary(RunnerKind::gtest_ctest, captured("ctest_build_error")).has_value());
}

TEST(ImportantOutputTest, NodeTestRunnerTapKeepsTheFailingTestsYaml) {
  const std::string out = important(RunnerKind::node_test, "node_test_fail");
  EXPECT_THAT(out, HasSubstr("not ok 2 - subtracts\n"));
  EXPECT_THAT(out, HasSubstr("location: '/tmp/h-verify-cap/node/test/calc.test.js:11:1'"));
  EXPECT_THAT(out, HasSubstr("Expected values to be strictly equal:"));
  EXPECT_THAT(out, HasSubstr("4 !== 2"));
  EXPECT_THAT(out, HasSubstr("expected: 2\n"));
  EXPECT_THAT(out, HasSubstr("actual: 4\n"));
  EXPECT_THAT(out, HasSubstr("(/tmp/h-verify-cap/node/test/calc.test.js:12:10)"));
  EXPECT_THAT(out, HasSubstr("# tests 3\n"));
  EXPECT_THAT(out, HasSubstr("# fail 1\n"));
  // Passing tests, their timings and the runner's own stack frames are cut.
  EXPECT_THAT(out, Not(HasSubstr("ok 1 - adds")));
  EXPECT_THAT(out, Not(HasSubstr("duration_ms")));
  EXPECT_THAT(out, Not(HasSubstr("node:internal")));
  expect_counts(RunnerKind::node_test, "node_test_fail", 2, 1);
  expect_counts(RunnerKind::node_test, "node_test_pass", 3, 0);
  expect_no_tests(RunnerKind::node_test, "node_test_no_tests");
}

TEST(ImportantOutputTest, NodeTestRunnerSpecReporter) {
  const std::string out = important(RunnerKind::node_test, "node_test_fail_spec");
  EXPECT_THAT(out, HasSubstr("\u2716 subtracts"));
  EXPECT_THAT(out, HasSubstr("AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:"));
  EXPECT_THAT(out, HasSubstr("at TestContext.<anonymous> (/tmp/h-verify-cap/node/test/calc.test.js:12:10)"));
  EXPECT_THAT(out, HasSubstr("test at test/calc.test.js:11:1"));
  EXPECT_THAT(out, HasSubstr("\u2139 fail 1"));
  EXPECT_THAT(out, Not(HasSubstr("\u2714 adds")));
  EXPECT_THAT(out, Not(HasSubstr("node:internal")));
  expect_counts(RunnerKind::node_test, "node_test_fail_spec", 2, 1);
}

TEST(ImportantOutputTest, JestKeepsTheFailureBlockAndSummary) {
  const std::string out = important(RunnerKind::jest, "jest_fail");
  EXPECT_THAT(out, HasSubstr("FAIL test/calc.test.js\n"));
  EXPECT_THAT(out, HasSubstr("\u25cf calc \u203a subtracts\n"));
  EXPECT_THAT(out, HasSubstr("Expected: 2\n"));
  EXPECT_THAT(out, HasSubstr("Received: 4\n"));
  EXPECT_THAT(out, HasSubstr(">  9 |     expect(sub(3, 1)).toBe(2);"));
  EXPECT_THAT(out, HasSubstr("at Object.toBe (test/calc.test.js:9:23)"));
  EXPECT_THAT(out, HasSubstr("Tests:       1 failed, 2 passed, 3 total"));
  EXPECT_THAT(out, Not(HasSubstr("PASS test/more.test.js")));
  expect_counts(RunnerKind::jest, "jest_fail", 2, 1);
  expect_counts(RunnerKind::jest, "jest_pass", 3, 0);
  expect_no_tests(RunnerKind::jest, "jest_no_tests");
  EXPECT_THAT(important(RunnerKind::jest, "jest_no_tests"), HasSubstr("No tests found, exiting with code 1"));
}

TEST(ImportantOutputTest, VitestWithColoursKeepsTheFailureAndSummary) {
  ASSERT_THAT(captured("vitest_fail"), HasSubstr("\x1b["));  // vitest colours even through a pipe
  const std::string out = important(RunnerKind::vitest, "vitest_fail");
  EXPECT_THAT(out, Not(HasSubstr("\x1b[")));
  EXPECT_THAT(out, HasSubstr("\u00d7 subtracts"));
  EXPECT_THAT(out, HasSubstr("FAIL  test/calc.test.js > calc > subtracts"));
  EXPECT_THAT(out, HasSubstr("AssertionError: expected 4 to be 2 // Object.is equality"));
  EXPECT_THAT(out, HasSubstr("- 2\n+ 4\n"));
  EXPECT_THAT(out, HasSubstr("\u276f test/calc.test.js:10:23"));
  EXPECT_THAT(out, HasSubstr("Tests  1 failed | 2 passed (3)"));
  EXPECT_THAT(out, Not(HasSubstr("\u2713 adds")));
  expect_counts(RunnerKind::vitest, "vitest_fail", 2, 1);
  expect_counts(RunnerKind::vitest, "vitest_pass", 3, 0);
  expect_no_tests(RunnerKind::vitest, "vitest_no_tests");
}

TEST(ImportantOutputTest, GoTestKeepsFailLinesAndMessages) {
  const std::string out = important(RunnerKind::go_test, "go_test_fail");
  EXPECT_THAT(out, HasSubstr("--- FAIL: TestSub (0.00s)\n    calc_test.go:13: Sub(3, 1) = 4, want 2\n"));
  EXPECT_THAT(out, HasSubstr("FAIL\texample.com/calc/calc\t0.008s"));
  // Without -v go test prints packages, not passing tests: the counts say so.
  expect_counts(RunnerKind::go_test, "go_test_fail", 0, 1, "packages");
  expect_counts(RunnerKind::go_test, "go_test_pass", 1, 0, "packages");
  expect_no_tests(RunnerKind::go_test, "go_test_no_tests");
  const std::string build = important(RunnerKind::go_test, "go_test_build_error");
  EXPECT_THAT(build, HasSubstr("calc/calc.go:6:28: undefined: undefinedName"));
  EXPECT_THAT(build, HasSubstr("[build failed]"));
}

TEST(ImportantOutputTest, CargoTestKeepsThePanicAndProjectFramesOnly) {
  const std::string out = important(RunnerKind::cargo_test, "cargo_fail");
  EXPECT_THAT(out, HasSubstr("test ops::tests::subtracts ... FAILED"));
  EXPECT_THAT(out, HasSubstr("---- ops::tests::subtracts stdout ----"));
  EXPECT_THAT(out, HasSubstr("panicked at src/ops.rs:11:9:"));
  EXPECT_THAT(out, HasSubstr("assertion `left == right` failed\n  left: 4\n right: 2\n"));
  EXPECT_THAT(out, HasSubstr("at ./src/ops.rs:11:9"));
  EXPECT_THAT(out, HasSubstr("test result: FAILED. 1 passed; 1 failed;"));
  EXPECT_THAT(out, Not(HasSubstr("/rustc/")));  // the standard library's frames
  EXPECT_THAT(out, Not(HasSubstr("test tests::adds ... ok")));
  expect_counts(RunnerKind::cargo_test, "cargo_fail", 1, 1);
  expect_counts(RunnerKind::cargo_test, "cargo_pass", 3, 0);
  expect_no_tests(RunnerKind::cargo_test, "cargo_no_tests");  // exit 0, everything filtered out
  const std::string build = important(RunnerKind::cargo_test, "cargo_build_error");
  EXPECT_THAT(build,
              HasSubstr("error[E0425]: cannot find value `undefined_name` in this scope\n  --> src/ops.rs:14:26"));
  EXPECT_FALSE(parse_summary(RunnerKind::cargo_test, captured("cargo_build_error")).has_value());
}

TEST(ImportantOutputTest, MakeAndNpmScriptsAreReadAsTheRunnerTheirOutputShows) {
  EXPECT_EQ(sniff_runner(captured("pytest_fail")), RunnerKind::pytest);
  EXPECT_EQ(sniff_runner(captured("ctest_fail")), RunnerKind::gtest_ctest);
  EXPECT_EQ(sniff_runner(captured("node_test_fail")), RunnerKind::node_test);
  EXPECT_EQ(sniff_runner(captured("jest_fail")), RunnerKind::jest);
  EXPECT_EQ(sniff_runner(captured("vitest_fail")), RunnerKind::vitest);
  EXPECT_EQ(sniff_runner(captured("go_test_fail")), RunnerKind::go_test);
  EXPECT_EQ(sniff_runner(captured("cargo_fail")), RunnerKind::cargo_test);
  EXPECT_EQ(sniff_runner("hello\n"), RunnerKind::other);
  EXPECT_EQ(important(RunnerKind::make, "cargo_fail"), important(RunnerKind::cargo_test, "cargo_fail"));
  expect_counts(RunnerKind::npm_script, "jest_fail", 2, 1);
}

TEST(ImportantOutputTest, GenericOutputKeepsErrorsAndTheEnd) {
  std::string output;
  for (int i = 0; i < 50; ++i) output += "compiling unit " + std::to_string(i) + "\n";
  output += "src/x.c:3: something odd\nError: lint failed\n";
  for (int i = 0; i < 20; ++i) output += "noise " + std::to_string(i) + "\n";
  output += "done: 3 problems\n";
  const std::string out = extract_important_output(RunnerKind::other, output, 8192);
  EXPECT_THAT(out, HasSubstr("Error: lint failed\n"));
  EXPECT_THAT(out, HasSubstr("src/x.c:3: something odd\n"));
  EXPECT_THAT(out, HasSubstr("done: 3 problems\n"));
  EXPECT_THAT(out, HasSubstr("[... 50 lines left out ...]"));
  EXPECT_THAT(out, Not(HasSubstr("compiling unit 7\n")));
  // The plain "N passed, N failed" line counts for any runner.
  const auto counts = parse_summary(RunnerKind::make, "running\nResults: 4 passed, 1 failed, 2 skipped\n");
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(counts->passed, 4);
  EXPECT_EQ(counts->failed, 1);
  EXPECT_EQ(counts->skipped, 2);
  EXPECT_FALSE(parse_summary(RunnerKind::make, "all good\n").has_value());
}

TEST(ImportantOutputTest, StaysWithinTheBudgetAndKeepsTheSummary) {
  // A run with many failures: the budget holds, and the end (the summary) survives.
  std::string output = "============================= test session starts ==============================\n";
  output += "=================================== FAILURES ===================================\n";
  for (int i = 0; i < 500; ++i) {
    output += "___________ test_" + std::to_string(i) + " ___________\n";
    output += ">       assert f(" + std::to_string(i) + ") == 0\n";
    output += "E       assert 1 == 0\n";
    output += "tests/test_many.py:" + std::to_string(i + 1) + ": AssertionError\n";
  }
  output += "=========================== short test summary info ============================\n";
  output += "========================= 500 failed in 1.00s ==========================\n";
  for (std::size_t budget : {std::size_t{512}, std::size_t{4096}}) {
    const std::string out = extract_important_output(RunnerKind::pytest, output, budget);
    EXPECT_LE(out.size(), budget);
    EXPECT_THAT(out, HasSubstr("500 failed in 1.00s"));
    EXPECT_THAT(out, HasSubstr("___________ test_0 ___________"));
    EXPECT_THAT(out, HasSubstr("lines left out ...]"));
  }
  // A very long line is cut with a count.
  const std::string long_line = "E   " + std::string(5000, 'x') + "\n";
  const std::string cut =
      extract_important_output(RunnerKind::pytest, "=== FAILURES ===\n" + long_line + "=== 1 failed in 1s ===\n", 8192);
  EXPECT_THAT(cut, HasSubstr("bytes cut]"));
  EXPECT_LT(cut.size(), 1000U);
}

TEST(ImportantOutputTest, TerminalCodesAndCarriageReturnsAreRemoved) {
  EXPECT_EQ(strip_terminal_codes("\x1b[31mred\x1b[39m plain\n"), "red plain\n");
  EXPECT_EQ(strip_terminal_codes("10%\r50%\r100% done\nnext\r\n"), "100% done\nnext\n");
  EXPECT_EQ(strip_terminal_codes("\x1b]0;title\x07text"), "text");
  EXPECT_EQ(extract_important_output(RunnerKind::pytest, "", 100), "");
}

}  // namespace
}  // namespace agentd::tools::verify
