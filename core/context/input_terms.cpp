// One file for the prompt's terms: the scanners (paths, globs, tests, identifiers, quoted strings) share
// one cursor and one set of stop rules, so a word is claimed by exactly one of them.
#include "core/context/input_terms.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <set>

#include <re2/re2.h>

#include "core/context/word_keys.h"
#include "core/support/text.h"

// The pattern ladders below map each kind of line to what it yields; rungs that yield the same thing
// are kept apart, one per format, so branch-clone findings are expected here.
// NOLINTBEGIN(bugprone-branch-clone)
namespace agentd::core::context {
namespace {

constexpr std::size_t kMaxLineBytes = 4096;
constexpr std::size_t kMinQuoted = 4;
constexpr std::size_t kMaxQuoted = 160;
constexpr std::size_t kMaxIdentifier = 100;

// Extensions a bare file name (no '/') must have to count as a mention: "foo.py" is a file, "e.g." is not.
constexpr std::array<std::string_view, 78> kFileExtensions = {
    "c",     "cc",   "cpp",   "cxx",    "h",      "hh",    "hpp", "hxx",  "inl",   "ipp",  "m",          "mm",
    "py",    "pyi",  "pyx",   "js",     "jsx",    "mjs",   "cjs", "ts",   "tsx",   "mts",  "go",         "rs",
    "java",  "kt",   "kts",   "scala",  "groovy", "rb",    "php", "cs",   "swift", "lua",  "sh",         "bash",
    "zsh",   "pl",   "pm",    "ex",     "exs",    "erl",   "hs",  "ml",   "zig",   "dart", "vue",        "svelte",
    "cmake", "yaml", "yml",   "toml",   "json",   "jsonc", "ini", "cfg",  "conf",  "xml",  "html",       "css",
    "scss",  "sql",  "proto", "gradle", "md",     "rst",   "txt", "lock", "mod",   "sum",  "properties", "tf",
    "hcl",   "mk",   "bzl",   "nix",    "S",      "cu"};
constexpr std::array<std::string_view, 14> kBareFileNames = {
    "Makefile", "makefile", "GNUmakefile", "Dockerfile", "Containerfile", "Jenkinsfile", "Gemfile",
    "Rakefile", "Procfile", "Vagrantfile", "BUILD",      "WORKSPACE",     "Justfile",    "Kconfig"};

// Words that look like identifiers but name nothing in particular, and keywords.
const std::set<std::string, std::less<>>& stop_identifiers() {
  static const std::set<std::string, std::less<>> kWords = {"if",
                                                            "else",
                                                            "for",
                                                            "while",
                                                            "return",
                                                            "true",
                                                            "false",
                                                            "null",
                                                            "nullptr",
                                                            "None",
                                                            "self",
                                                            "this",
                                                            "void",
                                                            "int",
                                                            "char",
                                                            "bool",
                                                            "const",
                                                            "static",
                                                            "class",
                                                            "struct",
                                                            "def",
                                                            "func",
                                                            "fn",
                                                            "let",
                                                            "var",
                                                            "new",
                                                            "main",
                                                            "print",
                                                            "printf",
                                                            "println",
                                                            "console.log",
                                                            "log",
                                                            "TODO",
                                                            "FIXME",
                                                            "README",
                                                            "JSON",
                                                            "HTTP",
                                                            "HTTPS",
                                                            "URL",
                                                            "API",
                                                            "CLI",
                                                            "UTF",
                                                            "ASCII",
                                                            "macOS",
                                                            "iOS",
                                                            "GitHub",
                                                            "GitLab",
                                                            "JavaScript",
                                                            "TypeScript",
                                                            "PostgreSQL",
                                                            "MySQL",
                                                            "SQLite",
                                                            "YouTube",
                                                            "LinkedIn",
                                                            "OAuth",
                                                            "CMake",
                                                            "NodeJS",
                                                            "Error",
                                                            "Exception",
                                                            "ValueError",
                                                            "TypeError",
                                                            "KeyError",
                                                            "IndexError",
                                                            "AttributeError",
                                                            "RuntimeError",
                                                            "AssertionError",
                                                            "NameError",
                                                            "ImportError",
                                                            "ModuleNotFoundError",
                                                            "OSError",
                                                            "IOError",
                                                            "FileNotFoundError",
                                                            "ZeroDivisionError",
                                                            "StopIteration",
                                                            "NotImplementedError",
                                                            "PermissionError",
                                                            "NullPointerException",
                                                            "IllegalArgumentException",
                                                            "IllegalStateException",
                                                            "RuntimeException",
                                                            "IOException",
                                                            "ClassCastException",
                                                            "ArrayIndexOutOfBoundsException",
                                                            "IndexOutOfBoundsException",
                                                            "NumberFormatException",
                                                            "UnsupportedOperationException",
                                                            "ConcurrentModificationException",
                                                            "ReferenceError",
                                                            "SyntaxError",
                                                            "RangeError",
                                                            "UnhandledPromiseRejection",
                                                            "AddressSanitizer",
                                                            "UndefinedBehaviorSanitizer",
                                                            "ThreadSanitizer",
                                                            "LeakSanitizer",
                                                            "SIGSEGV",
                                                            "SIGABRT",
                                                            "SIGBUS",
                                                            "SIGILL",
                                                            "SIGFPE",
                                                            "SEGV",
                                                            "ERROR",
                                                            "WARNING",
                                                            "FAILED",
                                                            "PASSED",
                                                            "Traceback",
                                                            "stack_trace",
                                                            "e.g",
                                                            "i.e",
                                                            "etc"};
  return kWords;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$'; }

bool known_extension(std::string_view ext) {
  return std::find(kFileExtensions.begin(), kFileExtensions.end(), ext) != kFileExtensions.end();
}

// "src/x.cpp", "x.py", "Makefile", "docs/guide" (a path with a '/' needs no extension if it is not prose).
bool is_path_like(std::string_view token) {
  if (token.empty() || token.size() > 1024 || token.find("://") != std::string_view::npos) return false;
  if (token.front() == '-' || token.find_first_of("*?[]{}<>|\"'`=,;") != std::string_view::npos) return false;
  // Every character must be one a path plausibly holds.
  for (const char c : token) {
    if (!is_word_char(c) && c != '/' && c != '.' && c != '-' && c != '+' && c != '@' && c != '~' && c != '\\') {
      return false;
    }
  }
  const std::size_t slash = token.find_last_of('/');
  const std::string_view base = slash == std::string_view::npos ? token : token.substr(slash + 1);
  if (base.empty()) return false;
  if (std::find(kBareFileNames.begin(), kBareFileNames.end(), base) != kBareFileNames.end()) return true;
  const std::size_t dot = base.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == base.size()) return false;
  const std::string_view ext = base.substr(dot + 1);
  if (slash == std::string_view::npos) return dot > 0 && known_extension(ext);
  // With a directory, any short alphanumeric extension, as long as it starts with a letter ("v1.2" is not one).
  if (ext.size() > 10 || std::isalpha(static_cast<unsigned char>(ext.front())) == 0) return false;
  return std::all_of(ext.begin(), ext.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

// A glob someone wrote: wildcards plus something that makes it about files ("*.yaml", "src/**/*.ts").
bool is_glob_like(std::string_view token) {
  if (token.size() < 2 || token.size() > 256 || token.find("://") != std::string_view::npos) return false;
  if (token.find('*') == std::string_view::npos && token.find('[') == std::string_view::npos) return false;
  if (token.find('.') == std::string_view::npos && token.find('/') == std::string_view::npos) return false;
  for (const char c : token) {
    if (!is_word_char(c) && std::string_view("/.-*?[]!{},+@").find(c) == std::string_view::npos) return false;
  }
  return true;
}

std::size_t parse_number(std::string_view digits) {
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc{} || end != digits.data() + digits.size()) return 0;
  return value;
}

// "src/x.cpp:12", "src/x.cpp:12-30", "src/x.cpp:12:5", "src/x.cpp#L12" -> the path and its lines.
PathMention split_line_suffix(std::string_view token) {
  PathMention m;
  if (const std::size_t hash = token.find("#L"); hash != std::string_view::npos) {
    m.line = parse_number(token.substr(hash + 2));
    token = token.substr(0, hash);
  }
  const std::size_t colon = token.find(':');
  if (colon != std::string_view::npos && colon > 0) {
    std::string_view rest = token.substr(colon + 1);
    token = token.substr(0, colon);
    const std::size_t dash = rest.find('-');
    const std::size_t next = rest.find(':');
    if (dash != std::string_view::npos) {
      m.line = parse_number(rest.substr(0, dash));
      m.end_line = parse_number(rest.substr(dash + 1));
    } else {
      m.line = parse_number(rest.substr(0, next));
    }
    if (m.end_line < m.line) m.end_line = 0;
  }
  m.path = std::string(token);
  return m;
}

// Identifier-like: snake_case, camelCase, PascalCase with two humps, SCREAMING_CASE, digits with letters.
bool is_specific_identifier(std::string_view word) {
  if (word.size() < 3) return false;
  const auto inner_underscore = word.find('_', 1);
  if (inner_underscore != std::string_view::npos && inner_underscore + 1 < word.size()) {
    // Something on both sides of it that is a letter.
    return std::any_of(word.begin(), word.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  }
  std::size_t humps = 0;
  bool seen_lower = false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    const auto c = static_cast<unsigned char>(word[i]);
    if (std::islower(c) != 0) seen_lower = true;
    if (std::isupper(c) != 0 && i > 0 && std::islower(static_cast<unsigned char>(word[i - 1])) != 0) ++humps;
  }
  if (humps >= 1 && seen_lower && std::islower(static_cast<unsigned char>(word[0])) != 0) return true;  // camelCase
  if (humps >= 1 && std::isupper(static_cast<unsigned char>(word[0])) != 0) return true;                // PascalCase
  return false;
}

struct Collected {
  struct Ident {
    std::string text;
    int priority;  // 0 backticked, 1 called, 2 shaped like an identifier
    std::size_t order;
  };
  std::vector<Ident> identifiers;
  std::size_t order = 0;
  // Names the report's own code defines (`def cli():` in a reproducer): the reporter's, not the project's.
  std::set<std::string, std::less<>> defined_by_report;

  void identifier(std::string_view text, int priority) {
    if (text.size() < 2 || text.size() > kMaxIdentifier) return;
    if (stop_identifiers().count(text) != 0) return;
    for (auto& existing : identifiers) {
      if (existing.text == text) {
        existing.priority = std::min(existing.priority, priority);
        return;
      }
    }
    identifiers.push_back({std::string(text), priority, order++});
  }
};

bool is_space(char c) { return c == ' ' || c == '\t'; }

// The fixed parts of a message as a reporter pasted it: the runs of words between its variable parts
// (quoted names, numbers, paths), each of at least two words and eight letters. `[bat error]: '/bin' is a
// directory.` -> "bat error", "is a directory": what the program's source holds around its format
// arguments, so a literal search finds where the message is made.
std::vector<std::string_view> message_fragments(std::string_view message) {
  std::vector<std::string_view> out;
  const auto flush = [&](std::size_t from, std::size_t to) {
    std::string_view piece = message.substr(from, to - from);
    const std::string_view edge = " \t.,:;!?[](){}<>=-";
    while (!piece.empty() && edge.find(piece.front()) != std::string_view::npos) piece.remove_prefix(1);
    while (!piece.empty() && edge.find(piece.back()) != std::string_view::npos) piece.remove_suffix(1);
    std::size_t letters = 0;
    for (const char c : piece) letters += std::isalpha(static_cast<unsigned char>(c)) != 0 ? 1 : 0;
    if (letters >= 8 && piece.find(' ') != std::string_view::npos) out.push_back(piece);
  };
  std::size_t start = 0;
  for (std::size_t i = 0; i < message.size();) {
    const char c = message[i];
    // A quoted part: to its closing quote.
    if ((c == '\'' || c == '"' || c == '`') && (i == 0 || !is_word_char(message[i - 1]))) {
      const std::size_t close = message.find(c, i + 1);
      if (close != std::string_view::npos) {
        flush(start, i);
        i = start = close + 1;
        continue;
      }
    }
    // A word holding a digit, a path separator or a '~' is a value: a number, a path, an address.
    if (!is_space(c)) {
      std::size_t end = i;
      bool value = c == '-';  // a flag: `-e`, `--color`
      while (end < message.size() && !is_space(message[end])) {
        const char e = message[end];
        value = value || std::isdigit(static_cast<unsigned char>(e)) != 0 || e == '/' || e == '\\' || e == '~' ||
                e == '<' || e == '@' || e == '=';
        ++end;
      }
      if (value) {
        flush(start, i);
        start = end;
      }
      i = end;
      continue;
    }
    ++i;
  }
  flush(start, message.size());
  return out;
}

// Text with nothing in it that varies between runs: no quote, digit, path separator or flag.
bool is_fixed_text(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\'' || c == '"' || c == '/' || c == '\\' || std::isdigit(static_cast<unsigned char>(c)) != 0) {
      return false;
    }
    if (c == '-' && (i == 0 || is_space(text[i - 1]))) return false;
  }
  return true;
}

// The message of an error line, or empty: what follows the first `<word>error:`, `<word>Exception:`,
// `fatal:`, `panic:` (a bracketed or parenthesised part may stand between the word and the colon:
// `error[E0308]:`, `jq: error (at <stdin>:0):`).
std::string_view error_message(std::string_view line) {
  for (std::size_t colon = line.find(':'); colon != std::string_view::npos; colon = line.find(':', colon + 1)) {
    if (colon + 1 < line.size() && !is_space(line[colon + 1])) continue;
    std::string_view before = line.substr(0, colon);
    while (!before.empty() && is_space(before.back())) before.remove_suffix(1);
    if (!before.empty() && (before.back() == ')' || before.back() == ']')) {
      const std::size_t open = before.find_last_of(before.back() == ')' ? '(' : '[');
      if (open == std::string_view::npos) continue;
      before = before.substr(0, open);
      while (!before.empty() && is_space(before.back())) before.remove_suffix(1);
    }
    std::size_t word_start = before.size();
    while (word_start > 0 && std::isalpha(static_cast<unsigned char>(before[word_start - 1])) != 0) --word_start;
    std::string word(before.substr(word_start));
    support::ascii_lower_in_place(word);
    if (word.ends_with("error") || word.ends_with("exception") || word == "fatal" || word == "panic") {
      std::string_view message = line.substr(colon + 1);
      while (!message.empty() && is_space(message.front())) message.remove_prefix(1);
      return message;
    }
  }
  return {};
}

// Whether `before` (a line up to a name) ends in a definition keyword that starts its statement, as in a
// reproducer's `def cli():`, `fn main() {`, `class Foo:`, `function handler(req) {`.
bool defines_next(std::string_view before) {
  while (!before.empty() && (before.back() == ' ' || before.back() == '\t')) before.remove_suffix(1);
  const std::size_t space = before.find_last_of(" \t");
  const std::string_view keyword = space == std::string_view::npos ? before : before.substr(space + 1);
  std::string_view lead = space == std::string_view::npos ? std::string_view() : before.substr(0, space);
  while (!lead.empty() && (lead.back() == ' ' || lead.back() == '\t')) lead.remove_suffix(1);
  // Only modifiers may come before the keyword: `pub fn`, `async def`, `export function`.
  for (std::size_t at = 0; at < lead.size();) {
    const std::size_t end = std::min(lead.find_first_of(" \t", at), lead.size());
    const std::string_view word = lead.substr(at, end - at);
    if (!word.empty() && word != "pub" && word != "async" && word != "export" && word != "static" && word != "public" &&
        word != "private" && word != "default") {
      return false;
    }
    at = end + 1;
  }
  return keyword == "def" || keyword == "fn" || keyword == "func" || keyword == "function" || keyword == "class";
}

// Identifiers in a span of text: each component of a qualified name (a.b.C, Foo::bar, p->q).
void scan_identifiers(std::string_view text, Collected& out, int forced_priority) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (!(std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$') ||
        (i > 0 && (is_word_char(text[i - 1]) || text[i - 1] == '.' || text[i - 1] == '/'))) {
      ++i;
      continue;
    }
    // A whole token first: a path or a glob is not identifiers.
    std::size_t token_end = i;
    while (token_end < text.size() && (is_word_char(text[token_end]) ||
                                       std::string_view("./:->").find(text[token_end]) != std::string_view::npos)) {
      ++token_end;
    }
    std::string_view token = text.substr(i, token_end - i);
    while (!token.empty() &&
           (token.back() == '.' || token.back() == ':' || token.back() == '-' || token.back() == '>')) {
      token.remove_suffix(1);
    }
    if (is_path_like(token) && token.find('/') != std::string_view::npos) {
      i = token_end;
      continue;
    }
    if (is_path_like(token)) {  // "parser.py": a file, not parser and py
      i = token_end;
      continue;
    }
    const bool called = token_end < text.size() && text[token_end] == '(';
    if (defines_next(text.substr(0, i))) {
      out.defined_by_report.emplace(token.substr(0, token.find_first_of(".:-")));
      i = token_end;
      continue;
    }
    // Components.
    std::size_t p = 0;
    while (p < token.size()) {
      std::size_t q = p;
      while (q < token.size() && is_word_char(token[q])) ++q;
      const std::string_view word = token.substr(p, q - p);
      const bool last = q >= token.size();
      if (!word.empty() && std::isdigit(static_cast<unsigned char>(word[0])) == 0) {
        if (forced_priority >= 0) {
          out.identifier(word, forced_priority);
        } else if (called && last && word.size() >= 3) {
          out.identifier(word, 1);
        } else if (is_specific_identifier(word)) {
          out.identifier(word, 2);
        }
      }
      p = q;
      while (p < token.size() && !is_word_char(token[p])) ++p;
    }
    i = token_end;
  }
}

