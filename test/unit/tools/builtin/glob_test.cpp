#include <algorithm>

#include <gtest/gtest.h>

#include "test/unit/tools/tool_harness.h"
#include "tools/builtin/builtin_tools.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Json;
using testing::json;

class GlobTest : public ::testing::Test {
 protected:
  support::Result<ToolResult> glob(std::string_view input) { return h_.run(*tool_, input); }
  // The content of a successful call.
  std::string found(std::string_view input) {
    auto result = glob(input);
    if (!result) {
      ADD_FAILURE() << "error: " << result.error().message();
      return "";
    }
    EXPECT_TRUE(result->ok) << result->content;
    return result->content;
  }
  std::string failure(std::string_view input) {
    auto result = glob(input);
    if (!result) {
      ADD_FAILURE() << "error instead of a failed result: " << result.error().message();
      return "";
    }
    EXPECT_FALSE(result->ok);
    return result->content;
  }

  testing::ToolHarness h_;
  std::shared_ptr<Tool> tool_ = make_glob_tool();
};

TEST_F(GlobTest, SpecIsStable) {
  const ToolSpec& spec = tool_->spec();
  EXPECT_EQ(spec.name, "glob");
  EXPECT_EQ(spec.kind, ToolKind::search);
  EXPECT_EQ(spec.base_risk, Risk::read);
  EXPECT_EQ(spec.input_schema["required"], json(R"(["pattern"])"));
  EXPECT_NE(spec.input_schema["properties"].find("path"), nullptr);
}

