#include "tools/search.h"

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test/support/temp_dir.h"
#include "test/unit/tools/tool_harness.h"
#include "tools/builtin/builtin_tools.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;

Matcher compile(std::string pattern, bool literal = false, bool case_insensitive = false) {
  auto matcher = Matcher::compile(SearchPattern{std::move(pattern), literal, case_insensitive});
  EXPECT_TRUE(matcher) << matcher.error().message();
  return std::move(matcher).value();
}

// "N:text" for matches and "N-text" for context lines, one string per line.
std::vector<std::string> lines_of(const FileMatches& file) {
  std::vector<std::string> out;
  for (const auto& line : file.lines)
    out.push_back(fmt::format("{}{}{}", line.number, line.is_match ? ':' : '-', line.text));
  return out;
}

std::vector<std::string> search(std::string_view text, const Matcher& matcher, std::size_t before = 0,
                                std::size_t after = 0) {
  SearchOptions options;
  options.context_before = before;
  options.context_after = after;
  return lines_of(search_text(matcher, text, options));
}

using Lines = std::vector<std::string>;

TEST(MatcherTest, PlainTextIsSearchedAsALiteral) {
  EXPECT_EQ(compile("EXPORT_SYMBOL_GPL").strategy(), "literal");
  EXPECT_EQ(compile("a.b(", true).strategy(), "literal");
  EXPECT_EQ(compile("a.b").strategy(), "regex");
  // A regex whose every match holds a literal finds the literal first.
  EXPECT_EQ(compile(R"(static\s+int\s+\w+_probe\()").strategy(), "regex+literal");
  // Case folding beyond ASCII (`(?i)k` matches the Kelvin sign) rules the ASCII prefilter out.
  EXPECT_EQ(compile("(?i)kelvin").strategy(), "regex");
  EXPECT_EQ(compile("kelvin", false, true).strategy(), "regex");
  // An alternation has no single required literal.
  EXPECT_EQ(compile("alpha|omega").strategy(), "regex");
}

TEST(MatcherTest, LiteralMatchesAnywhereInALine) {
  const std::string text = "one\nfind me here\nnothing\nme too: find\nfin\n";
  EXPECT_EQ(search(text, compile("find")), (Lines{"2:find me here", "4:me too: find"}));
  // Metacharacters are plain text with literal:true.
  EXPECT_EQ(search("a.b(\naxb(\n", compile("a.b(", true)), (Lines{"1:a.b("}));
  // Needles at the very start and end of the text, and a text without a final newline.
  EXPECT_EQ(search("xyz\nabc\nxyz", compile("xyz")), (Lines{"1:xyz", "3:xyz"}));
  EXPECT_EQ(search("", compile("x")), Lines{});
}

TEST(MatcherTest, RegexMatchesLineByLine) {
  const std::string text = "foo1\nbar\nfoo22 and foo3\n  return x;\nreturned\n";
  EXPECT_EQ(search(text, compile(R"(foo\d+)")), (Lines{"1:foo1", "3:foo22 and foo3"}));
  EXPECT_EQ(search(text, compile(R"(^\s*return\b)")), (Lines{"4:  return x;"}));
  // `^` and `$` are line anchors.
  EXPECT_EQ(search("ab\nb\nbb\n", compile("^b$")), (Lines{"2:b"}));
  EXPECT_EQ(search("ab\nb\nbb\n", compile("b$")), (Lines{"1:ab", "2:b", "3:bb"}));
  // The prefiltered path agrees.
  EXPECT_EQ(search("static int x_probe(void)\nstatic  int\ty_probe(\nint z_probe(\n_probe(\n",
                   compile(R"(static\s+int\s+\w+_probe\()")),
            (Lines{"1:static int x_probe(void)", "2:static  int\ty_probe("}));
}

TEST(MatcherTest, MatchesNeverSpanLines) {
  // `\s`, negated classes and `.` cannot cross a line break, as in grep and rg.
  EXPECT_EQ(search("a\nb\n", compile(R"(a\s+b)")), Lines{});
  EXPECT_EQ(search("a\nb\n", compile("a[^x]b")), Lines{});
  EXPECT_EQ(search("a\nb\n", compile("(?s)a.b")), Lines{});
  EXPECT_EQ(search("static\nint foo_probe(\n", compile(R"(static\s+int\s+\w+_probe\()")), Lines{});
  // An empty match still names its line; nothing past the final newline is a line.
  EXPECT_EQ(search("a\n\nb\n", compile("^$")), (Lines{"2:"}));
  EXPECT_EQ(search("a\nb", compile("^")), (Lines{"1:a", "2:b"}));
}

TEST(MatcherTest, CaseInsensitive) {
  const std::string text = "Hello\nhELLO world\nhelo\n";
  EXPECT_EQ(search(text, compile("hello", false, true)), (Lines{"1:Hello", "2:hELLO world"}));
  EXPECT_EQ(search(text, compile("HELLO", true, true)), (Lines{"1:Hello", "2:hELLO world"}));
  EXPECT_EQ(search(text, compile("hello")), Lines{});
  EXPECT_EQ(search("K\xE2\x84\xAA\n", compile("kk", false, true)), (Lines{"1:K\xE2\x84\xAA"}));  // Kelvin sign
}

