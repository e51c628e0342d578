// verify: picks the command (given, or discovered and narrowed to the changed files), runs it with the
// shell tool's run_command, and judges the run from its exit and the runner's summary.
#include "tools/verify/verify_tool.h"

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tools/builtin/common.h"
#include "tools/path_guard.h"
#include "tools/search.h"

namespace agentd::tools::verify {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Json;

// The runner's whole output is read for the summary and failures; keep more than a shell call does.
constexpr std::size_t kCaptureHeadBytes = std::size_t{64} << 10;
constexpr std::size_t kCaptureTailBytes = std::size_t{192} << 10;
constexpr std::size_t kTitleChars = 80;

std::string short_text(std::string_view text) {
  const std::string_view line = text.substr(0, text.find('\n'));
  std::string out(builtin::utf8_prefix(line, kTitleChars));
  if (out.size() < text.size()) out += "...";
  return out;
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// The first line that says a program is missing: "sh: 1: cargo: not found", "npm: command not found".
std::string missing_program_line(std::string_view output) {
  std::size_t start = 0;
  while (start < output.size()) {
    const std::size_t end = std::min(output.find('\n', start), output.size());
    const std::string_view line = output.substr(start, end - start);
    if (line.ends_with(": not found") || contains(line, "command not found") ||
        contains(line, "No such file or directory")) {
      return std::string(line);
    }
    start = end + 1;
  }
  return {};
}

std::string counts_text(const TestCounts& counts) {
  std::string out = fmt::format("{} passed, {} failed", counts.passed, counts.failed);
  if (counts.skipped > 0) out += fmt::format(", {} skipped", counts.skipped);
  if (counts.unit != "tests") out += fmt::format(" ({})", counts.unit);
  return out;
}

struct Plan {
  std::optional<Suggestion> suggestion;
  Discovery discovery;
};

class VerifyTool final : public Tool {
 public:
  explicit VerifyTool(ShellConfig config) : config_(std::move(config)) {
    default_timeout_ = std::min(std::max(kVerifyDefaultTimeout, config_.default_timeout), config_.max_timeout);
    spec_.name = "verify";
    spec_.description = fmt::format(
        "Run the project's own tests (or lint/typecheck) and report whether they passed, with the failing test "
        "names, assertion messages and file:line locations. Without `command` it runs the smallest command "
        "the project has for `files`, or for the files changed in this turn (pytest on the test file, "
        "`npm test -- <file>`, `ctest -R <suite>`, `go test ./pkg/...`, `cargo test <module>`), else the full "
        "test command. Use it after changing code. Runs like `shell` (same sandbox and limits); default "
        "timeout {}ms, at most {}ms.",
        default_timeout_.count(), config_.max_timeout.count());
    spec_.input_schema = support::parse_json(fmt::format(R"({{
  "type": "object",
  "properties": {{
    "command": {{"type": "string", "minLength": 1,
                 "description": "A verification command line to run instead of the discovered one (run with /bin/sh -c)."}},
    "cwd": {{"type": "string", "minLength": 1,
             "description": "The directory to run `command` in: relative to the working directory, or absolute inside it. Default: the working directory."}},
    "files": {{"type": "array", "items": {{"type": "string", "minLength": 1}},
               "description": "Files to verify (relative to the working directory, or absolute inside it). Default: the files changed in this turn."}},
    "timeout_ms": {{"type": "integer", "minimum": 1, "maximum": {},
                    "description": "Kill the run after this many milliseconds. Default {}."}}
  }},
  "additionalProperties": false
}})",
                                                         config_.max_timeout.count(), default_timeout_.count()))
                             .value();
    spec_.kind = ToolKind::execute;
    spec_.base_risk = Risk::execute;
  }

  const ToolSpec& spec() const override { return spec_; }

  std::string title(const Json& input, const ToolContext& /*context*/) const override {
    if (const Json* command = input.find("command"); command != nullptr && command->is_string()) {
      return "Verify: " + short_text(command->as_string());
    }
    if (const Json* files = input.find("files"); files != nullptr && files->is_array() && files->size() > 0) {
      const Json& first = files->as_array().front();
      const std::string name = first.is_string() ? first.as_string() : std::string("files");
      return files->size() == 1 ? "Verify " + name : fmt::format("Verify {} and {} more", name, files->size() - 1);
    }
    return "Verify this turn's changes";
  }

  RiskAssessment assess(const Json& input, const ToolContext& context) const override {
    return assess_command(spec_.base_risk, builtin::string_field(input, "command"), command_cwd(input, context),
                          context);
  }

  std::string describe(const Json& input, const ToolContext& context) const override {
    const std::string command = builtin::string_field(input, "command");
    return command.empty() ? std::string() : describe_command(command, command_cwd(input, context));
  }

  // Without `command`, chooses it now (discovered, narrowed to the files), so the permission is asked for
  // the command that will run and an approval never covers another one: the input gains `command` and
  // `cwd`. A repository (or an edit of package.json) can change what discovery finds, not what was approved.
  boost::asio::awaitable<support::Result<Resolved>> resolve(Json input, ToolContext& context) override {
    if (auto invalid = builtin::check_input(spec_, input)) co_return Resolved{std::move(input), std::move(*invalid)};
    if (!builtin::string_field(input, "command").empty()) co_return Resolved{std::move(input), std::nullopt};
    auto files = files_to_verify(input, context);
    if (!files) co_return Resolved{std::move(input), ToolResult::failure(files.error().message())};
    Plan plan = co_await make_plan(context.cwd, *files, true);
    if (!plan.suggestion) co_return Resolved{std::move(input), not_found(plan.discovery)};
    const PathGuard guard(context);
    input.set("command", plan.suggestion->command.command);
    input.set("cwd", guard.display(plan.suggestion->command.cwd));
    co_return Resolved{std::move(input), std::nullopt};
  }

  boost::asio::awaitable<support::Result<ToolResult>> run(Json input, ToolContext& context) override {
    if (auto invalid = builtin::check_input(spec_, input)) co_return std::move(*invalid);
    if (context.cancel.cancelled()) co_return support::Error(Errc::cancelled, "verify cancelled");
    // Called without resolve() (a tool run on its own): choose the command here, the same way.
    if (builtin::string_field(input, "command").empty()) {
      auto resolved = co_await resolve(std::move(input), context);
      if (!resolved) co_return std::move(resolved).error();
      if (resolved->result) co_return std::move(*resolved->result);
      input = std::move(resolved->input);
    }
    const auto timeout = std::min(
        std::chrono::milliseconds(builtin::integer_field(input, "timeout_ms").value_or(default_timeout_.count())),
        config_.max_timeout);
    auto checked_cwd = checked_command_cwd(input, context);
    if (!checked_cwd) co_return ToolResult::failure(checked_cwd.error().message());
    const fs::path cwd = std::move(*checked_cwd);
    auto files = files_to_verify(input, context);
    if (!files) co_return ToolResult::failure(files.error().message());

    // What discovery knows of the command (its runner, where it came from, why it was chosen), looked up
    // again: the command itself is fixed, whatever the repository holds now.
    VerificationResult verification;
    verification.command = builtin::string_field(input, "command");
    verification.runner = guess_runner(verification.command);
    verification.source = "given by the caller";
    Plan plan = co_await make_plan(context.cwd, *files, true);
    const auto same = [&](const VerificationCommand& known) {
      return known.command == verification.command && known.cwd == cwd;
    };
    if (plan.suggestion && same(plan.suggestion->command)) {
      verification.runner = plan.suggestion->command.runner;
      verification.source = plan.suggestion->command.source;
      verification.reason = plan.suggestion->reason;
      verification.narrowed = plan.suggestion->narrowed;
    } else {
      const auto known = std::find_if(plan.discovery.commands.begin(), plan.discovery.commands.end(), same);
      if (known != plan.discovery.commands.end()) {
        verification.runner = known->runner;
        verification.source = known->source;
      }
    }

    CommandRequest request;
    request.command = verification.command;
    request.cwd = cwd;
    request.timeout = timeout;
    request.capture_head_bytes = std::max(config_.output_head_bytes, kCaptureHeadBytes);
    request.capture_tail_bytes = std::max(config_.output_tail_bytes, kCaptureTailBytes);
    auto ran = co_await run_command(config_, request, context, "verify");
    if (!ran) co_return std::move(ran).error();
    if (!ran->refused.empty()) {
      verification.status = VerificationStatus::not_run;
      verification.note = ran->refused;
      ToolResult result = ToolResult::failure(ran->refused);
      result.summary = "Verification not run: " + short_text(ran->refused);
      result.metadata.set("verification", to_json(verification));
      result.metadata.set("sandbox", std::move(ran->sandbox));
      co_return result;
    }
    const ProcessResult& process = ran->process;
    judge_verification(process, verification);

    ToolResult result;
    const std::string ending = describe_ending(process, timeout, config_);
    std::string header;
    switch (verification.status) {
      case VerificationStatus::passed: header = "PASSED"; break;
      case VerificationStatus::failed: header = "FAILED"; break;
      case VerificationStatus::no_tests: header = "NO TESTS RAN (not a pass)"; break;
      case VerificationStatus::not_run: header = "NOT RUN"; break;
      case VerificationStatus::timed_out: header = "TIMED OUT (not a pass)"; break;
    }
    result.ok = verification.status == VerificationStatus::passed || verification.status == VerificationStatus::failed;
    result.content = fmt::format("{}: {}\n", header, verification.command);
    result.content += fmt::format("runner {}, from {}; {} in {} ms", runner_kind_name(verification.runner),
                                  verification.source, ending, verification.duration_ms);
    if (verification.counts) result.content += fmt::format("; {}", counts_text(*verification.counts));
    result.content += '\n';
    if (!verification.note.empty()) result.content += verification.note + '\n';
    if (!verification.reason.empty()) result.content += fmt::format("why this command: {}\n", verification.reason);
    if (!ran->unsandboxed.empty()) result.content += fmt::format("[ran without a sandbox: {}]\n", ran->unsandboxed);
    result.content += "\n";
    result.content +=
        verification.important_output.empty() ? std::string("(no output)\n") : verification.important_output;
    std::string summary_counts = verification.counts ? " (" + counts_text(*verification.counts) + ")" : "";
    switch (verification.status) {
      case VerificationStatus::passed: result.summary = "Verification passed" + summary_counts; break;
      case VerificationStatus::failed: result.summary = "Verification failed" + summary_counts; break;
      case VerificationStatus::no_tests: result.summary = "Verification found no tests"; break;
      case VerificationStatus::not_run:
        result.summary = "Verification not run: " + short_text(verification.note);
        break;
      case VerificationStatus::timed_out: result.summary = "Verification timed out"; break;
    }
    result.summary += ": " + short_text(verification.command);
    result.metadata.set("verification", to_json(verification));
    result.metadata.set("sandbox", std::move(ran->sandbox));
    co_return result;
  }

 private:
  // The files given (each checked to be inside the workspace), else this turn's changes.
  static support::Result<std::vector<std::string>> files_to_verify(const Json& input, const ToolContext& context) {
    std::vector<std::string> files;
    const Json* given = input.find("files");
    if (given == nullptr) return context.changed_files;
    const PathGuard guard(context);
    for (const Json& file : given->as_array()) {
      auto resolved = guard.resolve(file.as_string(), PathAccess::read);
      if (!resolved) return std::move(resolved).error();
      files.push_back(resolved->absolute.string());
    }
    return files;
  }

  // Discovery reads manifests and build trees: off the event loop.
  static boost::asio::awaitable<Plan> make_plan(fs::path workspace, std::vector<std::string> files,
                                                bool want_suggestion) {
    // A named lambda, moved in: GCC 12 destroys a lambda temporary inside a co_await expression twice.
    auto work = [workspace = std::move(workspace), files = std::move(files), want_suggestion]() {
      Plan p;
      p.discovery = discover_verification(workspace);
      if (want_suggestion) p.suggestion = suggest_verification(p.discovery, files);
      return p;
    };
    co_return co_await run_off_loop(std::move(work));
  }

  static ToolResult not_found(const Discovery& discovery) {
    VerificationResult verification;
    verification.status = VerificationStatus::not_run;
    verification.note = "no verification command found";
    std::string message = fmt::format(
        "Not run: no verification command found in {}. Looked for package.json scripts (test, lint, "
        "typecheck), Makefile targets (test, check), a CTest build tree, pytest configuration (pyproject.toml, "
        "pytest.ini, tox.ini, setup.cfg, conftest.py), Cargo.toml, go.mod and a README \"Testing\" section.",
        discovery.workspace.string());
    for (const auto& note : discovery.notes) message += fmt::format("\nNote: {}", note);
    message += "\nCall verify again with `command` set to the command that tests this project.";
    ToolResult result = ToolResult::failure(std::move(message));
    result.summary = "Verification not run: no test command found";
    result.metadata.set("verification", to_json(verification));
    return result;
  }

  ShellConfig config_;
  std::chrono::milliseconds default_timeout_{kVerifyDefaultTimeout};
  ToolSpec spec_;
};

}  // namespace

