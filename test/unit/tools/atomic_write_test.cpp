#include "tools/atomic_write.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "test/support/temp_dir.h"
#include "test/unit/tools/tool_harness.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;

std::uint32_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return st.st_mode & 07777;
}

std::size_t entries_in(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// Sets the umask for one test and puts the old one back.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

TEST(AtomicWrite, CreatesWithTheUmaskAndLeavesNoTemporary) {
  agentd::testing::TempDir dir;
  const ScopedUmask umask(022);
  const auto path = dir.path() / "new.txt";
  ASSERT_TRUE(write_file_atomically(path, "one\n"));
  EXPECT_EQ(testing::read_text(path), "one\n");
  EXPECT_EQ(mode_of(path), 0644U);
  EXPECT_EQ(entries_in(dir.path()), 1U);
}

TEST(AtomicWrite, ReplacesAndSetsTheGivenMode) {
  agentd::testing::TempDir dir;
  const auto path = dir.path() / "script.sh";
  testing::write_text(path, "old\n");
  ASSERT_TRUE(write_file_atomically(path, "#!/bin/sh\n", 0750));
  EXPECT_EQ(testing::read_text(path), "#!/bin/sh\n");
  EXPECT_EQ(mode_of(path), 0750U);
  ASSERT_TRUE(write_file_atomically(path, "", 0600));
  EXPECT_EQ(testing::read_text(path), "");
  EXPECT_EQ(entries_in(dir.path()), 1U);
}

TEST(AtomicWrite, VeryLongNamesStillGetATemporary) {
  agentd::testing::TempDir dir;
  const auto path = dir.path() / std::string(250, 'n');
  ASSERT_TRUE(write_file_atomically(path, "x"));
  EXPECT_EQ(testing::read_text(path), "x");
}

TEST(AtomicWrite, FailuresAreIoErrorsWithTheErrno) {
  agentd::testing::TempDir dir;
  auto missing_dir = write_file_atomically(dir.path() / "no/such/dir/f.txt", "x");
  ASSERT_FALSE(missing_dir);
  EXPECT_EQ(missing_dir.error().code(), support::Errc::io);
  EXPECT_EQ(missing_dir.error().native_code(), ENOENT);
  EXPECT_EQ(missing_dir.error().message(),
            "cannot open the directory " + (dir.path() / "no/such/dir").string() + ": No such file or directory");

  // Renaming a file over a non-empty directory fails after the temporary exists: it must be cleaned up.
  fs::create_directories(dir.path() / "occupied/inside");
  auto over_dir = write_file_atomically(dir.path() / "occupied", "x");
  ASSERT_FALSE(over_dir);
  EXPECT_EQ(over_dir.error().code(), support::Errc::io);
  EXPECT_EQ(over_dir.error().message().rfind("cannot rename ", 0), 0U) << over_dir.error().message();
  EXPECT_EQ(entries_in(dir.path()), 1U);
}

}  // namespace
}  // namespace agentd::tools
