// Compaction: the planner (fits, over the threshold, latest turns kept, reserve, cannot free enough, no
// loop), the summarization request, reading the model's summary (good, drifted, empty), the stored JSON,
// the rendered summary, and pinned instructions kept byte for byte.
#include "core/memory/compaction.h"

#include <gtest/gtest.h>

#include "core/memory/instructions.h"
#include "core/memory/text_match.h"
#include "test/support/temp_dir.h"
#include "test/unit/memory/file_util.h"

namespace agentd::core::memory {
namespace {

using support::Errc;

std::vector<TurnSize> turns_of(std::initializer_list<std::uint64_t> sizes) {
  std::vector<TurnSize> out;
  int n = 1;
  for (std::uint64_t s : sizes) out.push_back({"t" + std::to_string(n++), s, false});
  return out;
}

CompactionOptions window(std::uint64_t tokens) {
  CompactionOptions o;
  o.context_window = tokens;
  return o;
}

// --- the planner ---------------------------------------------------------------------------------

TEST(CompactionPlanner, FitsMeansNoCompaction) {
  CompactionInput in{turns_of({10000, 10000, 10000}), 2000, 500, false};
  CompactionPlan p = plan_compaction(in, window(100000));
  EXPECT_EQ(p.action, CompactionAction::none);
  EXPECT_EQ(p.tokens_before, 32500U);
  EXPECT_EQ(p.limit, 80000U);
  EXPECT_EQ(p.summarize_count, 0U);
  EXPECT_EQ(p.message,
            "no compaction needed: the request needs about 32500 tokens, within the limit of 80000 tokens "
            "(80% of the 100000-token context window)");
  // Exactly at the limit still fits.
  CompactionInput edge{turns_of({77500}), 2000, 500, false};
  EXPECT_EQ(plan_compaction(edge, window(100000)).action, CompactionAction::none);
}

TEST(CompactionPlanner, OverTheThresholdSummarizesAllButTheLatestTurns) {
  CompactionInput in{turns_of({9000, 9000, 9000, 9000, 9000, 9000, 9000, 9000, 9000, 9000}), 2000, 500, false};
  CompactionPlan p = plan_compaction(in, window(100000));
  ASSERT_EQ(p.action, CompactionAction::compact) << p.message;
  EXPECT_EQ(p.summarize_count, 8U);
  EXPECT_EQ(p.first_turn_id, "t1");
  EXPECT_EQ(p.last_turn_id, "t8");
  EXPECT_EQ(p.summarized_tokens, 72000U);
  EXPECT_EQ(p.tokens_before, 92500U);
  EXPECT_EQ(p.tokens_after, 92500U - 72000U + 2048U);
  EXPECT_LE(p.tokens_after, p.limit);
  EXPECT_EQ(p.message,
            "compacting: the request would need about 92500 tokens, over the limit of 80000 tokens (80% of the "
            "100000-token context window); summarizing turns t1 to t8 (8 turns) (about 72000 tokens) and keeping "
            "the latest 2 as they are; at most 22548 after");

  // keep_latest is honoured, whatever it is.
  CompactionOptions keep3 = window(100000);
  keep3.keep_latest = 3;
  CompactionPlan p3 = plan_compaction(in, keep3);
  ASSERT_EQ(p3.action, CompactionAction::compact);
  EXPECT_EQ(p3.summarize_count, 7U);
  EXPECT_EQ(p3.last_turn_id, "t7");

  // A lower threshold triggers sooner.
  CompactionOptions half = window(100000);
  half.threshold = 0.5;
  CompactionInput smaller{turns_of({20000, 20000, 5000, 5000}), 1000, 500, false};
  EXPECT_EQ(plan_compaction(smaller, window(100000)).action, CompactionAction::none);
  CompactionPlan ph = plan_compaction(smaller, half);
  ASSERT_EQ(ph.action, CompactionAction::compact);
  EXPECT_EQ(ph.summarize_count, 2U);
  EXPECT_EQ(ph.limit, 50000U);
}

TEST(CompactionPlanner, TheReserveLowersTheLimitSoCompactionItselfFits) {
  // 90% of 10000 is 9000, but 3000 must stay free for the compaction call: the limit is 7000.
  CompactionOptions o = window(10000);
  o.threshold = 0.9;
  o.reserve_tokens = 3000;
  o.summary_max_tokens = 500;
  CompactionInput in{turns_of({2500, 2500, 1000, 1000}), 300, 200, false};  // 7500: under 90%, over the reserve
  CompactionPlan p = plan_compaction(in, o);
  EXPECT_EQ(p.limit, 7000U);
  ASSERT_EQ(p.action, CompactionAction::compact) << p.message;
  EXPECT_NE(p.message.find("the limit of 7000 tokens (the 10000-token context window less the 3000-token reserve "
                           "kept for compaction)"),
            std::string::npos)
      << p.message;
  // The summarization request (the turns, the instructions, the summary it writes) fits the window.
  EXPECT_LE(p.summarized_tokens + summary_request_overhead_tokens(p.summarize_count) + o.summary_max_tokens,
            o.context_window);

  // A window that cannot hold the reserve and a summary is refused outright, as is a bad threshold.
  CompactionOptions tiny = window(2000);
  CompactionPlan t = plan_compaction(in, tiny);
  EXPECT_EQ(t.action, CompactionAction::cannot_fit);
  EXPECT_NE(t.message.find("leaves no room beside the 8192-token compaction reserve"), std::string::npos);
  CompactionOptions bad = window(100000);
  bad.threshold = 1.5;
  EXPECT_EQ(plan_compaction(in, bad).action, CompactionAction::cannot_fit);
  bad.threshold = 0;
  EXPECT_NE(plan_compaction(in, bad).message.find("not a fraction"), std::string::npos);
}

TEST(CompactionPlanner, OlderTurnsBeyondOneSummarizationRequestAreLeftForLater) {
  // The first two older turns cannot both go into one request of a 50000-token window: only t1 is
  // summarized, and that is enough.
  CompactionInput in{turns_of({30000, 30000, 100, 100}), 2000, 500, false};
  CompactionPlan p = plan_compaction(in, window(50000));
  ASSERT_EQ(p.action, CompactionAction::compact) << p.message;
  EXPECT_EQ(p.summarize_count, 1U);
  EXPECT_EQ(p.message.find("turns t1"), std::string::npos);
  EXPECT_NE(p.message.find("summarizing turn t1 (about 30000 tokens)"), std::string::npos) << p.message;
  EXPECT_LE(p.tokens_after, p.limit);
}

TEST(CompactionPlanner, CannotFreeEnoughRoomSaysWhatTakesIt) {
  // The latest two turns alone are over the limit: summarizing the rest cannot help.
  CompactionInput in{turns_of({1000, 1000, 40000, 40000}), 2000, 500, false};
  CompactionPlan p = plan_compaction(in, window(100000));
  EXPECT_EQ(p.action, CompactionAction::cannot_fit);
  EXPECT_EQ(p.summarize_count, 0U);
  EXPECT_EQ(p.message,
            "cannot free enough room: even with turns t1 to t2 (2 turns) summarized, the request would need about "
            "84548 tokens, over the limit of 80000 tokens (80% of the 100000-token context window). What takes the "
            "room: pinned text (system rules, instructions, skills, tools) 2000, the latest 2 turns 80000, the new "
            "input 500. Shorten the input, trim large pinned instructions (AGENTS.md) or skills, or start a new "
            "session.");

  // Nothing older than the kept turns.
  CompactionInput two{turns_of({45000, 45000}), 100, 100, false};
  CompactionPlan q = plan_compaction(two, window(100000));
  EXPECT_EQ(q.action, CompactionAction::cannot_fit);
  EXPECT_NE(q.message.find("the history has 2 turns and the latest 2 are never summarized"), std::string::npos)
      << q.message;

  // Pinned text is never summarized, so pinned text over the limit cannot be compacted away.
  CompactionInput pinned{turns_of({1000, 1000, 1000, 1000}), 90000, 100, false};
  CompactionPlan r = plan_compaction(pinned, window(100000));
  EXPECT_EQ(r.action, CompactionAction::cannot_fit);
  EXPECT_NE(r.message.find("pinned text (system rules, instructions, skills, tools) 90000"), std::string::npos);

  // The oldest turn alone is larger than a summarization request can be.
  CompactionInput huge{turns_of({60000, 100, 100}), 100, 100, false};
  CompactionPlan h = plan_compaction(huge, window(50000));
  EXPECT_EQ(h.action, CompactionAction::cannot_fit);
  EXPECT_NE(h.message.find("the oldest turn (t1, about 60000 tokens) is too large to summarize"), std::string::npos);
}

TEST(CompactionPlanner, NeverLoops) {
  // After a compaction, the history is [summary, kept turns]: planning again does not compact again.
  CompactionInput in{turns_of({9000, 9000, 9000, 9000, 9000, 9000, 9000, 9000, 9000, 9000}), 2000, 500, false};
  const CompactionOptions o = window(100000);
  CompactionPlan first = plan_compaction(in, o);
  ASSERT_EQ(first.action, CompactionAction::compact);
  CompactionInput after{
      {{"c1", o.summary_max_tokens, true}, {"t9", 9000, false}, {"t10", 9000, false}}, 2000, 500, false};
  EXPECT_EQ(plan_compaction(after, o).action, CompactionAction::none);
  // Only the summary is older than the kept turns and it still does not fit: stop, do not re-summarize it.
  CompactionInput stuck{{{"c1", 2000, true}, {"t9", 40000, false}, {"t10", 40000, false}}, 2000, 500, false};
  CompactionPlan s = plan_compaction(stuck, o);
  EXPECT_EQ(s.action, CompactionAction::cannot_fit);
  EXPECT_NE(s.message.find("everything before the latest 2 turns is already summarized"), std::string::npos);
  // A summary and newer turns before the kept ones are summarized together (a rolling summary).
  CompactionInput rolling{
      {{"c1", 2000, true}, {"t5", 39000, false}, {"t9", 20000, false}, {"t10", 20000, false}}, 2000, 500, false};
  CompactionPlan r = plan_compaction(rolling, o);
  ASSERT_EQ(r.action, CompactionAction::compact) << r.message;
  EXPECT_EQ(r.first_turn_id, "c1");
  EXPECT_EQ(r.last_turn_id, "t5");
}

TEST(CompactionPlanner, ForcedCompactsUnderTheThresholdButNotTheLatestTurns) {
  CompactionInput in{turns_of({3000, 3000, 3000}), 1000, 0, true};
  CompactionPlan p = plan_compaction(in, window(100000));
  ASSERT_EQ(p.action, CompactionAction::compact);
  EXPECT_EQ(p.summarize_count, 1U);
  EXPECT_EQ(p.message.rfind("compacting on request: summarizing turn t1", 0), 0U) << p.message;
  CompactionInput two{turns_of({3000, 3000}), 1000, 0, true};
  CompactionPlan q = plan_compaction(two, window(100000));
  EXPECT_EQ(q.action, CompactionAction::none);
  EXPECT_EQ(q.message, "nothing to compact: the history has 2 turns and the latest 2 are never summarized");
  CompactionInput empty{{}, 1000, 0, true};
  EXPECT_EQ(plan_compaction(empty, window(100000)).action, CompactionAction::none);
}

// --- the request and the summary -----------------------------------------------------------------

TEST(SummaryRequest, AsksForTheFiveSectionsAndCarriesTheTurnsVerbatim) {
  const std::vector<TranscriptTurn> turns = {
      {"c1", "[Summary of ...]\nGoals:\n- ship v2\n", true},
      {"t3", "user: fix the build\r\nassistant: ran `ninja` \xE2\x80\x94 error: missing ;", false},
  };
  CompactionOptions o;
  o.summary_max_tokens = 1000;
  SummaryRequest r = build_summary_request(turns, o);
  for (const char* heading : {"## Goals", "## Decisions", "## Files touched", "## Open tasks", "## Errors seen"}) {
    EXPECT_NE(r.system.find(heading), std::string::npos) << heading;
  }
  EXPECT_NE(r.system.find("under 600 words"), std::string::npos);
  EXPECT_EQ(r.max_output_tokens, 1000U);
  EXPECT_NE(r.user.find("turns c1 to t3 (2 turns)"), std::string::npos) << r.user;
  EXPECT_NE(r.user.find("<earlier-summary id=\"c1\">\n[Summary of ...]\nGoals:\n- ship v2\n</earlier-summary>\n"),
            std::string::npos);
  EXPECT_NE(r.user.find("<turn id=\"t3\">\n" + turns[1].text + "\n</turn>\n"), std::string::npos);
  EXPECT_LT(r.user.find("c1"), r.user.find("t3\">"));
  EXPECT_EQ(r.estimated_tokens, estimate_tokens(r.system) + estimate_tokens(r.user));
  // The planner's overhead covers the request beyond the turns' text.
  EXPECT_GE(
      summary_request_overhead_tokens(turns.size()) + estimate_tokens(turns[0].text) + estimate_tokens(turns[1].text),
      r.estimated_tokens);
}

TEST(SummaryParsing, TheAskedForFormat) {
  auto parsed = parse_summary(
      "## Goals\n- Ship v2 of the parser\n## Decisions\n- Keep simdjson\n- Reject YAML anchors\n## Files touched\n"
      "- core/parse.cpp: rewrote the tokenizer\n## Open tasks\n- Add the fuzz target\n## Errors seen\n- none\n");
  ASSERT_TRUE(parsed) << parsed.error().message();
  const CompactionSummary& s = parsed->summary;
  EXPECT_EQ(s.goals, std::vector<std::string>{"Ship v2 of the parser"});
  EXPECT_EQ(s.decisions, (std::vector<std::string>{"Keep simdjson", "Reject YAML anchors"}));
  EXPECT_EQ(s.files_touched, std::vector<std::string>{"core/parse.cpp: rewrote the tokenizer"});
  EXPECT_EQ(s.open_tasks, std::vector<std::string>{"Add the fuzz target"});
  EXPECT_TRUE(s.errors_seen.empty());  // "none" is not an item
  EXPECT_TRUE(s.notes.empty());
  EXPECT_TRUE(parsed->warnings.empty()) << parsed->warnings[0];
}

TEST(SummaryParsing, DriftedFormatsAreRead) {
  auto parsed = parse_summary(
      "```markdown\n"
      "Here is the summary you asked for.\n\n"
      "**Goals:**\n"
      "1. Make the tests pass\n"
      "2) Keep the API\n"
      "# Key decisions\n"
      "* Use RE2,\n"
      "  not std::regex\n"
      "Files changed:\n"
      "+ src/a.cpp\n"
      "  - renamed parse()\n"
      "• src/b.h\n"
      "### Next steps\n"
      "- N/A\n"
      "- wire the engine\n"
      "## Risks\n"
      "- the cache may be stale\n"
      "```\n");
  ASSERT_TRUE(parsed) << parsed.error().message();
  const CompactionSummary& s = parsed->summary;
  EXPECT_EQ(s.goals, (std::vector<std::string>{"Make the tests pass", "Keep the API"}));
  EXPECT_EQ(s.decisions, std::vector<std::string>{"Use RE2, not std::regex"});
  EXPECT_EQ(s.files_touched, (std::vector<std::string>{"src/a.cpp; renamed parse()", "src/b.h"}));
  EXPECT_EQ(s.open_tasks, std::vector<std::string>{"wire the engine"});
  EXPECT_TRUE(s.errors_seen.empty());
  EXPECT_EQ(s.notes, (std::vector<std::string>{"Here is the summary you asked for.", "Risks: the cache may be stale"}));
  EXPECT_EQ(parsed->warnings, std::vector<std::string>{"missing section: Errors seen"});

  // Inline headings ("Goals: x") and a heading of the same section twice.
  auto inline_form = parse_summary("Goals: ship it\nErrors seen: link error in b.o\nGoals:\n- and document it\n");
  ASSERT_TRUE(inline_form);
  EXPECT_EQ(inline_form->summary.goals, (std::vector<std::string>{"ship it", "and document it"}));
  EXPECT_EQ(inline_form->summary.errors_seen, std::vector<std::string>{"link error in b.o"});
  EXPECT_EQ(inline_form->warnings.size(), 3U);  // decisions, files, open tasks

  // Ordinary lines with a colon are items, not headings.
  auto colon = parse_summary(
      "## Decisions\n- Note: the cache stays\nRationale: speed\n\nThen I fixed the parser file:\n#include <a.h> "
      "was missing\n");
  ASSERT_TRUE(colon);
  EXPECT_EQ(colon->summary.decisions, (std::vector<std::string>{"Note: the cache stays Rationale: speed",
                                                                "Then I fixed the parser file: #include <a.h> was "
                                                                "missing"}));
  EXPECT_TRUE(colon->summary.files_touched.empty());
}

TEST(SummaryParsing, JsonAnswersAreReadToo) {
  auto parsed = parse_summary(
      "```json\n{\"goals\": [\"ship\"], \"filesTouched\": [{\"path\": \"a.cpp\", \"change\": \"fixed\"}], "
      "\"openTasks\": \"- first\\n- second\", \"errors_seen\": [], \"decisions\": [\"none\"], \"extra\": [\"kept\"]}\n"
      "```");
  ASSERT_TRUE(parsed) << parsed.error().message();
  const CompactionSummary& s = parsed->summary;
  EXPECT_EQ(s.goals, std::vector<std::string>{"ship"});
  EXPECT_EQ(s.files_touched, std::vector<std::string>{"a.cpp: fixed"});
  EXPECT_EQ(s.open_tasks, (std::vector<std::string>{"first", "second"}));
  EXPECT_TRUE(s.decisions.empty());
  EXPECT_EQ(s.notes, std::vector<std::string>{"extra: kept"});
  EXPECT_TRUE(parsed->warnings.empty()) << parsed->warnings[0];
}

TEST(SummaryParsing, EmptyAndFormlessAnswers) {
  for (std::string_view empty : {"", "  \n\t\r\n"}) {
    auto r = parse_summary(empty);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), Errc::parse_error);
    EXPECT_NE(r.error().message().find("empty"), std::string::npos);
  }
  auto prose = parse_summary("We fixed the parser and still need to add tests.");
  ASSERT_TRUE(prose);
  EXPECT_EQ(prose->summary.notes, std::vector<std::string>{"We fixed the parser and still need to add tests."});
  EXPECT_EQ(prose->warnings.front(), "no sections recognized: the whole answer is kept under Notes");
  EXPECT_EQ(prose->warnings.size(), 6U);  // that, and five missing sections

