#include "tools/walk.h"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test/support/temp_dir.h"
#include "test/unit/tools/tool_harness.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using testing::write_text;

class WalkTest : public ::testing::Test {
 protected:
  WalkTest() : root_(fs::canonical(temp_.path())) {}

  void write(const std::string& relative, std::string_view text = "x") const { write_text(root_ / relative, text); }
  void mkdir(const std::string& relative) const { fs::create_directories(root_ / relative); }

  // Every entry as "relative" (files), "relative/" (directories) or "relative@" (symlinks).
  std::vector<std::string> entries(const WalkOptions& options, const std::string& sub = "",
                                   WalkStats* stats = nullptr) {
    std::vector<std::string> out;
    const fs::path where = sub.empty() ? root_ : root_ / sub;
    auto walked = walk(
        where.string(), options,
        [&](const WalkEntry& entry) {
          EXPECT_EQ(entry.path, (where / entry.relative).string());
          out.push_back(entry.relative + (entry.is_symlink ? "@" : entry.is_dir ? "/" : ""));
          return true;
        },
        cancel_.token());
    EXPECT_TRUE(walked) << walked.error().message();
    if (walked && stats != nullptr) *stats = *walked;
    return out;
  }

  using Names = std::vector<std::string>;

  agentd::testing::TempDir temp_;
  fs::path root_;
  support::CancelSource cancel_;
};

TEST_F(WalkTest, DepthFirstInByteOrderDirectoriesFirst) {
  write("b.txt");
  write("a/z.txt");
  write("a/b/c.txt");
  write("a.txt");
  write("B.txt");
  mkdir("empty");
  EXPECT_EQ(entries({}), (Names{"B.txt", "a/", "a/b/", "a/b/c.txt", "a/z.txt", "a.txt", "b.txt", "empty/"}));
}

TEST_F(WalkTest, HiddenEntriesAndGitInternals) {
  write(".hidden");
  write(".config/settings");
  write(".git/HEAD");
  write("visible");
  EXPECT_EQ(entries({}), (Names{"visible"}));
  WalkOptions hidden;
  hidden.hidden = true;
  EXPECT_EQ(entries(hidden), (Names{".config/", ".config/settings", ".hidden", "visible"}));
}

TEST_F(WalkTest, MaxDepth) {
  write("a/b/c/d.txt");
  write("top.txt");
  WalkOptions options;
  options.max_depth = 1;
  EXPECT_EQ(entries(options), (Names{"a/", "top.txt"}));
  options.max_depth = 2;
  EXPECT_EQ(entries(options), (Names{"a/", "a/b/", "top.txt"}));
  options.max_depth = 0;
  EXPECT_EQ(entries(options), Names{});
}

TEST_F(WalkTest, NestedGitignoresAndNegation) {
  mkdir(".git");
  write(".gitignore", "*.log\nbuild/\n!keep.log\n");
  write("app.log");
  write("keep.log");
  write("build/out.o");
  write("src/.gitignore", "!*.log\ngen/\n");
  write("src/debug.log");
  write("src/gen/x.c");
  write("src/main.c");
  WalkStats stats;
  EXPECT_EQ(entries({}, "", &stats), (Names{"keep.log", "src/", "src/debug.log", "src/main.c"}));
  EXPECT_EQ(stats.ignored, 3U);  // app.log, build/, src/gen/

  WalkOptions all;
  all.respect_ignore = false;
  EXPECT_EQ(entries(all), (Names{"app.log", "build/", "build/out.o", "keep.log", "src/", "src/debug.log", "src/gen/",
                                 "src/gen/x.c", "src/main.c"}));
}

TEST_F(WalkTest, AnIgnoredDirectoryCannotBeReincluded) {
  mkdir(".git");
  write(".gitignore", "build/\n!build/keep.txt\nout/*\n!out/keep.txt\n");
  write("build/keep.txt");
  write("out/keep.txt");
  write("out/drop.txt");
  EXPECT_EQ(entries({}), (Names{"out/", "out/keep.txt"}));
}

TEST_F(WalkTest, AncestorsUpToTheRepositoryRootApply) {
  mkdir("repo/.git/info");
  write("repo/.git/info/exclude", "*.tmp\n");
  write("repo/.gitignore", "*.log\n/sub/anchored\n");
  write("repo/sub/.gitignore", "*.bak\n");
  write("repo/sub/deeper/a.log");
  write("repo/sub/deeper/a.bak");
  write("repo/sub/deeper/a.tmp");
  write("repo/sub/deeper/a.c");
  write("repo/sub/anchored/inside.c");
  EXPECT_EQ(entries({}, "repo/sub/deeper"), (Names{"a.c"}));
  EXPECT_EQ(entries({}, "repo/sub"), (Names{"deeper/", "deeper/a.c"}));
  // Above the repository, .gitignore files do not reach in.
  write(".gitignore", "*.c\n");
  EXPECT_EQ(entries({}, "repo/sub/deeper"), (Names{"a.c"}));
}

