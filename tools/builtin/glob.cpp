// glob: the files under a directory whose paths match a pattern, found by the shared ignore-aware walk
// (tools/walk.h) on a thread of its own, in the walk's order (component by component, as grep reports).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>

#include <fmt/format.h>
#include <sys/stat.h>

#include "tools/builtin/builtin_tools.h"
#include "tools/builtin/common.h"
#include "tools/ignore.h"
#include "tools/path_guard.h"
#include "tools/search.h"
#include "tools/walk.h"

namespace agentd::tools {
namespace builtin {
namespace {

using support::Errc;
using support::Json;

constexpr std::string_view kSchema = R"({
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1,
                "description": "The glob, e.g. \"**/*.cpp\", \"src/**/test_*.py\", \"*.{h,hpp}\"."},
    "path": {"type": "string", "minLength": 1,
             "description": "The directory to search in: relative to the working directory, or absolute inside it. Default: the working directory."}
  },
  "required": ["pattern"],
  "additionalProperties": false
})";

// `{a,b}` may multiply a pattern; past this many alternatives the model is asked for a simpler one.
constexpr std::size_t kMaxAlternatives = 256;

// Expands `{a,b}` alternatives, nested ones too, into `out`. Braces without a top-level comma, unmatched
// ones and escaped ones (`\{`) stay literal. False when there would be more than kMaxAlternatives.
bool expand_braces(std::string_view pattern, std::vector<std::string>& out) {
  for (std::size_t open = 0; open < pattern.size(); ++open) {
    if (pattern[open] == '\\') {
      ++open;
      continue;
    }
    if (pattern[open] != '{') continue;
    std::size_t depth = 0;
    std::size_t close = std::string_view::npos;
    std::vector<std::size_t> commas;
    for (std::size_t j = open; j < pattern.size() && close == std::string_view::npos; ++j) {
      switch (pattern[j]) {
        case '\\': ++j; break;
        case '{': ++depth; break;
        case '}':
          if (--depth == 0) close = j;
          break;
        case ',':
          if (depth == 1) commas.push_back(j);
          break;
        default: break;
      }
    }
    if (close == std::string_view::npos) break;  // unmatched: the rest is literal
    if (commas.empty()) continue;                // "{x}" is literal; look further on
    commas.push_back(close);
    std::size_t start = open + 1;
    for (const std::size_t end : commas) {
      std::string alternative(pattern.substr(0, open));
      alternative.append(pattern.substr(start, end - start));
      alternative.append(pattern.substr(close + 1));
      if (!expand_braces(alternative, out)) return false;
      start = end + 1;
    }
    return true;
  }
  if (out.size() == kMaxAlternatives) return false;
  out.emplace_back(pattern);
  return true;
}

// One alternative of the pattern: a pattern with a '/' is matched against the whole path below the root,
// one without against the file name at any depth (as in .gitignore, and ripgrep's --glob).
struct CompiledGlob {
  std::string pattern;
  bool anchored = false;
};

bool glob_matches(const std::vector<CompiledGlob>& globs, std::string_view relative) {
  const std::size_t slash = relative.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? relative : relative.substr(slash + 1);
  for (const CompiledGlob& glob : globs) {
    if (wildmatch(glob.pattern, glob.anchored ? relative : name, true)) return true;
  }
  return false;
}

