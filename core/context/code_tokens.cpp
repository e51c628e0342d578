#include "core/context/code_tokens.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace agentd::core::context {

namespace {

constexpr std::size_t kInitialSlots = 1024;  // a power of two

// A multiply-xor hash over 8-byte words, finished with MurmurHash3's mixer so every byte reaches the low
// bits the tables index by: tokens are short, and this runs for every identifier of a tree.
std::uint64_t hash_bytes(std::string_view s) noexcept {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  std::uint64_t h = s.size() * kMul;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 32;
  }
  if (i < s.size()) {
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    h ^= w;
  }
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ULL;
  h ^= h >> 33;
  return h;
}

// Byte classes: 1 continues an identifier, 2 starts one too.
constexpr std::array<std::uint8_t, 256> kClass = [] {
  std::array<std::uint8_t, 256> table{};
  for (int c = '0'; c <= '9'; ++c) table[c] = 1;
  for (int c = 'a'; c <= 'z'; ++c) table[c] = 3;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = 3;
  table['_'] = 3;
  table['$'] = 3;
  return table;
}();

}  // namespace

TokenSet::TokenSet() : slots_(kInitialSlots) {}

void TokenSet::clear() {
  joined_.clear();
  count_ = 0;
  // After a big file, back to a small table: probing a big one for a small file misses the cache.
  if (slots_.size() > kInitialSlots * 4) {
    slots_.assign(kInitialSlots, Slot{});
    generation_ = 1;
    return;
  }
  if (++generation_ == 0) {  // wrapped: every stamp could look current
    std::fill(slots_.begin(), slots_.end(), Slot{});
    generation_ = 1;
  }
}

void TokenSet::grow() {
  std::vector<Slot> bigger(slots_.size() * 2);
  const std::size_t mask = bigger.size() - 1;
  for (const Slot& s : slots_) {
    if (s.generation != generation_) continue;
    std::size_t i = s.hash & mask;
    while (bigger[i].generation == generation_) i = (i + 1) & mask;
    bigger[i] = s;
  }
  slots_ = std::move(bigger);
}

bool TokenSet::insert(std::string_view token) {
  const std::uint64_t h = hash_bytes(token);
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = h & mask;
  for (; slots_[i].generation == generation_; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.hash == h && s.length == token.size() &&
        std::memcmp(joined_.data() + s.offset, token.data(), token.size()) == 0) {
      return false;
    }
  }
  if (!joined_.empty()) joined_ += ' ';
  slots_[i] =
      Slot{static_cast<std::uint32_t>(joined_.size()), static_cast<std::uint32_t>(token.size()), h, generation_};
  joined_ += token;
  if (++count_ * 2 > slots_.size()) grow();
  return true;
}

void TokenSet::add_identifier(std::string_view ident) {
  identifier_tokens(ident, scratch_, [this](std::string_view token) { insert(token); });
}

void TokenSet::add_text(std::string_view text) {
  // Each distinct identifier is expanded once: most of a file's identifiers are repeats.
  std::size_t table = 256;
  while (table < text.size() / 16) table *= 2;
  if (seen_.size() < table) seen_.resize(table);
  const std::size_t mask = table - 1;
  if (++seen_generation_ == 0) {
    std::fill(seen_.begin(), seen_.end(), Seen{});
    seen_generation_ = 1;
  }
  std::size_t used = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const std::uint8_t cls = kClass[bytes[i]];
    if (cls == 0) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < n && kClass[bytes[i]] != 0) ++i;
    if (cls != 3 || i - start < kMinTokenBytes || i - start > kMaxTokenBytes * 2) continue;  // a number, one letter
    const std::string_view ident = text.substr(start, i - start);
    const std::uint64_t h = hash_bytes(ident);
    std::size_t slot = h & mask;
    bool known = false;
    for (; seen_[slot].generation == seen_generation_; slot = (slot + 1) & mask) {
      const Seen& e = seen_[slot];
      if (e.hash == h && e.length == ident.size() && std::memcmp(e.data, ident.data(), ident.size()) == 0) {
        known = true;
        break;
      }
    }
    if (known) continue;
    // A table too full to probe quickly: stop remembering (identifiers are then expanded again, and the
    // token set still keeps each token once).
    if (used * 2 < table) {
      seen_[slot] = Seen{h, ident.data(), static_cast<std::uint32_t>(ident.size()), seen_generation_};
      ++used;
    }
    add_identifier(ident);
  }
}

std::string path_tokens(std::string_view path) {
  TokenSet set;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view component = path.substr(start, slash - start);
    // A file's stem: "super.c" -> super, "Makefile" -> makefile, ".gitignore" -> gitignore.
    if (const std::size_t dot = component.rfind('.'); dot != std::string_view::npos && dot > 0) {
      component = component.substr(0, dot);
    }
    set.add_text(component);
    start = slash + 1;
  }
  return set.joined();
}

}  // namespace agentd::core::context
