// Code-aware tokens for the content index and its queries. An identifier gives its whole self, lower-cased
// (`ext4_fill_super`, `parsehttpheader`), and its words split at '_' and camel humps (`ext4`, `fill`,
// `super`; `parse`, `http`, `header`): a report that names `ext4_fill_super` matches it exactly, one that
// says "fill super" matches its words. Digits stay with the letters before them (`utf8`, `sha256`); runs
// that start with a digit (numbers, hex) are not tokens. Every token is 2 to 48 bytes of [a-z0-9_], so
// SQLite's `ascii` tokenizer with '_' as a token character reads a space-joined list back unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace agentd::core::context {

inline constexpr std::size_t kMinTokenBytes = 2;
inline constexpr std::size_t kMaxTokenBytes = 48;

// Calls visit(token) for the whole identifier and each of its words, lower-cased, in that order, skipping
// those outside the length bounds and repeats of the whole. `scratch` holds the lower-cased bytes.
template <class Visit>
void identifier_tokens(std::string_view ident, std::string& scratch, Visit&& visit);

// A set of unique tokens, built from texts and identifiers and read as one space-joined string. Reused
// between files (clear() keeps its memory), so indexing a tree allocates little.
class TokenSet {
 public:
  TokenSet();
  // Every identifier in `text`, each once however often it occurs.
  void add_text(std::string_view text);
  void add_identifier(std::string_view ident);
  // The tokens, space-separated, in the order first seen.
  const std::string& joined() const noexcept { return joined_; }
  std::size_t size() const noexcept { return count_; }
  void clear();

 private:
  bool insert(std::string_view token);  // false when already there
  void grow();
  std::string joined_;
  std::size_t count_ = 0;
  // Open addressing over joined_: each token's offset and length, its hash, and the generation that
  // filled the slot (an older generation is an empty slot, so clear() is O(1)).
  struct Slot {
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
    std::uint64_t hash = 0;
    std::uint32_t generation = 0;
  };
  std::vector<Slot> slots_;
  std::uint32_t generation_ = 1;
  // Raw identifiers already expanded, pointing into the text being added (valid during add_text only).
  struct Seen {
    std::uint64_t hash = 0;
    const char* data = nullptr;
    std::uint32_t length = 0;
    std::uint32_t generation = 0;
  };
  std::vector<Seen> seen_;
  std::uint32_t seen_generation_ = 0;
  std::string scratch_;
};

// The tokens of a file's path: its components' words and each component's whole stem
// ("fs/ext4/super.c": fs, ext4, super).
std::string path_tokens(std::string_view path);

// --- implementation ---

namespace detail {
constexpr bool is_upper(char c) noexcept { return c >= 'A' && c <= 'Z'; }
constexpr bool is_lower(char c) noexcept { return c >= 'a' && c <= 'z'; }
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr char lower(char c) noexcept { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
}  // namespace detail

template <class Visit>
void identifier_tokens(std::string_view ident, std::string& scratch, Visit&& visit) {
  while (!ident.empty() && (ident.front() == '_' || ident.front() == '$')) ident.remove_prefix(1);
  while (!ident.empty() && (ident.back() == '_' || ident.back() == '$')) ident.remove_suffix(1);
  if (ident.empty() || detail::is_digit(ident.front())) return;
  scratch.clear();
  bool split = false;
  for (std::size_t i = 0; i < ident.size(); ++i) {
    const char c = ident[i];
    if (c == '$') continue;
    scratch += detail::lower(c);
    if (c == '_') split = true;
    if (i > 0 && detail::is_upper(c) && !detail::is_upper(ident[i - 1])) split = true;
  }
  const std::string_view whole = scratch;
  if (whole.size() >= kMinTokenBytes && whole.size() <= kMaxTokenBytes) visit(whole);
  if (!split && whole.find('_') == std::string_view::npos) {
    // One word, unless an acronym runs into a word (HTTPHeader): checked below.
    bool acronym = false;
    for (std::size_t i = 1; i + 1 < ident.size(); ++i) {
      if (detail::is_upper(ident[i - 1]) && detail::is_upper(ident[i]) && detail::is_lower(ident[i + 1])) {
        acronym = true;
        break;
      }
    }
    if (!acronym) return;
  }
  // Words: boundaries at '_', before an upper-case letter after a lower-case letter or digit, and before
  // the last capital of an acronym followed by a lower-case letter (HTTP|Header).
  std::size_t start = 0;
  std::size_t out = 0;  // position in scratch of ident[start]
  std::size_t pos = 0;  // position in scratch of ident[i]
  const auto emit = [&](std::size_t from, std::size_t to) {
    if (to - from >= kMinTokenBytes && to - from <= kMaxTokenBytes && to - from != whole.size() &&
        !detail::is_digit(whole[from])) {
      visit(whole.substr(from, to - from));
    }
  };
  for (std::size_t i = 0; i < ident.size(); ++i) {
    const char c = ident[i];
    if (c == '$') continue;
    if (c == '_') {
      emit(out, pos);
      start = i + 1;
      out = pos + 1;
    } else if (i > start && detail::is_upper(c) &&
               (detail::is_lower(ident[i - 1]) || detail::is_digit(ident[i - 1]) ||
                (detail::is_upper(ident[i - 1]) && i + 1 < ident.size() && detail::is_lower(ident[i + 1])))) {
      emit(out, pos);
      start = i;
      out = pos;
    }
    ++pos;
  }
  emit(out, pos);
}

}  // namespace agentd::core::context
