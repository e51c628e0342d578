#include <gtest/gtest.h>

#include "test/unit/tools/tool_harness.h"
#include "tools/builtin/builtin_tools.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Json;
using testing::json;

class ListDirTest : public ::testing::Test {
 protected:
  support::Result<ToolResult> list(std::string_view input) { return h_.run(*tool_, input); }
  std::string failure(std::string_view input) {
    auto result = list(input);
    if (!result) {
      ADD_FAILURE() << "error instead of a failed result: " << result.error().message();
      return "";
    }
    EXPECT_FALSE(result->ok);
    return result->content;
  }

  testing::ToolHarness h_;
  std::shared_ptr<Tool> tool_ = make_list_dir_tool();
};

TEST_F(ListDirTest, SortedEntriesWithDirectoriesMarked) {
  h_.write("b.txt", "b");
  h_.write("A.md", "a");
  h_.write(".hidden", "h");
  h_.write("src/main.cpp", "m");
  h_.write(".git/HEAD", "ref: refs/heads/main\n");
  fs::create_directories(h_.path("empty_dir"));
  fs::create_symlink("b.txt", h_.path("link"));
  auto result = list("{}");
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_TRUE(result->ok);
  EXPECT_EQ(result->content, ".hidden\nA.md\nb.txt\nempty_dir/\nlink -> b.txt\nsrc/\n");
  EXPECT_EQ(result->summary, "Listed . (6 entries)");
  EXPECT_EQ(result->locations, std::vector<std::string>{h_.workspace().string()});
  Json expected = Json::object();
  expected.set("path", h_.workspace().string());
  expected.set("entries", 6);
  expected.set("shown", 6);
  expected.set("omitted", 0);
  expected.set("ignored", 0);
  EXPECT_EQ(result->metadata, expected);
}

TEST_F(ListDirTest, IgnoredEntriesAreLeftOutAndCounted) {
  h_.write(".git/HEAD", "ref: refs/heads/main\n");
  h_.write(".gitignore", "build/\n*.o\n");
  h_.write("build/gen.c", "");
  h_.write("a.o", "");
  h_.write("main.c", "");
  h_.write(".env", "SECRET=1");  // deny-listed: not even its name is shown
  auto result = list("{}");
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->content,
            ".gitignore\nmain.c\n[2 entries ignored by .gitignore not shown; an ignored path can still be listed or "
            "read by name]");
  EXPECT_EQ(result->summary, "Listed . (2 entries, 2 ignored)");
  EXPECT_EQ(result->metadata["ignored"], Json(2));
  // An ignored directory named explicitly is listed; inside it, only the rules below still apply.
  auto build = list(R"({"path": "build"})");
  ASSERT_TRUE(build);
  EXPECT_EQ(build->content, "gen.c\n");

  h_.write("objs/x.o", "");
  auto objs = list(R"({"path": "objs"})");
  ASSERT_TRUE(objs);
  EXPECT_EQ(objs->content,
            "[1 entry ignored by .gitignore not shown; an ignored path can still be listed or read by name]");
  EXPECT_EQ(objs->summary, "Listed objs (0 entries, 1 ignored)");
}

TEST_F(ListDirTest, SubdirectoriesAndEmptyOnes) {
  h_.write("src/one.cpp", "1");
  auto sub = list(R"({"path": "src/"})");
  ASSERT_TRUE(sub);
  EXPECT_EQ(sub->content, "one.cpp\n");
  EXPECT_EQ(sub->summary, "Listed src (1 entry)");

  fs::create_directories(h_.path("nothing"));
  auto empty = list(R"({"path": "nothing"})");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->content, "[nothing is empty]");
  EXPECT_EQ(empty->summary, "Listed nothing (0 entries)");
}

TEST_F(ListDirTest, LargeDirectoriesAreCapped) {
  for (int i = 0; i < 1005; ++i) h_.write(fmt::format("many/f{:04}", i), "");
  auto result = list(R"({"path": "many"})");
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->content.starts_with("f0000\nf0001\n"));
  EXPECT_TRUE(result->content.ends_with(
      "f0999\n[5 more entries not shown (list_dir shows at most 1000); list a subdirectory to narrow it down]"));
  EXPECT_EQ(result->metadata["omitted"], Json(5));
  EXPECT_EQ(result->metadata["shown"], Json(1000));
}

TEST_F(ListDirTest, TitleAndLocations) {
  EXPECT_EQ(tool_->title(json("{}"), h_.context), "List .");
  EXPECT_EQ(tool_->title(json(R"({"path": "src"})"), h_.context), "List src");
  EXPECT_EQ(tool_->locations(json(R"({"path": "src"})"), h_.context),
            std::vector<std::string>{h_.path("src").string()});
  EXPECT_TRUE(tool_->locations(json(R"({"path": "/"})"), h_.context).empty());
}

TEST_F(ListDirTest, Failures) {
  h_.write("file.txt", "x");
  EXPECT_EQ(failure(R"({"path": "file.txt"})"), "file.txt is a file, not a directory; use read_file to read it");
  EXPECT_EQ(failure(R"({"path": "missing"})"), "No such directory: missing");
  EXPECT_EQ(failure(R"({"path": "file.txt/sub"})"), "No such directory: file.txt/sub");
  EXPECT_EQ(failure(R"({"path": "/"})"),
            "path \"/\" is outside the workspace: it resolves to /. Allowed: paths under " + h_.workspace().string() +
                " (the working directory)");
  fs::create_directories(h_.path(".ssh"));
  EXPECT_EQ(failure(R"({"path": ".ssh"})"),
            "path \".ssh\" is refused: SSH keys and configuration are secrets (deny-listed pattern \".ssh/\")");
  EXPECT_EQ(failure(R"({"path": 5})"),
            "Invalid input for list_dir; fix these and call it again:\n- input.path: expected non-empty string, got "
            "integer 5");
}

TEST_F(ListDirTest, UnreadableDirectory) {
  // UBSan's vptr check verifies a (vtable, type) pair the first time it meets one, by writing the memory
  // into a pipe; with no descriptor left that fails and it reports "invalid vptr ... memory cannot be
  // printed" for a sound object (this fixture, at the first member call). A listing while descriptors
  // are free lets it meet, and cache, every pair this path uses, so the case runs under the sanitizers.
  auto warm = list("{}");
  ASSERT_TRUE(warm && warm->ok);
  // Out of file descriptors: the one failure of opening a directory that root cannot sidestep.
  const testing::ScopedNoMoreFiles no_files;
  EXPECT_EQ(failure("{}"), "Cannot list .: Too many open files");
}

TEST_F(ListDirTest, Cancelled) {
  h_.cancel.cancel();
  auto result = list("{}");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), Errc::cancelled);
}

}  // namespace
}  // namespace agentd::tools
