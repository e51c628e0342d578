// edit_file: replaces one exact piece of a file (or every occurrence, with replace_all). The file must have
// been read by this session and be unchanged since; the change is a file transaction (pre-image journaled,
// atomic write, read back) and comes back as an EditResult with a unified diff.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <variant>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/support/run_off_loop.h"
#include "tools/builtin/builtin_tools.h"
#include "tools/builtin/common.h"
#include "tools/diff.h"
#include "tools/disk_file_access.h"
#include "tools/edit.h"
#include "tools/file_state.h"
#include "tools/file_transaction.h"
#include "tools/path_guard.h"
#include "tools/sha256.h"

namespace agentd::tools {
namespace builtin {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Json;

constexpr std::string_view kSchema = R"({
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1,
             "description": "The file to edit: relative to the working directory, or absolute inside it."},
    "old_string": {"type": "string",
                   "description": "The exact text to replace, as it is in the file (indentation included, without read_file's line numbers). It must occur exactly once unless replace_all is true."},
    "new_string": {"type": "string", "description": "The text to put in its place."},
    "replace_all": {"type": "boolean", "description": "Replace every occurrence of old_string. Default false."}
  },
  "required": ["path", "old_string", "new_string"],
  "additionalProperties": false
})";

// The diff the model reads back is capped; the client and the metadata get all of it.
constexpr std::size_t kDiffInContentBytes = std::size_t{4} << 10;

std::string lines_phrase(std::size_t n) { return fmt::format("{} line{}", n, n == 1 ? "" : "s"); }

Json verification(bool read_back, bool expected_text_found) {
  Json out = Json::object();
  out.set("readBack", read_back);
  out.set("expectedTextFound", expected_text_found);
  return out;
}

// The edit the input asks for, owning its strings (an EditRequest only views them).
struct Request {
  std::string old_string;
  std::string new_string;
  bool replace_all = false;
  EditRequest view() const { return EditRequest{old_string, new_string, replace_all}; }
};

Request request_of(const Json& input) {
  const Json* replace_all = input.find("replace_all");
  return Request{string_field(input, "old_string"), string_field(input, "new_string"),
                 replace_all != nullptr && replace_all->is_bool() && replace_all->as_bool()};
}

// What run() works out off the event loop.
struct Computed {
  std::string old_text;
  EditOutcome edit;
  UnifiedDiff diff;
  std::string new_hash;
  ToolDiff client;
};

class EditFileTool final : public SingleFileTool {
 public:
  EditFileTool() : SingleFileTool(make_spec(), "Edit", PathAccess::write) {}

  static ToolSpec make_spec() {
    ToolSpec spec;
    spec.name = "edit_file";
    spec.description =
        "Replace text in an existing file. old_string must occur exactly once in the file: copy it exactly, "
        "with its indentation and enough surrounding lines to be unique, and without read_file's line numbers. "
        "Set replace_all to replace every occurrence (to rename something, say). You must have read the file "
        "with read_file in this session, and it must not have changed since. Line endings and encoding are "
        "kept. To create a file, use write_file.";
    spec.input_schema = support::parse_json(kSchema).value();
    spec.kind = ToolKind::edit;
    spec.base_risk = Risk::write;
    return spec;
  }

  // The edit applied to the file as it is now (the editor's buffer when edits go through it); nothing when
  // it would not apply (run() then says why).
  boost::asio::awaitable<std::vector<ToolDiff>> preview(const Json& input, const ToolContext& context) const override {
    std::string absolute;
    auto current = co_await preview_current(input, context, absolute);
    if (!current || !*current) co_return std::vector<ToolDiff>{};
    const bool large = (*current)->size() >= support::kOffLoopBytes;
    auto diff = [absolute = std::move(absolute), old_text = std::move(*current),
                 request = request_of(input)]() mutable {
      EditOutcome edit = apply_edit(*old_text, request.view());
      if (edit.status != EditStatus::applied) return std::vector<ToolDiff>{};
      return std::vector<ToolDiff>{client_diff(std::move(absolute), old_text, edit.text)};
    };
    co_return co_await support::run_off_loop(std::move(diff), large);
  }

