#include "core/support/json_writer.h"

#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "core/support/json.h"
#include "core/support/preempt.h"

namespace agentd::support {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 when it is ill-formed.
// Follows the table of well-formed byte sequences in the Unicode standard (section 3.9, D92).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
  const auto b0 = static_cast<unsigned char>(s[i]);
  const std::size_t left = s.size() - i;
  auto cont = [&](std::size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    if (k >= left) return false;
    const auto b = static_cast<unsigned char>(s[i + k]);
    return b >= lo && b <= hi;
  };
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
  if (b0 == 0xE0) return cont(1, 0xA0, 0xBF) && cont(2) ? 3 : 0;
  if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (b0 == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no surrogates
  if (b0 == 0xF0) return cont(1, 0x90, 0xBF) && cont(2) && cont(3) ? 4 : 0;
  if (b0 >= 0xF1 && b0 <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b0 == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// Bytes that can be copied as they are: printable ASCII other than '"' and '\\'.
constexpr bool plain_ascii(unsigned char c) noexcept { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// Where the run of plain ASCII starting at `i` ends. Eight bytes at a time (SWAR): a word is all plain
// when no byte is below 0x20, none has the high bit, and none equals '"' or '\\'. Every request body
// carries the whole conversation through here, so this is a hot loop.
std::size_t plain_ascii_run(std::string_view text, std::size_t i) noexcept {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  const auto has_zero_byte = [](std::uint64_t v) { return (v - kOnes) & ~v & kHighs; };
  while (i + 8 <= text.size()) {
    std::uint64_t word = 0;
    std::memcpy(&word, text.data() + i, sizeof word);
    const std::uint64_t below_space = (word - kOnes * 0x20) & ~word & kHighs;
    const std::uint64_t special =
        below_space | (word & kHighs) | has_zero_byte(word ^ (kOnes * '"')) | has_zero_byte(word ^ (kOnes * '\\'));
    if (special != 0) break;
    i += 8;
  }
  while (i < text.size() && plain_ascii(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

}  // namespace

bool is_valid_utf8(std::string_view text) noexcept {
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  std::size_t next_point = kPreemptSliceBytes;
  for (std::size_t i = 0; i < text.size();) {
    if (i >= next_point) {
      preemption_point();
      next_point = i + kPreemptSliceBytes;
    }
    // Plain ASCII eight bytes at a time: most text is nothing else.
    std::uint64_t word = 0;
    if (i + sizeof word <= text.size()) {
      std::memcpy(&word, text.data() + i, sizeof word);
      if ((word & kHighs) == 0) {
        i += sizeof word;
        continue;
      }
    }
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void append_json_escaped(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t i = 0;
  while (i < text.size()) {
    // Copy the longest run of plain ASCII in one go: most text is exactly that.
    const std::size_t run = plain_ascii_run(text, i);
    if (run > i) {
      out.append(text.data() + i, run - i);
      i = run;
      continue;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
      }
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      // One U+FFFD per ill-formed byte, then resynchronise on the next byte.
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(text.data() + i, n);
    i += n;
  }
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  assert(!first_.empty() && !after_key_);
  first_.pop_back();
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  assert(!first_.empty() && !after_key_);
  first_.pop_back();
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  assert(!first_.empty() && !after_key_);
  before_value();
  out_ += '"';
  append_json_escaped(out_, name);
  out_ += "\":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t i) {
  before_value();
  fmt::format_to(std::back_inserter(out_), "{}", i);
  return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t u) {
  before_value();
  fmt::format_to(std::back_inserter(out_), "{}", u);
  return *this;
}

JsonWriter& JsonWriter::value(double d) {
  if (!std::isfinite(d)) return null();
  // -0.0 would be written "-0", which reads back as the integer 0: write what it will read back as.
  if (d == 0) d = 0.0;
  before_value();
  // fmt's default is the shortest representation that reads back to the same double.
  fmt::format_to(std::back_inserter(out_), "{}", d);
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  out_ += '"';
  append_json_escaped(out_, s);
  out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

JsonWriter& JsonWriter::value(const Json& j) {
  switch (j.type()) {
    case Json::Type::null: return null();
    case Json::Type::boolean: return value(j.as_bool());
    case Json::Type::integer:
      if (const auto* i = j.if_int64()) return value(*i);
      return value(*j.if_uint64());
    case Json::Type::number: return value(j.as_double());
    case Json::Type::string: return value(std::string_view(j.as_string()));
    case Json::Type::array:
      begin_array();
      for (const auto& item : j.as_array()) value(item);
      return end_array();
    case Json::Type::object:
      begin_object();
      for (const auto& [k, v] : j.as_object()) {
        key(k);
        value(v);
      }
      return end_object();
  }
  return *this;
}

}  // namespace agentd::support
