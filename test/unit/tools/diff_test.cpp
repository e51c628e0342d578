// unified_diff: exact output for the shapes that matter (context, merged hunks, empty sides, no newline at
// end), a round trip through our own applier on generated cases, and GNU patch as the oracle when it is
// installed (scripts/deps.sh installs it).
#include "tools/diff.h"

#include <unistd.h>

#include <cstdlib>
#include <random>

#include <gtest/gtest.h>

#include "test/support/temp_dir.h"
#include "test/unit/tools/tool_harness.h"

namespace agentd::tools {
namespace {

UnifiedDiff diff_of(std::string_view before, std::string_view after, std::size_t context = 3) {
  DiffOptions options;
  options.context = context;
  options.old_label = "f.txt";
  options.new_label = "f.txt";
  return unified_diff(before, after, options);
}

std::string numbered(int from, int to) {
  std::string out;
  for (int i = from; i <= to; ++i) out += std::to_string(i) + "\n";
  return out;
}

TEST(Diff, EqualTextsHaveNoDiff) {
  const UnifiedDiff d = diff_of("a\nb\n", "a\nb\n");
  EXPECT_EQ(d.text, "");
  EXPECT_EQ(d.stats.hunks, 0U);
  EXPECT_EQ(*apply_unified_diff("a\nb\n", d.text), "a\nb\n");
}

TEST(Diff, OneChangeWithThreeLinesOfContext) {
  std::string after = numbered(1, 10);
  after.replace(after.find("5\n"), 2, "five\n");
  const UnifiedDiff d = diff_of(numbered(1, 10), after);
  EXPECT_EQ(d.text,
            "--- f.txt\n+++ f.txt\n"
            "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
  EXPECT_EQ(d.stats.added, 1U);
  EXPECT_EQ(d.stats.removed, 1U);
  EXPECT_EQ(d.stats.hunks, 1U);
}

// The common head and tail are set aside as bytes before lines are compared: the hunk is the one a small
// file gives, at its line, and the far ends of the file are never split into lines.
TEST(Diff, AnEditDeepInALargeFileGivesItsHunkAtItsLine) {
  const std::string before = numbered(1, 200000);
  std::string after = before;
  const std::string line = "\n100000\n";
  after.replace(after.find(line) + 1, 6, "changed");
  const UnifiedDiff d = diff_of(before, after);
  EXPECT_EQ(d.text,
            "--- f.txt\n+++ f.txt\n@@ -99997,7 +99997,7 @@\n 99997\n 99998\n 99999\n-100000\n+changed\n 100001\n"
            " 100002\n 100003\n");
  EXPECT_EQ(d.stats.hunks, 1u);
  // Two edits far apart: two hunks, each at its own line.
  std::string twice = after;
  twice.replace(twice.find("\n7\n") + 1, 1, "seven");
  const UnifiedDiff two = diff_of(before, twice);
  EXPECT_EQ(two.stats.hunks, 2u);
  EXPECT_NE(two.text.find("@@ -4,7 +4,7 @@\n 4\n 5\n 6\n-7\n+seven\n"), std::string::npos) << two.text;
  EXPECT_NE(two.text.find("@@ -99997,7 +99997,7 @@"), std::string::npos) << two.text;
  // A change at the very end, without a newline there.
  std::string end = before;
  end.back() = '!';
  EXPECT_EQ(diff_of(before, end).text,
            "--- f.txt\n+++ f.txt\n@@ -199997,4 +199997,4 @@\n 199997\n 199998\n 199999\n-200000\n+200000!\n"
            "\\ No newline at end of file\n");
}

TEST(Diff, NearbyChangesShareAHunkAndFarOnesDoNot) {
  // Changes at 3 and 10: six equal lines between them, not more than 2 * 3, so one hunk.
  std::string near = numbered(1, 20);
  near.replace(near.find("\n3\n") + 1, 2, "c\n");
  near.replace(near.find("\n10\n") + 1, 3, "j\n");
  EXPECT_EQ(diff_of(numbered(1, 20), near).stats.hunks, 1U);
  // Changes at 3 and 11: seven equal lines between them, so two hunks.
  std::string far = numbered(1, 20);
  far.replace(far.find("\n3\n") + 1, 2, "c\n");
  far.replace(far.find("\n11\n") + 1, 3, "k\n");
  const UnifiedDiff d = diff_of(numbered(1, 20), far);
  EXPECT_EQ(d.stats.hunks, 2U);
  EXPECT_EQ(d.text,
            "--- f.txt\n+++ f.txt\n"
            "@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+c\n 4\n 5\n 6\n"
            "@@ -8,7 +8,7 @@\n 8\n 9\n 10\n-11\n+k\n 12\n 13\n 14\n");
}

TEST(Diff, EmptySidesUseLineZero) {
  EXPECT_EQ(diff_of("", "a\nb\n").text, "--- f.txt\n+++ f.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  EXPECT_EQ(diff_of("a\n", "").text, "--- f.txt\n+++ f.txt\n@@ -1 +0,0 @@\n-a\n");
  // An insertion without context names the line before it.
  EXPECT_EQ(diff_of("a\nb\n", "a\nx\nb\n", 0).text, "--- f.txt\n+++ f.txt\n@@ -1,0 +2 @@\n+x\n");
}

TEST(Diff, MissingNewlineAtEndIsMarked) {
  EXPECT_EQ(diff_of("a\nb", "a\nb\n").text,
            "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
  EXPECT_EQ(diff_of("a\n", "a\nc").text, "--- f.txt\n+++ f.txt\n@@ -1 +1,2 @@\n a\n+c\n\\ No newline at end of file\n");
  EXPECT_EQ(*apply_unified_diff("a\nb", diff_of("a\nb", "a\nb\n").text), "a\nb\n");
  EXPECT_EQ(*apply_unified_diff("a\n", diff_of("a\n", "a\nc").text), "a\nc");
}

TEST(Diff, CarriageReturnsArePartOfTheLine) {
  const UnifiedDiff d = diff_of("a\r\nb\r\n", "a\r\nc\r\n");
  EXPECT_EQ(d.text, "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n");
}

TEST(Diff, ApplierRefusesWhatDoesNotFit) {
  const std::string d = diff_of("a\nb\nc\n", "a\nB\nc\n").text;
  auto wrong = apply_unified_diff("a\nx\nc\n", d);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code(), support::Errc::conflict);
  EXPECT_EQ(apply_unified_diff("a\n", "not a diff").error().code(), support::Errc::parse_error);
}

// Texts over a tiny alphabet of lines, so that random edits leave many equal lines to align.
std::string random_text(std::mt19937& rng, int max_lines) {
  static const char* const kLines[] = {"a", "b", "c", "{", "}", "", "  x = 1;", "a\r"};
  std::uniform_int_distribution<int> count(0, max_lines);
  std::uniform_int_distribution<int> pick(0, 7);
  std::string out;
  const int n = count(rng);
  for (int i = 0; i < n; ++i) out += std::string(kLines[pick(rng)]) + "\n";
  if (!out.empty() && rng() % 4 == 0) out.pop_back();  // sometimes no newline at the end
  return out;
}

std::string mutate(std::mt19937& rng, const std::string& text) {
  auto lines = std::vector<std::string>();
  std::string rest = text;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    lines.push_back(rest.substr(0, nl == std::string::npos ? rest.size() : nl + 1));
    rest.erase(0, lines.back().size());
  }
  const int edits = static_cast<int>(rng() % 5);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = lines.empty() ? 0 : rng() % (lines.size() + 1);
    switch (rng() % 3) {
      case 0: lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), "new" + std::to_string(e) + "\n"); break;
      case 1:
        if (at < lines.size()) lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      default:
        if (at < lines.size()) lines[at] = "changed\n";
        break;
    }
  }
  std::string out;
  for (const auto& l : lines) out += l;
  if (!out.empty() && out.back() == '\n' && rng() % 5 == 0) out.pop_back();
  return out;
}

