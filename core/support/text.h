// Small text helpers every layer needs, in one place: trimming, cutting UTF-8 text without splitting a
// character, validating it, and the engine's one token estimate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace agentd::support {

inline constexpr std::string_view kWhitespace = " \t\r\n\f\v";

// `s` without leading and trailing `chars`. An all-blank `s` gives an empty view that still points into
// `s` (never a null data pointer: some callers hand it to memcpy).
constexpr std::string_view trim(std::string_view s, std::string_view chars = kWhitespace) noexcept {
  const std::size_t first = s.find_first_not_of(chars);
  if (first == std::string_view::npos) return s.substr(s.size());
  return s.substr(first, s.find_last_not_of(chars) - first + 1);
}

// ASCII case folding, independent of the C locale: A-Z become a-z, every other byte (UTF-8 included) stays.
constexpr char ascii_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
inline void ascii_lower_in_place(std::string& s) noexcept {
  for (char& c : s) c = ascii_lower(c);
}
inline std::string ascii_lower_copy(std::string_view s) {
  std::string out(s);
  ascii_lower_in_place(out);
  return out;
}

constexpr bool is_utf8_continuation(char c) noexcept { return (static_cast<unsigned char>(c) & 0xC0U) == 0x80U; }

// The start of the character `at` falls in: `at` stepped back over continuation bytes (at most to 0).
// `at` == text.size() is a boundary.
constexpr std::size_t utf8_floor(std::string_view text, std::size_t at) noexcept {
  if (at >= text.size()) return text.size();
  while (at > 0 && is_utf8_continuation(text[at])) --at;
  return at;
}
// The first character start at or after `at`.
constexpr std::size_t utf8_ceil(std::string_view text, std::size_t at) noexcept {
  while (at < text.size() && is_utf8_continuation(text[at])) ++at;
  return at < text.size() ? at : text.size();
}

// The longest prefix of at most `max_bytes` that does not end inside a character.
constexpr std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) noexcept {
  if (text.size() <= max_bytes) return text;
  return text.substr(0, utf8_floor(text, max_bytes));
}

// `%XY` sequences decoded (URIs, proxy credentials); a `%` not followed by two hex digits stays as is.
inline std::string percent_decode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// Well-formed UTF-8 (Unicode 3.9 D92: no overlong forms, no surrogates, nothing past U+10FFFF).
bool is_valid_utf8(std::string_view text) noexcept;

// About four bytes per token: the engine's one estimate, for budgets (never for billing).
constexpr std::uint64_t estimate_tokens(std::string_view text) noexcept { return (text.size() + 3) / 4; }

}  // namespace agentd::support