TEST_F(GlobTest, RecursivePatternInWalkOrder) {
  h_.write("src/main.cpp", "");
  h_.write("src/util/str.cpp", "");
  h_.write("src/util/str.h", "");
  h_.write("src-old/x.cpp", "");
  h_.write("top.cpp", "");
  auto result = glob(R"({"pattern": "**/*.cpp"})");
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_TRUE(result->ok);
  // Component by component, as the walk and grep order them: src/ before src-old/.
  EXPECT_EQ(result->content, "src/main.cpp\nsrc/util/str.cpp\nsrc-old/x.cpp\ntop.cpp\n");
  EXPECT_EQ(result->summary, "Found 4 files matching **/*.cpp");
  EXPECT_EQ(result->locations, std::vector<std::string>{h_.workspace().string()});
  Json expected = Json::object();
  expected.set("path", h_.workspace().string());
  expected.set("pattern", "**/*.cpp");
  expected.set("matches", 4);
  expected.set("shown", 4);
  expected.set("omitted", 0);
  expected.set("unreadable_dirs", 0);
  EXPECT_EQ(result->metadata, expected);
}

TEST_F(GlobTest, NamesMatchAtAnyDepthPathsAreAnchored) {
  h_.write("a.h", "");
  h_.write("src/b.h", "");
  h_.write("src/deep/c.h", "");
  h_.write("src/d.c", "");
  EXPECT_EQ(found(R"({"pattern": "*.h"})"), "a.h\nsrc/b.h\nsrc/deep/c.h\n");
  EXPECT_EQ(found(R"({"pattern": "src/*.h"})"), "src/b.h\n");
  EXPECT_EQ(found(R"({"pattern": "/src/*.h"})"), "src/b.h\n");
  EXPECT_EQ(found(R"({"pattern": "./src/**/*.h"})"), "src/b.h\nsrc/deep/c.h\n");
  EXPECT_EQ(found(R"({"pattern": "src/**"})"), "src/b.h\nsrc/d.c\nsrc/deep/c.h\n");
  EXPECT_EQ(found(R"({"pattern": "?.h"})"), "a.h\nsrc/b.h\nsrc/deep/c.h\n");
  EXPECT_EQ(found(R"({"pattern": "[ab].h"})"), "a.h\nsrc/b.h\n");
  // An absolute pattern naming the directory searched is taken relative to it.
  EXPECT_EQ(found(fmt::format(R"({{"pattern": "{}/src/*.c"}})", h_.workspace().string())), "src/d.c\n");
}

TEST_F(GlobTest, BraceAlternatives) {
  h_.write("a.h", "");
  h_.write("b.hpp", "");
  h_.write("c.cpp", "");
  h_.write("docs/x.md", "");
  h_.write("{lit}", "");
  EXPECT_EQ(found(R"({"pattern": "*.{h,hpp}"})"), "a.h\nb.hpp\n");
  EXPECT_EQ(found(R"({"pattern": "{docs/*.md,*.cpp}"})"), "c.cpp\ndocs/x.md\n");
  EXPECT_EQ(found(R"({"pattern": "*.{h{,pp},cpp}"})"), "a.h\nb.hpp\nc.cpp\n");
  EXPECT_EQ(found(R"({"pattern": "{lit}"})"), "{lit}\n");  // no comma: literal braces
  EXPECT_EQ(failure(R"({"pattern": "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"})"),
            "The pattern {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b} has more than 256 {} alternatives; use a "
            "simpler pattern or several calls");
}

TEST_F(GlobTest, InASubdirectory) {
  h_.write("src/lib/a.c", "");
  h_.write("other/b.c", "");
  EXPECT_EQ(found(R"({"pattern": "**/*.c", "path": "src"})"), "src/lib/a.c\n");
  EXPECT_EQ(found(R"({"pattern": "lib/*.c", "path": "src/"})"), "src/lib/a.c\n");
}

TEST_F(GlobTest, IgnoredAndHiddenFiles) {
  h_.write(".git/HEAD", "ref: refs/heads/main\n");
  h_.write(".gitignore", "build/\n*.log\n");
  h_.write("build/gen.c", "");
  h_.write("run.log", "");
  h_.write("main.c", "");
  h_.write(".github/workflows/ci.yml", "");
  h_.write(".hidden.c", "");
  EXPECT_EQ(found(R"({"pattern": "**/*.c"})"), "main.c\n");
  EXPECT_EQ(found(R"({"pattern": "*.log"})"),
            "[no files match *.log under .; files ignored by .gitignore and hidden files are not searched]");
  // Naming a hidden component asks for hidden files.
  EXPECT_EQ(found(R"({"pattern": ".github/**"})"), ".github/workflows/ci.yml\n");
  EXPECT_EQ(found(R"({"pattern": "**/.*.c"})"), ".hidden.c\n");
  EXPECT_EQ(found(R"({"pattern": "**/HEAD"})"),
            "[no files match **/HEAD under .; files ignored by .gitignore and hidden files are not searched]");
  // Searching inside an ignored directory by naming it works.
  EXPECT_EQ(found(R"({"pattern": "*.c", "path": "build"})"), "build/gen.c\n");
}

TEST_F(GlobTest, SymlinksAndDeniedFiles) {
  h_.write("real/a.txt", "");
  fs::create_symlink("real/a.txt", h_.path("link.txt"));
  fs::create_directory_symlink("real", h_.path("linkdir.txt"));
  h_.write("certs/server.pem", "");
  h_.write("notes.txt", "");
  EXPECT_EQ(found(R"({"pattern": "**/*.txt"})"), "link.txt\nnotes.txt\nreal/a.txt\n");
  EXPECT_EQ(found(R"({"pattern": "**/*.pem"})"),
            "[no files match **/*.pem under .; files ignored by .gitignore and hidden files are not searched]");
}

TEST_F(GlobTest, ResultsAreCapped) {
  for (std::size_t i = 0; i < kGlobMaxResults + 5; ++i) h_.write(fmt::format("many/f{:04}.txt", i), "");
  auto result = glob(R"({"pattern": "many/*.txt"})");
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->content.starts_with("many/f0000.txt\nmany/f0001.txt\n"));
  EXPECT_TRUE(result->content.ends_with(
      "many/f0499.txt\n[5 more paths not shown (glob shows at most 500); narrow the pattern or the path]"));
  EXPECT_EQ(result->metadata["matches"], Json(505));
  EXPECT_EQ(result->metadata["shown"], Json(500));
  EXPECT_EQ(result->metadata["omitted"], Json(5));
}

TEST_F(GlobTest, Failures) {
  h_.write("file.txt", "x");
  EXPECT_EQ(failure(R"({"pattern": "*", "path": "file.txt"})"),
            "file.txt is a file, not a directory; glob searches a directory (use read_file to read the file)");
  EXPECT_EQ(failure(R"({"pattern": "*", "path": "missing"})"), "No such directory: missing");
  EXPECT_EQ(failure(R"({"pattern": "*", "path": "/"})"),
            "path \"/\" is outside the workspace: it resolves to /. Allowed: paths under " + h_.workspace().string() +
                " (the working directory)");
  EXPECT_EQ(failure(R"({"pattern": "./"})"), "The pattern ./ names no files; give a glob such as \"**/*.cpp\"");
  EXPECT_EQ(failure(R"({"path": "."})"),
            "Invalid input for glob; fix these and call it again:\n- input: missing required field \"pattern\"");
}

TEST_F(GlobTest, Cancelled) {
  h_.write("a.txt", "");
  h_.cancel.cancel();
  auto result = glob(R"({"pattern": "*"})");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), Errc::cancelled);
}

TEST_F(GlobTest, TitleAndLocations) {
  EXPECT_EQ(tool_->title(json(R"({"pattern": "**/*.h"})"), h_.context), "Glob **/*.h");
  EXPECT_EQ(tool_->title(json(R"({"pattern": "*.h", "path": "src"})"), h_.context), "Glob *.h in src");
  EXPECT_EQ(tool_->locations(json(R"({"pattern": "*", "path": "src"})"), h_.context),
            std::vector<std::string>{h_.path("src").string()});
  EXPECT_TRUE(tool_->locations(json(R"({"pattern": "*", "path": "/"})"), h_.context).empty());
}

TEST_F(GlobTest, RegisteredAfterListDir) {
  ToolRegistry registry;
  ASSERT_TRUE(register_builtin_tools(registry));
  const auto names = registry.names();
  const auto list_dir = std::find(names.begin(), names.end(), "list_dir");
  ASSERT_NE(list_dir, names.end());
  ASSERT_NE(list_dir + 1, names.end());
  EXPECT_EQ(*(list_dir + 1), "glob");
}

}  // namespace
}  // namespace agentd::tools