// A component that starts with '.' names hidden files on purpose (".github/**", "**/.eslintrc*"): only then
// does the walk include them.
bool names_hidden(std::string_view pattern) {
  for (std::size_t start = 0; start <= pattern.size();) {
    const std::size_t slash = pattern.find('/', start);
    const std::string_view component = pattern.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (component.starts_with('.') && component != "." && component != "..") return true;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return false;
}

struct Found {
  // Relative to the walk root, in walk order, which is already the order shown: only the first
  // kGlobMaxResults are kept, the rest counted.
  std::vector<std::string> paths;
  std::size_t omitted = 0;
  WalkStats stats;
};

class GlobTool final : public Tool {
 public:
  GlobTool() {
    spec_.name = "glob";
    spec_.description = fmt::format(
        "Find files by path pattern. `**` matches any number of directories, `*` and `?` anything within one "
        "name, `[abc]`/`[a-z]` one character, `{{a,b}}` either alternative. A pattern without '/' matches "
        "file names at any depth (\"*.h\"); one with '/' is matched against the whole path below `path` "
        "(\"src/**/*.cpp\"). Files ignored by .gitignore are left out, and hidden files unless the pattern "
        "names them (\".github/**\"). Paths come relative to the working directory, in path order; at most {} "
        "are shown.",
        kGlobMaxResults);
    spec_.input_schema = support::parse_json(kSchema).value();
    spec_.kind = ToolKind::search;
    spec_.base_risk = Risk::read;
  }

  const ToolSpec& spec() const override { return spec_; }

  std::string title(const Json& input, const ToolContext& context) const override {
    const std::string pattern = string_field(input, "pattern");
    const std::string path = string_field(input, "path", ".");
    if (path == ".") return "Glob " + pattern;
    return fmt::format("Glob {} in {}", pattern, lexical_display(path, context.cwd));
  }

  std::vector<std::string> locations(const Json& input, const ToolContext& context) const override {
    auto resolved = PathGuard(context).resolve(string_field(input, "path", "."), PathAccess::read);
    if (!resolved) return {};
    return {resolved->absolute.string()};
  }

  boost::asio::awaitable<support::Result<ToolResult>> run(Json input, ToolContext& context) override {
    if (auto invalid = check_input(spec_, input)) co_return std::move(*invalid);
    if (context.cancel.cancelled()) co_return support::Error(Errc::cancelled, "glob cancelled");

    const PathGuard guard(context);
    auto resolved = guard.resolve(string_field(input, "path", "."), PathAccess::read);
    if (!resolved) co_return ToolResult::failure(resolved.error().message());
    const std::string root = resolved->absolute.string();
    const std::string& shown = resolved->display;

    struct stat st {};
    if (::stat(root.c_str(), &st) != 0) {
      const int err = errno;
      if (err != ENOENT && err != ENOTDIR) {
        co_return ToolResult::failure(fmt::format("Cannot search {}: {}", shown, std::strerror(err)));
      }
      co_return ToolResult::failure(fmt::format("No such directory: {}", shown));
    }
    if (!S_ISDIR(st.st_mode)) {
      co_return ToolResult::failure(fmt::format(
          "{} is a file, not a directory; glob searches a directory (use read_file to read the file)", shown));
    }

    const std::string pattern = string_field(input, "pattern");
    auto compiled = compile(pattern, root);
    if (!compiled) co_return ToolResult::failure(compiled.error().message());

    WalkOptions options = walk_options(guard, resolved->absolute, context);
    options.hidden = std::any_of(compiled->begin(), compiled->end(),
                                 [](const CompiledGlob& glob) { return names_hidden(glob.pattern); });
    auto work = [root, globs = std::move(*compiled), options, cancel = context.cancel]() -> support::Result<Found> {
      try {
        Found found;
        auto walked = walk(
            root, options,
            [&](const WalkEntry& entry) {
              if (entry.is_dir || !glob_matches(globs, entry.relative)) return true;
              // A symlink counts when it leads to a file; its target may be anywhere, so read_file's
              // guard has the last word on it.
              struct stat target {};
              if (entry.is_symlink && (::stat(entry.path.c_str(), &target) != 0 || !S_ISREG(target.st_mode))) {
                return true;
              }
              if (found.paths.size() < kGlobMaxResults) {
                found.paths.push_back(entry.relative);
              } else {
                ++found.omitted;
              }
              return true;
            },
            cancel);
        if (!walked) return std::move(walked).error();
        found.stats = *walked;
        return found;
      } catch (const std::exception& e) {
        return support::Error(Errc::internal, fmt::format("glob failed: {}", e.what()));
      }
    };
    auto found = co_await run_off_loop(std::move(work));
    if (!found) {
      if (found.error().code() == Errc::cancelled) co_return std::move(found).error();
      if (found.error().code() == Errc::not_found) {
        co_return ToolResult::failure(fmt::format("No such directory: {}", shown));
      }
      co_return ToolResult::failure(fmt::format("Cannot search {}: {}", shown, found.error().message()));
    }

    const std::vector<std::string>& paths = found->paths;
    const std::size_t shown_count = paths.size();
    const std::size_t omitted = found->omitted;
    const std::size_t matches = shown_count + omitted;
    const std::string prefix = shown == "." ? "" : shown + "/";
    ToolResult result;
    result.locations = {root};
    result.metadata.set("path", root);
    result.metadata.set("pattern", pattern);
    result.metadata.set("matches", matches);
    result.metadata.set("shown", shown_count);
    result.metadata.set("omitted", omitted);
    result.metadata.set("unreadable_dirs", found->stats.skipped_unreadable);
    result.summary = fmt::format("Found {} file{} matching {}", matches, matches == 1 ? "" : "s", pattern);
    if (paths.empty()) {
      result.content = fmt::format("[no files match {} under {}; files ignored by .gitignore{} are not searched]",
                                   pattern, shown, options.hidden ? "" : " and hidden files");
      co_return result;
    }
    for (std::size_t i = 0; i < shown_count; ++i) {
      result.content += prefix;
      result.content += paths[i];
      result.content += '\n';
    }
    if (omitted > 0) {
      result.content +=
          fmt::format("[{} more path{} not shown (glob shows at most {}); narrow the pattern or the path]", omitted,
                      omitted == 1 ? "" : "s", kGlobMaxResults);
    }
    if (found->stats.skipped_unreadable > 0) {
      result.content +=
          fmt::format("{}[{} unreadable director{} skipped]", omitted > 0 ? "\n" : "", found->stats.skipped_unreadable,
                      found->stats.skipped_unreadable == 1 ? "y" : "ies");
    }
    co_return result;
  }

 private:
  // The pattern's alternatives, each relative to `root`: "./" and an absolute prefix naming the root are
  // dropped, a leading '/' anchors (as in .gitignore).
  static support::Result<std::vector<CompiledGlob>> compile(const std::string& pattern, const std::string& root) {
    std::vector<std::string> alternatives;
    if (!expand_braces(pattern, alternatives)) {
      return support::make_error(Errc::invalid_argument,
                                 "The pattern {} has more than {} {{}} alternatives; use a simpler pattern or "
                                 "several calls",
                                 pattern, kMaxAlternatives);
    }
    std::vector<CompiledGlob> globs;
    for (std::string& alternative : alternatives) {
      std::string_view text = alternative;
      const std::string root_slash = root.ends_with('/') ? root : root + "/";
      if (text.starts_with(root_slash)) text.remove_prefix(root_slash.size());
      bool anchored = false;
      for (;;) {
        if (text.starts_with("./")) {
          text.remove_prefix(2);
        } else if (text.starts_with('/')) {
          text.remove_prefix(1);
          anchored = true;
        } else {
          break;
        }
      }
      if (text.empty()) continue;
      CompiledGlob glob;
      glob.anchored = anchored || text.find('/') != std::string_view::npos;
      glob.pattern = std::string(text);
      globs.push_back(std::move(glob));
    }
    if (globs.empty()) {
      return support::make_error(Errc::invalid_argument,
                                 "The pattern {} names no files; give a glob such as \"**/*.cpp\"", pattern);
    }
    return globs;
  }

  ToolSpec spec_;
};

}  // namespace
}  // namespace builtin

std::shared_ptr<Tool> make_glob_tool() { return std::make_shared<builtin::GlobTool>(); }

}  // namespace agentd::tools
