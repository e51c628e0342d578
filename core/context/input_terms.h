// What a prompt names besides stack frames: file paths (with an optional line), globs, test names,
// identifiers and quoted strings. Pure text in, terms out, each with enough of its origin to explain why
// it became a candidate.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace agentd::core::context {

struct PathMention {
  std::string path;          // as written, without a trailing ":12" or ":12-30"
  std::size_t line = 0;      // 0: no line given
  std::size_t end_line = 0;  // "path:12-30": 30; else 0
};

struct TestName {
  std::string name;    // the test function or case ("test_parse_empty", "TestParse", "ParsesEmpty")
  std::string suite;   // gtest suite, Java class, Rust module path; may be empty
  std::string path;    // a file the output names (pytest "tests/test_x.py::test_y"); may be empty
  std::string origin;  // which output format: "pytest", "gtest", "go test", "cargo test", "junit", "jest", "name"
};

struct InputTerms {
  std::vector<PathMention> paths;
  std::vector<std::string> globs;
  std::vector<TestName> tests;
  std::vector<std::string> identifiers;  // most specific first (backticked, then called, then the rest)
  std::vector<std::string> quoted;       // quoted strings worth a literal search (error messages)
  // The report's words, as a reporter writes them in prose, flags and code alike: lower case, identifiers
  // split into their words ("timeoutErrorMessage": timeout, error, message; "--color": color), at least 4
  // letters, English and bug-report stop words left out, each once, in order of first use.
  std::vector<std::string> words;
  // What the words are searched by: each one's stem (word_keys.h), each once ("routing" and "routes" are
  // both `rout`), in the words' order.
  std::vector<std::string> word_keys;
};

struct TermLimits {
  std::size_t max_identifiers = 8;
  std::size_t max_quoted = 6;
  std::size_t max_paths = 32;
  std::size_t max_globs = 8;
  std::size_t max_tests = 8;
  std::size_t max_words = 24;
};

// `skip_lines` (1-based input line numbers, sorted) are lines already read as stack frames: their paths
// and function names are the frames' business, not mentions.
InputTerms extract_terms(std::string_view input, const std::vector<std::size_t>& skip_lines,
                         const TermLimits& limits = {});

// InputTerms::words of `input`: at most `max_words`.
std::vector<std::string> report_words(std::string_view input, std::size_t max_words);

// Splits an identifier into its lower-case words: "parseHTTPHeader" -> parse, http, header;
// "ext4_fill_super" -> ext4, fill, super. For matching identifiers against file names.
std::vector<std::string> identifier_words(std::string_view identifier);

}  // namespace agentd::core::context
