#include "core/context/word_keys.h"

#include <libstemmer.h>

#include <memory>

namespace agentd::core::context {

namespace {

constexpr std::size_t kMinKeyBytes = 4;

struct StemmerDelete {
  void operator()(sb_stemmer* s) const noexcept { sb_stemmer_delete(s); }
};

sb_stemmer* english() {
  // A stemmer keeps per-call state: one per thread, made on first use.
  thread_local std::unique_ptr<sb_stemmer, StemmerDelete> stemmer(sb_stemmer_new("english", "UTF_8"));
  return stemmer.get();
}

}  // namespace

std::string word_key(std::string_view word) {
  sb_stemmer* stemmer = english();
  if (stemmer == nullptr) return std::string(word);
  const sb_symbol* stemmed =
      sb_stemmer_stem(stemmer, reinterpret_cast<const sb_symbol*>(word.data()), static_cast<int>(word.size()));
  if (stemmed == nullptr) return std::string(word);  // out of memory: the word still matches itself
  const std::string_view stem(reinterpret_cast<const char*>(stemmed),
                              static_cast<std::size_t>(sb_stemmer_length(stemmer)));
  // The stem's part that the word starts with: Snowball writes a final y as i ("directory" -> directori).
  std::size_t common = 0;
  while (common < stem.size() && common < word.size() && stem[common] == word[common]) ++common;
  // "directories" keeps directori, which "directory" does not contain: an i that stands for y goes.
  if (common == stem.size() && common < word.size() && stem.ends_with('i') &&
      word.substr(common - 1).starts_with("ie")) {
    --common;
  }
  if (common < kMinKeyBytes) return std::string(word);
  return std::string(word.substr(0, common));
}

}  // namespace agentd::core::context
