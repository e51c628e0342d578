#include "core/context/stack_parser.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include <re2/re2.h>

// The pattern ladders below map each kind of line to what it yields; rungs that yield the same thing
// are kept apart, one per format, so branch-clone findings are expected here.
// NOLINTBEGIN(bugprone-branch-clone)
namespace agentd::core::context {
namespace {

// A line past this is not a stack frame (and RE2 need not look at a minified blob someone pasted).
constexpr std::size_t kMaxFrameLineBytes = 4096;
// Non-frame lines tolerated inside one trace (Python's source line, a Go goroutine's function line).
constexpr std::size_t kMaxGapLines = 2;

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

std::size_t to_size(const re2::StringPiece& digits) {
  std::size_t value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return value;
}

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

struct LineFrame {
  StackFrame frame;
  std::optional<std::size_t> explicit_depth;  // sanitizer and gdb number their frames
};

// The frames one input line holds (usually zero or one; a generic line may hold several).
std::vector<LineFrame> parse_line(std::string_view line, std::string_view previous_line) {
  const Patterns& p = patterns();
  const re2::StringPiece text(line.data(), line.size());
  re2::StringPiece a, b, c, d, e;
  std::vector<LineFrame> out;
  const auto add = [&](StackFormat format, re2::StringPiece path, re2::StringPiece ln, re2::StringPiece col,
                       std::string function) {
    LineFrame f;
    f.frame.format = format;
    f.frame.path = std::string(path.data(), path.size());
    f.frame.line = to_size(ln);
    f.frame.column = col.empty() ? 0 : to_size(col);
    f.frame.function = std::move(function);
    if (f.frame.line > 0) out.push_back(std::move(f));
  };
  if (RE2::PartialMatch(text, p.python, &a, &b, &c)) {
    add(StackFormat::python, a, b, {}, std::string(c.data(), c.size()));
  } else if (RE2::PartialMatch(text, p.java, &a, &b, &c, &d)) {
    add(StackFormat::java, c, d, {}, std::string(a.data(), a.size()) + "." + std::string(b.data(), b.size()));
    if (!out.empty()) {
      out.back().frame.package_path =
          java_package_path(std::string_view(a.data(), a.size()), std::string_view(c.data(), c.size()));
    }
  } else if (RE2::PartialMatch(text, p.node_named, &a, &b, &c, &d)) {
    if (!b.starts_with("node:") && b != "<anonymous>") {
      add(StackFormat::node, b, c, d, std::string(a.data(), a.size()));
    }
  } else if (RE2::PartialMatch(text, p.node_bare, &a, &b, &c) && !a.ends_with(".rs")) {
    if (!a.starts_with("node:")) add(StackFormat::node, a, b, c, {});
  } else if (RE2::PartialMatch(text, p.go, &a, &b)) {
    std::string function;
    const re2::StringPiece prev(previous_line.data(), previous_line.size());
    if (RE2::PartialMatch(prev, p.go_function, &c)) function.assign(c.data(), c.size());
    add(StackFormat::go, a, b, {}, std::move(function));
  } else if (RE2::PartialMatch(text, p.rust_compiler, &a, &b, &c)) {
    add(StackFormat::rust, a, b, c, {});
  } else if (RE2::PartialMatch(text, p.rust_panic, &a, &b, &c)) {
    add(StackFormat::rust, a, b, c, {});
  } else if (RE2::PartialMatch(text, p.rust_backtrace, &a, &b, &c)) {
    add(StackFormat::rust, a, b, c, {});
  } else if (RE2::PartialMatch(text, p.sanitizer, &a, &b, &c, &d, &e)) {
    add(StackFormat::sanitizer, c, d, e, std::string(b.data(), b.size()));
    if (!out.empty()) out.back().explicit_depth = to_size(a);
  } else if (RE2::PartialMatch(text, p.gdb, &a, &b, &c, &d)) {
    add(StackFormat::gdb, c, d, {}, std::string(b.data(), b.size()));
    if (!out.empty()) out.back().explicit_depth = to_size(a);
  } else if (RE2::PartialMatch(text, p.valgrind, &a, &b, &c)) {
    add(StackFormat::valgrind, b, c, {}, std::string(a.data(), a.size()));
  } else if (RE2::PartialMatch(text, p.compiler, &a, &b, &c, &d)) {
    add(StackFormat::compiler, a, b, c, {});
    // An error is where to look; its notes point at declarations and instantiations behind it.
    if (!out.empty()) out.back().explicit_depth = d == "note" ? 2 : d == "warning" ? 1 : 0;
  } else {
    re2::StringPiece rest = text;
    while (RE2::FindAndConsume(&rest, p.generic, &a, &b, &c)) {
      // Not a URL ("http://host/x.js:12" is a path of a server, not of this workspace).
      const std::size_t at = static_cast<std::size_t>(a.data() - text.data());
      if (at >= 3 && line.substr(at - 3, 3) == "://") continue;
      // Output, not prose: the location starts the line, is in parentheses, or is followed by ':' or ')'
      // ("config_test.go:8: ...", "f (fs/super.c:12)"). "see src/x.go:20 for" is a mention of a path.
      const std::size_t after = static_cast<std::size_t>(rest.data() - text.data());
      const bool line_start = line.substr(0, at).find_first_not_of(" \t") == std::string_view::npos;
      const bool opened = at > 0 && (line[at - 1] == '(' || line[at - 1] == '[');
      const bool closed = after < line.size() && (line[after] == ':' || line[after] == ')' || line[after] == ']');
      if (!line_start && !opened && !closed) continue;
      add(StackFormat::generic, a, b, c, {});
    }
  }
  return out;
}

}  // namespace

std::string_view stack_format_name(StackFormat format) noexcept {
  switch (format) {
    case StackFormat::compiler: return "compiler";
    case StackFormat::sanitizer: return "sanitizer";
    case StackFormat::gdb: return "gdb";
    case StackFormat::valgrind: return "valgrind";
    case StackFormat::python: return "python";
    case StackFormat::node: return "node";
    case StackFormat::java: return "java";
    case StackFormat::go: return "go";
    case StackFormat::rust: return "rust";
    case StackFormat::generic: return "generic";
  }
  return "generic";
}

std::vector<StackFrame> parse_stack_frames(std::string_view input) {
  std::vector<StackFrame> frames;
  // The frames of the trace being read, and whether they carry their own depth.
  std::vector<LineFrame> current;
  std::size_t trace = 0;
  std::size_t gap = 0;
  const auto close_trace = [&] {
    if (current.empty()) return;
    const bool reversed = current.front().frame.format == StackFormat::python;
    for (std::size_t i = 0; i < current.size(); ++i) {
      LineFrame& f = current[i];
      f.frame.trace = trace;
      if (f.explicit_depth) {
        f.frame.depth = *f.explicit_depth;
      } else {
        f.frame.depth = reversed ? current.size() - 1 - i : i;
      }
      frames.push_back(std::move(f.frame));
    }
    current.clear();
    ++trace;
  };

  std::size_t line_number = 0;
  std::string_view previous;
  for (std::size_t start = 0; start < input.size();) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::string_view line = input.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

    std::vector<LineFrame> found;
    if (line.size() <= kMaxFrameLineBytes) found = parse_line(line, previous);
    previous = line;
    if (found.empty()) {
      if (!current.empty() && ++gap > kMaxGapLines) close_trace();
      continue;
    }
    gap = 0;
    for (auto& f : found) {
      f.frame.input_line = line_number;
      // A compiler diagnostic stands alone: each is its own error. Other formats form one trace per run
      // of lines of the same format; a sanitizer's "#0" starts a new one.
      const bool starts_new =
          !current.empty() &&
          (current.back().frame.format != f.frame.format || f.frame.format == StackFormat::compiler ||
           (f.explicit_depth && *f.explicit_depth == 0 && f.frame.format != StackFormat::compiler));
      if (starts_new) close_trace();
      current.push_back(std::move(f));
    }
  }
  close_trace();
  return frames;
}

}  // namespace agentd::core::context
// NOLINTEND(bugprone-branch-clone)