constexpr support::EnumName<VerificationStatus> kVerificationStatusNames[] = {
    {VerificationStatus::passed, "passed"},
    {VerificationStatus::failed, "failed"},
    {VerificationStatus::no_tests, "no_tests"},
    {VerificationStatus::not_run, "not_run"},
    {VerificationStatus::timed_out, "timed_out"}};
static_assert(support::names_every_value(kVerificationStatusNames, VerificationStatus::timed_out));
std::span<const support::EnumName<VerificationStatus>> enum_names(VerificationStatus) noexcept {
  return kVerificationStatusNames;
}

std::string_view verification_status_name(VerificationStatus status) noexcept {
  return support::enum_name(status, "not_run");
}

void judge_verification(const ProcessResult& process, VerificationResult& result) {
  result.duration_ms = static_cast<std::int64_t>(process.duration.count());
  result.exit_code = process.ended_by == EndedBy::exit ? std::optional<int>(process.exit_code) : std::nullopt;
  result.important_output = extract_important_output(result.runner, process.output, kImportantOutputBytes);
  result.counts = parse_summary(result.runner, process.output);
  result.passed = false;
  if (process.ended_by == EndedBy::timeout) {
    result.status = VerificationStatus::timed_out;
    result.note = "timed out: the run was killed before it finished; nothing is known about the tests";
    return;
  }
  if (process.ended_by != EndedBy::exit) {
    result.status = VerificationStatus::failed;
    result.note = fmt::format("the run was killed by signal {}", process.signal);
    return;
  }
  const int code = process.exit_code;
  if (contains(process.output, "No module named pytest")) {
    result.status = VerificationStatus::not_run;
    result.note = "pytest is not installed for this Python (No module named pytest); nothing was tested";
    return;
  }
  if (code == 127 || code == 126) {
    const std::string missing = missing_program_line(process.output);
    result.status = VerificationStatus::not_run;
    result.note = missing.empty()
                      ? fmt::format("exit code {}: the runner could not be started; nothing was tested", code)
                      : fmt::format("the runner is not installed or not on PATH ({}); nothing was tested", missing);
    return;
  }
  if (result.counts && result.counts->no_tests) {
    result.status = VerificationStatus::no_tests;
    result.note = "no tests were found or run: this is not a pass";
    return;
  }
  if (code != 0) {
    result.status = VerificationStatus::failed;
    if (!result.counts) {
      result.note = fmt::format(
          "exit code {} with no test results in the output: the build or the runner failed "
          "before tests ran",
          code);
    }
    return;
  }
  if (result.counts) {
    if (result.counts->failed > 0) {
      result.status = VerificationStatus::failed;
      result.note = "the runner exited 0 but reported failures";
      return;
    }
    if (result.counts->passed == 0) {
      result.status = VerificationStatus::no_tests;
      result.note = "no test passed (all skipped): this is not a pass";
      return;
    }
    result.status = VerificationStatus::passed;
    result.passed = true;
    return;
  }
  if (runner_counts_tests(result.runner)) {
    result.status = VerificationStatus::no_tests;
    result.note = fmt::format("exit code 0, but the output has no {} summary: no tests ran, so this is not a pass",
                              runner_kind_name(result.runner));
    return;
  }
  // make targets and npm scripts that print no counts: their exit status is all there is.
  result.status = VerificationStatus::passed;
  result.passed = true;
  result.note = "judged by the exit status alone: the output has no test counts";
}

Json to_json(const VerificationResult& result) {
  Json out = Json::object();
  out.set("command", result.command);
  out.set("exitCode", result.exit_code ? Json(*result.exit_code) : Json());
  out.set("durationMs", result.duration_ms);
  out.set("passed", result.passed);
  out.set("importantOutput", result.important_output);
  out.set("runner", runner_kind_name(result.runner));
  out.set("source", result.source);
  out.set("status", verification_status_name(result.status));
  if (result.counts) {
    Json counts = Json::object();
    counts.set("passed", result.counts->passed);
    counts.set("failed", result.counts->failed);
    counts.set("skipped", result.counts->skipped);
    counts.set("unit", result.counts->unit);
    out.set("counts", std::move(counts));
  } else {
    out.set("counts", Json());
  }
  out.set("note", result.note);
  out.set("reason", result.reason);
  out.set("narrowed", result.narrowed);
  return out;
}

std::shared_ptr<Tool> make_verify_tool(ShellConfig config) { return std::make_shared<VerifyTool>(std::move(config)); }

}  // namespace agentd::tools::verify