TEST(MatcherTest, InvalidRegexAndLineBreaks) {
  auto bad = Matcher::compile(SearchPattern{"foo(", false, false});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::invalid_argument);
  EXPECT_EQ(bad.error().message(), "missing ): foo(");
  auto lookahead = Matcher::compile(SearchPattern{"a(?=b)", false, false});
  ASSERT_FALSE(lookahead);
  EXPECT_EQ(lookahead.error().message(), "invalid perl operator: (?=");
  // The same text is fine as a literal.
  EXPECT_TRUE(Matcher::compile(SearchPattern{"foo(", true, false}));
  auto newline = Matcher::compile(SearchPattern{"a\nb", true, false});
  ASSERT_FALSE(newline);
  EXPECT_EQ(newline.error().code(), Errc::invalid_argument);
}

TEST(SearchTextTest, ContextLinesMergeAndStayInOrder) {
  const std::string text = "l1\nl2\nhit3\nl4\nl5\nl6\nhit7\nhit8\nl9\nl10\nl11\nl12\nhit13";
  EXPECT_EQ(search(text, compile("hit"), 1, 1),
            (Lines{"2-l2", "3:hit3", "4-l4", "6-l6", "7:hit7", "8:hit8", "9-l9", "12-l12", "13:hit13"}));
  EXPECT_EQ(search(text, compile("hit"), 2, 0),
            (Lines{"1-l1", "2-l2", "3:hit3", "5-l5", "6-l6", "7:hit7", "8:hit8", "11-l11", "12-l12", "13:hit13"}));
  // Context never reaches before the first line or past the last one.
  EXPECT_EQ(search("hit\nx\n", compile("hit"), 3, 3), (Lines{"1:hit", "2-x"}));
  EXPECT_EQ(search("\n\nhit\n", compile("hit"), 5, 0), (Lines{"1-", "2-", "3:hit"}));
}

TEST(SearchTextTest, LongLinesAreCut) {
  SearchOptions options;
  options.max_line_bytes = 10;
  // 'é' is two bytes; the cut does not split it.
  const auto file = search_text(compile("needle"), "needle \xC3\xA9\xC3\xA9xxxxxxxx\nneedle\n", options);
  ASSERT_EQ(file.lines.size(), 2U);
  EXPECT_EQ(file.lines[0].text, "needle \xC3\xA9");
  EXPECT_EQ(file.lines[0].cut_bytes, 10U);
  EXPECT_EQ(file.lines[1].text, "needle");
  EXPECT_EQ(file.lines[1].cut_bytes, 0U);
}

TEST(SearchTextTest, KeptLinesStopAtTheBudgetButCountingGoesOn) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += fmt::format("match {}\n", i);
  SearchOptions options;
  options.max_kept_bytes = 200;
  const auto file = search_text(compile("match"), text, options);
  EXPECT_EQ(file.matched_lines, 1000U);
  EXPECT_FALSE(file.complete);
  EXPECT_LT(file.lines.size(), 20U);
  EXPECT_EQ(file.lines.back().number, file.lines.size());
}

TEST(PathOrderTest, ComponentWise) {
  EXPECT_TRUE(path_less("a/b", "a-c"));
  EXPECT_TRUE(path_less("a/z", "a.c"));
  EXPECT_TRUE(path_less("a", "a/b"));
  EXPECT_FALSE(path_less("b", "a/b"));
  EXPECT_FALSE(path_less("a", "a"));
}

class SearchFilesTest : public ::testing::Test {
 protected:
  std::string write(const std::string& relative, std::string_view text) {
    testing::write_text(root() / relative, text);
    return (root() / relative).string();
  }
  fs::path root() const { return fs::canonical(temp_.path()); }

  agentd::testing::TempDir temp_;
};

TEST_F(SearchFilesTest, BinaryFilesAreSkipped) {
  const std::string text = write("text.txt", "needle\n");
  const std::string binary = write("blob.bin", std::string("\0needle\n", 8));
  std::string late(kBinarySniffBytes + 10, 'x');
  late += std::string("\0needle\n", 8);  // a NUL past the sniffed prefix: searched as text
  const std::string late_nul = write("late.txt", late);
  auto report =
      search_files(compile("needle"), {{text, "text.txt"}, {binary, "blob.bin"}, {late_nul, "late.txt"}}, {}, {});
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->searched_files, 3U);
  EXPECT_EQ(report->binary_files, 1U);
  ASSERT_EQ(report->files.size(), 2U);
  EXPECT_EQ(report->files[0].path, "late.txt");
  EXPECT_EQ(report->files[1].path, "text.txt");
}