TEST_F(WalkTest, GitignoreFilesCountOnlyInsideARepository) {
  // A tarball's .gitignore files were meant for its packagers (Debian's kernel source has `/*`).
  write(".gitignore", "*.c\n");
  write("proj/.gitignore", "*.o\n");
  write("proj/a.c");
  write("proj/a.o");
  EXPECT_EQ(entries({}, "proj"), (Names{"a.c", "a.o"}));
  // A repository nested below the root brings its rules, from its own directory down.
  mkdir("proj/nested/.git");
  write("proj/nested/.gitignore", "*.o\n");
  write("proj/nested/b.o");
  write("proj/nested/b.c");
  write("proj/nested/deeper/.gitignore", "*.c\n");
  write("proj/nested/deeper/c.c");
  EXPECT_EQ(entries({}, "proj"), (Names{"a.c", "a.o", "nested/", "nested/b.c", "nested/deeper/"}));
}

TEST_F(WalkTest, TheRootIsWalkedEvenIfIgnored) {
  mkdir(".git");
  write(".gitignore", "build/\n*.o\n");
  write("build/a.c");
  write("build/a.o");
  EXPECT_EQ(entries({}, "build"), (Names{"a.c"}));
}

TEST_F(WalkTest, SymlinksAreReportedNotFollowed) {
  write("real/file.txt");
  fs::create_directory_symlink("real", root_ / "link_dir");
  fs::create_symlink("real/file.txt", root_ / "link_file");
  fs::create_directory_symlink(".", root_ / "real/loop");
  fs::create_symlink("missing", root_ / "dangling");
  std::vector<std::string> seen;
  auto walked = walk(
      root_.string(), {},
      [&](const WalkEntry& entry) {
        seen.push_back(fmt::format("{} dir={} link={}", entry.relative, entry.is_dir, entry.is_symlink));
        return true;
      },
      cancel_.token());
  ASSERT_TRUE(walked);
  EXPECT_EQ(seen,
            (Names{"dangling dir=false link=true", "link_dir dir=false link=true", "link_file dir=false link=true",
                   "real dir=true link=false", "real/file.txt dir=false link=false", "real/loop dir=false link=true"}));
}

TEST_F(WalkTest, DenyListedPathsAreSkipped) {
  write(".env", "SECRET=1");
  write(".env.local", "SECRET=1");
  write("certs/server.pem");
  write("keys/id_rsa");
  write(".ssh/config");
  write("home/.aws/credentials");
  write("home/.aws/config");
  write("home/credentials");
  write("ok.txt");
  WalkOptions hidden;
  hidden.hidden = true;
  EXPECT_EQ(entries(hidden),
            (Names{"certs/", "home/", "home/.aws/", "home/.aws/config", "home/credentials", "keys/", "ok.txt"}));
}

TEST_F(WalkTest, VisitorStopsTheWalk) {
  for (int i = 0; i < 5; ++i) write(fmt::format("f{}", i));
  std::vector<std::string> seen;
  auto walked = walk(
      root_.string(), {},
      [&](const WalkEntry& entry) {
        seen.push_back(entry.relative);
        return seen.size() < 2;
      },
      cancel_.token());
  ASSERT_TRUE(walked);
  EXPECT_EQ(seen, (Names{"f0", "f1"}));
}

TEST_F(WalkTest, Cancellation) {
  write("a/b/c");
  cancel_.cancel();
  auto before = walk(
      root_.string(), {}, [](const WalkEntry&) { return true; }, cancel_.token());
  ASSERT_FALSE(before);
  EXPECT_EQ(before.error().code(), Errc::cancelled);

  // Cancelled while walking: noticed before the next directory is entered.
  support::CancelSource source;
  std::size_t visited = 0;
  auto during = walk(
      root_.string(), {},
      [&](const WalkEntry&) {
        ++visited;
        source.cancel();
        return true;
      },
      source.token());
  ASSERT_FALSE(during);
  EXPECT_EQ(during.error().code(), Errc::cancelled);
  EXPECT_EQ(visited, 1U);
}