struct TestPatterns {
  RE2 pytest{R"re(([\w./-]+\.py)::([\w.:\[\]/-]+))re"};
  RE2 gtest{R"re(\[\s*(?:FAILED|RUN|OK)\s*\]\s+([A-Za-z_]\w*)(?:/\w+)?\.([A-Za-z_]\w*)(?:/\w+)?)re"};
  RE2 go{R"re((?:--- FAIL|=== RUN|--- PASS|--- SKIP):\s+((?:Test|Benchmark|Example|Fuzz)\w*))re"};
  RE2 cargo{R"re(^test ([\w:]+) \.\.\. (?:FAILED|ok|ignored))re"};
  RE2 cargo_stdout{R"re(^---- ([\w:]+) stdout ----)re"};
  RE2 junit4{R"re(\b(\w+)\(((?:[a-z]\w*\.)+[A-Z]\w*)\))re"};
  RE2 gradle{R"re(\b([A-Z]\w*) > (\w+)\(\)(?: FAILED)?)re"};
  RE2 maven{R"re(\b([A-Z]\w*Test\w*)\.(\w+):\d+)re"};
  RE2 jest{"\xE2\x97\x8F\\s+(.+?)\\s+\xE2\x80\xBA\\s+(.+?)\\s*$"};  // ● Suite › name
};

