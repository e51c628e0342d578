#include <chrono>
#include <cstdlib>
#include <random>
#include <stdexcept>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test/support/child_process.h"
#include "test/unit/tools/tool_harness.h"
#include "tools/builtin/builtin_tools.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Json;
using testing::json;

class GrepTest : public ::testing::Test {
 protected:
  support::Result<ToolResult> grep(std::string_view input) { return h_.run(*tool_, input); }
  // The content of a call that must succeed.
  std::string found(std::string_view input) {
    auto result = grep(input);
    if (!result) {
      ADD_FAILURE() << "error instead of a result: " << result.error().message();
      return "";
    }
    EXPECT_TRUE(result->ok) << result->content;
    return result->content;
  }
  std::string failure(std::string_view input) {
    auto result = grep(input);
    if (!result) {
      ADD_FAILURE() << "error instead of a failed result: " << result.error().message();
      return "";
    }
    EXPECT_FALSE(result->ok);
    return result->content;
  }

  testing::ToolHarness h_;
  std::shared_ptr<Tool> tool_ = make_grep_tool();
};

TEST_F(GrepTest, SpecIsASearchThatReads) {
  EXPECT_EQ(tool_->spec().name, "grep");
  EXPECT_EQ(tool_->spec().kind, ToolKind::search);
  EXPECT_EQ(tool_->spec().base_risk, Risk::read);
  for (const char* field : {"pattern", "path", "glob", "literal", "context", "case_insensitive"}) {
    EXPECT_NE(tool_->spec().input_schema["properties"].find(field), nullptr) << field;
  }
  EXPECT_EQ(tool_->title(json(R"({"pattern": "foo", "path": "src"})"), h_.context), "Grep foo in src");
  EXPECT_EQ(tool_->locations(json(R"({"pattern": "foo"})"), h_.context),
            std::vector<std::string>{h_.workspace().string()});
}

TEST_F(GrepTest, MatchesAsPathLineTextSortedByPath) {
  h_.write("src/b.cpp", "int main() {\n  return foo(1);\n}\n");
  h_.write("src/a.cpp", "// foo\nint x;\nfoo();\n");
  h_.write("README.md", "Use foo.\n");
  auto result = grep(R"({"pattern": "foo"})");
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_TRUE(result->ok);
  EXPECT_EQ(result->content,
            "README.md:1:Use foo.\nsrc/a.cpp:1:// foo\nsrc/a.cpp:3:foo();\nsrc/b.cpp:2:  return foo(1);\n");
  EXPECT_EQ(result->summary, "Found 4 matching lines in 3 files");
  Json expected = Json::object();
  expected.set("path", h_.workspace().string());
  expected.set("matches", 4);
  expected.set("files", 3);
  expected.set("searchedFiles", 3);
  expected.set("binaryFiles", 0);
  expected.set("unreadableFiles", 0);
  expected.set("shownMatches", 4);
  expected.set("truncated", false);
  EXPECT_EQ(result->metadata, expected);
  EXPECT_EQ(result->locations, std::vector<std::string>{h_.workspace().string()});
}

TEST_F(GrepTest, RegexLiteralAndCase) {
  h_.write("a.txt", "value = f(x);\nvalue = fax;\nVALUE = 1\n");
  EXPECT_EQ(found(R"j({"pattern": "f\\(x\\)"})j"), "a.txt:1:value = f(x);\n");
  EXPECT_EQ(found(R"j({"pattern": "f(x)", "literal": true})j"), "a.txt:1:value = f(x);\n");
  EXPECT_EQ(found(R"({"pattern": "f.x;"})"), "a.txt:2:value = fax;\n");
  EXPECT_EQ(found(R"({"pattern": "^value"})"), "a.txt:1:value = f(x);\na.txt:2:value = fax;\n");
  EXPECT_EQ(found(R"({"pattern": "^value = \\d", "case_insensitive": true})"), "a.txt:3:VALUE = 1\n");
}

TEST_F(GrepTest, PathMayBeAFileOrADirectory) {
  h_.write("src/one.h", "needle\n");
  h_.write("src/two.h", "needle\n");
  h_.write("other.h", "needle\n");
  EXPECT_EQ(found(R"({"pattern": "needle", "path": "src"})"), "src/one.h:1:needle\nsrc/two.h:1:needle\n");
  EXPECT_EQ(found(R"({"pattern": "needle", "path": "src/two.h"})"), "src/two.h:1:needle\n");
  EXPECT_EQ(found(fmt::format(R"({{"pattern": "needle", "path": "{}"}})", h_.path("other.h").string())),
            "other.h:1:needle\n");
  EXPECT_EQ(failure(R"({"pattern": "needle", "path": "missing"})"),
            "No such file or directory: missing. Check the name with list_dir or glob");
}

