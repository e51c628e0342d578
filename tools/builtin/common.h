// Helpers the builtin tools share: reading validated input fields, turning path-guard and file errors
// into results the model can act on, and line arithmetic. Internal to tools/builtin.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/support/json.h"
#include "core/support/result.h"
#include "core/support/text.h"
#include "tools/path_guard.h"
#include "tools/tool.h"
#include "tools/walk.h"

namespace agentd::tools::builtin {

// The engine validates input against the spec before run(); tools check again so that run() stands on
// its own (tests, and any caller that skips the engine). nullopt when the input is valid.
std::optional<ToolResult> check_input(const ToolSpec& spec, const support::Json& input);

// Field readers for input that passed check_input. A missing optional field reads as nullopt/fallback.
std::string string_field(const support::Json& input, std::string_view key, std::string_view fallback = "");
// JSON Schema's "integer" admits 3.0, so doubles with an integral value count; out-of-range values clamp.
std::optional<std::int64_t> integer_field(const support::Json& input, std::string_view key);

// Errc::internal for a ToolContext the engine forgot to fill: a bug, not the model's problem.
support::Error missing_context(std::string_view tool, std::string_view what);

// Lines in `text`: a final line without '\n' counts, a trailing '\n' does not start another.
std::size_t count_lines(std::string_view text);

// Walk options for walking `root` (resolved by `guard`): the guard's configured deny-paths apply to what
// the walk finds, as they do to paths the model names, and so do the context's read-deny rules.
WalkOptions walk_options(const PathGuard& guard, const std::filesystem::path& root, const ToolContext& context);
// The lines of `text` without their '\n' (a '\r' before it stays: the file really has it).
std::vector<std::string_view> split_lines(std::string_view text);
// Lines that differ between two texts, after the common leading and trailing lines are set aside: the
// larger of the two differing middles. An estimate for summaries, not a diff.
std::size_t changed_lines(std::string_view before, std::string_view after);
using support::utf8_prefix;

// What a change to one file is built on: the file's text now, as the change must see it.
struct CurrentText {
  bool exists = false;
  bool parent_is_file = false;  // !exists because a parent of the path is a file
  std::uint32_t mode = 0;       // permission bits on disk
  std::string text;
  std::string sha256;  // of `text`, hashed off the event loop
  // Read from the editor's buffer (ToolContext::files writes buffers), unsaved changes included; the
  // change is then written back through the editor (FileCommit::editor).
  bool from_buffer = false;
};

// Reads what a change to `path` (through the PathGuard, shown as `shown`) replaces: from the editor when
// it writes buffers, else from disk, off the event loop either way. A directory, a device or a file that
// cannot be read is a failure naming it; `what` ends the directory's ("edit_file edits files").
boost::asio::awaitable<std::variant<CurrentText, ToolResult>> read_current(std::filesystem::path path,
                                                                           std::string shown,
                                                                           const ToolContext& context,
                                                                           std::string what);

// nullopt when `current` is what this session last read or wrote of `path`; otherwise the refusal:
// `never_seen` when it never read it, "changed since" (ending "redo your <redo> on the current content")
// when it did. When the model read the editor's buffer, the edit reads the disk (the editor cannot be
// written through), and the buffer is still what the model saw, the file has unsaved changes: the
// refusal says that, since reading it again would not help.
boost::asio::awaitable<std::optional<ToolResult>> check_fresh(std::filesystem::path path, std::string shown,
                                                              const CurrentText& current, const ToolContext& context,
                                                              std::string never_seen, std::string redo);

// A tool whose input names one file in `path` (read_file, edit_file, write_file): the client sees
// "<verb> <path>" as its title and the resolved path as its location before it runs.
class SingleFileTool : public Tool {
 public:
  const ToolSpec& spec() const override { return spec_; }
  // Writing tools add Risk::protected_path for a protected file (tools/path_guard.h).
  RiskAssessment assess(const support::Json& input, const ToolContext& context) const override;
  std::string title(const support::Json& input, const ToolContext& context) const override;
  std::vector<std::string> locations(const support::Json& input, const ToolContext& context) const override;

 protected:
  // For preview(): the file's text now (as read_current reads it), nullopt when it does not exist, or an
  // error when the path is refused or the file cannot be read (then there is nothing to preview). Files
  // above 4 MiB are not previewed.
  boost::asio::awaitable<support::Result<std::optional<std::string>>> preview_current(const support::Json& input,
                                                                                      const ToolContext& context,
                                                                                      std::string& absolute) const;

  SingleFileTool(ToolSpec spec, std::string verb, PathAccess access)
      : spec_(std::move(spec)), verb_(std::move(verb)), access_(access) {}
  ToolSpec spec_;

 private:
  std::string verb_;
  PathAccess access_;
};

}  // namespace agentd::tools::builtin