const TestPatterns& test_patterns() {
  static const TestPatterns kPatterns;
  return kPatterns;
}

void add_test(std::vector<TestName>& tests, TestName t) {
  for (const auto& existing : tests) {
    if (existing.name == t.name && existing.suite == t.suite) return;
  }
  tests.push_back(std::move(t));
}

void scan_tests(std::string_view line, std::vector<TestName>& tests) {
  const TestPatterns& p = test_patterns();
  re2::StringPiece text(line.data(), line.size());
  re2::StringPiece a, b;
  const auto str = [](re2::StringPiece s) { return std::string(s.data(), s.size()); };
  re2::StringPiece rest = text;
  while (RE2::FindAndConsume(&rest, p.pytest, &a, &b)) {
    std::string id = str(b);
    if (const auto bracket = id.find('['); bracket != std::string::npos) id.resize(bracket);
    std::string suite;
    std::string name = id;
    if (const auto sep = id.rfind("::"); sep != std::string::npos) {
      name = id.substr(sep + 2);
      suite = id.substr(0, sep);
    }
    if (!name.empty()) add_test(tests, {name, suite, str(a), "pytest"});
  }
  if (RE2::PartialMatch(text, p.gtest, &a, &b)) add_test(tests, {str(b), str(a), {}, "gtest"});
  if (RE2::PartialMatch(text, p.go, &a)) add_test(tests, {str(a), {}, {}, "go test"});
  if (RE2::PartialMatch(text, p.cargo, &a) || RE2::PartialMatch(text, p.cargo_stdout, &a)) {
    const std::string full = str(a);
    const auto sep = full.rfind("::");
    add_test(tests, {sep == std::string::npos ? full : full.substr(sep + 2),
                     sep == std::string::npos ? std::string() : full.substr(0, sep),
                     {},
                     "cargo test"});
  }
  if (RE2::PartialMatch(text, p.gradle, &a, &b)) {
    add_test(tests, {str(b), str(a), {}, "junit"});
  } else if (RE2::PartialMatch(text, p.maven, &a, &b)) {
    add_test(tests, {str(b), str(a), {}, "junit"});
  } else if (RE2::PartialMatch(text, p.junit4, &a, &b) && std::string_view(a.data(), a.size()).starts_with("test")) {
    std::string klass = str(b);
    add_test(tests, {str(a), klass.substr(klass.rfind('.') + 1), {}, "junit"});
  }
  if (RE2::PartialMatch(text, p.jest, &a, &b)) {
    std::string name = str(b);
    if (const auto last = name.rfind("\xE2\x80\xBA"); last != std::string::npos) {
      name = name.substr(last + 3);
      while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    }
    add_test(tests, {name, str(a), {}, "jest"});
  }
}

}  // namespace

