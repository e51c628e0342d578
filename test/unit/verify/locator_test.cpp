// The shared file:line locator: each format locate_line reads, the cheap has_location test, failure_paths,
// and hostile input (huge lines, no newline, numbers that overflow, `..` in paths, NUL bytes).
#include "tools/verify/locator.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace agentd::tools::verify {
namespace {

struct Expected {
  std::string path;
  std::size_t line;
  std::size_t column;
  LocationFormat format;
  std::string function;
  std::optional<std::size_t> depth;
};

struct Case {
  const char* name;
  std::string line;
  std::string previous;
  std::vector<Expected> locations;
};

class LocateLineTable : public ::testing::TestWithParam<Case> {};

TEST_P(LocateLineTable, FindsEachLocation) {
  const Case& c = GetParam();
  const auto found = locate_line(c.line, c.previous);
  ASSERT_EQ(found.size(), c.locations.size()) << c.line;
  for (std::size_t i = 0; i < found.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(found[i].path, c.locations[i].path);
    EXPECT_EQ(found[i].line, c.locations[i].line);
    EXPECT_EQ(found[i].column, c.locations[i].column);
    EXPECT_EQ(location_format_name(found[i].format), location_format_name(c.locations[i].format));
    EXPECT_EQ(found[i].function, c.locations[i].function);
    EXPECT_EQ(found[i].depth, c.locations[i].depth);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, LocateLineTable,
    ::testing::Values(Case{"python",
                           "  File \"/app/calc.py\", line 12, in add",
                           "",
                           {{"/app/calc.py", 12, 0, LocationFormat::python, "add", std::nullopt}}},
                      Case{"java",
                           "\tat com.acme.Parser.parse(Parser.java:42)",
                           "",
                           {{"Parser.java", 42, 0, LocationFormat::java, "com.acme.Parser.parse", std::nullopt}}},
                      Case{"node_named",
                           "    at parse (/app/src/parser.js:12:5)",
                           "",
                           {{"/app/src/parser.js", 12, 5, LocationFormat::node, "parse", std::nullopt}}},
                      Case{"node_bare_file_url",
                           "    at file:///srv/x.mjs:3:1",
                           "",
                           {{"/srv/x.mjs", 3, 1, LocationFormat::node, "", std::nullopt}}},
                      Case{"node_internal_frames_are_not_the_project", "    at node:internal/main:1:2", "", {}},
                      Case{"go_with_function_from_previous_line",
                           "\t/home/u/proj/main.go:12 +0x1d",
                           "main.handler(0x1)",
                           {{"/home/u/proj/main.go", 12, 0, LocationFormat::go, "main.handler", std::nullopt}}},
                      Case{"rust_compiler",
                           "  --> src/lib.rs:3:5",
                           "",
                           {{"src/lib.rs", 3, 5, LocationFormat::rust, "", std::nullopt}}},
                      Case{"rust_panic",
                           "thread 'main' panicked at src/main.rs:12:5:",
                           "",
                           {{"src/main.rs", 12, 5, LocationFormat::rust, "", std::nullopt}}},
                      Case{"rust_backtrace",
                           "             at ./src/main.rs:7:9",
                           "",
                           {{"./src/main.rs", 7, 9, LocationFormat::rust, "", std::nullopt}}},
                      Case{"sanitizer",
                           "    #3 0x55d5c1 in parse_header(char const*) /src/parser.cpp:12:5",
                           "",
                           {{"/src/parser.cpp", 12, 5, LocationFormat::sanitizer, "parse_header(char const*)", 3}}},
                      Case{"gdb",
                           "#1  0x00005555 in parse (s=0x0) at parser.c:12",
                           "",
                           {{"parser.c", 12, 0, LocationFormat::gdb, "parse", 1}}},
                      Case{"valgrind",
                           "==123==    at 0x4005F4: main (main.c:12)",
                           "",
                           {{"main.c", 12, 0, LocationFormat::valgrind, "main", std::nullopt}}},
                      Case{"compiler_error",
                           "src/x.cpp:12:5: error: expected ';'",
                           "",
                           {{"src/x.cpp", 12, 5, LocationFormat::compiler, "", 0}}},
                      Case{"compiler_warning",
                           "src/x.cpp:7: warning: unused",
                           "",
                           {{"src/x.cpp", 7, 0, LocationFormat::compiler, "", 1}}},
                      Case{"compiler_note",
                           "src/x.h:3:1: note: declared here",
                           "",
                           {{"src/x.h", 3, 1, LocationFormat::compiler, "", 2}}},
                      Case{"generic_in_parentheses",
                           "BUG: null deref (fs/ext4/super.c:5012)",
                           "",
                           {{"fs/ext4/super.c", 5012, 0, LocationFormat::generic, "", std::nullopt}}},
                      Case{"generic_at_line_start",
                           "tests/test_calc.py:9: AssertionError",
                           "",
                           {{"tests/test_calc.py", 9, 0, LocationFormat::generic, "", std::nullopt}}},
                      Case{"generic_several_on_a_line",
                           "(a.go:1) (b.go:2:3)",
                           "",
                           {{"a.go", 1, 0, LocationFormat::generic, "", std::nullopt},
                            {"b.go", 2, 3, LocationFormat::generic, "", std::nullopt}}},
                      Case{"prose_mentions_are_not_locations", "see src/x.go:20 for the details", "", {}},
                      Case{"urls_in_prose_are_not_locations", "see http://example.com/app.js:12 for details", "", {}},
                      Case{"urls_are_not_locations", "fetched http://example.com/app.js:12: 404", "", {}},
                      Case{"file_urls_are_local_paths",
                           "loaded file:///srv/app/main.mjs:3: ok",
                           "",
                           {{"/srv/app/main.mjs", 3, 0, LocationFormat::generic, "", std::nullopt}}},
                      Case{"times_and_ports_are_not_paths", "started 12:30:05 on localhost:8080", "", {}}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(LocateLine, JavaGivesThePathItsPackageImplies) {
  const auto found = locate_line("\tat com.acme.orders.OrderService$Inner.run(OrderService.java:18)");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].package_path, "com/acme/orders/OrderService.java");
}

TEST(LocateLine, HugeLinesNameNothing) {
  const std::string tail = " src/x.py:3: error";
  std::string line(kMaxLocatedLineBytes - tail.size(), 'a');
  line += tail;
  ASSERT_EQ(line.size(), kMaxLocatedLineBytes);
  EXPECT_EQ(locate_line(line).size(), 1u);  // at the limit: still read
  line.insert(0, "a");
  EXPECT_TRUE(locate_line(line).empty());
  EXPECT_TRUE(locate_line(std::string(std::size_t{1} << 20, ':')).empty());
}

TEST(LocateLine, NumbersThatOverflowNameNothing) {
  EXPECT_TRUE(locate_line("src/x.cpp:99999999999999999999999:1: error: x").empty());
  EXPECT_TRUE(locate_line("  File \"x.py\", line 184467440737095516160, in f").empty());
  EXPECT_TRUE(locate_line("src/x.cpp:0: error: line zero").empty());
  // A column too large is dropped, the line kept.
  const auto found = locate_line("  --> src/x.rs:3:99999999999999999999999");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].line, 3u);
  EXPECT_EQ(found[0].column, 0u);
}

