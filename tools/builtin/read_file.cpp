// read_file: a text file with line numbers, paged by offset/limit so a large file costs the model only
// the part it asks for. Reads go through ToolContext::files (the editor's view when it has one).
#include <algorithm>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/support/json_writer.h"
#include "core/support/run_off_loop.h"
#include "tools/builtin/builtin_tools.h"
#include "tools/builtin/common.h"
#include "tools/file_state.h"
#include "tools/path_guard.h"

namespace agentd::tools {
namespace builtin {
namespace {

using support::Errc;
using support::Json;

constexpr std::string_view kSchema = R"({
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1,
             "description": "The file to read: relative to the working directory, or absolute inside it."},
    "offset": {"type": "integer", "minimum": 1,
               "description": "The first line to show (1-based). Default 1."},
    "limit": {"type": "integer", "minimum": 1,
              "description": "How many lines to show. Default (and at most per call) 2000."}
  },
  "required": ["path"],
  "additionalProperties": false
})";

// Why a file is not text, or empty when it is. Text means valid UTF-8 without NUL bytes near the start.
std::string binary_reason(std::string_view bytes) {
  const std::size_t nul = bytes.substr(0, kBinarySniffBytes).find('\0');
  if (nul != std::string_view::npos) return fmt::format("it has a NUL byte at offset {}", nul);
  if (!support::is_valid_utf8(bytes)) return "it is not valid UTF-8 text";
  return "";
}

struct Page {
  std::string text;
  std::size_t first = 0;  // 1-based, 0 when the file is empty
  std::size_t last = 0;
  std::size_t total = 0;
  std::string stopped_by;  // why the page ended before the file did; empty when it reached the end
};

Page format_page(std::string_view content, std::size_t offset, std::size_t limit, bool limit_given) {
  const auto lines = split_lines(content);
  Page page;
  page.total = lines.size();
  const std::size_t want = std::min(limit, kReadFileMaxLines);
  for (std::size_t i = offset - 1; i < lines.size(); ++i) {
    if (page.first != 0 && i - (page.first - 1) >= want) {
      page.stopped_by = want == limit && limit_given ? "" : fmt::format("at most {} lines per call", kReadFileMaxLines);
      break;
    }
    const std::string_view line = lines[i];
    const std::string_view shown = utf8_prefix(line, kReadFileMaxLineBytes);
    std::string formatted = fmt::format("{:>6}\t{}", i + 1, shown);
    if (shown.size() < line.size()) {
      formatted += fmt::format(" [line cut: {} more bytes]", line.size() - shown.size());
    }
    formatted += '\n';
    if (page.first != 0 && page.text.size() + formatted.size() > kReadFileMaxBytes) {
      page.stopped_by = fmt::format("at most {} KiB per call", kReadFileMaxBytes >> 10);
      break;
    }
    page.text += formatted;
    if (page.first == 0) page.first = i + 1;
    page.last = i + 1;
  }
  return page;
}

class ReadFileTool final : public SingleFileTool {
 public:
  ReadFileTool() : SingleFileTool(make_spec(), "Read", PathAccess::read) {}

  static ToolSpec make_spec() {
    ToolSpec spec;
    spec.name = "read_file";
    spec.description = fmt::format(
        "Read a text file. Lines come numbered like `cat -n` (line number, tab, text); the numbers are not "
        "part of the file. Shows at most {} lines or {} KiB per call: pass offset (1-based line) and limit to "
        "read a long file in parts. Binary files are refused. Read a file before you overwrite it.",
        kReadFileMaxLines, kReadFileMaxBytes >> 10);
    spec.input_schema = support::parse_json(kSchema).value();
    spec.kind = ToolKind::read;
    spec.base_risk = Risk::read;
    return spec;
  }