  auto nothing = parse_summary("## Goals\n- none\n## Decisions\n- n/a\n");
  ASSERT_TRUE(nothing);
  EXPECT_TRUE(nothing->summary.empty());
  EXPECT_EQ(nothing->warnings.back(), "the summary has no items (every section is empty or \"none\")");
}

TEST(SummaryJson, RoundTripsAndToleratesMissingSections) {
  CompactionSummary s;
  s.goals = {"ship \"v2\""};
  s.files_touched = {"a.cpp", "b.h"};
  s.errors_seen = {"caf\xC3\xA9: error\n"};
  s.notes = {"n"};
  const std::string text = summary_to_json(s).dump();
  EXPECT_EQ(text.rfind("{\"version\":1,\"goals\":[\"ship \\\"v2\\\"\"],\"decisions\":[],", 0), 0U) << text;
  auto back = summary_from_json_text(text);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->goals, s.goals);
  EXPECT_EQ(back->decisions, s.decisions);
  EXPECT_EQ(back->files_touched, s.files_touched);
  EXPECT_EQ(back->open_tasks, s.open_tasks);
  EXPECT_EQ(back->errors_seen, s.errors_seen);
  EXPECT_EQ(back->notes, s.notes);

  auto partial = summary_from_json_text(R"({"goals":["g"]})");
  ASSERT_TRUE(partial);
  EXPECT_EQ(partial->goals, std::vector<std::string>{"g"});
  EXPECT_TRUE(partial->errors_seen.empty());
  EXPECT_FALSE(summary_from_json_text(R"({"goals":"g"})"));
  EXPECT_FALSE(summary_from_json_text(R"({"goals":[1]})"));
  EXPECT_FALSE(summary_from_json_text("[]"));
  EXPECT_FALSE(summary_from_json_text("{bad"));
}

