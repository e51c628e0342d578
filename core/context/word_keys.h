// The search key of a report's word: its English stem (Snowball, libstemmer), as the common start of the
// word's forms, so one substring search finds them all: "routing" -> rout (route, router, routes),
// "directories" -> director (directory, directories), "encoding" -> encod (encode, encoder, decoding's
// "encod" too). A key shorter than 4 letters would match inside too many words: the word itself is then
// its key.
#pragma once

#include <string>
#include <string_view>

namespace agentd::core::context {

// `word` is lower-case ASCII letters. Thread-safe (one stemmer per thread).
std::string word_key(std::string_view word);

}  // namespace agentd::core::context
