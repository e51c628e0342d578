#include "core/context/workspace_index.h"

#include <fcntl.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "test/support/temp_dir.h"
#include "test/unit/context/fixture_repo.h"

namespace agentd::core::context {
namespace {

namespace fs = std::filesystem;
using testing::write_file;

bool contains(const FileList& list, const std::string& path) {
  return std::find(list.files().begin(), list.files().end(), path) != list.files().end();
}

// Every directory's mtime set far in the past, so only a real change makes a directory look changed.
void age_directories(const fs::path& root) {
  const timespec old[2] = {{946684800, 0}, {946684800, 0}};  // 2000-01-01
  ::utimensat(AT_FDCWD, root.c_str(), old, AT_SYMLINK_NOFOLLOW);
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_directory()) ::utimensat(AT_FDCWD, entry.path().c_str(), old, AT_SYMLINK_NOFOLLOW);
  }
}

class WorkspaceIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(temp_.path());
    fs::create_directories(root_ / ".git");  // a repository, so .gitignore files count
    write_file(root_ / ".gitignore", "build/\n*.log\n");
    write_file(root_ / "src/a.cpp", "int a;\n");
    write_file(root_ / "src/b.cpp", "int b;\n");
    write_file(root_ / "src/sub/c.cpp", "int c;\n");
    write_file(root_ / "build/out.o", "x");
    write_file(root_ / "run.log", "x");
    write_file(root_ / "README.md", "x");
    write_file(root_ / "a-b.txt", "x");
  }

  agentd::testing::TempDir temp_;
  fs::path root_;
};

TEST_F(WorkspaceIndexTest, FirstRefreshWalksInPathOrderHonouringGitignore) {
  WorkspaceIndex index;
  auto r = index.refresh(root_.string(), {});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->walked);
  EXPECT_TRUE(r->changed);
  EXPECT_EQ(r->files->files(),
            (std::vector<std::string>{"README.md", "a-b.txt", "src/a.cpp", "src/b.cpp", "src/sub/c.cpp"}));
  EXPECT_EQ(r->files->with_name("b.cpp").size(), 1U);
  EXPECT_EQ(r->files->with_word("sub").size(), 1U);
  EXPECT_EQ(r->files->words_with_prefix("rea", 10), std::vector<std::string_view>{"readme"});
}

TEST_F(WorkspaceIndexTest, SecondRefreshWithoutChangesRelistsNothing) {
  age_directories(root_);
  IndexOptions options;
  options.racy_window_ns = 0;
  WorkspaceIndex index(options);
  auto first = index.refresh(root_.string(), {});
  ASSERT_TRUE(first);
  auto second = index.refresh(root_.string(), {});
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->walked);
  EXPECT_FALSE(second->changed);
  EXPECT_EQ(second->directories_relisted, 0U);
  EXPECT_EQ(second->directories_checked, 3U);  // root, src, src/sub
  EXPECT_EQ(second->files.get(), first->files.get());
}

TEST_F(WorkspaceIndexTest, SeesNewAndDeletedFilesAfterRefresh) {
  age_directories(root_);
  IndexOptions options;
  options.racy_window_ns = 0;
  WorkspaceIndex index(options);
  ASSERT_TRUE(index.refresh(root_.string(), {}));
  write_file(root_ / "src/new.cpp", "int n;\n");
  fs::remove(root_ / "src/sub/c.cpp");
  write_file(root_ / "lib/deep/d.py", "x = 1\n");  // a new directory tree
  write_file(root_ / "src/skip.log", "x");         // ignored
  auto r = index.refresh(root_.string(), {});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->changed);
  EXPECT_FALSE(r->walked);
  EXPECT_EQ(r->files->files(), (std::vector<std::string>{"README.md", "a-b.txt", "lib/deep/d.py", "src/a.cpp",
                                                         "src/b.cpp", "src/new.cpp"}));
  fs::remove_all(root_ / "lib");
  r = index.refresh(root_.string(), {});
  ASSERT_TRUE(r);
  EXPECT_FALSE(contains(*r->files, "lib/deep/d.py"));
}

TEST_F(WorkspaceIndexTest, RacyDirectoriesAreListedAgain) {
  // The default window: directories just written are re-listed, so a file created in the same clock tick
  // as the first listing is still seen.
  WorkspaceIndex index;
  ASSERT_TRUE(index.refresh(root_.string(), {}));
  write_file(root_ / "src/same_tick.cpp", "x");
  auto r = index.refresh(root_.string(), {});
  ASSERT_TRUE(r);
  EXPECT_TRUE(contains(*r->files, "src/same_tick.cpp"));
}

TEST_F(WorkspaceIndexTest, NotifiedChangesAreListedWhateverTheMtime) {
  age_directories(root_);
  IndexOptions options;
  options.racy_window_ns = 0;
  WorkspaceIndex index(options);
  ASSERT_TRUE(index.refresh(root_.string(), {}));
  write_file(root_ / "src/sub/e.cpp", "x");
  age_directories(root_);  // as if the mtime had not moved
  auto r = index.refresh(root_.string(), {});
  ASSERT_TRUE(r);
  EXPECT_FALSE(contains(*r->files, "src/sub/e.cpp"));
  index.notify_changed((root_ / "src/sub/e.cpp").string());
  r = index.refresh(root_.string(), {});
  ASSERT_TRUE(r);
  EXPECT_TRUE(contains(*r->files, "src/sub/e.cpp"));
}

TEST_F(WorkspaceIndexTest, AChangedGitignoreChangesWhatIsListed) {
  age_directories(root_);
  IndexOptions options;
  options.racy_window_ns = 0;
  WorkspaceIndex index(options);
  ASSERT_TRUE(index.refresh(root_.string(), {}));
  write_file(root_ / ".gitignore", "build/\n*.log\nsrc/sub/\n");
  auto r = index.refresh(root_.string(), {});
  ASSERT_TRUE(r);
  EXPECT_FALSE(contains(*r->files, "src/sub/c.cpp"));
  EXPECT_TRUE(contains(*r->files, "run.log") == false);
}

TEST_F(WorkspaceIndexTest, CancelledRefreshFailsAndStartsOverNextTime) {
  WorkspaceIndex index;
  support::CancelSource source;
  source.cancel();
  auto r = index.refresh(root_.string(), source.token());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), support::Errc::cancelled);
  auto again = index.refresh(root_.string(), {});
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->walked);
}

TEST_F(WorkspaceIndexTest, MissingRootIsNotFound) {
  WorkspaceIndex index;
  auto r = index.refresh((root_ / "nope").string(), {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), support::Errc::not_found);
}

TEST_F(WorkspaceIndexTest, MaxFilesTruncates) {
  IndexOptions options;
  options.max_files = 2;
  WorkspaceIndex index(options);
  auto r = index.refresh(root_.string(), {});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->files->truncated());
  EXPECT_EQ(r->files->files().size(), 2U);
}

}  // namespace
}  // namespace agentd::core::context