namespace {

// Words too common in English or in bug reports to say where a fault is.
const std::set<std::string, std::less<>>& stop_words() {
  static const std::set<std::string, std::less<>> kWords = {
      "about",     "above",    "actual",   "actually",  "after",   "again",     "against",   "also",      "always",
      "another",   "anything", "appears",  "apply",     "around",  "because",   "been",      "before",    "behavior",
      "behaviour", "being",    "below",    "between",   "both",    "could",     "currently", "does",      "doesn",
      "doing",     "done",     "down",     "during",    "each",    "either",    "else",      "even",      "every",
      "example",   "expect",   "expected", "expecting", "fine",    "following", "from",      "further",   "given",
      "have",      "having",   "here",     "however",   "instead", "into",      "issue",     "itself",    "just",
      "like",      "look",     "looks",    "make",      "makes",   "many",      "maybe",     "might",     "more",
      "most",      "much",     "must",     "need",      "needs",   "never",     "only",      "other",     "otherwise",
      "output",    "over",     "please",   "possible",  "problem", "rather",    "really",    "reproduce", "result",
      "results",   "same",     "seem",     "seems",     "should",  "shouldn",   "since",     "some",      "something",
      "still",     "such",     "sure",     "than",      "that",    "their",     "them",      "then",      "there",
      "these",     "they",     "thing",    "think",     "this",    "those",     "though",    "through",   "under",
      "until",     "upon",     "used",     "using",     "very",    "want",      "wants",     "wasn",      "well",
      "were",      "what",     "when",     "where",     "whether", "which",     "while",     "will",      "with",
      "within",    "without",  "work",     "worked",    "working", "works",     "would",     "wouldn",    "your",
      "bug",       "steps",    "version",  "versions",  "correct", "correctly", "wrong",     "right",     "instead",
      "thanks",    "hello",    "case",     "cases",     "code",    "line",      "lines",     "file",      "files",
      "true",      "false",    "null",     "none",      "return",  "returns",   "const",     "self",      "import",
      "function",  "class",    "string",   "value",     "values"};
  return kWords;
}

}  // namespace

