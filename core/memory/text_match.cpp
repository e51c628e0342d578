#include "core/memory/text_match.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace agentd::core::memory {

namespace {

// Words that say nothing about what a turn is about, including the ones every skill description uses
// ("Use when the user asks ...").
constexpr std::string_view kStopWords[] = {
    "a",     "about", "after", "all",    "also",   "an",   "and",   "any",  "are",  "as",   "ask",   "asks",
    "at",    "be",    "been",  "but",    "by",     "can",  "could", "do",   "does", "done", "each",  "etc",
    "for",   "from",  "get",   "had",    "has",    "have", "he",    "her",  "here", "his",  "how",   "i",
    "if",    "in",    "into",  "is",     "it",     "its",  "just",  "let",  "like", "may",  "me",    "might",
    "more",  "most",  "must",  "my",     "no",     "not",  "now",   "of",   "on",   "one",  "only",  "or",
    "other", "our",   "out",   "please", "should", "so",   "some",  "such", "than", "that", "the",   "their",
    "them",  "then",  "there", "these",  "they",   "this", "those", "to",   "too",  "up",   "us",    "use",
    "used",  "uses",  "using", "user",   "very",   "via",  "want",  "was",  "we",   "what", "when",  "where",
    "which", "while", "who",   "why",    "will",   "with", "would", "yes",  "you",  "your", "skill", "skills",
};

bool is_word_byte(unsigned char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}
bool is_upper(unsigned char c) noexcept { return c >= 'A' && c <= 'Z'; }
bool is_lower(unsigned char c) noexcept { return c >= 'a' && c <= 'z'; }
char to_lower(char c) noexcept {
  return is_upper(static_cast<unsigned char>(c)) ? static_cast<char>(c - 'A' + 'a') : c;
}

struct Term {
  std::string stem;
  std::string word;  // as written, lowercased: what a reason shows
};

void add_word(std::string_view word, std::vector<Term>& out) {
  if (word.size() < 2) return;
  std::string lower(word);
  std::transform(lower.begin(), lower.end(), lower.begin(), to_lower);
  if (is_stop_word(lower)) return;
  std::string stemmed = stem(lower);
  out.push_back(Term{std::move(stemmed), std::move(lower)});
}

std::vector<Term> split_terms(std::string_view text) {
  std::vector<Term> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !is_word_byte(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t start = i;
    while (i < text.size() && is_word_byte(static_cast<unsigned char>(text[i]))) {
      // A camelCase hump ends the word before it: "parseSkill" -> "parse", "Skill".
      if (i > start && is_upper(static_cast<unsigned char>(text[i])) &&
          is_lower(static_cast<unsigned char>(text[i - 1]))) {
        add_word(text.substr(start, i - start), out);
        start = i;
      }
      ++i;
    }
    if (i > start) add_word(text.substr(start, i - start), out);
  }
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

bool is_stop_word(std::string_view word) noexcept {
  // Sorted once, then searched: every word of every skill and fact passes through here.
  static const std::vector<std::string_view> kSorted = [] {
    std::vector<std::string_view> v(std::begin(kStopWords), std::end(kStopWords));
    std::sort(v.begin(), v.end());
    return v;
  }();
  return std::binary_search(kSorted.begin(), kSorted.end(), word);
}

std::string stem(std::string_view word) {
  // The first suffix that leaves at least three bytes goes; then a final 'e', so that "release",
  // "releases", "released" and "releasing" all meet at "releas", and "migrate", "migration" at "migrat".
  static constexpr std::array<std::string_view, 8> kSuffixes = {"ings",  "ing",  "ions", "ion",
                                                                "ments", "ment", "ed",   "s"};
  std::string_view s = word;
  for (std::string_view suffix : kSuffixes) {
    if (ends_with(s, suffix) && s.size() - suffix.size() >= 3) {
      // "ss" is not a plural ("class", "process").
      if (suffix == "s" && ends_with(s, "ss")) break;
      s.remove_suffix(suffix.size());
      break;
    }
  }
  if (s.size() > 3 && s.back() == 'e') s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> terms_of(std::string_view text) {
  std::vector<std::string> out;
  for (Term& t : split_terms(text)) out.push_back(std::move(t.stem));
  return out;
}

std::vector<Relevance> score_documents(const std::vector<Document>& documents, std::string_view input) {
  // Distinct input terms, in the order they first appear.
  std::vector<Term> query;
  for (Term& term : split_terms(input)) {
    const bool seen = std::any_of(query.begin(), query.end(), [&](const Term& q) { return q.stem == term.stem; });
    if (!seen) query.push_back(std::move(term));
  }
  // Only the input's terms matter (a handful): for each document, the heaviest field holding each of
  // them, found by one pass over its terms.
  struct Best {
    double weight = 0;
    const std::string* field = nullptr;  // null: the document lacks the term
  };
  const std::size_t q = query.size();
  std::vector<Best> held(documents.size() * q);
  std::vector<std::size_t> document_frequency(q, 0);
  for (std::size_t d = 0; d < documents.size(); ++d) {
    Best* row = held.data() + d * q;
    for (const DocumentField& field : documents[d]) {
      for (const std::string& term : field.terms) {
        for (std::size_t k = 0; k < q; ++k) {
          if (query[k].stem != term) continue;
          if (row[k].field == nullptr || field.weight > row[k].weight) row[k] = Best{field.weight, &field.label};
          break;
        }
      }
    }
    for (std::size_t k = 0; k < q; ++k) document_frequency[k] += row[k].field != nullptr ? 1 : 0;
  }
  const double n = static_cast<double>(documents.size());
  std::vector<Relevance> out(documents.size());
  for (std::size_t d = 0; d < documents.size(); ++d) {
    const Best* row = held.data() + d * q;
    for (std::size_t k = 0; k < q; ++k) {
      if (row[k].field == nullptr) continue;
      const double df = static_cast<double>(document_frequency[k]);
      const double rarity = n <= 1 ? 1.0 : 1.0 - 0.5 * (df - 1) / (n - 1);
      const double contribution = row[k].weight * rarity;
      out[d].score += contribution;
      out[d].matches.push_back(TermMatch{query[k].word, *row[k].field, row[k].weight, contribution});
    }
  }
  return out;
}

std::string describe_matches(const Relevance& relevance) {
  std::vector<std::pair<double, std::string>> fields;
  std::map<std::string, std::vector<std::string>> by_field;
  for (const TermMatch& m : relevance.matches) {
    if (by_field.find(m.field) == by_field.end()) fields.emplace_back(m.field_weight, m.field);
    by_field[m.field].push_back(m.term);
  }
  std::stable_sort(fields.begin(), fields.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (const auto& [weight, field] : fields) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{}: {}", field, fmt::join(by_field[field], ", "));
  }
  return out;
}

std::string format_score(double score) {
  const double rounded = std::round(score * 10) / 10;
  if (rounded == std::floor(rounded)) return fmt::format("{}", static_cast<long long>(rounded));
  return fmt::format("{:.1f}", rounded);
}

}  // namespace agentd::core::memory
