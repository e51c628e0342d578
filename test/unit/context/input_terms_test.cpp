#include "core/context/input_terms.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/context/word_keys.h"

namespace agentd::core::context {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(InputTerms, PathsWithAndWithoutLines) {
  const auto terms = extract_terms(
      "Look at src/parser.cpp:21 and `include/ini.h`, then tests/parser_test.cpp:10-20. Also main.go and the "
      "Makefile. Not e.g. this, nor v1.2 or https://example.com/x.js.",
      {});
  ASSERT_EQ(terms.paths.size(), 5U);
  EXPECT_EQ(terms.paths[0].path, "include/ini.h");
  EXPECT_EQ(terms.paths[1].path, "src/parser.cpp");
  EXPECT_EQ(terms.paths[1].line, 21U);
  EXPECT_EQ(terms.paths[2].path, "tests/parser_test.cpp");
  EXPECT_EQ(terms.paths[2].line, 10U);
  EXPECT_EQ(terms.paths[2].end_line, 20U);
  EXPECT_EQ(terms.paths[3].path, "main.go");
  EXPECT_EQ(terms.paths[4].path, "Makefile");
}

TEST(InputTerms, Globs) {
  const auto terms = extract_terms("update every *.yaml under deploy/ and `src/**/*.ts`; is it ok?", {});
  EXPECT_EQ(terms.globs, (std::vector<std::string>{"src/**/*.ts", "*.yaml"}));
}

TEST(InputTerms, IdentifiersMostSpecificFirst) {
  const auto terms = extract_terms(
      "The HttpClient calls parse_header_line too often; see `lookup` and retry() in OrderService.confirmationFor, "
      "not the README or a ValueError.",
      {});
  EXPECT_EQ(terms.identifiers, (std::vector<std::string>{"lookup", "retry", "HttpClient", "parse_header_line",
                                                         "OrderService", "confirmationFor"}));
}

TEST(InputTerms, QuotedStringsAreMessages) {
  const auto terms = extract_terms(
      "It prints \"total cannot be negative\" and then 'an order needs at least one item'. Don't "
      "worry about 'x'.",
      {});
  EXPECT_EQ(terms.quoted, (std::vector<std::string>{"total cannot be negative", "an order needs at least one item"}));
}

// A backticked message is no list of names: `is` and `a` are prose. Its fixed parts, between the quoted
// names, numbers, paths and flags, are searched as written; so are an error line's.
TEST(InputTerms, MessagesGiveTheirFixedPartsNotTheirWords) {
  const auto terms = extract_terms(
      "`[bat error]: 'conf.d' is a directory.` is written to STDOUT\n"
      "ValueError: I/O operation on closed file.\n"
      "jq: error (at <stdin>:0): Cannot index number with \"foo\"\n"
      "`run -e production --port 4567 now` fails",
      {});
  EXPECT_FALSE(has(terms.identifiers, "is")) << ::testing::PrintToString(terms.identifiers);
  EXPECT_FALSE(has(terms.identifiers, "directory"));
  EXPECT_FALSE(has(terms.identifiers, "bat"));
  EXPECT_EQ(terms.quoted, (std::vector<std::string>{"bat error", "is a directory", "operation on closed file",
                                                    "Cannot index number with"}));
}

// What a program prints as is, backticked, is in its source as is: searched whole when nothing in it varies.
TEST(InputTerms, AFixedBacktickedOutputIsSearchedWhole) {
  const auto terms = extract_terms(
      "It inserts `<skipped: too deep>` into the output, and `cat deep.json | jq -c` shows it.\n"
      "Also `retry 3 times` and `it's done`.",
      {});
  EXPECT_TRUE(has(terms.quoted, "<skipped: too deep>")) << ::testing::PrintToString(terms.quoted);
  EXPECT_FALSE(has(terms.quoted, "cat deep.json | jq -c"));  // a flag: a command line
  EXPECT_FALSE(has(terms.quoted, "retry 3 times"));          // a number varies
  EXPECT_FALSE(has(terms.quoted, "it's done"));              // a quote: a value inside
}

// A reproducer's own functions are the reporter's names, not the project's.
TEST(InputTerms, NamesTheReportDefinesAreNotSearched) {
  const auto terms = extract_terms(
      "Calling echo_via_pager() under CliRunner fails:\n"
      "    @command()\n"
      "    def cli():\n"
      "        echo_via_pager(\"Hello\")\n"
      "    CliRunner().invoke(cli)\n"
      "    pub fn main_loop() { run_app(); }\n",
      {});
  EXPECT_TRUE(has(terms.identifiers, "echo_via_pager"));
  EXPECT_TRUE(has(terms.identifiers, "CliRunner"));
  EXPECT_TRUE(has(terms.identifiers, "run_app"));
  EXPECT_FALSE(has(terms.identifiers, "cli"));
  EXPECT_FALSE(has(terms.identifiers, "main_loop"));
}

TEST(InputTerms, SkippedLinesGiveNothing) {
  const auto terms =
      extract_terms("see parse_document\n  File \"app/billing.py\", line 14, in discount_percent\n", {2});
  EXPECT_EQ(terms.identifiers, std::vector<std::string>{"parse_document"});
  EXPECT_TRUE(terms.paths.empty());
}

TEST(InputTerms, TestNamesFromEachRunner) {
  const auto terms = extract_terms(
      "FAILED tests/test_billing.py::test_unknown_discount_code_is_ignored - KeyError: 'SPRING'\n"
      "[  FAILED  ] ParserTest.IgnoresLinesWithoutEquals (0 ms)\n"
      "--- FAIL: TestPrimaryWithoutTargets (0.00s)\n"
      "test tests::rejects_letters ... FAILED\n"
      "OrderServiceTest > confirmationForUnknownOrder() FAILED\n"
      "\xE2\x97\x8F Cart \xE2\x80\xBA totals products without a price object\n",
      {});
  ASSERT_EQ(terms.tests.size(), 6U);
  EXPECT_EQ(terms.tests[0].name, "test_unknown_discount_code_is_ignored");
  EXPECT_EQ(terms.tests[0].path, "tests/test_billing.py");
  EXPECT_EQ(terms.tests[1].name, "IgnoresLinesWithoutEquals");
  EXPECT_EQ(terms.tests[1].suite, "ParserTest");
  EXPECT_EQ(terms.tests[2].name, "TestPrimaryWithoutTargets");
  EXPECT_EQ(terms.tests[3].name, "rejects_letters");
  EXPECT_EQ(terms.tests[3].suite, "tests");
  EXPECT_EQ(terms.tests[4].name, "confirmationForUnknownOrder");
  EXPECT_EQ(terms.tests[4].suite, "OrderServiceTest");
  EXPECT_EQ(terms.tests[5].name, "totals products without a price object");
  EXPECT_EQ(terms.tests[5].origin, "jest");
}

TEST(InputTerms, Limits) {
  std::string input;
  for (int i = 0; i < 30; ++i) input += "name_" + std::to_string(i) + " ";
  TermLimits limits;
  limits.max_identifiers = 5;
  EXPECT_EQ(extract_terms(input, {}, limits).identifiers.size(), 5U);
}

TEST(InputTerms, IdentifierWords) {
  EXPECT_EQ(identifier_words("parseHTTPHeader"), (std::vector<std::string>{"parse", "http", "header"}));
  EXPECT_EQ(identifier_words("ext4_fill_super"), (std::vector<std::string>{"ext4", "fill", "super"}));
  EXPECT_EQ(identifier_words("OrderService"), (std::vector<std::string>{"order", "service"}));
  EXPECT_TRUE(has(identifier_words("src/tokenizer.rs"), "tokenizer"));
}

TEST(ReportWords, ProseFlagsAndIdentifiersBecomeLowerCaseWords) {
  const auto words = report_words(
      "The timeoutErrorMessage option does not work with --color=always on Node 12.19.\n"
      "Expected the custom message, got `timeout of 250ms exceeded`. The timeout is ignored.",
      24);
  const std::vector<std::string> expected = {"timeout", "error",  "message",  "option", "color",
                                             "node",    "custom", "exceeded", "ignored"};
  EXPECT_EQ(words, expected);
  EXPECT_EQ(report_words("Cookie cookie COOKIE cookies", 24), (std::vector<std::string>{"cookie", "cookies"}));
  EXPECT_EQ(report_words("alpha bravo charlie delta", 2), (std::vector<std::string>{"alpha", "bravo"}));
  EXPECT_TRUE(report_words("it is a bug, when I do this it should work", 24).empty());
  EXPECT_TRUE(report_words("v1.2.3 utf8 x86 0xdead", 24).empty());  // digits: versions, not words
}

// A word is searched by its stem, the start its forms share; short stems stay whole words.
TEST(ReportWords, AWordIsSearchedByTheStemItsFormsShare) {
  EXPECT_EQ(word_key("routing"), "rout");
  EXPECT_EQ(word_key("routes"), "rout");
  EXPECT_EQ(word_key("directories"), "director");  // matches directory too
  EXPECT_EQ(word_key("directory"), "director");
  EXPECT_EQ(word_key("encoding"), "encod");
  EXPECT_EQ(word_key("timeout"), "timeout");
  EXPECT_EQ(word_key("uses"), "uses");  // "use": too short to search inside words
  EXPECT_EQ(word_key(""), "");
  const auto terms = extract_terms("Routing fails: the router routes nothing; routing again fails.", {});
  EXPECT_EQ(terms.word_keys, (std::vector<std::string>{"rout", "fail", "router", "noth"}));
}

}  // namespace
}  // namespace agentd::core::context
