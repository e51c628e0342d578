// Plain-text relevance shared by skill and fact selection: terms (lowercased,
// stemmed, stop words dropped), and a small explainable score of documents against an input, so
// /skills and /memory can say which words made something relevant.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/text.h"

namespace agentd::core::memory {

using support::estimate_tokens;  // core/support/text.h: the engine's one token estimate

// The words of `text`: runs of ASCII letters and digits (bytes >= 0x80 count as letters, so UTF-8 words
// stay whole), split at camelCase humps, lowercased; words shorter than 2 bytes and stop words dropped;
// each stemmed. In order, with repeats.
std::vector<std::string> terms_of(std::string_view text);
// A light suffix stripper ("tests", "testing", "tested" -> "test"; "releases", "release" -> "releas"),
// applied to both sides of a match: it only has to be consistent, not linguistically right.
std::string stem(std::string_view lowercase_word);
bool is_stop_word(std::string_view lowercase_word) noexcept;

struct DocumentField {
  std::string label;  // "name", "description", "text": shown in the reason
  double weight = 1.0;
  std::vector<std::string> terms;  // terms_of(the field's text)
};
using Document = std::vector<DocumentField>;

struct TermMatch {
  std::string term;   // the input's word (lowercased), not its stem
  std::string field;  // label of the heaviest field holding it
  double field_weight = 0;
  double contribution = 0;
};
struct Relevance {
  double score = 0;
  std::vector<TermMatch> matches;  // in the order the terms first appear in the input
};

// Scores each document against `input`: every distinct input term that a document holds adds the weight
// of the heaviest field holding it, scaled by how rare the term is among the documents (1 for a term only
// this document has, down to 0.5 for one every document has), so a shared word ranks but does not decide.
std::vector<Relevance> score_documents(const std::vector<Document>& documents, std::string_view input);

// "name: release, notes; description: changelog": matches grouped by field, heaviest field first, words
// in the order of the input.
std::string describe_matches(const Relevance& relevance);
// "2.5": scores printed with at most one decimal, without trailing zeros.
std::string format_score(double score);

}  // namespace agentd::core::memory