  boost::asio::awaitable<support::Result<ToolResult>> run(Json input, ToolContext& context) override {
    if (auto invalid = check_input(spec_, input)) co_return std::move(*invalid);
    if (context.files == nullptr) co_return missing_context(spec_.name, "files");
    if (context.file_state == nullptr) co_return missing_context(spec_.name, "file_state");
    if (context.cancel.cancelled()) co_return support::Error(Errc::cancelled, "read_file cancelled");

    const PathGuard guard(context);
    auto resolved = guard.resolve(string_field(input, "path"), PathAccess::read);
    if (!resolved) co_return ToolResult::failure(resolved.error().message());
    const std::string absolute = resolved->absolute.string();
    const std::string& shown = resolved->display;

    struct stat st {};
    if (::stat(absolute.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      co_return ToolResult::failure(fmt::format("{} is a directory; use list_dir to see what it holds", shown));
    }

    auto read = co_await context.files->read_text(absolute, context.cancel);
    if (!read) {
      const support::Error& error = read.error();
      switch (error.code()) {
        case Errc::cancelled: co_return std::move(read).error();
        case Errc::not_found:
          co_return ToolResult::failure(
              fmt::format("File not found: {}. Check the name with list_dir, or create it with write_file", shown));
        case Errc::limit_exceeded:
          co_return ToolResult::failure(fmt::format(
              "{} is too large to read ({}); search it for the part you need instead", shown, error.message()));
        default: co_return ToolResult::failure(fmt::format("Cannot read {}: {}", shown, error.message()));
      }
    }
    // Validating, counting, hashing and paging scan the whole file, which may be many MiB: off the loop.
    struct Scanned {
      std::string binary;  // why the file is not text; empty when it is
      std::size_t bytes = 0;
      std::size_t total = 0;
      FileSnapshot snapshot;
      Page page;
    };
    const auto offset = static_cast<std::size_t>(integer_field(input, "offset").value_or(1));
    const auto limit_field = integer_field(input, "limit");
    const auto limit = static_cast<std::size_t>(limit_field.value_or(static_cast<std::int64_t>(kReadFileMaxLines)));
    const bool large = read->size() >= support::kOffLoopBytes;
    auto scan = [content = std::move(*read), offset, limit, limit_given = limit_field.has_value(),
                 path = resolved->absolute]() {
      Scanned s;
      s.bytes = content.size();
      s.binary = binary_reason(content);
      if (!s.binary.empty()) return s;
      s.total = count_lines(content);
      if (offset > 1 && offset > s.total) return s;
      s.snapshot = snapshot_of(content, path);
      s.page = format_page(content, offset, limit, limit_given);
      return s;
    };
    Scanned scanned = co_await support::run_off_loop(std::move(scan), large);
    if (!scanned.binary.empty()) {
      auto failure = ToolResult::failure(
          fmt::format("{} looks like a binary file ({}); read_file shows text files only", shown, scanned.binary));
      failure.locations = {absolute};
      co_return failure;
    }
    const std::size_t total = scanned.total;
    if (offset > 1 && offset > total) {
      co_return ToolResult::failure(fmt::format("offset {} is past the end of {}, which has {} line{}{}", offset, shown,
                                                total, total == 1 ? "" : "s",
                                                total == 0 ? "" : fmt::format("; use an offset from 1 to {}", total)));
    }

    // Recorded before formatting: whatever part the model sees, it read this version of the file.
    const std::string hash = scanned.snapshot.sha256;
    context.file_state->record(resolved->absolute, std::move(scanned.snapshot));
    const Page& page = scanned.page;
    ToolResult result;
    result.locations = {absolute};
    result.metadata = Json::object();
    result.metadata.set("path", absolute);
    result.metadata.set("startLine", page.first);
    result.metadata.set("endLine", page.last);
    result.metadata.set("totalLines", page.total);
    result.metadata.set("truncated", page.last < page.total);
    result.metadata.set("sha256", hash);
    result.metadata.set("bytes", scanned.bytes);
    if (page.total == 0) {
      result.summary = fmt::format("Read {} (empty)", shown);
      result.content = fmt::format("[{} is empty]", shown);
      co_return result;
    }
    result.summary = fmt::format("Read {} (lines {}-{} of {})", shown, page.first, page.last, page.total);
    result.content = page.text;
    if (page.last < page.total) {
      const std::string why = page.stopped_by.empty() ? "" : fmt::format(" (read_file shows {})", page.stopped_by);
      result.content += fmt::format("\n[Showing lines {}-{} of {}{}. To read on, call read_file with offset={}.]",
                                    page.first, page.last, page.total, why, page.last + 1);
    }
    co_return result;
  }
};

}  // namespace
}  // namespace builtin

std::shared_ptr<Tool> make_read_file_tool() { return std::make_shared<builtin::ReadFileTool>(); }

}  // namespace agentd::tools
