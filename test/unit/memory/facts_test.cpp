// Remembered facts: selection by relevance within a budget, with reasons; the text checks of /remember;
// what /memory shows.
#include "core/memory/facts.h"

#include <gtest/gtest.h>

namespace agentd::core::memory {
namespace {

using support::Errc;

const FactDecision& decision(const FactSelection& s, std::int64_t id) {
  for (const FactDecision& d : s.decisions) {
    if (d.id == id) return d;
  }
  ADD_FAILURE() << "no decision for fact " << id;
  static const FactDecision kNone;
  return kNone;
}

std::vector<Fact> sample_facts() {
  return {
      {1, "The build uses Ninja; run it with -j2 on this machine", 100},
      {2, "Tests are run with ctest --test-dir build/default", 200},
      {3, "The user prefers British spelling in docs", 300},
      {4, "Never commit generated files under build/", 400},
  };
}

TEST(FactSelection, RelevantFactsAreSelectedBestFirstWithReasons) {
  const auto facts = sample_facts();
  FactSelection s = select_facts(facts, "the tests fail after the ninja build", {});
  // Fact 1: ninja (1) + build (in three of the four facts: 0.67); fact 2: tests (1) + build (0.67).
  // Equal scores: the newer fact first.
  ASSERT_EQ(s.decisions.size(), 4U);
  EXPECT_EQ(s.decisions[0].id, 2);
  EXPECT_EQ(s.decisions[0].verdict, FactVerdict::selected);
  EXPECT_EQ(s.decisions[0].reason, "selected (score 1.7): text: tests, build");
  EXPECT_EQ(s.decisions[1].id, 1);
  EXPECT_EQ(s.decisions[1].verdict, FactVerdict::selected);
  EXPECT_EQ(s.decisions[1].reason, "selected (score 1.7): text: ninja, build");
  EXPECT_EQ(decision(s, 3).verdict, FactVerdict::not_relevant);
  EXPECT_EQ(decision(s, 3).reason, "not relevant: no word in common with the input");
  // Fact 4 shares only "build", which three facts have: below the threshold.
  EXPECT_EQ(decision(s, 4).verdict, FactVerdict::not_relevant);
  EXPECT_EQ(decision(s, 4).reason, "not relevant (score 0.7, below 1): only text: build");
  EXPECT_EQ(s.selected_ids().size(), 2U);

  const std::string text = render_facts(facts, s);
  EXPECT_EQ(text.rfind("Facts the user asked you to remember", 0), 0U);
  EXPECT_NE(text.find("- [fact 1] The build uses Ninja; run it with -j2 on this machine\n"), std::string::npos);
  EXPECT_NE(text.find("- [fact 2] Tests are run"), std::string::npos);
  EXPECT_EQ(text.find("British"), std::string::npos);
}

TEST(FactSelection, TiesGoToTheNewestAndTheBudgetIsKept) {
  std::vector<Fact> facts = {
      {1, "deploy with make deploy-staging", 10},
      {2, "deploy needs the VPN up", 30},
      {3, "deploy on Fridays is forbidden", 20},
  };
  FactSelectionOptions options;
  options.token_budget = 2 * 12;  // two of the three lines ("- [fact N] ..." is ~9-10 tokens)
  FactSelection s = select_facts(facts, "how do I deploy", options);
  ASSERT_EQ(s.decisions.size(), 3U);
  // Same score for all three ("deploy" is in every fact: 0.5, below 1).
  for (const FactDecision& d : s.decisions) EXPECT_EQ(d.verdict, FactVerdict::not_relevant);
  options.min_score = 0.5;
  s = select_facts(facts, "how do I deploy", options);
  EXPECT_EQ(s.decisions[0].id, 2);  // newest first
  EXPECT_EQ(s.decisions[1].id, 3);
  EXPECT_EQ(s.decisions[2].id, 1);
  EXPECT_EQ(s.decisions[0].verdict, FactVerdict::selected);
  EXPECT_EQ(s.decisions[1].verdict, FactVerdict::selected);
  EXPECT_EQ(s.decisions[2].verdict, FactVerdict::over_budget);
  EXPECT_NE(s.decisions[2].reason.find("over budget"), std::string::npos);
  EXPECT_LE(s.tokens_used, options.token_budget);
  EXPECT_EQ(s.selected_ids(), (std::vector<std::int64_t>{2, 3}));
}

TEST(FactSelection, NoFactsOrNoInput) {
  FactSelection none = select_facts({}, "anything", {});
  EXPECT_TRUE(none.decisions.empty());
  EXPECT_EQ(render_facts({}, none), "");
  const auto facts = sample_facts();
  FactSelection empty = select_facts(facts, "", {});
  EXPECT_TRUE(empty.selected_ids().empty());
  EXPECT_EQ(render_facts(facts, empty), "");
}

TEST(RememberText, TrimmedCheckedAndBounded) {
  EXPECT_EQ(*normalize_fact_text("  use pnpm, not npm \n"), "use pnpm, not npm");
  EXPECT_EQ(*normalize_fact_text("caf\xC3\xA9"), "caf\xC3\xA9");
  auto empty = normalize_fact_text(" \t\n");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code(), Errc::invalid_argument);
  EXPECT_NE(empty.error().message().find("/remember"), std::string::npos);
  auto long_one = normalize_fact_text(std::string(11, 'x'), 10);
  ASSERT_FALSE(long_one);
  EXPECT_NE(long_one.error().message().find("at most 10 bytes"), std::string::npos);
  EXPECT_TRUE(normalize_fact_text(std::string(10, 'x'), 10));
  EXPECT_FALSE(normalize_fact_text("bad \xC3 utf8"));
}

TEST(MemoryReport, ShowsPinnedFilesNotesAndEveryFactWithItsReason) {
  Instructions instructions;
  instructions.files.push_back({"/w/AGENTS.md", InstructionScope::project, "rules\n", 6, false, ""});
  instructions.files.push_back(
      {"/w/CLAUDE.md", InstructionScope::project, "ab", 9, true, "cut to its first 2 of 9 bytes (...)"});
  instructions.notes.push_back("/w/x/AGENTS.md: left out, it cannot be read (Permission denied)");
  const auto facts = sample_facts();
  FactSelection s = select_facts(facts, "ninja build", {});
  const std::string report = memory_report(instructions, facts, s);
  EXPECT_NE(report.find("Pinned instructions (8 bytes, always included verbatim, never summarized):"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("  /w/AGENTS.md (project, 6 bytes)\n"), std::string::npos);
  EXPECT_NE(report.find("  /w/CLAUDE.md (project, 2 bytes, cut to its first 2 of 9 bytes (...))\n"), std::string::npos);
  EXPECT_NE(report.find("note: /w/x/AGENTS.md: left out"), std::string::npos);
  EXPECT_NE(report.find("[1] The build uses Ninja"), std::string::npos);
  EXPECT_NE(report.find(decision(s, 1).reason), std::string::npos);
  EXPECT_NE(report.find(decision(s, 3).reason), std::string::npos);

  const std::string empty = memory_report(Instructions{}, {}, FactSelection{});
  EXPECT_NE(empty.find("Pinned instructions: none"), std::string::npos);
  EXPECT_NE(empty.find("Remembered facts: none"), std::string::npos);
}

}  // namespace
}  // namespace agentd::core::memory
