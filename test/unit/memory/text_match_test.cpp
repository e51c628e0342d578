// Terms, stemming and scoring shared by skill and fact selection.
#include "core/memory/text_match.h"

#include <gtest/gtest.h>

#include "core/support/text.h"

namespace agentd::core::memory {
namespace {

TEST(TextMatch, TermsAreLoweredSplitStemmedAndStopWordsDropped) {
  EXPECT_EQ(terms_of("Use this when the user asks to run the Tests"), (std::vector<std::string>{"run", "test"}));
  // "skill" is a stop word (every skill description has it).
  EXPECT_EQ(terms_of("parseSkill front_matter v2"), (std::vector<std::string>{"pars", "front", "matter", "v2"}));
  EXPECT_EQ(terms_of("parseFile"), (std::vector<std::string>{"pars", "fil"}));
  // UTF-8 words stay whole; one-byte words are dropped.
  EXPECT_EQ(terms_of("café x déjà-vu"), (std::vector<std::string>{"café", "déjà", "vu"}));
  EXPECT_TRUE(terms_of("").empty());
  EXPECT_TRUE(terms_of("the a of and to").empty());
}

TEST(TextMatch, StemmingMeetsAtTheSameStem) {
  for (const char* w : {"release", "releases", "released", "releasing"}) EXPECT_EQ(stem(w), "releas") << w;
  for (const char* w : {"test", "tests", "tested", "testing"}) EXPECT_EQ(stem(w), "test") << w;
  EXPECT_EQ(stem("class"), "class");  // not a plural
  EXPECT_EQ(stem("migration"), stem("migrate"));
  EXPECT_EQ(stem("go"), "go");
}

TEST(TextMatch, EstimateIsBytesOverFourRoundedUp) {
  EXPECT_EQ(estimate_tokens(""), 0U);
  EXPECT_EQ(estimate_tokens("a"), 1U);
  EXPECT_EQ(estimate_tokens("abcd"), 1U);
  EXPECT_EQ(estimate_tokens("abcde"), 2U);
}

TEST(TextMatch, Utf8Validity) {
  EXPECT_TRUE(support::is_valid_utf8("plain ascii"));
  EXPECT_TRUE(support::is_valid_utf8("caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(support::is_valid_utf8("\xC3"));          // cut short
  EXPECT_FALSE(support::is_valid_utf8("\xC0\xAF"));      // overlong
  EXPECT_FALSE(support::is_valid_utf8("\xED\xA0\x80"));  // a surrogate
  EXPECT_FALSE(support::is_valid_utf8("\xFF"));
}

TEST(TextMatch, RareTermsWeighMoreAndHeavierFieldsWin) {
  std::vector<Document> docs = {
      {DocumentField{"name", 3, terms_of("release notes")}, DocumentField{"description", 1, terms_of("changelog")}},
      {DocumentField{"name", 3, terms_of("deploy")}, DocumentField{"description", 1, terms_of("release to prod")}},
  };
  auto r = score_documents(docs, "write the release notes from the changelog");
  ASSERT_EQ(r.size(), 2U);
  // "releas" is in both (rarity 0.5): 3 * 0.5 in the first (name), 1 * 0.5 in the second (description).
  EXPECT_DOUBLE_EQ(r[0].score, 1.5 + 3 + 1);
  EXPECT_DOUBLE_EQ(r[1].score, 0.5);
  EXPECT_EQ(describe_matches(r[0]), "name: release, notes; description: changelog");
  EXPECT_EQ(describe_matches(r[1]), "description: release");
  EXPECT_EQ(format_score(5.5), "5.5");
  EXPECT_EQ(format_score(2.0), "2");
}

}  // namespace
}  // namespace agentd::core::memory
