// The file:line locator. locate_line is a ladder of RE2 patterns, one rung per format, tried in an order
// where the more specific wins (a Python frame before a generic path:line); has_location and
// failure_paths are hand-written scans, cheap enough to run on every line of a test run.
#include "tools/verify/locator.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iterator>

#include <re2/re2.h>

// The pattern ladder below maps each kind of line to what it yields; rungs that yield the same thing
// are kept apart, one per format, so branch-clone findings are expected here.
// NOLINTBEGIN(bugprone-branch-clone)
namespace agentd::tools::verify {
namespace {

// The extensions a generic `path:line` must end in: source, build and config files, so that `12:30:05`
// or `localhost:8080` are not taken for paths.
#define AGENTD_SOURCE_EXTENSIONS                                                                               \
  "(?:c|cc|cpp|cxx|c\\+\\+|h|hh|hpp|hxx|inl|ipp|tcc|m|mm|py|pyi|pyx|js|jsx|mjs|cjs|ts|tsx|mts|cts|go|rs|java|" \
  "kt|kts|scala|groovy|rb|php|cs|fs|swift|lua|sh|bash|pl|pm|ex|exs|erl|hs|ml|zig|dart|vue|svelte|S|s|asm|"     \
  "cmake|ya?ml|toml|json|proto|sql|gradle|cu|cuh|d|nim|jl|r|R|tf|hcl)"

struct Patterns {
  RE2 python{R"re(^\s*File "([^"]+)", line (\d+)(?:, in (\S+))?)re"};
  // at com.acme.Parser.parse(Parser.java:42)  /  at com.acme.Parser$Inner.lambda$0(Parser.kt:7)
  RE2 java{R"re(^\s*at (?:[\w.$-]+/)?([\w$.<>]+)\.([\w$<>-]+)\(([\w$.-]+\.(?:java|kt|scala|groovy)):(\d+)\))re"};
  // at parse (/app/src/parser.js:12:5)  /  at /app/src/parser.js:12:5  /  at async Object.run (file:///x.mjs:3:1)
  RE2 node_named{R"re(^\s*at (.+?) \((?:file://)?([^()\s]+):(\d+):(\d+)\)\s*$)re"};
  RE2 node_bare{R"re(^\s*at (?:file://)?([^()\s]+):(\d+):(\d+)\s*$)re"};
  // \t/home/u/proj/main.go:12 +0x1d
  RE2 go{R"re(^\s+(\S+\.go):(\d+)(?: \+0x[0-9a-fA-F]+)?\s*$)re"};
  RE2 go_function{R"re(^([\w./*()%-]+)\(.*\)\s*$)re"};
  // --> src/x.rs:12:5
  RE2 rust_compiler{R"re(^\s*--> (\S+\.rs):(\d+):(\d+))re"};
  // thread 'main' panicked at src/x.rs:12:5:   /   panicked at 'msg', src/x.rs:12:5
  RE2 rust_panic{R"re(panicked at (?:'.*', )?(\S+\.rs):(\d+):(\d+))re"};
  // backtrace:   at ./src/main.rs:12:5
  RE2 rust_backtrace{R"re(^\s+at (\S+\.rs):(\d+):(\d+)\s*$)re"};
  // #3 0x55d5c1 in parse_header(char const*) /src/parser.cpp:12:5
  RE2 sanitizer{R"re(^\s*#(\d+) 0x[0-9a-fA-F]+ in (.+) (\S+?):(\d+)(?::(\d+))?\s*$)re"};
  // #1  0x00005555 in parse (s=0x0) at parser.c:12
  RE2 gdb{R"re(^#(\d+)\s+(?:0x[0-9a-fA-F]+ in )?(\S+) \(.*\) at (\S+):(\d+)\s*$)re"};
  // ==123==    at 0x4005F4: main (main.c:12)   /   by 0x...: foo (bar.c:7)
  RE2 valgrind{R"re(^==\d+==\s+(?:at|by) 0x[0-9A-Fa-f]+: (.+) \(([^():\s]+):(\d+)\)\s*$)re"};
  // src/x.cpp:12:5: error: ...   (also warning, note)
  RE2 compiler{"^\\s*((?:[A-Za-z]:)?[^\\s:()]*\\." AGENTD_SOURCE_EXTENSIONS
               "):(\\d+)(?::(\\d+))?:\\s*(fatal error|error|warning|note)"};
  // Anything else: path.ext:line(:col)? anywhere in a line, e.g. "(fs/ext4/super.c:5012)", "main_test.go:12:".
  RE2 generic{"((?:[A-Za-z]:)?[\\w./\\\\+@~-]*[\\w-]\\." AGENTD_SOURCE_EXTENSIONS "):(\\d+)(?::(\\d+))?"};
};

const Patterns& patterns() {
  static const Patterns kPatterns;
  return kPatterns;
}

// The number `digits` spells, or 0 when it does not fit (0 is never a line, so such a location is dropped).
std::size_t to_size(const re2::StringPiece& digits) {
  std::size_t value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return value;
}

std::string text_of(const re2::StringPiece& piece) { return {piece.data(), piece.size()}; }

// a.b.C or a.b.C$Inner -> a/b/C.java (the file the class must live in, by Java's convention).
std::string java_package_path(std::string_view klass, std::string_view file) {
  const std::size_t dot = klass.rfind('.');
  if (dot == std::string_view::npos) return {};
  std::string out(klass.substr(0, dot));
  std::replace(out.begin(), out.end(), '.', '/');
  out += '/';
  out += file;
  return out;
}

bool path_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' || c == '/';
}

constexpr std::string_view kFailureExtensions[] = {".py",  ".js",   ".mjs", ".cjs", ".ts",   ".tsx", ".jsx",
                                                   ".go",  ".rs",   ".c",   ".cc",  ".cpp",  ".cxx", ".h",
                                                   ".hpp", ".java", ".rb",  ".kt",  ".swift"};

bool has_failure_extension(std::string_view path) {
  return std::any_of(std::begin(kFailureExtensions), std::end(kFailureExtensions),
                     [path](std::string_view ext) { return path.ends_with(ext); });
}

}  // namespace

constexpr support::EnumName<LocationFormat> kLocationFormatNames[] = {
    {LocationFormat::compiler, "compiler"}, {LocationFormat::sanitizer, "sanitizer"},
    {LocationFormat::gdb, "gdb"},           {LocationFormat::valgrind, "valgrind"},
    {LocationFormat::python, "python"},     {LocationFormat::node, "node"},
    {LocationFormat::java, "java"},         {LocationFormat::go, "go"},
    {LocationFormat::rust, "rust"},         {LocationFormat::generic, "generic"}};
static_assert(support::names_every_value(kLocationFormatNames, LocationFormat::generic));
std::span<const support::EnumName<LocationFormat>> enum_names(LocationFormat) noexcept { return kLocationFormatNames; }

std::string_view location_format_name(LocationFormat format) noexcept { return support::enum_name(format, "generic"); }

std::vector<Location> locate_line(std::string_view line, std::string_view previous_line) {
  std::vector<Location> out;
  if (line.size() > kMaxLocatedLineBytes) return out;
  const Patterns& p = patterns();
  const re2::StringPiece text(line.data(), line.size());
  re2::StringPiece a, b, c, d, e;
  const auto add = [&](LocationFormat format, re2::StringPiece path, re2::StringPiece ln, re2::StringPiece col,
                       std::string function) {
    Location l;
    l.format = format;
    l.path = text_of(path);
    l.line = to_size(ln);
    l.column = col.empty() ? 0 : to_size(col);
    l.function = std::move(function);
    if (l.line > 0) out.push_back(std::move(l));
  };
  if (RE2::PartialMatch(text, p.python, &a, &b, &c)) {
    add(LocationFormat::python, a, b, {}, text_of(c));
  } else if (RE2::PartialMatch(text, p.java, &a, &b, &c, &d)) {
    add(LocationFormat::java, c, d, {}, text_of(a) + "." + text_of(b));
    if (!out.empty()) {
      out.back().package_path =
          java_package_path(std::string_view(a.data(), a.size()), std::string_view(c.data(), c.size()));
    }
  } else if (RE2::PartialMatch(text, p.node_named, &a, &b, &c, &d)) {
    if (!b.starts_with("node:") && b != "<anonymous>") add(LocationFormat::node, b, c, d, text_of(a));
  } else if (RE2::PartialMatch(text, p.node_bare, &a, &b, &c) && !a.ends_with(".rs")) {
    if (!a.starts_with("node:")) add(LocationFormat::node, a, b, c, {});
  } else if (RE2::PartialMatch(text, p.go, &a, &b)) {
    std::string function;
    const re2::StringPiece prev(previous_line.data(), previous_line.size());
    if (RE2::PartialMatch(prev, p.go_function, &c)) function = text_of(c);
    add(LocationFormat::go, a, b, {}, std::move(function));
  } else if (RE2::PartialMatch(text, p.rust_compiler, &a, &b, &c)) {
    add(LocationFormat::rust, a, b, c, {});
  } else if (RE2::PartialMatch(text, p.rust_panic, &a, &b, &c)) {
    add(LocationFormat::rust, a, b, c, {});
  } else if (RE2::PartialMatch(text, p.rust_backtrace, &a, &b, &c)) {
    add(LocationFormat::rust, a, b, c, {});
  } else if (RE2::PartialMatch(text, p.sanitizer, &a, &b, &c, &d, &e)) {
    add(LocationFormat::sanitizer, c, d, e, text_of(b));
    if (!out.empty()) out.back().depth = to_size(a);
  } else if (RE2::PartialMatch(text, p.gdb, &a, &b, &c, &d)) {
    add(LocationFormat::gdb, c, d, {}, text_of(b));
    if (!out.empty()) out.back().depth = to_size(a);
  } else if (RE2::PartialMatch(text, p.valgrind, &a, &b, &c)) {
    add(LocationFormat::valgrind, b, c, {}, text_of(a));
  } else if (RE2::PartialMatch(text, p.compiler, &a, &b, &c, &d)) {
    add(LocationFormat::compiler, a, b, c, {});
    // An error is where to look; its notes point at declarations and instantiations behind it.
    if (!out.empty()) out.back().depth = d == "note" ? 2 : d == "warning" ? 1 : 0;
  } else {
    re2::StringPiece rest = text;
    while (RE2::FindAndConsume(&rest, p.generic, &a, &b, &c)) {
      // Not a URL: "http://host/x.js:12" names a path of a server, not of this workspace. The match
      // holds the scheme's "://" (its last letter taken for a drive letter, "p://host/x.js") or starts
      // right after its colon; a file:// URL is a local path, the part after the "//".
      std::size_t at = static_cast<std::size_t>(a.data() - text.data());
      const std::string_view matched(a.data(), a.size());
      std::size_t separator = std::string_view::npos;  // where the "://" starts in `line`
      if (const std::size_t inside = matched.find("://"); inside != std::string_view::npos) {
        separator = at + inside;
      } else if (at >= 1 && line[at - 1] == ':' && matched.starts_with("//")) {
        separator = at - 1;
      }
      if (separator != std::string_view::npos) {
        std::size_t scheme = separator;
        while (scheme > 0 && std::isalpha(static_cast<unsigned char>(line[scheme - 1])) != 0) --scheme;
        if (line.substr(scheme, separator - scheme) != "file") continue;
        const std::size_t local = separator + 3;
        a = re2::StringPiece(text.data() + local, at + a.size() - local);
        at = local;
      }
      // Output, not prose: the location starts the line, is in parentheses, or is followed by ':' or ')'
      // ("config_test.go:8: ...", "f (fs/super.c:12)"). "see src/x.go:20 for" is a mention of a path.
      const std::size_t after = static_cast<std::size_t>(rest.data() - text.data());
      const bool line_start = line.substr(0, at).find_first_not_of(" \t") == std::string_view::npos;
      const bool opened = at > 0 && (line[at - 1] == '(' || line[at - 1] == '[');
      const bool closed = after < line.size() && (line[after] == ':' || line[after] == ')' || line[after] == ']');
      if (!line_start && !opened && !closed) continue;
      add(LocationFormat::generic, a, b, c, {});
    }
  }
  return out;
}

bool has_location(std::string_view line) {
  std::size_t pos = 0;
  while ((pos = line.find(':', pos)) != std::string_view::npos) {
    const std::size_t colon = pos++;
    if (colon + 1 >= line.size() || std::isdigit(static_cast<unsigned char>(line[colon + 1])) == 0) continue;
    // Before the colon: a name with an extension of 1-5 letters.
    std::size_t i = colon;
    std::size_t letters = 0;
    while (i > 0 && std::isalnum(static_cast<unsigned char>(line[i - 1])) != 0) {
      --i;
      ++letters;
    }
    if (letters == 0 || letters > 5 || i == 0 || line[i - 1] != '.') continue;
    if (i >= 2 && std::isalnum(static_cast<unsigned char>(line[i - 2])) == 0 && line[i - 2] != '_' &&
        line[i - 2] != '-') {
      continue;
    }
    return true;
  }
  return false;
}

std::vector<std::string> failure_paths(std::string_view output) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < output.size(); ++i) {
    if (output[i] != ':') continue;
    // `path:` followed by a digit (path:line) or a second colon (pytest's path::test).
    const bool line = i + 1 < output.size() && std::isdigit(static_cast<unsigned char>(output[i + 1])) != 0;
    const bool node = i + 1 < output.size() && output[i + 1] == ':';
    if (!line && !node) continue;
    std::size_t start = i;
    while (start > 0 && path_char(output[start - 1])) --start;
    std::string path(output.substr(start, i - start));
    // file:///abs/path:1:2 in node stacks: the scheme is not part of the path.
    if (path.starts_with("//")) path.erase(0, 2);
    if (path.empty() || !has_failure_extension(path)) continue;
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(std::move(path));
  }
  return out;
}

}  // namespace agentd::tools::verify
// NOLINTEND(bugprone-branch-clone)
