// write_file: creates a file or replaces all of it. A file that exists must have been read (or written)
// by this session and be unchanged since, so the model never overwrites text it has not seen. The write is a
// file transaction (tools/file_transaction.h): pre-image journaled first, so the turn can be undone.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <variant>

#include <fmt/format.h>
#include <sys/stat.h>

#include "tools/builtin/builtin_tools.h"
#include "tools/builtin/common.h"
#include "tools/disk_file_access.h"
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
             "description": "The file to write: relative to the working directory, or absolute inside it."},
    "content": {"type": "string", "description": "The complete new content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
})";

// What is on disk before the write.
struct PreImage {
  bool exists = false;
  std::uint32_t mode = 0;
  std::string bytes;
};

std::string lines_phrase(std::size_t n) { return fmt::format("{} line{}", n, n == 1 ? "" : "s"); }

class WriteFileTool final : public SingleFileTool {
 public:
  WriteFileTool() : SingleFileTool(make_spec(), "Write", PathAccess::write) {}

  static ToolSpec make_spec() {
    ToolSpec spec;
    spec.name = "write_file";
    spec.description =
        "Create a file, or replace the whole content of one (missing parent directories are created). To "
        "replace an existing file you must have read it with read_file in this session, and it must not have "
        "changed since.";
    spec.input_schema = support::parse_json(kSchema).value();
    spec.kind = ToolKind::edit;
    spec.base_risk = Risk::write;
    return spec;
  }

  std::vector<ToolDiff> preview(const Json& input, const ToolContext& context) const override {
    std::string absolute;
    auto current = preview_current(input, context, absolute);
    if (!current) return {};
    return {ToolDiff{absolute, std::move(*current), string_field(input, "content")}};
  }

  boost::asio::awaitable<support::Result<ToolResult>> run(Json input, ToolContext& context) override {
    if (auto invalid = check_input(spec_, input)) co_return std::move(*invalid);
    if (context.file_state == nullptr) co_return missing_context(spec_.name, "file_state");
    if (context.cancel.cancelled()) co_return support::Error(Errc::cancelled, "write_file cancelled");
    std::string path = string_field(input, "path");
    std::string content = string_field(input, "content");
    co_return co_await write(std::move(path), std::move(content), context);
  }

 private:
  // Blocking file I/O on the caller's thread: the engine runs tools off its event loop. The one await is
  // the journal's; commit_file checks again after it that the file still holds what was checked here.
  boost::asio::awaitable<support::Result<ToolResult>> write(std::string given, std::string content,
                                                            ToolContext& context) {
    auto resolved = PathGuard(context).resolve(given, PathAccess::write);
    if (!resolved) co_return ToolResult::failure(resolved.error().message());
    const fs::path path = resolved->absolute;
    const std::string shown = resolved->display;
    if (resolved->trailing_slash) {
      co_return ToolResult::failure(
          fmt::format("path \"{}\" ends in '/', so it names a directory; give a file path", given));
    }

    auto pre = pre_image(path, shown, *context.file_state);
    if (auto* refused = std::get_if<ToolResult>(&pre)) co_return std::move(*refused);
    const PreImage before = std::move(std::get<PreImage>(pre));

    const std::string new_hash = sha256_hex(content);
    ToolResult result;
    result.locations = {path.string()};
    result.metadata.set("path", path.string());
    result.metadata.set("oldHash", before.exists ? Json(sha256_hex(before.bytes)) : Json());
    result.metadata.set("newHash", new_hash);

    if (before.exists && before.bytes == content) {
      // Rewriting identical bytes would only bump the mtime and wake file watchers.
      result.metadata.set("changedLines", 0);
      result.metadata.set("verification", verification(true, true));
      result.summary = fmt::format("{} unchanged", shown);
      result.content = fmt::format("{} already has exactly this content; nothing was written.", shown);
      co_return result;
    }

    bool created_directories = false;
    if (!before.exists) {
      std::error_code ec;
      created_directories = fs::create_directories(path.parent_path(), ec);
      if (ec) {
        co_return ToolResult::failure(fmt::format("Cannot create the directory {} for {}: {}",
                                                  display_parent(path, context), shown, ec.message()));
      }
    }
    FileCommit commit;
    commit.path = path;
    if (before.exists) {
      commit.before = before.bytes;
      commit.mode = before.mode;
    }
    commit.after = content;
    commit.expected_text = content;
    commit.before_mode = before.mode;
    auto committed = co_await commit_file(std::move(commit), context.journal, context.cancel);
    if (!committed) co_return std::move(committed).error();
    if (committed->status == CommitStatus::conflict) {
      co_return ToolResult::failure(fmt::format(
          "{} changed while this write was being saved (another edit or a program wrote it), so nothing was "
          "written. Read it with read_file and write it again.",
          shown));
    }
    if (committed->status == CommitStatus::failed) {
      co_return ToolResult::failure(fmt::format("Cannot write {}: {}", shown, committed->message));
    }
    // commit_file read back what landed on disk.
    const bool read_ok = committed->read_back;
    const bool text_found = committed->text_found;
    result.metadata.set("changedLines", before.exists ? changed_lines(before.bytes, content) : count_lines(content));
    result.metadata.set("created", !before.exists);
    result.metadata.set("bytes", content.size());
    result.metadata.set("verification", verification(read_ok, text_found));
    ToolDiff diff;
    diff.path = path.string();
    if (before.exists) diff.old_text = before.bytes;
    diff.new_text = content;
    result.diffs.push_back(std::move(diff));

    if (!read_ok) {
      // The write happened, and then the file was not what was written: say which question failed.
      result.ok = text_found;
      const std::string why = committed->message.empty() ? "different bytes" : committed->message;
      result.summary = fmt::format("Wrote {}, but it now differs from what was written", shown);
      result.content = fmt::format(
          "Wrote {} but reading it back gave {}{}. Something rewrote it (a formatter, a filter or another "
          "program). Read it with read_file before changing it again.",
          shown, why, text_found ? "; what you wrote is in it" : ", and what you wrote is not in it");
      co_return result;
    }
    context.file_state->record(path, snapshot_of(content, path));

    const std::size_t lines = count_lines(content);
    if (before.exists) {
      const std::size_t changed = changed_lines(before.bytes, content);
      result.summary = fmt::format("Wrote {} ({} changed)", shown, lines_phrase(changed));
      result.content = fmt::format("Replaced the content of {}: now {}, {} bytes ({} changed).", shown,
                                   lines_phrase(lines), content.size(), lines_phrase(changed));
    } else {
      result.summary = fmt::format("Created {} ({})", shown, lines_phrase(lines));
      result.content = fmt::format("Created {} ({}, {} bytes{}).", shown, lines_phrase(lines), content.size(),
                                   created_directories ? ", with its missing parent directories" : "");
    }
    co_return result;
  }