TEST(Diff, RandomEditsRoundTripThroughTheApplier) {
  std::mt19937 rng(20261202);
  for (int i = 0; i < 3000; ++i) {
    const std::string before = random_text(rng, 30);
    const std::string after = rng() % 3 == 0 ? random_text(rng, 30) : mutate(rng, before);
    const std::size_t context = rng() % 4;
    const UnifiedDiff d = diff_of(before, after, context);
    auto applied = apply_unified_diff(before, d.text);
    ASSERT_TRUE(applied) << applied.error().message() << "\n" << d.text;
    ASSERT_EQ(*applied, after) << d.text;
  }
}

TEST(Diff, TheEditDistanceCapStillGivesACorrectDiff) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    const std::string before = random_text(rng, 60);
    const std::string after = random_text(rng, 60);
    DiffOptions options;
    options.old_label = options.new_label = "f";
    options.max_edit_distance = 3;
    const UnifiedDiff d = unified_diff(before, after, options);
    ASSERT_EQ(*apply_unified_diff(before, d.text), after) << d.text;
  }
}

// GNU patch, the reference reader of unified diffs.
TEST(Diff, PatchAppliesOurDiffs) {
  if (::access("/usr/bin/patch", X_OK) != 0 && std::system("command -v patch >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "patch is not installed (scripts/deps.sh installs it); the oracle test is skipped";
  }
  agentd::testing::TempDir dir;
  std::mt19937 rng(42);
  for (int i = 0; i < 150; ++i) {
    const std::string before = random_text(rng, 25);
    const std::string after = mutate(rng, before);
    const UnifiedDiff d = diff_of(before, after);
    if (d.text.empty()) continue;
    testing::write_text(dir.path() / "f.txt", before);
    testing::write_text(dir.path() / "f.patch", d.text);
    const std::string command = "cd '" + dir.path().string() +
                                "' && patch -p0 -s -f --binary --no-backup-if-mismatch -i f.patch >patch.log 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << testing::read_text(dir.path() / "patch.log") << "\n--- before:\n"
                                               << before << "\n--- diff:\n"
                                               << d.text;
    ASSERT_EQ(testing::read_text(dir.path() / "f.txt"), after) << d.text;
  }
}

}  // namespace
}  // namespace agentd::tools
