#include "storage/blob_files.h"

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "storage/blob_store.h"
#include "storage/checkpoint_store.h"
#include "test/unit/storage/storage_fixture.h"

namespace agentd::storage {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Any 64 lowercase hex digits name a blob; the store trusts the caller's hash.
const std::string kHashA(64, 'a');
const std::string kHashB = std::string(63, 'b') + "c";

std::uint32_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

TEST(BlobFiles, LiveNextToTheDatabaseAndNotForAnInMemoryOne) {
  EXPECT_EQ(blob_directory("/data/agentd.db"), fs::path("/data/agentd.db.blobs"));
  EXPECT_TRUE(blob_directory(":memory:").empty());
  EXPECT_TRUE(blob_directory("").empty());
}

TEST(BlobFiles, AreWrittenPrivateReadBackAndStoredOnce) {
  testing::TempDir dir;
  const fs::path blobs = fs::path(dir.file("agentd.db.blobs"));
  const std::string bytes("pre\0image\n", 10);
  ASSERT_TRUE(write_blob_file(blobs, kHashA, bytes));
  const fs::path file = blobs / "aa" / kHashA;
  EXPECT_EQ(mode_of(blobs), 0700U);
  EXPECT_EQ(mode_of(file.parent_path()), 0700U);
  EXPECT_EQ(mode_of(file), 0600U);
  auto back = read_blob_file(blobs, kHashA, bytes.size());
  ASSERT_TRUE(back) << back.error().message();
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ(**back, bytes);
  const auto written = fs::last_write_time(file);
  ASSERT_TRUE(write_blob_file(blobs, kHashA, bytes));  // already there: untouched
  EXPECT_EQ(fs::last_write_time(file), written);
  auto missing = read_blob_file(blobs, kHashB, 1);
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
  // Nothing is left under a temporary name.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::recursive_directory_iterator(blobs)) ++entries;
  EXPECT_EQ(entries, 2U);  // aa/ and the blob
}

TEST(BlobFiles, ADamagedFileIsAnErrorNotAPreImage) {
  testing::TempDir dir;
  const fs::path blobs = fs::path(dir.file("b"));
  ASSERT_TRUE(write_blob_file(blobs, kHashA, "twelve bytes"));
  std::ofstream(blobs / "aa" / kHashA, std::ios::trunc) << "short";
  auto back = read_blob_file(blobs, kHashA, 12);
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().message().find("damaged"), std::string::npos) << back.error().message();
}

TEST(BlobFiles, NamesThatAreNotHashesAreRefused) {
  testing::TempDir dir;
  const fs::path blobs = fs::path(dir.file("b"));
  EXPECT_FALSE(write_blob_file(blobs, "../../etc/passwd", "x"));
  EXPECT_FALSE(write_blob_file(blobs, std::string(64, 'A'), "x"));
  EXPECT_FALSE(read_blob_file(blobs, "../x", 1));
  EXPECT_FALSE(remove_blob_file(blobs, "aa/../../x"));
  EXPECT_FALSE(fs::exists(blobs));
}

TEST(BlobFiles, PruneRemovesOldUnreferencedFilesAndLeftoversOnly) {
  testing::TempDir dir;
  const fs::path blobs = fs::path(dir.file("b"));
  ASSERT_TRUE(write_blob_file(blobs, kHashA, "kept"));
  ASSERT_TRUE(write_blob_file(blobs, kHashB, "gone"));
  std::ofstream(blobs / "bb" / ".writing-leftover") << "half";
  const std::set<std::string> referenced{kHashA};
  auto is_referenced = [&](std::string_view hash) { return referenced.contains(std::string(hash)); };
  EXPECT_EQ(*prune_blob_files(blobs, is_referenced, 1h), 0);  // all too young
  EXPECT_EQ(*prune_blob_files(blobs, is_referenced, 0s), 2);
  EXPECT_TRUE(fs::exists(blobs / "aa" / kHashA));
  EXPECT_FALSE(fs::exists(blobs / "bb" / kHashB));
  EXPECT_FALSE(fs::exists(blobs / "bb" / ".writing-leftover"));
  EXPECT_EQ(*prune_blob_files(dir.file("none"), is_referenced, 0s), 0);
}

class BlobInFileTest : public StorageTest {};

TEST_F(BlobInFileTest, ARowMarkedInFileReadsItsFileAndPruneTakesBoth) {
  add_session("s1");
  CheckpointStore store(db());
  BlobStore blobs(db());
  const fs::path dir = blob_directory(path());
  const std::string bytes(100000, 'x');
  ASSERT_TRUE(write_blob_file(dir, kHashA, bytes));
  ASSERT_TRUE(blobs.put_in_file(kHashA, bytes.size()));
  EXPECT_EQ(count("SELECT length(data) FROM blobs"), 0);
  auto back = blobs.get(kHashA);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->value(), bytes);

  // Referenced by a change, it stays; once nothing refers to it, the row and the file go.
  CheckpointRecord header;
  header.id = "t1";
  header.session_id = "s1";
  header.turn_id = "t1";
  ASSERT_TRUE(store.open(header));
  auto id = store.add_change(FileChangeRecord{0, "t1", "/w/big", kHashA, std::nullopt, 0644, 8});
  ASSERT_TRUE(id) << id.error().message();
  EXPECT_EQ(*blobs.prune(), 0);
  EXPECT_TRUE(fs::exists(dir / "aa" / kHashA));
  ASSERT_TRUE(store.remove_change(*id));
  EXPECT_EQ(*blobs.prune(), 1);
  EXPECT_FALSE(fs::exists(dir / "aa" / kHashA));
  EXPECT_FALSE(blobs.get(kHashA)->has_value());
}

TEST_F(BlobInFileTest, AMissingFileIsAnErrorThatSaysSo) {
  BlobStore blobs(db());
  ASSERT_TRUE(blobs.put_in_file(kHashB, 10));
  auto back = blobs.get(kHashB);
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().message().find("missing"), std::string::npos) << back.error().message();
}

}  // namespace
}  // namespace agentd::storage
