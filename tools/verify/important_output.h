// What a person would look at in a test run's output: failing test names, assertion messages, file:line
// locations, error stacks and the runner's summary line, for gtest/ctest, pytest, node's test runner,
// jest, vitest, go test and cargo test (make and npm scripts are read as the runner their output shows).
// The rest is cut, with a count of the lines left out. Also the summary counts, to tell "no tests ran".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tools/verify/discovery.h"

namespace agentd::tools::verify {

struct TestCounts {
  std::int64_t passed = 0;
  std::int64_t failed = 0;   // failed, errored and cancelled tests
  std::int64_t skipped = 0;  // skipped, ignored, todo
  bool no_tests = false;     // the runner said it found or ran no tests
  // What was counted: "tests", or "packages" for `go test` without -v (it prints one line per package).
  std::string unit = "tests";
  std::int64_t total() const noexcept { return passed + failed + skipped; }
};

// The counts from the runner's summary, or nullopt when the output has none (a build failure, a runner
// that never started, a make target that prints no counts). make/npm_script/other: the runner is
// recognised from the output itself, and failing that a plain "N passed, N failed" line counts.
std::optional<TestCounts> parse_summary(RunnerKind runner, std::string_view output);

// The lines worth reading, in order, at most `max_bytes`, with "[... N lines left out ...]" where lines
// were cut. Terminal colour codes are removed. When even the failing names and summary do not fit, the
// start and the end of them are kept.
std::string extract_important_output(RunnerKind runner, std::string_view output, std::size_t max_bytes);

// Which runner printed this (for make targets and npm scripts), or `other`.
RunnerKind sniff_runner(std::string_view output);

// `text` without ANSI escape sequences, and each line reduced to what follows its last carriage return
// (progress bars redraw the line).
std::string strip_terminal_codes(std::string_view text);

}  // namespace agentd::tools::verify