TEST_F(WalkTest, CancellationInALargeDirectory) {
  for (int i = 0; i < 3000; ++i) write(fmt::format("many/f{:04}", i), "");
  support::CancelSource source;
  std::size_t visited = 0;
  auto walked = walk((root_ / "many").string(), {},
                     [&](const WalkEntry&) {
                       if (++visited == 10) source.cancel();
                       return true;
                     },
                     source.token());
  ASSERT_FALSE(walked);
  EXPECT_EQ(walked.error().code(), Errc::cancelled);
  EXPECT_LT(visited, 1100U);  // checked every 1024 entries
}

TEST_F(WalkTest, UnreadableSubdirectoriesAreSkippedAndCounted) {
  write("a/inside.txt");
  write("b/inside.txt");
  // Running out of descriptors is the one failure root cannot sidestep: from the first visit on, no
  // directory can be opened.
  std::optional<testing::ScopedNoMoreFiles> no_files;
  std::vector<std::string> seen;
  auto walked = walk(
      root_.string(), {},
      [&](const WalkEntry& entry) {
        if (!no_files) no_files.emplace();
        seen.push_back(entry.relative);
        return true;
      },
      cancel_.token());
  no_files.reset();
  ASSERT_TRUE(walked) << walked.error().message();
  EXPECT_EQ(seen, (Names{"a", "b"}));
  EXPECT_EQ(walked->skipped_unreadable, 2U);
}

TEST_F(WalkTest, RootErrors) {
  write("file.txt");
  auto missing = walk((root_ / "missing").string(), {}, [](const WalkEntry&) { return true; }, cancel_.token());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::not_found);
  auto file = walk((root_ / "file.txt").string(), {}, [](const WalkEntry&) { return true; }, cancel_.token());
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().code(), Errc::not_found);
  // A trailing slash on the root changes nothing.
  std::vector<std::string> seen;
  auto slash = walk(
      root_.string() + "/", {},
      [&](const WalkEntry& entry) {
        seen.push_back(entry.path);
        return true;
      },
      cancel_.token());
  ASSERT_TRUE(slash);
  EXPECT_EQ(seen, (Names{(root_ / "file.txt").string()}));
}

// --- Oracle: the files the walk visits against `git ls-files --others --exclude-standard` --------------------

TEST_F(WalkTest, AgreesWithGitLsFiles) {
  if (std::system("git --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "git is not installed: no oracle";
  const fs::path repo = root_ / "repo";
  fs::create_directories(repo);
  ASSERT_EQ(std::system(fmt::format("git -C '{}' init -q", repo.string()).c_str()), 0);
  const std::vector<std::string> names = {"a", "b.c", "b.o", "build", "doc", "x.log", "keep.log", "Make file", ".dot"};
  for (const auto& one : names) {
    for (const auto& two : names) {
      if (one == two) {
        write("repo/" + one + "/" + two + "/leaf.c");
        continue;
      }
      write("repo/" + one + "/" + two);
    }
  }
  write("repo/.gitignore", "*.o\n/build/\n*.log\n!keep.log\n.dot/\n");
  write("repo/a/.gitignore", "!*.o\n/doc\nleaf.*\n");
  write("repo/doc/.gitignore", "*\n!*.c\n!*/\n");
  write("repo/x.log/.gitignore", "!*\n");
  write("repo/.git/info/exclude", "Make?file\n");

  const fs::path scratch = root_ / "scratch";
  fs::create_directories(scratch);
  const std::string command = fmt::format(
      "cd '{}' && HOME='{}' XDG_CONFIG_HOME='{}' GIT_CONFIG_NOSYSTEM=1 git -c core.excludesFile='{}' ls-files -z "
      "--others --exclude-standard >'{}'",
      repo.string(), scratch.string(), scratch.string(), (scratch / "none").string(), (scratch / "out").string());
  ASSERT_EQ(std::system(command.c_str()), 0);
  const std::string out = testing::read_text(scratch / "out");
  std::set<std::string> expected;
  for (std::size_t start = 0; start < out.size();) {
    const std::size_t end = out.find('\0', start);
    expected.insert(out.substr(start, end - start));
    start = end + 1;
  }
  std::set<std::string> ours;
  WalkOptions options;
  options.hidden = true;
  auto walked = walk(
      repo.string(), options,
      [&](const WalkEntry& entry) {
        if (!entry.is_dir) ours.insert(entry.relative);
        return true;
      },
      cancel_.token());
  ASSERT_TRUE(walked);
  EXPECT_EQ(ours, expected);
  EXPECT_GT(expected.size(), 20U);
  EXPECT_LT(expected.size(), 80U);
}

}  // namespace
}  // namespace agentd::tools
