#include "daemon/cli/terminal_text.h"

#include <cstdint>

namespace agentd::daemon::cli {

namespace {

void append_utf8(std::string& out, std::uint32_t cp) {
  out += static_cast<char>(0xE0 | (cp >> 12));
  out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out += static_cast<char>(0x80 | (cp & 0x3F));
}

constexpr std::uint32_t kReplacement = 0xFFFD;

// The length of the well-formed UTF-8 sequence at `i` (0 when there is none), and its code point.
std::size_t utf8_at(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  std::size_t n = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    cp = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return n;
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7F)) {
        out += static_cast<char>(c);
      } else {
        append_utf8(out, c == 0x7F ? 0x2421 : 0x2400 + c);  // ␡, or ␀ to ␟ (ESC is ␛)
      }
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t n = utf8_at(text, i, cp);
    if (n == 0) {
      append_utf8(out, kReplacement);
      ++i;
    } else if (cp >= 0x80 && cp <= 0x9F) {
      append_utf8(out, kReplacement);  // a C1 control (CSI is U+009B)
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace agentd::daemon::cli
