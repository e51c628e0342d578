// The Tool interface: what the model sees of a tool (its spec) kept apart from what runs (the handler),
// and the ToolResult every call ends in. The engine's executeToolCall is the one caller; builtin tools and
// MCP tools implement this same interface. Nothing here knows about ACP or sessions.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/support/cancel.h"
#include "core/support/enum_names.h"
#include "core/support/json.h"
#include "core/support/result.h"
#include "core/support/trace.h"

namespace agentd::tools {

// What a call may do, for the permission policy. A tool declares its base risk; assess() refines it
// per call (a shell command is `execute`, a path outside the workspace adds `outside_workspace`).
enum class Risk : std::uint32_t {
  none = 0,
  read = 1U << 0,
  write = 1U << 1,
  execute = 1U << 2,
  network = 1U << 3,
  outside_workspace = 1U << 4,
  // The call would change agentd's own settings or data, or git's executable configuration
  // (tools/path_guard.h protected_path): asked about in every mode, by a person.
  protected_path = 1U << 5,
  // What a command line does beyond running (tools/command_risk.h): deletes a tree, runs code it just
  // downloaded, changes permissions or ownership or runs as another user.
  recursive_delete = 1U << 6,
  remote_code = 1U << 7,
  permissions = 1U << 8,
};
constexpr Risk operator|(Risk a, Risk b) noexcept {
  return static_cast<Risk>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
constexpr Risk& operator|=(Risk& a, Risk b) noexcept { return a = a | b; }
constexpr bool has_risk(Risk set, Risk flag) noexcept {
  return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(flag)) != 0;
}
// Mutating: anything beyond reading. Read-only calls of one model response may run in parallel.
constexpr bool is_mutating(Risk risk) noexcept {
  return has_risk(risk, Risk::write) || has_risk(risk, Risk::execute) || has_risk(risk, Risk::network);
}
std::string risk_names(Risk risk);  // "read", "write|outside_workspace", "none"
// One flag by its name as risk_names() writes it ("network"); nullopt for anything else.
std::optional<Risk> parse_risk_name(std::string_view name) noexcept;

// The risk of one call, with the reasons for each flag beyond the tool's base risk, in words for the
// permission prompt: "reaches the network (curl)", "deletes recursively (rm -rf build)".
struct RiskAssessment {
  Risk risk = Risk::none;
  std::vector<std::string> reasons;

  void add(Risk flag, std::string reason) {
    risk |= flag;
    reasons.push_back(std::move(reason));
  }
};

// How a client should draw the call (ACP's ToolKind vocabulary, which is generic enough to keep).
enum class ToolKind { read, edit, remove, move, search, execute, think, fetch, other };
std::string_view tool_kind_name(ToolKind kind) noexcept;
std::span<const support::EnumName<ToolKind>> enum_names(ToolKind) noexcept;
// The inverse, for names read back from storage; unknown names are `other`.
ToolKind parse_tool_kind(std::string_view name) noexcept;

// What the model sees.
struct ToolSpec {
  std::string name;
  std::string description;
  support::Json input_schema;  // JSON Schema of the input object
  ToolKind kind = ToolKind::other;
  Risk base_risk = Risk::read;
};

// A piece of a result for the client: text, or a diff of one file. Whole texts, or for a large file an
// excerpt: the changed lines with a few lines around them, `first_line` saying where it starts.
struct ToolDiff {
  std::string path;                     // absolute
  std::optional<std::string> old_text;  // absent: the file was created
  std::string new_text;
  std::size_t first_line = 0;  // 0: the texts are the whole file; else the excerpt's first line (1-based)
  bool cut = false;            // the excerpt stops before the change does (it was longer than the cap)
};

// The diff of one file for a client. Up to kWholeDiffBytes of old and new text together it is the whole
// file, as ACP's diff content means it; past that, an excerpt of the changed lines (with three lines of
// context each side, capped at kWholeDiffBytes): a one-line edit of a 16 MiB file sends a few lines, not
// twice the file through the pipe and into the event log. O(size) scans; run it off the event loop.
inline constexpr std::size_t kWholeDiffBytes = 1u << 20;
ToolDiff client_diff(std::string path, std::optional<std::string_view> old_text, std::string_view new_text);

// One entry of the plan a todo_write call sets: the client shows the list as ACP's `plan`.
enum class PlanStatus { pending, in_progress, completed };
enum class PlanPriority { high, medium, low };
std::span<const support::EnumName<PlanStatus>> enum_names(PlanStatus) noexcept;  // ACP's names
std::span<const support::EnumName<PlanPriority>> enum_names(PlanPriority) noexcept;
struct PlanItem {
  std::string content;
  PlanStatus status = PlanStatus::pending;
  PlanPriority priority = PlanPriority::medium;
  friend bool operator==(const PlanItem&, const PlanItem&) = default;
};

// Every call ends in one of these. `ok:false` is a failure the model can recover from (a bad argument,
// a stale file, no match): `summary` says what happened and how to proceed. Only cancellation and
// internal faults end a turn, and they do not travel as ToolResults.
struct ToolResult {
  bool ok = true;
  std::string summary;                               // one line for the client's tool call title/status
  std::string content;                               // what the model reads
  support::Json metadata = support::Json::object();  // structured detail (EditResult, exit codes...)
  std::vector<ToolDiff> diffs;                       // for the client: edits show as diffs
  std::vector<std::string> locations;                // absolute paths the call touched
  std::optional<std::vector<PlanItem>> plan;         // todo_write: the session's whole plan, as it is now