TEST(SummaryRendering, StandsInForTheTurnsWithinItsBudget) {
  CompactionSummary s;
  s.goals = {"ship v2"};
  s.files_touched = {"core/a.cpp: fixed the loop"};
  const SummaryScope scope{"t1", "t8", 8};
  const std::string text = render_summary(s, scope, 2048);
  EXPECT_EQ(text,
            "[Summary of the earlier conversation, turns t1 to t8 (8 turns), compacted by agentd. It stands in for "
            "those turns; their full messages are kept in the session store.]\n"
            "\nGoals:\n- ship v2\n"
            "\nDecisions:\n- none\n"
            "\nFiles touched:\n- core/a.cpp: fixed the loop\n"
            "\nOpen tasks:\n- none\n"
            "\nErrors seen:\n- none\n");

  // Too long: items go, longest section first, and the omission is said.
  CompactionSummary big;
  for (int i = 0; i < 200; ++i) big.files_touched.push_back("src/file_" + std::to_string(i) + ".cpp: edited");
  big.errors_seen = {"the one error that matters"};
  const std::string cut = render_summary(big, scope, 300);
  EXPECT_LE(estimate_tokens(cut), 300U);
  EXPECT_NE(cut.find("the one error that matters"), std::string::npos);
  EXPECT_NE(cut.find("items left out to keep the summary within 300 tokens"), std::string::npos);
  EXPECT_NE(cut.find("src/file_0.cpp"), std::string::npos);
  EXPECT_EQ(cut.find("src/file_199.cpp"), std::string::npos);
  // Not even the headings fit: a hard cut, still within the budget.
  EXPECT_LE(estimate_tokens(render_summary(big, scope, 10)), 10U);
}