TEST(LocateLine, PathsComeBackAsWrittenEvenWithDotDot) {
  // Resolving against the workspace (and refusing an escape) is the caller's job.
  const auto found = locate_line("  --> ../../etc/passwd.rs:1:1");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, "../../etc/passwd.rs");
  EXPECT_EQ(failure_paths("../../secret.py:3: boom"), (std::vector<std::string>{"../../secret.py"}));
}

TEST(LocateLine, EmptyAndBinaryInput) {
  EXPECT_TRUE(locate_line("").empty());
  const std::string junk("\0:\0x.py:\0:1\xff\xfe:2", 16);
  EXPECT_TRUE(locate_line(junk).empty());
  EXPECT_FALSE(has_location(junk));
  EXPECT_TRUE(failure_paths(junk).empty());
}

TEST(HasLocation, NameExtensionColonDigit) {
  EXPECT_TRUE(has_location("calc_test.go:13: Sub(3, 1) = 4, want 2"));
  EXPECT_TRUE(has_location("    at Object.<anonymous> (test/calc.test.js:5:10)"));
  EXPECT_TRUE(has_location("src/x.cpp:12"));  // no newline after it
  EXPECT_FALSE(has_location("src/x.cpp:"));
  EXPECT_FALSE(has_location("src/x.cpp: In function 'int f()':"));
  EXPECT_FALSE(has_location("started 12:30:05 on localhost:8080"));
  EXPECT_FALSE(has_location("file.toolong:3"));  // an extension has at most 5 letters
  EXPECT_FALSE(has_location("see /.py:3"));
  EXPECT_FALSE(has_location(""));
  EXPECT_FALSE(has_location(std::string(std::size_t{1} << 20, ':')));
}

TEST(FailurePaths, PathLineAndPytestIds) {
  const std::string output =
      "FAILED tests/test_calc.py::test_sub - assert 4 == 2\n"
      "tests/test_calc.py:9: AssertionError\n"
      "calc/__init__.py:3: in sub\n"
      "    at file:///tmp/w/test/calc.test.js:12:5\n";
  EXPECT_EQ(failure_paths(output),
            (std::vector<std::string>{"tests/test_calc.py", "calc/__init__.py", "/tmp/w/test/calc.test.js"}));
}

TEST(FailurePaths, OnlySourceFilesCount) {
  EXPECT_TRUE(failure_paths("started 12:30:05 on localhost:8080, version 1.2.3:4\n").empty());
  EXPECT_TRUE(failure_paths("config.json:3: bad\nnotes.txt:1:\n").empty());
  EXPECT_TRUE(failure_paths("x.py:").empty());  // the colon ends the input: no line follows
  EXPECT_EQ(failure_paths("x.py::"), (std::vector<std::string>{"x.py"}));
}

TEST(FailurePaths, HugeInputWithoutNewline) {
  std::string output(std::size_t{1} << 20, 'a');
  output += ".py:1";
  const auto paths = failure_paths(output);
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths[0].size(), (std::size_t{1} << 20) + 3);
  EXPECT_TRUE(failure_paths(std::string(std::size_t{1} << 20, ':')).empty());
}

}  // namespace
}  // namespace agentd::tools::verify
