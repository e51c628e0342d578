#include "core/support/base64.h"

#include <array>
#include <cstdint>

namespace agentd::support {

namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::uint8_t kInvalid = 0xFF;
constexpr std::uint8_t kSkip = 0xFE;

constexpr std::array<std::uint8_t, 256> decode_table() {
  std::array<std::uint8_t, 256> table{};
  table.fill(kInvalid);
  for (std::size_t i = 0; i < kAlphabet.size(); ++i)
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::uint8_t>(i);
  for (char c : {' ', '\t', '\r', '\n'}) table[static_cast<unsigned char>(c)] = kSkip;
  return table;
}
constexpr std::array<std::uint8_t, 256> kDecode = decode_table();

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{b[i]} << 16) | (std::uint32_t{b[i + 1]} << 8) | b[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    const std::uint32_t v = (std::uint32_t{b[i]} << 16) | (rest == 2 ? std::uint32_t{b[i + 1]} << 8 : 0);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3 + 3);
  std::uint32_t acc = 0;
  int chars = 0;  // sextets in `acc`
  std::size_t i = 0;
  for (; i < text.size(); ++i) {
    const std::uint8_t v = kDecode[static_cast<unsigned char>(text[i])];
    if (v == kSkip) continue;
    if (v == kInvalid) break;  // padding, or a character that is not base64
    acc = (acc << 6) | v;
    if (++chars == 4) {
      out += static_cast<char>((acc >> 16) & 0xFF);
      out += static_cast<char>((acc >> 8) & 0xFF);
      out += static_cast<char>(acc & 0xFF);
      acc = 0;
      chars = 0;
    }
  }
  // What follows the data may only be padding (as much as the last group lacks) and whitespace.
  std::size_t padding = 0;
  for (; i < text.size(); ++i) {
    if (text[i] == '=') {
      ++padding;
    } else if (!is_space(text[i])) {
      return std::nullopt;
    }
  }
  switch (chars) {
    case 0:
      if (padding != 0) return std::nullopt;
      break;
    case 1: return std::nullopt;  // six bits are not a byte
    case 2:
      if ((padding != 0 && padding != 2) || (acc & 0xF) != 0) return std::nullopt;
      out += static_cast<char>((acc >> 4) & 0xFF);
      break;
    case 3:
      if ((padding != 0 && padding != 1) || (acc & 0x3) != 0) return std::nullopt;
      out += static_cast<char>((acc >> 10) & 0xFF);
      out += static_cast<char>((acc >> 2) & 0xFF);
      break;
    default: break;
  }
  return out;
}

std::size_t base64_decoded_size(std::string_view text) noexcept {
  std::size_t chars = 0;
  for (char c : text) {
    const std::uint8_t v = kDecode[static_cast<unsigned char>(c)];
    if (v != kSkip && v != kInvalid) ++chars;
  }
  return chars * 3 / 4;
}

}  // namespace agentd::support
