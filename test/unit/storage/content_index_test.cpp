#include "storage/content_index.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/support/temp_dir.h"

namespace agentd::storage {
namespace {

IndexDocument doc(std::string path, std::string names, std::string defs, std::string body, std::int64_t mtime = 1) {
  return IndexDocument{IndexedFile{std::move(path), mtime, 10}, std::move(names), std::move(defs), std::move(body)};
}

// A search of one shard: the statistics are its own.
Result<std::vector<IndexMatch>> search(ContentIndex& index, const std::vector<std::string>& tokens, std::size_t limit) {
  auto all = index.totals();
  if (!all) return all.error();
  std::vector<ContentIndex::QueryToken> query;
  for (const auto& t : tokens) {
    auto f = index.frequency(t);
    query.push_back({t, f ? *f : ContentIndex::Frequency{}});
  }
  return index.search(query, limit, *all);
}

std::vector<std::string> paths_of(const std::vector<IndexMatch>& matches) {
  std::vector<std::string> out;
  for (const auto& m : matches) out.push_back(m.path);
  return out;
}

class ContentIndexTest : public ::testing::Test {
 protected:
  std::string db_path() const { return (dir_.path() / "cache" / "index" / "root.db").string(); }
  ContentIndex open(const std::string& root = "/work/tree") {
    auto index = ContentIndex::open(db_path(), root);
    EXPECT_TRUE(index) << (index ? "" : index.error().message());
    return std::move(*index);
  }
  agentd::testing::TempDir dir_;
};

TEST_F(ContentIndexTest, RanksDefinitionsAndPathsAboveMentionsAndRareTokensAboveCommonOnes) {
  auto index = open();
  std::vector<IndexDocument> docs = {
      doc("fs/ext4/super.c", "fs ext4 super", "ext4_fill_super ext4 fill super", "ext4_fill_super sb lock common"),
      doc("fs/ext4/inode.c", "fs ext4 inode", "ext4_iget", "ext4_fill_super inode common"),  // a mention only
      doc("net/ipv4/tcp.c", "net ipv4 tcp", "tcp_connect", "tcp_connect sock common"),
  };
  for (int i = 0; i < 20; ++i)
    docs.push_back(doc("drivers/d" + std::to_string(i) + ".c", "drivers", "", "common filler"));
  ASSERT_TRUE(index.write(docs, {}));

  auto found = search(index, {"ext4_fill_super"}, 10);
  ASSERT_TRUE(found) << found.error().message();
  EXPECT_EQ(paths_of(*found), (std::vector<std::string>{"fs/ext4/super.c", "fs/ext4/inode.c"}));
  EXPECT_GT((*found)[0].score, (*found)[1].score);

  // A token in most files is not read from the body at all; the rare one decides.
  found = search(index, {"common", "tcp_connect"}, 3);
  ASSERT_TRUE(found);
  ASSERT_FALSE(found->empty());
  EXPECT_EQ((*found)[0].path, "net/ipv4/tcp.c");

  // Path words count: "inode" names one file's path.
  found = search(index, {"inode"}, 1);
  ASSERT_TRUE(found);
  EXPECT_EQ(paths_of(*found), (std::vector<std::string>{"fs/ext4/inode.c"}));

  auto df = index.frequency("ext4_fill_super");
  ASSERT_TRUE(df);
  EXPECT_EQ(df->body, 2);
  EXPECT_EQ(df->definitions, 1);
  EXPECT_EQ(df->path, 0);
}

TEST_F(ContentIndexTest, ReplacedAndRemovedFilesLeaveGarbageThatSearchesSkip) {
  auto index = open();
  ASSERT_TRUE(index.write(
      std::vector<IndexDocument>{doc("a.py", "a", "old_name", "old_name"), doc("b.py", "b", "", "other")}, {}));
  ASSERT_TRUE(index.write(std::vector<IndexDocument>{doc("a.py", "a", "new_name", "new_name", 2)}, {}));
  auto found = search(index, {"old_name"}, 10);
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->empty()) << "the replaced row still answers";
  found = search(index, {"new_name"}, 10);
  ASSERT_TRUE(found);
  EXPECT_EQ(paths_of(*found), (std::vector<std::string>{"a.py"}));

  ASSERT_TRUE(index.write({}, std::vector<std::string>{"b.py"}));
  found = search(index, {"other"}, 10);
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->empty());