  // The file's current state, or the failure that stops the write (a directory, never read, stale).
  static std::variant<PreImage, ToolResult> pre_image(const fs::path& path, const std::string& shown,
                                                      const FileState& file_state) {
    PreImage pre;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT) return pre;
      if (err == ENOTDIR) {
        return ToolResult::failure(fmt::format("Cannot create {}: a parent of it is a file, not a directory", shown));
      }
      return ToolResult::failure(fmt::format("Cannot inspect {}: {}", shown, std::strerror(err)));
    }
    if (S_ISDIR(st.st_mode)) {
      return ToolResult::failure(fmt::format("{} is a directory; write_file writes files", shown));
    }
    if (!S_ISREG(st.st_mode)) {
      return ToolResult::failure(fmt::format("{} is not a regular file (a device, socket or pipe)", shown));
    }
    auto bytes = read_disk_file(path);
    if (!bytes) {
      return ToolResult::failure(fmt::format("Cannot read the current {} to check it before replacing it: {}", shown,
                                             bytes.error().message()));
    }
    // Compared with the bytes on disk, which is what gets replaced. When an editor holds unsaved changes the
    // model read those instead, and the write is refused as stale: right, since it would clobber them.
    switch (file_state.check(path, *bytes)) {
      case Freshness::fresh: break;
      case Freshness::never_seen:
        return ToolResult::failure(fmt::format(
            "{} already exists and you have not read it in this session. Read it with read_file first, so you "
            "know what you are replacing, then write it again.",
            shown));
      case Freshness::stale: {
        const auto seen = file_state.find(path);
        return ToolResult::failure(fmt::format(
            "{} changed since you last read it (then {} bytes, now {}): the user, the editor or a command edited "
            "it. Read it again with read_file and redo your change on the current content.",
            shown, seen ? seen->size : 0, bytes->size()));
      }
    }
    pre.exists = true;
    pre.mode = st.st_mode & 07777;
    pre.bytes = std::move(bytes).value();
    return pre;
  }

  static Json verification(bool read_back, bool expected_text_found) {
    Json out = Json::object();
    out.set("readBack", read_back);
    out.set("expectedTextFound", expected_text_found);
    return out;
  }

  static std::string display_parent(const fs::path& path, const ToolContext& context) {
    return PathGuard(context).display(path.parent_path());
  }
};

}  // namespace
}  // namespace builtin

std::shared_ptr<Tool> make_write_file_tool() { return std::make_shared<builtin::WriteFileTool>(); }

}  // namespace agentd::tools
