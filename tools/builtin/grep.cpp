// grep: file contents searched with an RE2 regex or a literal, over one file or a directory tree (ignore
// rules, hidden files and deny-listed paths as the shared walker applies them), matches as path:line:text.
// The search runs on threads of its own (tools/search.h), never on the event loop.
#include <fmt/format.h>
#include <sys/stat.h>

#include "tools/builtin/builtin_tools.h"
#include "tools/builtin/common.h"
#include "tools/ignore.h"
#include "tools/path_guard.h"
#include "tools/search.h"

namespace agentd::tools {
namespace builtin {
namespace {

using support::Errc;
using support::Json;

constexpr std::string_view kSchema = R"({
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1,
                "description": "What to search for: an RE2 regular expression (Perl-like syntax without lookaround or backreferences), or plain text with literal:true. Matched within one line at a time."},
    "path": {"type": "string", "minLength": 1,
             "description": "A file or directory to search: relative to the working directory, or absolute inside it. Default: the working directory."},
    "glob": {"type": "string", "minLength": 1,
             "description": "Only search files matching this glob, e.g. \"*.cpp\" or \"src/**/*.h\". Without a '/' it matches file names at any depth; with one, the path relative to `path`."},
    "literal": {"type": "boolean", "description": "Search for the pattern as plain text. Default false."},
    "context": {"type": "integer", "minimum": 0, "maximum": 20,
                "description": "Lines shown before and after each match. Default 0."},
    "case_insensitive": {"type": "boolean", "description": "Ignore case. Default false."}
  },
  "required": ["pattern"],
  "additionalProperties": false
})";

bool bool_field(const Json& input, std::string_view key) {
  const Json* value = input.find(key);
  return value != nullptr && value->is_bool() && value->as_bool();
}

// `glob` as rg's -g reads it: a pattern without '/' is matched against the file name, one with '/'
// against the path below the searched directory; `**` spans directories.
std::function<bool(std::string_view)> glob_filter(std::string glob) {
  if (glob.empty()) return {};
  const bool whole_path = glob.find('/') != std::string::npos;
  return [glob = std::move(glob), whole_path](std::string_view relative) {
    if (whole_path) return wildmatch(glob, relative, true);
    const std::size_t slash = relative.rfind('/');
    return wildmatch(glob, slash == std::string_view::npos ? relative : relative.substr(slash + 1), true);
  };
}

struct Rendered {
  std::string text;
  std::size_t shown_matches = 0;
  std::size_t shown_files = 0;  // files whose every matching line was shown
};

// `path:line:text` for matches, `path-line-text` for context, `--` between groups when context is on
// (grep's and rg's format), stopping before kGrepMaxOutputBytes.
Rendered render(const SearchReport& report, bool with_context) {
  Rendered out;
  const FileMatches* previous_file = nullptr;
  std::size_t previous_number = 0;
  for (const auto& file : report.files) {
    std::size_t shown_in_file = 0;
    for (const auto& line : file.lines) {
      std::string piece;
      if (with_context && previous_file != nullptr && (previous_file != &file || line.number != previous_number + 1)) {
        piece = "--\n";
      }
      piece += fmt::format("{}{}{}{}{}", file.path, line.is_match ? ':' : '-', line.number, line.is_match ? ':' : '-',
                           line.text);
      if (line.cut_bytes > 0) piece += fmt::format(" [line cut: {} more bytes]", line.cut_bytes);
      piece += '\n';
      if (out.text.size() + piece.size() > kGrepMaxOutputBytes) return out;
      out.text += piece;
      previous_file = &file;
      previous_number = line.number;
      if (line.is_match) {
        ++out.shown_matches;
        ++shown_in_file;
      }
    }
    if (file.complete && shown_in_file == file.matched_lines) ++out.shown_files;
  }
  return out;
}

class GrepTool final : public Tool {
 public:
  GrepTool() {
    spec_.name = "grep";
    spec_.description = fmt::format(
        "Search file contents for a regular expression (RE2) or, with literal:true, plain text. Searches one "
        "file, or every file under a directory except those that .gitignore excludes, hidden files and "
        "secrets; binary files are skipped. Prints matching lines as path:line:text, paths relative to the "
        "working directory, sorted by path; with context, context lines as path-line-text and `--` between "
        "groups. Output is capped at {} KiB and lines at {} bytes: narrow a broad search with path, glob or a "
        "more specific pattern.",
        kGrepMaxOutputBytes >> 10, kGrepMaxLineBytes);
    spec_.input_schema = support::parse_json(kSchema).value();
    spec_.kind = ToolKind::search;
    spec_.base_risk = Risk::read;
  }

  const ToolSpec& spec() const override { return spec_; }

  std::string title(const Json& input, const ToolContext& context) const override {
    return fmt::format("Grep {} in {}", string_field(input, "pattern"),
                       lexical_display(string_field(input, "path", "."), context.cwd));
  }