  auto counts = index.counts();
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->files, 1);
  EXPECT_EQ(counts->garbage, 2);
  auto files = index.files();
  ASSERT_TRUE(files);
  ASSERT_EQ(files->size(), 1U);
  EXPECT_EQ((*files)[0].path, "a.py");
  EXPECT_EQ((*files)[0].mtime_ns, 2);

  ASSERT_TRUE(index.clear());
  counts = index.counts();
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->files, 0);
  EXPECT_EQ(counts->garbage, 0);
}

TEST_F(ContentIndexTest, SurvivesReopeningAndStartsOverForAnotherRoot) {
  {
    auto index = open("/work/tree");
    ASSERT_TRUE(index.write(std::vector<IndexDocument>{doc("a.go", "a", "Serve", "serve")}, {}));
    ASSERT_TRUE(index.set_complete(true));
  }
  {
    auto index = open("/work/tree");
    auto complete = index.complete();
    ASSERT_TRUE(complete);
    EXPECT_TRUE(*complete);
    auto found = search(index, {"serve"}, 5);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->size(), 1U);
  }
  auto other = open("/work/other");
  auto complete = other.complete();
  ASSERT_TRUE(complete);
  EXPECT_FALSE(*complete);
  auto files = other.files();
  ASSERT_TRUE(files);
  EXPECT_TRUE(files->empty()) << "another root's index was kept";
}

TEST_F(ContentIndexTest, AnUnreadableCacheFileIsReplaced) {
  std::filesystem::create_directories(std::filesystem::path(db_path()).parent_path());
  {
    std::ofstream out(db_path(), std::ios::binary);
    out << std::string(8192, 'x');  // not a database
  }
  auto index = open();
  ASSERT_TRUE(index.write(std::vector<IndexDocument>{doc("x.rs", "x", "", "token")}, {}));
  auto found = search(index, {"token"}, 5);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->size(), 1U);
  // The cache file is the user's alone.
  EXPECT_EQ(std::filesystem::status(db_path()).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST_F(ContentIndexTest, HostileTokensNeverReachTheQueryLanguage) {
  auto index = open();
  ASSERT_TRUE(index.write(std::vector<IndexDocument>{doc("a.c", "a", "", "safe")}, {}));
  // FTS5 syntax in a token would be a syntax error, or a different query: such tokens are skipped.
  auto found = search(index, {"\" OR *", "NEAR(a b)", "{path}:", "safe"}, 5);
  ASSERT_TRUE(found) << found.error().message();
  EXPECT_EQ(paths_of(*found), (std::vector<std::string>{"a.c"}));
  found = search(index, {"\""}, 5);
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->empty());
}

// A bulk load: segments are not merged as commits add them, optimize() merges them into one, and the
// index answers alike before and after; the automerge setting is back once bulk loading is off.
TEST_F(ContentIndexTest, ABulkLoadMergesOnceAndSearchesTheSame) {
  auto index = open();
  ASSERT_TRUE(index.set_bulk(true));
  for (int commit = 0; commit < 6; ++commit) {
    std::vector<IndexDocument> docs;
    for (int i = 0; i < 10; ++i) {
      const std::string n = std::to_string(commit * 10 + i);
      docs.push_back(doc("src/f" + n + ".c", "src f" + n, "fn_" + n, "fn_" + n + " shared word" + n));
    }
    ASSERT_TRUE(index.write(docs, {}));
  }
  auto before = search(index, {"fn_42", "shared"}, 100);
  ASSERT_TRUE(before) << before.error().message();
  ASSERT_TRUE(index.optimize());
  ASSERT_TRUE(index.set_bulk(false));
  auto after = search(index, {"fn_42", "shared"}, 100);
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_EQ(paths_of(*before), paths_of(*after));
  ASSERT_FALSE(after->empty());
  EXPECT_EQ(after->front().path, "src/f42.c");
  EXPECT_EQ(after->size(), 60U);
  // Writing after the bulk load works as before.
  ASSERT_TRUE(index.write(std::vector<IndexDocument>{doc("src/new.c", "src new", "fresh_fn", "fresh_fn")}, {}));
  auto fresh = search(index, {"fresh_fn"}, 5);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(paths_of(*fresh), (std::vector<std::string>{"src/new.c"}));
}

}  // namespace
}  // namespace agentd::storage
