// apply_edit as a table: unique, none (with candidates), many (with their lines), CRLF, BOM, replace_all,
// and the empty old_string rule.
#include "tools/edit.h"

#include <gtest/gtest.h>

namespace agentd::tools {
namespace {

struct Case {
  std::string name;
  std::string content;
  std::string old_string;
  std::string new_string;
  bool replace_all;
  EditStatus status;
  std::string text;  // applied: the new content
  std::size_t replacements;
  std::size_t first_line;
};

class EditTable : public ::testing::TestWithParam<Case> {};

TEST_P(EditTable, Applies) {
  const Case& c = GetParam();
  const EditOutcome out = apply_edit(c.content, EditRequest{c.old_string, c.new_string, c.replace_all});
  EXPECT_EQ(out.status, c.status) << out.message;
  if (c.status == EditStatus::applied) {
    EXPECT_EQ(out.text, c.text);
    EXPECT_EQ(out.replacements, c.replacements);
    EXPECT_EQ(out.first_line, c.first_line);
    EXPECT_TRUE(out.message.empty());
  } else {
    EXPECT_FALSE(out.message.empty());
    EXPECT_TRUE(out.text.empty());
  }
}

const std::string kBom = "\xEF\xBB\xBF";

INSTANTIATE_TEST_SUITE_P(
    Cases, EditTable,
    ::testing::Values(
        Case{"unique", "a\nb\nc\n", "b\n", "B\nB2\n", false, EditStatus::applied, "a\nB\nB2\nc\n", 1, 2},
        Case{"unique_mid_line", "int x = 1;\n", "= 1", "= 2", false, EditStatus::applied, "int x = 2;\n", 1, 1},
        Case{"delete", "keep\ndrop\nkeep2\n", "drop\n", "", false, EditStatus::applied, "keep\nkeep2\n", 1, 2},
        Case{"none", "a\nb\n", "z", "y", false, EditStatus::no_match, "", 0, 0},
        Case{"many", "x\nx\n", "x", "y", false, EditStatus::many_matches, "", 0, 0},
        Case{"overlapping_is_many", "aaa", "aa", "b", false, EditStatus::many_matches, "", 0, 0},
        Case{"replace_all", "x1 x2 x3\nx4\n", "x", "y", true, EditStatus::applied, "y1 y2 y3\ny4\n", 4, 1},
        Case{"replace_all_no_overlap", "aaaa", "aa", "b", true, EditStatus::applied, "bb", 2, 1},
        Case{"replace_all_single", "one x\n", "x", "y", true, EditStatus::applied, "one y\n", 1, 1},
        Case{"crlf_file_lf_strings", "a\r\nb\r\nc\r\n", "a\nb\n", "a\nB\nextra\n", false, EditStatus::applied,
             "a\r\nB\r\nextra\r\nc\r\n", 1, 1},
        Case{"crlf_file_crlf_strings", "a\r\nb\r\n", "b\r\n", "c\r\nd\r\n", false, EditStatus::applied,
             "a\r\nc\r\nd\r\n", 1, 2},
        Case{"crlf_file_single_line_old", "a\r\nb\r\n", "b", "b\nmore", false, EditStatus::applied,
             "a\r\nb\r\nmore\r\n", 1, 2},
        Case{"lf_file_crlf_strings", "a\nb\n", "a\r\nb", "x\r\ny", false, EditStatus::applied, "x\ny\n", 1, 1},
        Case{"mixed_file_kept_as_written", "a\r\nb\nc\n", "b\nc", "B\nC", false, EditStatus::applied, "a\r\nB\nC\n", 1,
             2},
        Case{"bom_kept", kBom + "first\nsecond\n", "first", "1st", false, EditStatus::applied, kBom + "1st\nsecond\n",
             1, 1},
        Case{"bom_in_old_string_ignored", kBom + "first\n", kBom + "first", "1st", false, EditStatus::applied,
             kBom + "1st\n", 1, 1},
        Case{"bom_not_doubled", kBom + "x\n", "x", kBom + "y", false, EditStatus::applied, kBom + "y\n", 1, 1},
        Case{"empty_old_fills_empty_file", "", "", "new\n", false, EditStatus::applied, "new\n", 1, 1},
        Case{"empty_old_fills_bom_only_file", kBom, "", "new", false, EditStatus::applied, kBom + "new", 1, 1},
        Case{"empty_old_refused_elsewhere", "text\n", "", "x", false, EditStatus::empty_old, "", 0, 0},
        Case{"same_strings", "a\n", "a", "a", false, EditStatus::no_change, "", 0, 0},
        Case{"utf8_untouched", "naïve café\n", "café", "bar", false, EditStatus::applied, "naïve bar\n", 1, 1},
        Case{"last_line_without_newline", "a\nb", "b", "c", false, EditStatus::applied, "a\nc", 1, 2}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(Edit, NoMatchShowsTheClosestCandidatesWithLineNumbers) {
  const std::string content =
      "int main() {\n"
      "  int x = 1;\n"
      "  return x;\n"
      "}\n"
      "\n"
      "int other() {\n"
      "  return 2;\n"
      "}\n";
  // Indentation wrong: only whitespace differs.
  const EditOutcome out =
      apply_edit(content, EditRequest{"int x = 1;\n    return x;", "int x = 2;\n  return x;", false});
  ASSERT_EQ(out.status, EditStatus::no_match);
  EXPECT_EQ(out.matches, 0U);
  ASSERT_FALSE(out.candidates.empty());
  EXPECT_EQ(out.candidates[0].first_line, 2U);
  EXPECT_EQ(out.candidates[0].last_line, 3U);
  EXPECT_GT(out.candidates[0].similarity, 0.9);
  EXPECT_LT(out.candidates[0].similarity, 1.0);
  EXPECT_EQ(out.candidates[0].excerpt, "     2\t  int x = 1;\n     3\t  return x;\n");
  EXPECT_NE(out.message.find("old_string was not found in the file."), std::string::npos) << out.message;
  EXPECT_NE(out.message.find("lines 2-3"), std::string::npos) << out.message;
  EXPECT_NE(out.message.find("Copy old_string exactly"), std::string::npos) << out.message;

  // A near miss in the characters ranks its window first too.
  const EditOutcome typo = apply_edit(content, EditRequest{"  return 22;\n", "  return 4;\n", false});
  ASSERT_EQ(typo.status, EditStatus::no_match);
  ASSERT_FALSE(typo.candidates.empty());
  EXPECT_EQ(typo.candidates[0].first_line, 7U);

  // Nothing close at all.
  const EditOutcome far = apply_edit(content, EditRequest{"completely unrelated text", "x", false});
  EXPECT_TRUE(far.candidates.empty());
  EXPECT_NE(far.message.find("Nothing in the file is close"), std::string::npos) << far.message;
}

TEST(Edit, NoMatchSaysWhenOldStringHasLineNumbers) {
  const EditOutcome out = apply_edit("alpha\nbeta\n", EditRequest{"     1\talpha\n     2\tbeta", "x", false});
  ASSERT_EQ(out.status, EditStatus::no_match);
  EXPECT_NE(out.message.find("read_file's line numbers"), std::string::npos) << out.message;
}

TEST(Edit, ManyMatchesSayHowManyAndWhere) {
  std::string content;
  for (int i = 0; i < 12; ++i) content += "value = 0;\nother\n";
  const EditOutcome out = apply_edit(content, EditRequest{"value = 0;", "value = 1;", false});
  ASSERT_EQ(out.status, EditStatus::many_matches);
  EXPECT_EQ(out.matches, 12U);
  ASSERT_EQ(out.candidates.size(), kEditMaxListedMatches);
  EXPECT_EQ(out.candidates[0].first_line, 1U);
  EXPECT_EQ(out.candidates[1].first_line, 3U);
  EXPECT_EQ(out.candidates[0].similarity, 1.0);
  EXPECT_EQ(out.message,
            "old_string occurs 12 times in the file (starting at lines 1, 3, 5, 7, 9, 11, 13, 15, 17 and 19, ...); it "
            "must match exactly once. Add surrounding lines to old_string to pick one, or set replace_all to true to "
            "change every occurrence.");
}

TEST(Edit, ReplacementIsReportedAsWritten) {
  const EditOutcome out = apply_edit("a\r\nb\r\n", EditRequest{"b", "c\nd", false});
  ASSERT_EQ(out.status, EditStatus::applied);
  EXPECT_EQ(out.replacement, "c\r\nd");
}

TEST(Edit, LargeFilesStayBounded) {
  // 20k lines against a 200-line old_string: the candidate search caps its work instead of going quadratic.
  std::string content;
  for (int i = 0; i < 20000; ++i) content += "line number " + std::to_string(i) + "\n";
  std::string old_string;
  for (int i = 0; i < 200; ++i) old_string += "no such line " + std::to_string(i) + "\n";
  const EditOutcome out = apply_edit(content, EditRequest{old_string, "x", false});
  EXPECT_EQ(out.status, EditStatus::no_match);
}

}  // namespace
}  // namespace agentd::tools
