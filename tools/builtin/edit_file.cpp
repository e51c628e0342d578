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

  // The edit applied to the file as it is on disk now; nothing when it would not apply (run() then says why).
  std::vector<ToolDiff> preview(const Json& input, const ToolContext& context) const override {
    std::string absolute;
    auto current = preview_current(input, context, absolute);
    if (!current || !*current) return {};
    const std::string old_string = string_field(input, "old_string");
    const std::string new_string = string_field(input, "new_string");
    const Json* replace_all_field = input.find("replace_all");
    const EditRequest request{
        old_string, new_string,
        replace_all_field != nullptr && replace_all_field->is_bool() && replace_all_field->as_bool()};
    EditOutcome edit = apply_edit(**current, request);
    if (edit.status != EditStatus::applied) return {};
    return {ToolDiff{absolute, std::move(**current), std::move(edit.text)}};
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

    // Blocking file I/O on the caller's thread, as in write_file.
    std::uint32_t mode = 0;
    auto before = current_text(path, shown, *context.file_state, mode);
    if (auto* refused = std::get_if<ToolResult>(&before)) co_return std::move(*refused);
    const std::string old_text = std::move(std::get<std::string>(before));

    const std::string old_string = string_field(input, "old_string");
    const std::string new_string = string_field(input, "new_string");
    const Json* replace_all_field = input.find("replace_all");
    EditRequest request{old_string, new_string, replace_all_field != nullptr && replace_all_field->as_bool()};
    EditOutcome edit = apply_edit(old_text, request);
    if (edit.status != EditStatus::applied) co_return refused_edit(edit, path, shown);

    DiffOptions diff_options;
    diff_options.old_label = shown;
    diff_options.new_label = shown;
    const UnifiedDiff diff = unified_diff(old_text, edit.text, diff_options);

    FileCommit commit;
    commit.path = path;
    commit.before = old_text;
    commit.after = edit.text;
    commit.mode = mode;
    commit.before_mode = mode;
    commit.expected_text = edit.replacement;
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

    const std::string new_hash = sha256_hex(edit.text);
    const std::size_t changed = std::max(diff.stats.added, diff.stats.removed);
    ToolResult result;
    result.locations = {path.string()};
    result.metadata.set("path", path.string());
    result.metadata.set("diff", diff.text);
    result.metadata.set("oldHash", sha256_hex(old_text));
    result.metadata.set("newHash", new_hash);
    result.metadata.set("changedLines", changed);
    result.metadata.set("replacements", edit.replacements);
    result.metadata.set("firstLine", edit.first_line);
    result.metadata.set("verification", verification(committed->read_back, committed->text_found));
    result.diffs.push_back(ToolDiff{path.string(), old_text, edit.text});

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
    context.file_state->record(path, snapshot_of(edit.text, path));

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
  // The file's current text, or the failure that stops the edit (missing, not a file, never read, stale).
  static std::variant<std::string, ToolResult> current_text(const fs::path& path, const std::string& shown,
                                                            const FileState& file_state, std::uint32_t& mode) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT || err == ENOTDIR) {
        return ToolResult::failure(
            fmt::format("{} does not exist. edit_file changes existing files; create it with write_file.", shown));
      }
      return ToolResult::failure(fmt::format("Cannot inspect {}: {}", shown, std::strerror(err)));
    }
    if (S_ISDIR(st.st_mode)) return ToolResult::failure(fmt::format("{} is a directory; edit_file edits files", shown));
    if (!S_ISREG(st.st_mode)) {
      return ToolResult::failure(fmt::format("{} is not a regular file (a device, socket or pipe)", shown));
    }
    auto bytes = read_disk_file(path);
    if (!bytes) return ToolResult::failure(fmt::format("Cannot read {}: {}", shown, bytes.error().message()));
    // Compared with the bytes on disk, which are what the edit replaces (see write_file).
    switch (file_state.check(path, *bytes)) {
      case Freshness::fresh: break;
      case Freshness::never_seen:
        return ToolResult::failure(fmt::format(
            "You have not read {} in this session. Read it with read_file first, then make the edit.", shown));
      case Freshness::stale: {
        const auto seen = file_state.find(path);
        return ToolResult::failure(
            fmt::format("{} changed since you last read it (then {} bytes, now {}): the user, the editor or a command "
                        "edited it. Read it again with read_file and redo your edit on the current content.",
                        shown, seen ? seen->size : 0, bytes->size()));
      }
    }
    if (bytes->substr(0, kBinarySniffBytes).find('\0') != std::string::npos) {
      return ToolResult::failure(fmt::format("{} looks like a binary file; edit_file edits text files", shown));
    }
    mode = st.st_mode & 07777;
    return std::move(*bytes);
  }

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