TEST_F(GrepTest, GlobFiltersFiles) {
  h_.write("src/a.cpp", "needle\n");
  h_.write("src/a.h", "needle\n");
  h_.write("src/deep/b.h", "needle\n");
  h_.write("test/c.h", "needle\n");
  EXPECT_EQ(found(R"({"pattern": "needle", "glob": "*.h"})"),
            "src/a.h:1:needle\nsrc/deep/b.h:1:needle\ntest/c.h:1:needle\n");
  EXPECT_EQ(found(R"({"pattern": "needle", "glob": "src/**/*.h"})"), "src/a.h:1:needle\nsrc/deep/b.h:1:needle\n");
  // Relative to the directory searched.
  EXPECT_EQ(found(R"({"pattern": "needle", "path": "src", "glob": "deep/*"})"), "src/deep/b.h:1:needle\n");
}

TEST_F(GrepTest, ContextLinesAndGroupSeparators) {
  h_.write("a.txt", "1\n2\nhit\n4\n5\n6\n7\nhit\n9\n");
  h_.write("b.txt", "hit\n2\n");
  EXPECT_EQ(found(R"({"pattern": "hit", "context": 1})"),
            "a.txt-2-2\na.txt:3:hit\na.txt-4-4\n--\na.txt-7-7\na.txt:8:hit\na.txt-9-9\n--\nb.txt:1:hit\nb.txt-2-2\n");
}

TEST_F(GrepTest, InvalidRegexSaysWhatRE2Said) {
  h_.write("a.txt", "x\n");
  const std::string message = failure(R"({"pattern": "foo("})");
  EXPECT_TRUE(message.starts_with("Invalid regex `foo(`: missing ): foo(. ")) << message;
  EXPECT_NE(message.find("literal:true"), std::string::npos);
  EXPECT_TRUE(failure(R"({"pattern": "(?<=a)b"})").starts_with("Invalid regex")) << "lookbehind is not RE2";
}

TEST_F(GrepTest, NoMatchesIsASuccess) {
  h_.write("a.txt", "x\n");
  h_.write("b.bin", std::string("\0needle", 7));
  auto result = grep(R"({"pattern": "needle"})");
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->ok);
  EXPECT_EQ(result->content, "no matches (2 files searched, 1 binary skipped in .)");
  EXPECT_EQ(result->summary, "No matches in .");
  EXPECT_EQ(result->metadata["binaryFiles"], Json(1));
}

TEST_F(GrepTest, OutputIsCappedWithCounts) {
  std::string line(100, 'x');
  for (int f = 0; f < 20; ++f) {
    std::string text;
    for (int i = 0; i < 50; ++i) text += "match " + line + "\n";
    h_.write(fmt::format("f{:02}.txt", f), text);
  }
  auto result = grep(R"({"pattern": "match"})");
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->ok);
  EXPECT_LE(result->content.size(), kGrepMaxOutputBytes + 200);
  const auto shown = result->metadata["shownMatches"].as_int64();
  EXPECT_LT(shown, 1000);
  EXPECT_EQ(result->metadata["matches"], Json(1000));
  EXPECT_EQ(result->metadata["truncated"], Json(true));
  // Whole files first, in order: f00 .. up to where the cap fell.
  EXPECT_TRUE(result->content.starts_with("f00.txt:1:match x"));
  const auto omitted = 1000 - shown;
  const auto omitted_files = 20 - shown / 50;
  EXPECT_TRUE(result->content.ends_with(fmt::format(
      "[{} more matching lines in {} files not shown (grep shows at most 32 KiB); narrow the search with path, "
      "glob or a more specific pattern]",
      omitted, omitted_files)))
      << result->content.substr(result->content.size() - 300);

  // A long line is cut, and says by how much.
  h_.write("long/l.txt", "match " + std::string(2000, 'y') + "\n");
  const std::string cut = found(R"({"pattern": "match", "path": "long"})");
  EXPECT_EQ(cut, "long/l.txt:1:match " + std::string(kGrepMaxLineBytes - 6, 'y') + " [line cut: 1506 more bytes]\n");
}

TEST_F(GrepTest, IgnoredHiddenAndSecretFilesAreNotSearched) {
  fs::create_directories(h_.path(".git"));
  h_.write(".gitignore", "out/\n");
  h_.write("out/gen.txt", "secret_token\n");
  h_.write(".env", "secret_token=1\n");
  h_.write("id_rsa", "secret_token\n");
  h_.write("src/ok.txt", "secret_token\n");
  EXPECT_EQ(found(R"({"pattern": "secret_token"})"), "src/ok.txt:1:secret_token\n");
  // Named directly, a deny-listed file is refused by the path guard.
  const std::string refused = failure(R"({"pattern": "secret_token", "path": ".env"})");
  EXPECT_NE(refused.find("refused"), std::string::npos) << refused;
  // Outside the workspace is refused too.
  testing::write_text(h_.outside() / "x.txt", "secret_token\n");
  EXPECT_FALSE(failure(fmt::format(R"({{"pattern": "x", "path": "{}"}})", h_.outside().string())).empty());
}

TEST_F(GrepTest, CancelledCallsEndWithCancelled) {
  h_.write("a.txt", "x\n");
  h_.cancel.cancel();
  auto result = grep(R"({"pattern": "x"})");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), Errc::cancelled);
}

// The oracle: ripgrep on a generated tree must print exactly what grep prints.
class GrepOracleTest : public GrepTest {
 protected:
  void SetUp() override {
    if (::system("rg --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "rg (ripgrep) not found; oracle skipped";
    generate_tree();
  }

  void generate_tree() {
    std::mt19937 random(20261202);
    const std::vector<std::string> words = {"alpha",       "beta",     "gamma",
                                            "delta",       "return",   "static",
                                            "int",         "void",     "if",
                                            "else",        "while",    "for",
                                            "x",           "y",        "=",
                                            "+",           "(",        ")",
                                            "{",           "}",        ";",
                                            "a.b",         "foo1",     "foo22",
                                            "Foo",         "FOO",      "bar_probe(",
                                            "caf\xC3\xA9", "\t",       "  ",
                                            "//",          "#include", "EXPORT_SYMBOL",
                                            "x$",          "end"};
    const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };
    fs::create_directories(h_.path(".git"));
    h_.write(".gitignore", "ignored/\n*.tmp\n");
    const std::vector<std::string> dirs = {"", "src/", "src/deep/", "lib/", "ignored/", "a-b/", "a/"};
    for (int f = 0; f < 60; ++f) {
      std::string text;
      const std::size_t lines = pick(60);
      for (std::size_t l = 0; l < lines; ++l) {
        std::string line;
        const std::size_t n = pick(9);
        for (std::size_t w = 0; w < n; ++w) {
          if (w > 0) line += ' ';
          // Rare words make rare matches, so the outputs stay under the cap.
          line += words[pick(4) == 0 ? pick(words.size()) : pick(12)];
        }
        if (pick(20) == 0) line += '\r';
        text += line;
        if (l + 1 < lines || pick(3) != 0) text += '\n';
      }
      const char* ext = f % 7 == 0 ? ".tmp" : f % 3 == 0 ? ".h" : ".c";
      h_.write(fmt::format("{}f{}{}", dirs[f % dirs.size()], f, ext), text);
    }
    h_.write("src/blob.bin", std::string("\0foo1 Foo static int bar_probe(\n", 33));
    h_.write(".hidden/h.c", "foo1\n");
    h_.write("src/probe.c", "static int bar_probe(void)\nstatic  int\tfoo_probe(x)\nstatic\nint x_probe(\n");
  }

  std::string rg(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"rg",    "--no-config",   "--no-heading",      "-n", "--sort", "path", "--color",
                                     "never", "--no-messages", "--no-ignore-global"};
    argv.insert(argv.end(), args.begin(), args.end());
    agentd::testing::ChildProcess::Options options;
    options.cwd = h_.workspace().string();
    // Not a pipe: with no path given, rg searches a piped stdin instead of the directory.
    options.stdin_file = "/dev/null";
    agentd::testing::ChildProcess child(argv, options);
    std::string out = child.read_all_stdout(std::chrono::seconds(30));
    const auto status = child.wait(std::chrono::seconds(30));
    if (!status || !status->exited || status->code > 1) throw std::runtime_error("rg failed: " + child.stderr_text());
    return out;
  }
};

TEST_F(GrepOracleTest, SameLinesAsRipgrep) {
  struct Case {
    std::string input;
    std::vector<std::string> rg_args;
  };
  const std::vector<Case> cases = {
      {R"({"pattern": "foo1"})", {"foo1"}},
      {R"({"pattern": "foo\\d+"})", {"foo\\d+"}},
      {R"({"pattern": "^\\s*return\\b"})", {"^\\s*return\\b"}},
      {R"({"pattern": "foo", "case_insensitive": true})", {"-i", "foo"}},
      {R"({"pattern": "a.b", "literal": true})", {"-F", "a.b"}},
      {R"({"pattern": "x$", "literal": true})", {"-F", "x$"}},
      {R"({"pattern": "end$"})", {"end$"}},
      {R"({"pattern": "static\\s+int\\s+\\w+_probe\\("})", {"static\\s+int\\s+\\w+_probe\\("}},
      {R"({"pattern": "EXPORT_SYMBOL", "context": 2})", {"-C", "2", "EXPORT_SYMBOL"}},
      {R"({"pattern": "caf\u00e9"})", {"caf\xC3\xA9"}},
      {R"({"pattern": "delta", "glob": "*.h"})", {"-g", "*.h", "delta"}},
      {R"({"pattern": "gamma", "path": "src"})", {"gamma", "src"}},
  };
  for (const auto& c : cases) {
    auto result = grep(c.input);
    ASSERT_TRUE(result) << c.input;
    ASSERT_TRUE(result->ok) << c.input << ": " << result->content;
    ASSERT_EQ(result->metadata["truncated"], Json(false)) << c.input << " outgrew the cap: make its matches rarer";
    const std::string expected = rg(c.rg_args);
    ASSERT_FALSE(expected.empty()) << c.input << " matched nothing: the case tests too little";
    EXPECT_EQ(result->content, expected) << c.input;
  }
}

}  // namespace
}  // namespace agentd::tools