std::vector<std::string> report_words(std::string_view input, std::size_t max_words) {
  std::vector<std::string> words;
  std::set<std::string, std::less<>> seen;
  std::size_t i = 0;
  while (i < input.size() && words.size() < max_words) {
    const auto c = static_cast<unsigned char>(input[i]);
    if (std::isalnum(c) == 0 && c != '_') {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < input.size() && (std::isalnum(static_cast<unsigned char>(input[end])) != 0 || input[end] == '_'))
      ++end;
    for (auto& w : identifier_words(input.substr(i, end - i))) {
      if (w.size() < 4 || w.size() > 40 || words.size() >= max_words) continue;
      if (std::any_of(w.begin(), w.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; }))
        continue;  // versions, ports, addresses, counts
      if (stop_words().count(w) != 0 || !seen.insert(w).second) continue;
      words.push_back(std::move(w));
    }
    i = end;
  }
  return words;
}

std::vector<std::string> identifier_words(std::string_view identifier) {
  std::vector<std::string> words;
  std::string current;
  const auto flush = [&] {
    if (!current.empty()) words.push_back(std::move(current));
    current.clear();
  };
  for (std::size_t i = 0; i < identifier.size(); ++i) {
    const auto c = static_cast<unsigned char>(identifier[i]);
    if (std::isalnum(c) == 0) {
      flush();
      continue;
    }
    if (std::isupper(c) != 0 && !current.empty()) {
      const bool prev_lower = std::islower(static_cast<unsigned char>(identifier[i - 1])) != 0 ||
                              std::isdigit(static_cast<unsigned char>(identifier[i - 1])) != 0;
      const bool next_lower =
          i + 1 < identifier.size() && std::islower(static_cast<unsigned char>(identifier[i + 1])) != 0;
      // parseHTTPHeader: a hump before H (after e), and before the last capital of a run (HTTP|Header).
      if (prev_lower || (next_lower && std::isupper(static_cast<unsigned char>(identifier[i - 1])) != 0)) flush();
    }
    current += support::ascii_lower(static_cast<char>(c));
  }
  flush();
  return words;
}

