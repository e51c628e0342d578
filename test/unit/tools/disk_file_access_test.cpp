#include "tools/disk_file_access.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "test/support/temp_dir.h"
#include "test/unit/tools/tool_harness.h"

namespace agentd::tools {
namespace {

using support::Errc;

TEST(ReadDiskFile, ReadsTheWholeFile) {
  agentd::testing::TempDir dir;
  std::string bytes(100'000, 'x');
  bytes[5] = '\0';
  testing::write_text(dir.path() / "f.bin", bytes);
  auto read = read_disk_file(dir.path() / "f.bin");
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(*read, bytes);
  testing::write_text(dir.path() / "empty", "");
  EXPECT_EQ(read_disk_file(dir.path() / "empty").value(), "");
}

TEST(ReadDiskFile, FailuresSayWhatIsWrong) {
  agentd::testing::TempDir dir;
  const auto missing = dir.path() / "missing.txt";
  auto not_found = read_disk_file(missing);
  ASSERT_FALSE(not_found);
  EXPECT_EQ(not_found.error().code(), Errc::not_found);
  EXPECT_EQ(not_found.error().message(), "no such file: " + missing.string());

  auto directory = read_disk_file(dir.path());
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().code(), Errc::invalid_argument);
  EXPECT_EQ(directory.error().message(), dir.path().string() + " is a directory");

  const auto fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto pipe = read_disk_file(fifo);  // must not block waiting for a writer
  ASSERT_FALSE(pipe);
  EXPECT_EQ(pipe.error().code(), Errc::invalid_argument);
  EXPECT_EQ(pipe.error().message(), fifo.string() + " is not a regular file (a device, socket or pipe)");

  testing::write_text(dir.path() / "big.txt", std::string(101, 'b'));
  auto big = read_disk_file(dir.path() / "big.txt", 100);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code(), Errc::limit_exceeded);
  EXPECT_EQ(big.error().message(),
            (dir.path() / "big.txt").string() + " is 101 bytes, over the 100-byte limit for reading a file");
  EXPECT_TRUE(read_disk_file(dir.path() / "big.txt", 101));

  auto under_file = read_disk_file(dir.path() / "big.txt/child");
  ASSERT_FALSE(under_file);
  EXPECT_EQ(under_file.error().code(), Errc::not_found);
}

TEST(DiskFileAccess, ReadsTextAndHonoursCancellation) {
  agentd::testing::TempDir dir;
  testing::write_text(dir.path() / "a.txt", "alpha\n");
  DiskFileAccess files;
  auto read = testing::run_sync(files.read_text((dir.path() / "a.txt").string(), {}));
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, "alpha\n");

  support::CancelSource source;
  source.cancel();
  auto cancelled = testing::run_sync(files.read_text((dir.path() / "a.txt").string(), source.token()));
  ASSERT_FALSE(cancelled);
  EXPECT_EQ(cancelled.error().code(), Errc::cancelled);

  DiskFileAccess tiny(3);
  auto capped = testing::run_sync(tiny.read_text((dir.path() / "a.txt").string(), {}));
  ASSERT_FALSE(capped);
  EXPECT_EQ(capped.error().code(), Errc::limit_exceeded);
}

}  // namespace
}  // namespace agentd::tools