  std::vector<std::string> locations(const Json& input, const ToolContext& context) const override {
    auto resolved = PathGuard(context).resolve(string_field(input, "path", "."), PathAccess::read);
    if (!resolved) return {};
    return {resolved->absolute.string()};
  }

  boost::asio::awaitable<support::Result<ToolResult>> run(Json input, ToolContext& context) override {
    if (auto invalid = check_input(spec_, input)) co_return std::move(*invalid);
    if (context.cancel.cancelled()) co_return support::Error(Errc::cancelled, "grep cancelled");

    SearchPattern pattern;
    pattern.pattern = string_field(input, "pattern");
    pattern.literal = bool_field(input, "literal");
    pattern.case_insensitive = bool_field(input, "case_insensitive");
    auto matcher = Matcher::compile(pattern);
    if (!matcher) {
      co_return ToolResult::failure(
          fmt::format("Invalid regex `{}`: {}. Fix the pattern (RE2 syntax: no lookaround or backreferences; escape "
                      "metacharacters such as ( [ . * with \\), or pass literal:true to search for the text as written",
                      pattern.pattern, matcher.error().message()));
    }

    const PathGuard guard(context);
    auto resolved = guard.resolve(string_field(input, "path", "."), PathAccess::read);
    if (!resolved) co_return ToolResult::failure(resolved.error().message());
    const std::string absolute = resolved->absolute.string();
    const std::string& shown = resolved->display;
    struct stat st {};
    if (::stat(absolute.c_str(), &st) != 0) {
      co_return ToolResult::failure(
          fmt::format("No such file or directory: {}. Check the name with list_dir or glob", shown));
    }
    const bool is_dir = S_ISDIR(st.st_mode);

    SearchOptions options;
    const auto context_lines = static_cast<std::size_t>(integer_field(input, "context").value_or(0));
    options.context_before = context_lines;
    options.context_after = context_lines;
    options.max_line_bytes = kGrepMaxLineBytes;
    // Kept beyond what is shown, so the cut falls in the same place whichever order threads finish in.
    options.max_kept_bytes = 2 * kGrepMaxOutputBytes;

    auto work = [matcher = *matcher, absolute, shown, is_dir, glob = string_field(input, "glob"), options,
                 walk = walk_options(guard, resolved->absolute, context),
                 cancel = context.cancel]() -> support::Result<SearchReport> {
      if (!is_dir) return search_files(matcher, {SearchTarget{absolute, shown}}, options, cancel);
      const std::string prefix = shown == "." ? "" : shown + "/";
      const auto include = glob_filter(glob);
      return search_tree(matcher, absolute, prefix, walk, include, options, cancel);
    };
    auto searched = co_await run_off_loop(std::move(work));
    if (!searched) {
      if (searched.error().code() == Errc::cancelled) co_return std::move(searched).error();
      co_return ToolResult::failure(fmt::format("Cannot search {}: {}", shown, searched.error().message()));
    }
    const SearchReport& report = *searched;

    ToolResult result;
    result.locations = {absolute};
    result.metadata.set("path", absolute);
    result.metadata.set("matches", report.matched_lines);
    result.metadata.set("files", report.matched_files);
    result.metadata.set("searchedFiles", report.searched_files);
    result.metadata.set("binaryFiles", report.binary_files);
    result.metadata.set("unreadableFiles", report.unreadable_files);
    if (report.matched_lines == 0) {
      std::string detail =
          fmt::format("{} file{} searched", report.searched_files, report.searched_files == 1 ? "" : "s");
      if (report.binary_files > 0) detail += fmt::format(", {} binary skipped", report.binary_files);
      result.summary = fmt::format("No matches in {}", shown);
      result.content = fmt::format("no matches ({} in {})", detail, shown);
      result.metadata.set("shownMatches", 0);
      result.metadata.set("truncated", false);
      co_return result;
    }

    Rendered rendered = render(report, context_lines > 0);
    const std::size_t omitted_matches = report.matched_lines - rendered.shown_matches;
    const std::size_t omitted_files = report.matched_files - rendered.shown_files;
    result.metadata.set("shownMatches", rendered.shown_matches);
    result.metadata.set("truncated", omitted_matches > 0);
    result.summary =
        fmt::format("Found {} matching line{} in {} file{}", report.matched_lines, report.matched_lines == 1 ? "" : "s",
                    report.matched_files, report.matched_files == 1 ? "" : "s");
    result.content = std::move(rendered.text);
    if (omitted_matches > 0) {
      result.content += fmt::format(
          "[{} more matching line{} in {} file{} not shown (grep shows at most {} KiB); narrow the search with "
          "path, glob or a more specific pattern]",
          omitted_matches, omitted_matches == 1 ? "" : "s", omitted_files, omitted_files == 1 ? "" : "s",
          kGrepMaxOutputBytes >> 10);
    }
    co_return result;
  }

 private:
  ToolSpec spec_;
};

}  // namespace
}  // namespace builtin

std::shared_ptr<Tool> make_grep_tool() { return std::make_shared<builtin::GrepTool>(); }

}  // namespace agentd::tools