  boost::asio::awaitable<support::Result<ToolResult>> run(Json input, ToolContext& context) override {
    if (auto invalid = check_input(spec_, input)) co_return std::move(*invalid);
    if (context.file_state == nullptr) co_return missing_context(spec_.name, "file_state");
    if (context.cancel.cancelled()) co_return support::Error(Errc::cancelled, "edit_file cancelled");

    const std::string given = string_field(input, "path");
    auto resolved = PathGuard(context).resolve(given, PathAccess::write);
    if (!resolved) co_return ToolResult::failure(resolved.error().message());
    const fs::path path = resolved->absolute;
    const std::string shown = resolved->display;
    if (resolved->trailing_slash) {
      co_return ToolResult::failure(
          fmt::format("path \"{}\" ends in '/', so it names a directory; give a file path", given));
    }

    std::string what = "edit_file edits files";
    auto loaded = co_await read_current(path, shown, context, std::move(what));
    if (auto* refused = std::get_if<ToolResult>(&loaded)) co_return std::move(*refused);
    CurrentText current = std::move(std::get<CurrentText>(loaded));
    if (!current.exists) {
      co_return ToolResult::failure(
          fmt::format("{} does not exist. edit_file changes existing files; create it with write_file.", shown));
    }
    std::string never_seen =
        fmt::format("You have not read {} in this session. Read it with read_file first, then make the edit.", shown);
    std::string redo = "edit";
    if (auto refused = co_await check_fresh(path, shown, current, context, std::move(never_seen), std::move(redo))) {
      co_return std::move(*refused);
    }
    if (current.text.substr(0, kBinarySniffBytes).find('\0') != std::string::npos) {
      co_return ToolResult::failure(fmt::format("{} looks like a binary file; edit_file edits text files", shown));
    }

    // Matching, the diff and the hashes take tens of ms on a file of many MiB: off the event loop.
    DiffOptions diff_options;
    diff_options.old_label = shown;
    diff_options.new_label = shown;
    const bool large = current.text.size() >= support::kOffLoopBytes;
    auto compute = [old_text = std::move(current.text), request = request_of(input), diff_options,
                    absolute = path.string()]() mutable {
      Computed c;
      c.edit = apply_edit(old_text, request.view());
      if (c.edit.status == EditStatus::applied) {
        c.diff = unified_diff(old_text, c.edit.text, diff_options);
        c.new_hash = sha256_hex(c.edit.text);
        c.client = client_diff(std::move(absolute), old_text, c.edit.text);
      }
      c.old_text = std::move(old_text);
      return c;
    };
    Computed computed = co_await support::run_off_loop(std::move(compute), large);
    EditOutcome& edit = computed.edit;
    if (edit.status != EditStatus::applied) co_return refused_edit(edit, path, shown);
    const UnifiedDiff& diff = computed.diff;
    const std::string& old_hash = current.sha256;
    const std::string& new_hash = computed.new_hash;

    // Moved, not copied: a copy of many MiB, and freeing it, would be the event loop's work.
    const std::size_t new_size = edit.text.size();
    FileCommit commit;
    commit.path = path;
    commit.before = std::move(computed.old_text);
    commit.after = std::move(edit.text);
    commit.mode = current.mode;
    commit.before_mode = current.mode;
    commit.expected_text = edit.replacement;
    if (current.from_buffer) commit.editor = context.files;
    commit.spans = context.spans;
    auto committed = co_await commit_file(std::move(commit), context.journal, context.cancel);
    if (!committed) co_return std::move(committed).error();
    if (committed->status == CommitStatus::conflict) {
      co_return ToolResult::failure(
          fmt::format("{} changed while this edit was being saved (another edit or a program wrote it), so nothing was "
                      "written. Read it again with read_file and redo your change on the current content.",
                      shown));
    }
    if (committed->status == CommitStatus::failed) {
      co_return ToolResult::failure(fmt::format("Cannot write {}: {}", shown, committed->message));
    }

    const std::size_t changed = std::max(diff.stats.added, diff.stats.removed);
    ToolResult result;
    result.locations = {path.string()};
    result.metadata.set("path", path.string());
    result.metadata.set("diff", diff.text);
    result.metadata.set("oldHash", old_hash);
    result.metadata.set("newHash", new_hash);
    result.metadata.set("changedLines", changed);
    result.metadata.set("replacements", edit.replacements);
    result.metadata.set("firstLine", edit.first_line);
    result.metadata.set("verification", verification(committed->read_back, committed->text_found));
    result.diffs.push_back(std::move(computed.client));

    if (!committed->read_back) {
      // The write happened, and then the file was not what was written: say which question failed.
      result.ok = committed->text_found;
      result.summary = fmt::format("Edited {}, but it now differs from what was written", shown);
      result.content = fmt::format(
          "Wrote {} but reading it back gave {}{}. Something rewrote it (a formatter, a filter or another "
          "program). Read it with read_file before changing it again.",
          shown, committed->message.empty() ? "different bytes" : committed->message,
          committed->text_found ? "; your new text is in it" : ", and your new text is not in it");
      co_return result;
    }
    context.file_state->record(path, snapshot_of_hashed(new_hash, new_size, path));

    const std::string where =
        edit.replacements == 1 ? fmt::format("at line {}", edit.first_line)
                               : fmt::format("in {} places, the first at line {}", edit.replacements, edit.first_line);
    result.summary = fmt::format("Edited {} ({} changed)", shown, lines_phrase(changed));
    std::string_view shown_diff = utf8_prefix(diff.text, kDiffInContentBytes);
    result.content = fmt::format("Edited {} {} ({} changed):\n{}{}", shown, where, lines_phrase(changed), shown_diff,
                                 shown_diff.size() < diff.text.size() ? "[diff cut]\n" : "");
    co_return result;
  }

 private:
  static ToolResult refused_edit(const EditOutcome& edit, const fs::path& path, const std::string& shown) {
    ToolResult result = ToolResult::failure(fmt::format("Cannot edit {}: {}", shown, edit.message));
    switch (edit.status) {
      case EditStatus::no_match: result.summary = fmt::format("old_string not found in {}", shown); break;
      case EditStatus::many_matches:
        result.summary = fmt::format("old_string occurs {} times in {}", edit.matches, shown);
        break;
      case EditStatus::no_change: result.summary = "old_string and new_string are the same"; break;
      case EditStatus::empty_old: result.summary = "old_string is empty"; break;
      case EditStatus::applied: break;
    }
    result.locations = {path.string()};
    result.metadata.set("path", path.string());
    result.metadata.set("matches", edit.matches);
    Json candidates = Json::array();
    for (const auto& c : edit.candidates) {
      Json candidate = Json::object();
      candidate.set("firstLine", c.first_line);
      candidate.set("lastLine", c.last_line);
      candidate.set("similarity", c.similarity);
      candidates.push_back(std::move(candidate));
    }
    result.metadata.set("candidates", std::move(candidates));
    return result;
  }
};

}  // namespace
}  // namespace builtin

std::shared_ptr<Tool> make_edit_file_tool() { return std::make_shared<builtin::EditFileTool>(); }

}  // namespace agentd::tools
