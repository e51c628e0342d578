// Where code defines a name, by the shape of one line: a definition keyword before it (`def`, `fn`,
// `class`, `#define`, ...), a Go method, a gtest case, or a C-like function definition (a type before the
// name, '(' after it, no ';' at the end). Language-agnostic and cheap enough to run over every line of a
// kernel-sized tree: retrieval asks "does this line define X", the content index asks "what does this line
// define", and both answer by the same rules.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace agentd::core::context {

// A byte of an identifier: ASCII letters, digits, '_' and '$'. Bytes of UTF-8 sequences are not.
constexpr bool is_word(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

// The first occurrence of `ident` in `line` at or after `from` as a whole word; npos when none.
std::size_t find_word(std::string_view line, std::string_view ident, std::size_t from = 0) noexcept;

// Whether `line` defines `ident`.
bool is_definition(std::string_view line, std::string_view ident);

// Appends to `out` the names `line` defines (views into `line`), usually none or one. Module-level
// variables (`const x =`, `let`, `var`, `val`) count only at column 0, so a function's locals do not.
void defined_names(std::string_view line, std::vector<std::string_view>& out);

}  // namespace agentd::core::context
