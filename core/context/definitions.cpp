#include "core/context/definitions.h"

#include <algorithm>
#include <array>
#include <span>

namespace agentd::core::context {

namespace {

constexpr std::array<std::string_view, 27> kKeywords = {
    "def",    "class",    "struct", "enum",   "union",     "interface",    "trait",   "type",    "func",
    "fn",     "function", "impl",   "module", "namespace", "#define",      "define",  "typedef", "object",
    "record", "let",      "const",  "var",    "val",       "macro_rules!", "message", "service", "fun"};

// Keywords that declare a variable: a definition worth indexing only at module level.
constexpr std::array<std::string_view, 5> kVariableKeywords = {"let", "const", "var", "val", "define"};

// Words that may stand before a definition keyword: `pub fn`, `export default function`, `async def`.
constexpr std::array<std::string_view, 22> kModifiers = {
    "pub",      "export",   "default",  "async",   "static", "public", "private", "protected",
    "abstract", "final",    "override", "virtual", "extern", "inline", "unsafe",  "sealed",
    "open",     "internal", "data",     "case",    "crate",  "partial"};

constexpr std::array<std::string_view, 21> kStatements = {
    "return", "if",     "while", "for", "switch", "else",  "case",   "new",   "throw", "await", "yield",
    "sizeof", "delete", "not",   "and", "or",     "print", "assert", "raise", "goto",  "do"};

// The first bytes of every listed word: most words start otherwise and skip the scan.
constexpr std::array<bool, 256> kFirstBytes = [] {
  std::array<bool, 256> table{};
  for (const auto& list : {std::span<const std::string_view>(kKeywords), std::span<const std::string_view>(kModifiers),
                           std::span<const std::string_view>(kStatements)}) {
    for (const auto word : list) table[static_cast<unsigned char>(word[0])] = true;
  }
  return table;
}();

template <std::size_t N>
bool one_of(const std::array<std::string_view, N>& words, std::string_view word) {
  if (word.empty() || !kFirstBytes[static_cast<unsigned char>(word[0])]) return false;
  return std::find(words.begin(), words.end(), word) != words.end();
}

bool blank(char c) { return c == ' ' || c == '\t'; }

// The identifier starting at `at` (after blanks), or empty.
std::string_view word_at(std::string_view line, std::size_t& at) {
  while (at < line.size() && blank(line[at])) ++at;
  const std::size_t start = at;
  while (at < line.size() && is_word(line[at])) ++at;
  return line.substr(start, at - start);
}

}  // namespace

std::size_t find_word(std::string_view line, std::string_view ident, std::size_t from) noexcept {
  if (ident.empty()) return std::string_view::npos;
  for (std::size_t at = line.find(ident, from); at != std::string_view::npos; at = line.find(ident, at + 1)) {
    const bool left = at == 0 || !is_word(line[at - 1]);
    const bool right = at + ident.size() >= line.size() || !is_word(line[at + ident.size()]);
    if (left && right) return at;
  }
  return std::string_view::npos;
}

bool is_definition(std::string_view line, std::string_view ident) {
  const std::size_t at = find_word(line, ident);
  if (at == std::string_view::npos) return false;
  std::string_view before = line.substr(0, at);
  while (!before.empty() && (blank(before.back()) || before.back() == '*' || before.back() == '&')) {
    before.remove_suffix(1);
  }
  std::string_view after = line.substr(at + ident.size());
  while (!after.empty() && blank(after.front())) after.remove_prefix(1);
  std::string_view trimmed = line;
  while (!trimmed.empty() && (blank(trimmed.back()) || trimmed.back() == '\r')) trimmed.remove_suffix(1);
  std::string_view last_word = before;
  if (const std::size_t space = last_word.find_last_of(" \t("); space != std::string_view::npos) {
    last_word = last_word.substr(space + 1);
  }
  if (one_of(kKeywords, last_word)) return true;
  // Go methods: func (r *Recv) Name(
  if (before.starts_with("func") && before.ends_with(")")) return true;
  // gtest: TEST(Suite, Name), TEST_F(...)
  if (before.find("TEST") != std::string_view::npos && before.find('(') != std::string_view::npos) return true;
  if (!after.starts_with("(")) return false;
  if (trimmed.ends_with(";")) return false;
  if (after.find("=>") != std::string_view::npos) return false;  // a match arm: `Token::Number(n) => {`
  std::string_view lead = before;
  while (!lead.empty() && blank(lead.front())) lead.remove_prefix(1);
  if (lead.empty()) {
    // K&R style (the type on the line above) at column 0, or a JS method `name(args) {`.
    return (!line.empty() && !blank(line[0])) || trimmed.ends_with("{");
  }
  for (const char c : lead) {
    if (!is_word(c) && std::string_view(" \t*&:<>,[]").find(c) == std::string_view::npos) return false;
  }
  const std::string_view first = lead.substr(0, lead.find_first_of(" \t"));
  return !one_of(kStatements, first);
}

void defined_names(std::string_view line, std::vector<std::string_view>& out) {
  std::size_t at = 0;
  while (at < line.size() && blank(line[at])) ++at;
  if (at == line.size()) return;
  const bool column0 = at == 0;
  const char lead = line[at];
  if (!is_word(lead) && lead != '#') return;  // comments, closing braces, strings, decorators
  if (lead == '#' && !line.substr(at).starts_with("#define")) return;
  if (lead >= '0' && lead <= '9') return;

  // A keyword among the leading words, after modifiers: the word after it is the candidate.
  std::size_t cursor = lead == '#' ? at + 1 : at;
  for (int n = 0; n < 4; ++n) {
    const std::string_view word = word_at(line, cursor);
    if (word.empty()) break;
    const std::string_view keyword = lead == '#' && n == 0 ? std::string_view("#define") : word;
    if (one_of(kKeywords, keyword)) {
      if (one_of(kVariableKeywords, word) && !column0 && lead != '#') return;
      std::size_t next = cursor;
      while (next < line.size() && (blank(line[next]) || line[next] == '*' || line[next] == '&')) ++next;
      // Go methods: `func (r *Recv) Name(`.
      if (word == "func" && next < line.size() && line[next] == '(') {
        const std::size_t close = line.find(')', next);
        if (close == std::string_view::npos) return;
        next = close + 1;
      }
      const std::string_view name = word_at(line, next);
      // `struct page *alloc_pages(` defines alloc_pages, not page: a C tag names a type only when a body,
      // a base or nothing follows it.
      if (word == "struct" || word == "union" || word == "enum") {
        std::size_t rest = next;
        while (rest < line.size() && blank(line[rest])) ++rest;
        if (rest < line.size() && line[rest] != '{' && line[rest] != ':' && line[rest] != '\r') break;
      }
      if (!name.empty() && !(name[0] >= '0' && name[0] <= '9') && !one_of(kModifiers, name) &&
          is_definition(line, name)) {
        out.push_back(name);
      }
      return;
    }
    if (!one_of(kModifiers, word)) break;
  }

  // A function definition: the identifier before the first '(' (C, C++ `A::b(`, Java, JS methods).
  const std::size_t paren = line.find('(', at);
  if (paren == std::string_view::npos || paren == at) return;
  std::size_t end = paren;
  while (end > at && blank(line[end - 1])) --end;
  std::size_t start = end;
  while (start > at && is_word(line[start - 1])) --start;
  if (start == end) return;
  const std::string_view name = line.substr(start, end - start);
  if ((name[0] >= '0' && name[0] <= '9') || one_of(kStatements, name)) return;
  // The first occurrence is the one is_definition judges: a name used before its own definition's '('
  // (`foo *foo(`) is rare enough to miss.
  if (find_word(line, name) == start && is_definition(line, name)) out.push_back(name);
}

}  // namespace agentd::core::context
