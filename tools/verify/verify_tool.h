// The `verify` tool: runs the workspace's own verification (a command the model names, the smallest
// discovered command for the given files, or for the files this turn changed) through the shell tool's
// machinery (process group, timeout, sandbox, scrubbed environment) and returns a VerificationResult:
// exit code, duration, passed, and the important part of the output. A run with no tests is not a pass.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/support/enum_names.h"
#include "core/support/json.h"
#include "tools/builtin/shell.h"
#include "tools/process.h"
#include "tools/tool.h"
#include "tools/verify/discovery.h"
#include "tools/verify/important_output.h"

namespace agentd::tools::verify {

// How a verification ended. Only `passed` counts as a pass.
enum class VerificationStatus {
  passed,     // the runner ran tests (or, for make/npm scripts that print no counts, exited 0) and none failed
  failed,     // tests failed, or the build or runner failed before tests ran
  no_tests,   // the runner ran but found or ran no tests
  not_run,    // nothing to run, the runner is not installed, or the sandbox refused
  timed_out,  // killed at the timeout
};
std::string_view verification_status_name(VerificationStatus status) noexcept;
std::span<const support::EnumName<VerificationStatus>> enum_names(VerificationStatus) noexcept;

struct VerificationResult {
  std::string command;
  std::optional<int> exit_code;  // absent when killed by a signal or not run
  std::int64_t duration_ms = 0;
  bool passed = false;
  std::string important_output;
  RunnerKind runner = RunnerKind::other;
  std::string source;  // where the command came from ("package.json scripts.test", "the caller")
  VerificationStatus status = VerificationStatus::not_run;
  std::optional<TestCounts> counts;
  std::string note;    // one line on the judgement ("exit code 0 but no test ran", "pytest is not installed")
  std::string reason;  // why this command (Suggestion::reason), when it was chosen by agentd
  bool narrowed = false;
};

// {command, exitCode, durationMs, passed, importantOutput, runner, source, status, counts, note, reason,
// narrowed}; exitCode and counts are null when absent.
support::Json to_json(const VerificationResult& result);

// Judges a finished run: status, passed, counts and note from the exit and the output.
void judge_verification(const ProcessResult& process, VerificationResult& result);

// Bytes of important output kept in a result.
inline constexpr std::size_t kImportantOutputBytes = std::size_t{8} << 10;
// Default timeout of a verification, within ShellConfig::max_timeout: test suites outlast shell commands.
inline constexpr std::chrono::milliseconds kVerifyDefaultTimeout{300000};

// Input {command?: string, files?: string[], timeout_ms?: integer}. Without `command` it runs the
// suggested command for `files`, or for ToolContext::changed_files when `files` is absent. The result's
// metadata carries `verification` (to_json above) and `sandbox`.
std::shared_ptr<Tool> make_verify_tool(ShellConfig config);

}  // namespace agentd::tools::verify