  static ToolResult failure(std::string message) {
    ToolResult r;
    r.ok = false;
    r.summary = message;
    r.content = std::move(message);
    return r;
  }
};

// Reads files the way the client sees them: through the editor (fs/read_text_file) when it offers
// that, since an unsaved buffer is the truth, else from disk. Provided by the engine per session.
class FileAccess {
 public:
  virtual ~FileAccess() = default;
  // Whole text of an absolute path, as the model should see it.
  virtual boost::asio::awaitable<support::Result<std::string>> read_text(std::string path,
                                                                         support::CancelToken cancel) = 0;
  // True when read_text reads an editor's buffers (which may hold changes not saved to disk).
  virtual bool reads_buffers() const { return false; }
  // True when changes to existing files go through the editor (write_text): an edit then applies to the
  // buffer's text and lands in the buffer, so the editor's undo and format-on-save keep working. Such a
  // FileAccess reads buffers too.
  virtual bool writes_buffers() const { return false; }
  // Replaces the whole text of `path` through the editor. Errc::unsupported unless writes_buffers().
  virtual boost::asio::awaitable<support::Result<void>> write_text(std::string path, std::string text,
                                                                   support::CancelToken cancel);
};

class FileState;      // tools/file_state.h
class ChangeJournal;  // tools/file_transaction.h

// What a running call may use. Owned by the engine for the duration of the call.
// A terminal of the client (ACP terminal/create): a command the user watches live in the editor. The
// engine implements it over the Frontend; shell and verify use it when it is there.
struct TerminalCommand {
  std::string program;  // already wrapped: `agentd sandbox-exec ... -- /bin/sh -c <command>`
  std::vector<std::string> args;
  std::string cwd;
  std::chrono::milliseconds timeout{0};  // then the terminal is killed
  std::uint64_t output_byte_limit = 0;   // the client keeps the end of the output within this
};
struct TerminalRun {
  std::string output;
  bool truncated = false;  // the client dropped the start of the output
  int exit_code = -1;      // -1: no exit code (a signal, or killed)
  std::string signal;      // the signal that ended it, as the client names it
  bool timed_out = false;
  std::chrono::milliseconds duration{0};
};
class CommandTerminal {
 public:
  virtual ~CommandTerminal() = default;
  // Runs the command to its end (or its timeout, or `cancel`: then it is killed) and releases the
  // terminal. Errc::cancelled when cancelled; other errors: the client failed the terminal calls.
  virtual boost::asio::awaitable<support::Result<TerminalRun>> run(const TerminalCommand& command,
                                                                   support::CancelToken cancel) = 0;
};

struct ToolContext {
  std::string session_id;
  std::string cwd;                           // absolute, canonical
  std::vector<std::string> additional_dirs;  // absolute, canonical
  // Deny-path patterns from the configuration, refused for every tool on top of the built-in list
  // (tools/path_guard.h kDeniedPaths); same syntax. Owned by the engine, may be null.
  const std::vector<std::string>* denied_paths = nullptr;
  // The patterns of the permission rules that deny this tool reading (`read(secrets/**)`, relative to the
  // cwd as rules are). A tool that reads many files (grep, glob, list_dir) skips every file they cover,
  // wherever its search started: a rule is about what is read, not about the argument.
  std::vector<std::string> denied_reads;
  support::CancelToken cancel;
  FileAccess* files = nullptr;  // never null during run()
  // What this session has seen of each file, for stale-edit refusal. Owned by the session (it outlives
  // the turn); never null during run() of a tool that reads or writes files.
  FileState* file_state = nullptr;
  // Where file changes record their pre-images before they happen, so a turn can be undone. Owned by the
  // session; null when a tool runs on its own (tests), and then changes are not undoable.
  ChangeJournal* journal = nullptr;
  std::function<void(std::string_view)> progress;  // streamed output (shell); may be empty
  // Where the call's own steps record their spans (fs.atomic_write), from any thread; the engine hangs
  // them under the call's span. May be null.
  support::SpanBuffer* spans = nullptr;
  std::vector<std::string> changed_files;  // this turn's changed files, absolute (verify)
  // The client's terminal, when it offers one and the call's command should show there (shell,
  // verify); null otherwise. Owned by the engine for the call.
  CommandTerminal* terminal = nullptr;
};

class Tool {
 public:
  virtual ~Tool() = default;
  virtual const ToolSpec& spec() const = 0;
  // Completes the input with what the call will actually do, before it is judged: verify chooses its
  // command and directory here, so the permission is asked for, bound to and audited as the command that
  // runs. Or ends the call here (`result`), when there is nothing to run. Runs before the permission
  // decision, so it must not change anything; it may read the disk. Default: the input as given.
  struct Resolved {
    support::Json input;
    std::optional<ToolResult> result;
  };
  virtual boost::asio::awaitable<support::Result<Resolved>> resolve(support::Json input, ToolContext& context);
  // The risk of this particular call (input resolved and validated). Default: the spec's base risk.
  virtual RiskAssessment assess(const support::Json& input, const ToolContext& context) const;
  // A short title for the client ("Read src/main.cpp"). Default: the tool's name. Takes the context
  // so paths can be shown relative to the session's cwd; must not touch the disk.
  virtual std::string title(const support::Json& input, const ToolContext& context) const;
  // Absolute paths the call will touch, for the client's `locations` before it runs. Default: none.
  virtual std::vector<std::string> locations(const support::Json& input, const ToolContext& context) const;
  // What the call would change, for the permission prompt, so the user judges the change itself and not
  // its description. Changes nothing; may read the files (through ToolContext::files, off the event
  // loop). Default: nothing to show.
  virtual boost::asio::awaitable<std::vector<ToolDiff>> preview(const support::Json& input,
                                                                const ToolContext& context) const;
  // What the call will do, in plain text for the permission prompt when a diff cannot show it: the exact
  // command line and the directory it runs in, for tools that execute. Must not touch the disk. Default: "".
  virtual std::string describe(const support::Json& input, const ToolContext& context) const;
  // Runs the call. Failures the model can fix are ToolResult::failure(); cancellation returns
  // Errc::cancelled; anything else that ends the turn is another error.
  virtual boost::asio::awaitable<support::Result<ToolResult>> run(support::Json input, ToolContext& context) = 0;
};

// The tools a session may call, by name, in registration order (the order the model sees them).
// Not synchronized: changed only on the session's strand (at set-up, when an MCP server connects),
// which is also where executeToolCall looks tools up.
class ToolRegistry {
 public:
  // Fails with Errc::conflict when the name is taken, Errc::invalid_argument when the tool is null or
  // its name is not 1-64 of [A-Za-z0-9_-] (what the model APIs accept as a tool name).
  support::Result<void> add(std::shared_ptr<Tool> tool);
  void remove(std::string_view name);
  std::shared_ptr<Tool> find(std::string_view name) const;
  std::vector<std::string> names() const;
  std::vector<const ToolSpec*> specs() const;
  bool empty() const noexcept { return tools_.empty(); }

 private:
  std::vector<std::shared_ptr<Tool>> tools_;
};

}  // namespace agentd::tools