InputTerms extract_terms(std::string_view input, const std::vector<std::size_t>& skip_lines, const TermLimits& limits) {
  InputTerms terms;
  Collected collected;
  std::set<std::string, std::less<>> seen_paths;
  std::set<std::string, std::less<>> seen_quoted;

  const auto add_path = [&](std::string_view token) {
    PathMention m = split_line_suffix(token);
    while (m.path.size() > 2 && m.path.starts_with("./")) m.path.erase(0, 2);
    if (!is_path_like(m.path)) return false;
    const std::string key = m.path + ":" + std::to_string(m.line);
    if (seen_paths.insert(key).second && terms.paths.size() < limits.max_paths) terms.paths.push_back(std::move(m));
    return true;
  };
  const auto add_quoted = [&](std::string_view text) {
    if (text.size() >= kMinQuoted && text.size() <= kMaxQuoted && text.front() != ' ' && text.back() != ' ' &&
        terms.quoted.size() < limits.max_quoted && seen_quoted.insert(std::string(text)).second) {
      terms.quoted.emplace_back(text);
    }
  };
  const auto add_fragments = [&](std::string_view message) {
    for (const std::string_view f : message_fragments(message)) add_quoted(f);
  };
  const auto add_glob = [&](std::string_view token) {
    if (std::find(terms.globs.begin(), terms.globs.end(), token) == terms.globs.end() &&
        terms.globs.size() < limits.max_globs) {
      terms.globs.emplace_back(token);
    }
  };

  std::size_t line_number = 0;
  for (std::size_t start = 0; start < input.size();) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::string_view line = input.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line.size() > kMaxLineBytes) continue;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    scan_tests(line, terms.tests);
    if (std::binary_search(skip_lines.begin(), skip_lines.end(), line_number)) continue;

    // Backticked spans: explicit mentions.
    std::string rest_of_line;  // the line with backticked and quoted spans blanked out
    rest_of_line.reserve(line.size());
    for (std::size_t i = 0; i < line.size();) {
      const char c = line[i];
      if (c == '`') {
        const std::size_t close = line.find('`', i + 1);
        if (close == std::string_view::npos) {
          rest_of_line += ' ';
          ++i;
          continue;
        }
        const std::string_view span = line.substr(i + 1, close - i - 1);
        if (is_glob_like(span)) {
          add_glob(span);
        } else if (span.find(' ') == std::string_view::npos) {
          if (!add_path(span)) scan_identifiers(span, collected, 0);
        } else {
          // Code or a message with spaces: its identifiers count as the prose's do (`is` and `a` in
          // `'x' is a directory` are no names), and a message's fixed parts are searched as written; so is
          // a span with no variable part at all (no quotes, digits or flags): what a program prints as is
          // (`<skipped: too deep>`) is in its source as is.
          scan_identifiers(span, collected, -1);
          add_fragments(span);
          if (is_fixed_text(span)) add_quoted(span);
        }
        rest_of_line.append(close + 1 - i, ' ');
        i = close + 1;
        continue;
      }
      if (c == '"' || c == '\'') {
        // A quote opens only at a boundary (not the apostrophe of "don't").
        const bool opens = i == 0 || std::string_view(" \t([{=:,").find(line[i - 1]) != std::string_view::npos;
        const std::size_t close = opens ? line.find(c, i + 1) : std::string_view::npos;
        const bool closes = close != std::string_view::npos &&
                            (close + 1 == line.size() ||
                             std::string_view(" \t)]},.:;!?").find(line[close + 1]) != std::string_view::npos);
        if (opens && closes) {
          const std::string_view span = line.substr(i + 1, close - i - 1);
          if (is_glob_like(span)) {
            add_glob(span);
          } else if (!add_path(span)) {
            const bool spaced = span.find(' ') != std::string_view::npos;
            if (!spaced) {
              scan_identifiers(span, collected, span.size() >= 3 ? 1 : -1);
            } else {
              add_quoted(span);
            }
          }
          rest_of_line.append(close + 1 - i, ' ');
          i = close + 1;
          continue;
        }
      }
      rest_of_line += c;
      ++i;
    }

    // An error line of a log or a terminal (`error: cannot allocate memory`, `ValueError: I/O operation on
    // closed file.`): the message's fixed parts are searched as written.
    if (const std::string_view message = error_message(line); !message.empty()) add_fragments(message);

    // Whitespace-separated tokens: paths and globs.
    const std::string_view rest = rest_of_line;
    for (std::size_t i = 0; i < rest.size();) {
      while (i < rest.size() && std::string_view(" \t(),;<>{}").find(rest[i]) != std::string_view::npos) ++i;
      std::size_t j = i;
      while (j < rest.size() && std::string_view(" \t(),;<>{}").find(rest[j]) == std::string_view::npos) ++j;
      std::string_view token = rest.substr(i, j - i);
      i = j;
      while (!token.empty() && std::string_view(".,:;!?").find(token.back()) != std::string_view::npos) {
        // "x.cpp:12:" keeps its number; a sentence's final '.' or '?' goes.
        if (token.back() == ':' && token.size() > 1 &&
            std::isdigit(static_cast<unsigned char>(token[token.size() - 2]))) {
          token.remove_suffix(1);
          break;
        }
        token.remove_suffix(1);
      }
      if (token.empty()) continue;
      if (is_glob_like(token)) {
        add_glob(token);
      } else {
        add_path(token);
      }
    }
    scan_identifiers(rest, collected, -1);
  }

  std::stable_sort(collected.identifiers.begin(), collected.identifiers.end(),
                   [](const Collected::Ident& a, const Collected::Ident& b) {
                     if (a.priority != b.priority) return a.priority < b.priority;
                     return a.order < b.order;
                   });
  for (auto& ident : collected.identifiers) {
    if (terms.identifiers.size() >= limits.max_identifiers) break;
    if (collected.defined_by_report.count(ident.text) != 0) continue;
    terms.identifiers.push_back(std::move(ident.text));
  }
  if (terms.tests.size() > limits.max_tests) terms.tests.resize(limits.max_tests);
  terms.words = report_words(input, limits.max_words);
  for (const auto& word : terms.words) {
    std::string key = word_key(word);
    if (std::find(terms.word_keys.begin(), terms.word_keys.end(), key) == terms.word_keys.end()) {
      terms.word_keys.push_back(std::move(key));
    }
  }
  return terms;
}

}  // namespace agentd::core::context
// NOLINTEND(bugprone-branch-clone)
