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

#include "core/support/run_off_loop.h"
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

  boost::asio::awaitable<std::vector<ToolDiff>> preview(const Json& input, const ToolContext& context) const override {
    std::string absolute;
    auto current = co_await preview_current(input, context, absolute);
    if (!current) co_return std::vector<ToolDiff>{};
    const bool large = (*current ? (*current)->size() : 0) +
                           (input["content"].is_string() ? input["content"].as_string().size() : 0) >=
                       support::kOffLoopBytes;
    auto diff = [absolute = std::move(absolute), old_text = std::move(*current), &input]() mutable {
      const std::optional<std::string_view> old_view =
          old_text ? std::optional<std::string_view>(*old_text) : std::nullopt;
      return std::vector<ToolDiff>{client_diff(std::move(absolute), old_view, string_field(input, "content"))};
    };
    co_return co_await support::run_off_loop(std::move(diff), large);
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
  // commit_file checks again, when the write is due, that the file still holds what was checked here.
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

    std::string what = "write_file writes files";
    auto loaded = co_await read_current(path, shown, context, std::move(what));
    if (auto* refused = std::get_if<ToolResult>(&loaded)) co_return std::move(*refused);
    CurrentText before = std::move(std::get<CurrentText>(loaded));
    if (before.parent_is_file) {
      co_return ToolResult::failure(fmt::format("Cannot create {}: a parent of it is a file, not a directory", shown));
    }
    // Compared with what gets replaced: the disk's bytes, or the editor's buffer when writes go through it.
    if (before.exists) {
      std::string never_seen = fmt::format(
          "{} already exists and you have not read it in this session. Read it with read_file first, so you know "
          "what you are replacing, then write it again.",
          shown);
      std::string redo = "change";
      if (auto refused = co_await check_fresh(path, shown, before, context, std::move(never_seen), std::move(redo))) {
        co_return std::move(*refused);
      }
    }

    // Everything that scans the content runs off the event loop: it may be many MiB.
    struct Scanned {
      std::string content;
      std::string before_text;
      std::string new_hash;
      bool unchanged = false;
      std::size_t lines = 0;
      std::size_t changed = 0;
      ToolDiff diff;
    };
    std::optional<std::string> before_text;
    if (before.exists) before_text = std::move(before.text);
    const bool large = content.size() + (before_text ? before_text->size() : 0) >= support::kOffLoopBytes;
    auto scan = [content = std::move(content), before_text = std::move(before_text),
                 absolute = path.string()]() mutable {
      Scanned s;
      s.new_hash = sha256_hex(content);
      s.unchanged = before_text && *before_text == content;
      s.lines = count_lines(content);
      s.changed = before_text ? changed_lines(*before_text, content) : s.lines;
      if (!s.unchanged) {
        s.diff = client_diff(std::move(absolute),
                             before_text ? std::optional<std::string_view>(*before_text) : std::nullopt, content);
      }
      s.content = std::move(content);
      if (before_text) s.before_text = std::move(*before_text);
      return s;
    };
    Scanned scanned = co_await support::run_off_loop(std::move(scan), large);
    content = std::move(scanned.content);
    before.text = std::move(scanned.before_text);
    const std::string& new_hash = scanned.new_hash;
    ToolResult result;
    result.locations = {path.string()};
    result.metadata.set("path", path.string());
    result.metadata.set("oldHash", before.exists ? Json(before.sha256) : Json());
    result.metadata.set("newHash", new_hash);

    if (scanned.unchanged) {
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
      commit.before = std::move(before.text);
      commit.mode = before.mode;
      if (before.from_buffer) commit.editor = context.files;
    }
    // Moved, not copied: a copy of many MiB, and freeing it, would be the event loop's work. An empty
    // expected_text means the whole of `after`.
    const std::size_t bytes = content.size();
    commit.after = std::move(content);
    commit.before_mode = before.mode;
    commit.spans = context.spans;
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
    result.metadata.set("changedLines", scanned.changed);
    result.metadata.set("created", !before.exists);
    result.metadata.set("bytes", bytes);
    result.metadata.set("verification", verification(read_ok, text_found));
    result.diffs.push_back(std::move(scanned.diff));

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
    context.file_state->record(path, snapshot_of_hashed(new_hash, bytes, path));

    const std::size_t lines = scanned.lines;
    if (before.exists) {
      const std::size_t changed = scanned.changed;
      result.summary = fmt::format("Wrote {} ({} changed)", shown, lines_phrase(changed));
      result.content = fmt::format("Replaced the content of {}: now {}, {} bytes ({} changed).", shown,
                                   lines_phrase(lines), bytes, lines_phrase(changed));
    } else {
      result.summary = fmt::format("Created {} ({})", shown, lines_phrase(lines));
      result.content = fmt::format("Created {} ({}, {} bytes{}).", shown, lines_phrase(lines), bytes,
                                   created_directories ? ", with its missing parent directories" : "");
    }
    co_return result;
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