TEST_F(SearchFilesTest, MissingFilesCountAsUnreadable) {
  auto report = search_files(compile("x"), {{(root() / "nope").string(), "nope"}}, {}, {});
  ASSERT_TRUE(report);
  EXPECT_EQ(report->unreadable_files, 1U);
  EXPECT_EQ(report->matched_files, 0U);
}

// Whichever thread finishes first, the kept files are the first ones in path order, and everything
// dropped is counted.
TEST_F(SearchFilesTest, CapKeepsThePathOrderPrefixWhateverTheThreads) {
  std::vector<SearchTarget> targets;
  for (int i = 0; i < 200; ++i) {
    const std::string name = fmt::format("f{:03}.txt", (i * 37) % 200);  // queued out of order
    std::string text;
    for (int j = 0; j <= i % 5; ++j) text += fmt::format("hit {} {}\n", name, j);
    targets.push_back({write(name, text), name});
  }
  SearchOptions options;
  options.max_kept_bytes = 2000;
  std::vector<std::string> first_paths;
  for (std::size_t threads : {1, 2, 4}) {
    options.threads = threads;
    auto report = search_files(compile("hit"), targets, options, {});
    ASSERT_TRUE(report);
    EXPECT_EQ(report->matched_files, 200U);
    EXPECT_EQ(report->matched_lines, 600U);
    std::size_t kept_lines = 0;
    std::vector<std::string> paths;
    for (const auto& file : report->files) {
      kept_lines += file.matched_lines;
      paths.push_back(file.path);
    }
    EXPECT_EQ(report->files.size() + report->omitted_files, 200U);
    EXPECT_EQ(kept_lines + report->omitted_lines, 600U);
    EXPECT_LT(report->files.size(), 200U);
    ASSERT_FALSE(paths.empty());
    for (std::size_t i = 0; i < paths.size(); ++i) EXPECT_EQ(paths[i], fmt::format("f{:03}.txt", i));
    if (first_paths.empty()) first_paths = paths;
    // At least the budget's worth is kept, so a caller cutting at the budget cuts in the same place.
    EXPECT_GE(paths.size(), first_paths.size() - 1);
  }
}

TEST_F(SearchFilesTest, CancelledBeforeOrDuringTheSearch) {
  support::CancelSource source;
  source.cancel();
  auto before = search_files(compile("x"), {{write("a", "x\n"), "a"}}, {}, source.token());
  ASSERT_FALSE(before);
  EXPECT_EQ(before.error().code(), Errc::cancelled);

  // Cancelled from inside the walk (the include filter runs on the walking thread), after some files.
  for (int i = 0; i < 50; ++i) write(fmt::format("tree/f{}.txt", i), "x\n");
  support::CancelSource during;
  int seen = 0;
  auto include = [&](std::string_view) {
    if (++seen == 10) during.cancel();
    return true;
  };
  auto report = search_tree(compile("x"), (root() / "tree").string(), "", WalkOptions{}, include, {}, during.token());
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code(), Errc::cancelled);
}

TEST_F(SearchFilesTest, TreeFollowsIgnoreRulesAndTheDenyList) {
  fs::create_directories(root() / "ws" / ".git");
  write("ws/.gitignore", "build/\n*.log\n");
  write("ws/src/a.cpp", "int needle = 1;\n");
  write("ws/src/b.h", "// needle\n");
  write("ws/build/out.cpp", "needle\n");
  write("ws/debug.log", "needle\n");
  write("ws/.hidden/x.txt", "needle\n");
  write("ws/.env", "NEEDLE=needle\n");
  write("ws/keys/server.pem", "needle\n");
  fs::create_symlink(root() / "ws" / "src" / "a.cpp", root() / "ws" / "link.cpp");
  auto report = search_tree(compile("needle"), (root() / "ws").string(), "ws/", WalkOptions{}, {}, {}, {});
  ASSERT_TRUE(report) << report.error().message();
  std::vector<std::string> paths;
  for (const auto& file : report->files) paths.push_back(file.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"ws/src/a.cpp", "ws/src/b.h"}));

  // With hidden files on, .env is still a secret (the deny list), and .git is never entered.
  write("ws/.git/config", "needle\n");
  WalkOptions hidden;
  hidden.hidden = true;
  auto with_hidden = search_tree(compile("needle"), (root() / "ws").string(), "", hidden, {}, {}, {});
  ASSERT_TRUE(with_hidden);
  paths.clear();
  for (const auto& file : with_hidden->files) paths.push_back(file.path);
  EXPECT_EQ(paths, (std::vector<std::string>{".hidden/x.txt", "src/a.cpp", "src/b.h"}));

  auto only_headers = search_tree(compile("needle"), (root() / "ws").string(), "", WalkOptions{},
                                  [](std::string_view relative) { return relative.ends_with(".h"); }, {}, {});
  ASSERT_TRUE(only_headers);
  ASSERT_EQ(only_headers->files.size(), 1U);
  EXPECT_EQ(only_headers->files[0].path, "src/b.h");
  EXPECT_EQ(only_headers->files[0].lines[0].text, "// needle");
}

}  // namespace
}  // namespace agentd::tools