// --- pinned text ---------------------------------------------------------------------------------

TEST(CompactionAndPinnedText, PinnedInstructionsSurviveByteForByte) {
  testing::TempDir dir;
  const auto root = std::filesystem::canonical(dir.path());
  std::filesystem::create_directories(root / ".git");
  const std::string agents = "# Rules\r\nAlways run `ninja -j2`  \r\nNo emoji \xF0\x9F\x98\x80 in commits\t\r\n";
  const std::string claude = "Caf\xC3\xA9 rules, no final newline   ";
  testing::write_file(root / "AGENTS.md", agents);
  testing::write_file(root / "CLAUDE.md", claude);
  InstructionOptions io;
  io.cwd = root;
  io.user_file = std::filesystem::path();
  const Instructions instructions = load_instructions(io);
  const std::string pinned = render_instructions(instructions);
  ASSERT_NE(pinned.find(agents), std::string::npos);
  ASSERT_NE(pinned.find(claude), std::string::npos);

  // A history that must be compacted; the pinned text is counted but is not a turn.
  std::vector<TranscriptTurn> transcript;
  CompactionInput in;
  in.pinned_tokens = estimate_tokens(pinned);
  in.new_input_tokens = 10;
  for (int i = 1; i <= 6; ++i) {
    TranscriptTurn t{"t" + std::to_string(i), "user: step " + std::to_string(i) + "\n" + std::string(4000, 'x'), false};
    in.turns.push_back({t.turn_id, estimate_tokens(t.text), false});
    transcript.push_back(std::move(t));
  }
  CompactionOptions o;
  o.context_window = 7000;
  o.reserve_tokens = 1000;
  o.summary_max_tokens = 300;
  const CompactionPlan plan = plan_compaction(in, o);
  ASSERT_EQ(plan.action, CompactionAction::compact) << plan.message;
  ASSERT_EQ(plan.summarize_count, 4U);

  // What goes to the summarizer holds the older turns and none of the pinned text.
  const SummaryRequest request = build_summary_request(std::span(transcript).first(plan.summarize_count), o);
  EXPECT_EQ(request.user.find("# Rules"), std::string::npos);
  EXPECT_EQ(request.system.find("Caf\xC3\xA9"), std::string::npos);
  EXPECT_NE(request.user.find("user: step 4"), std::string::npos);
  EXPECT_EQ(request.user.find("user: step 5"), std::string::npos);

  // The request after compaction: the same pinned bytes, the summary, then the kept turns.
  auto parsed = parse_summary("## Goals\n- finish the steps\n");
  ASSERT_TRUE(parsed);
  const std::string summary = render_summary(
      parsed->summary, {plan.first_turn_id, plan.last_turn_id, plan.summarize_count}, o.summary_max_tokens);
  std::string later = render_instructions(load_instructions(io));
  EXPECT_EQ(later, pinned);  // byte for byte, every time it is rendered
  later += summary;
  for (std::size_t i = plan.summarize_count; i < transcript.size(); ++i) later += transcript[i].text;
  EXPECT_EQ(later.substr(0, pinned.size()), pinned);
  EXPECT_LE(estimate_tokens(later) + in.new_input_tokens, plan.tokens_after);
  EXPECT_LE(plan.tokens_after, plan.limit);
}

}  // namespace
}  // namespace agentd::core::memory
