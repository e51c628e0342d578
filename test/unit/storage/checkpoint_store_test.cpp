#include "storage/checkpoint_store.h"

#include <gtest/gtest.h>

#include "storage/blob_store.h"
#include "storage/migrations.h"
#include "storage/session_store.h"
#include "test/unit/storage/storage_fixture.h"

namespace agentd::storage {
namespace {

using support::Errc;

class CheckpointStoreTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    add_session("s1");
    add_session("s2");
  }
  static CheckpointRecord turn(std::string id, std::string session = "s1") {
    CheckpointRecord c;
    c.id = id;
    c.session_id = std::move(session);
    c.turn_id = std::move(id);
    c.created_at_ms = 7;
    return c;
  }
  static FileChangeRecord change(std::string checkpoint, std::string path, std::optional<std::string> before,
                                 std::optional<std::string> after, std::uint32_t mode = 0644) {
    return FileChangeRecord{0, std::move(checkpoint), std::move(path), std::move(before), std::move(after), mode, 8};
  }
};

TEST_F(CheckpointStoreTest, BlobsAreStoredOncePerHash) {
  BlobStore blobs(db());
  const std::string bytes("a\0b\r\n\xff", 6);
  ASSERT_TRUE(blobs.put("h1", bytes));
  ASSERT_TRUE(blobs.put("h1", bytes));
  ASSERT_TRUE(blobs.put("h2", ""));
  EXPECT_EQ(count("SELECT count(*) FROM blobs"), 2);
  EXPECT_EQ(count("SELECT size FROM blobs WHERE hash = 'h1'"), 6);
  auto back = blobs.get("h1");
  ASSERT_TRUE(back && back->has_value());
  EXPECT_EQ(**back, bytes);
  EXPECT_EQ(**blobs.get("h2"), "");
  EXPECT_FALSE(blobs.get("nope")->has_value());
}

TEST_F(CheckpointStoreTest, CheckpointsAreNumberedPerSessionOnFirstUse) {
  CheckpointStore store(db());
  EXPECT_EQ(*store.open(turn("t1")), 1);
  EXPECT_EQ(*store.open(turn("t1")), 1);  // open again: the same checkpoint
  EXPECT_EQ(*store.open(turn("t2")), 2);
  EXPECT_EQ(*store.open(turn("u1", "s2")), 1);

  CheckpointRecord restore;
  restore.id = "r_1";
  restore.session_id = "s1";
  restore.kind = CheckpointKind::restore;
  restore.restores_seq = 1;
  EXPECT_EQ(*store.open(restore), 3);

  auto wrong_session = store.open(turn("t1", "s2"));
  ASSERT_FALSE(wrong_session);
  EXPECT_EQ(wrong_session.error().code(), Errc::conflict);
  auto no_session = store.open(turn("x", "nobody"));
  ASSERT_FALSE(no_session);
  EXPECT_EQ(no_session.error().code(), Errc::not_found);
  restore.id = "r_2";
  restore.restores_seq.reset();
  auto unnamed = store.open(restore);
  ASSERT_FALSE(unnamed);
  EXPECT_EQ(unnamed.error().code(), Errc::invalid_argument);
}

TEST_F(CheckpointStoreTest, ChangesNeedTheirPreImageAndComeBackInOrder) {
  CheckpointStore store(db());
  BlobStore blobs(db());
  ASSERT_TRUE(store.open(turn("t1")));
  auto orphan = store.add_change(change("t1", "/w/a.txt", "missing-blob", "h9"));
  ASSERT_FALSE(orphan);
  EXPECT_EQ(orphan.error().code(), Errc::not_found);

  ASSERT_TRUE(blobs.put("h1", "old\n"));
  auto first = store.add_change(change("t1", "/w/a.txt", "h1", "h2", 0755));
  ASSERT_TRUE(first) << first.error().message();
  auto second = store.add_change(change("t1", "/w/new.txt", std::nullopt, "h3"));
  ASSERT_TRUE(second);
  EXPECT_LT(*first, *second);
  ASSERT_TRUE(store.open(turn("t2")));
  ASSERT_TRUE(store.add_change(change("t2", "/w/a.txt", std::nullopt, std::nullopt)));

  auto all = store.for_session("s1");
  ASSERT_TRUE(all) << all.error().message();
  ASSERT_EQ(all->size(), 2U);
  const CheckpointRecord& t1 = (*all)[0];
  EXPECT_EQ(t1.id, "t1");
  EXPECT_EQ(t1.seq, 1);
  EXPECT_EQ(t1.turn_id, "t1");
  EXPECT_EQ(t1.kind, CheckpointKind::turn);
  EXPECT_FALSE(t1.restores_seq);
  EXPECT_EQ(t1.created_at_ms, 7);
  ASSERT_EQ(t1.changes.size(), 2U);
  EXPECT_EQ(t1.changes[0].path, "/w/a.txt");
  EXPECT_EQ(t1.changes[0].before_hash, "h1");
  EXPECT_EQ(t1.changes[0].after_hash, "h2");
  EXPECT_EQ(t1.changes[0].mode, 0755U);
  EXPECT_EQ(t1.changes[1].path, "/w/new.txt");
  EXPECT_FALSE(t1.changes[1].before_hash);
  EXPECT_FALSE((*all)[1].changes[0].after_hash);
  EXPECT_TRUE(store.for_session("s2")->empty());
  EXPECT_EQ((*store.get("t2"))->changes.size(), 1U);
  EXPECT_FALSE(store.get("zz")->has_value());
}

TEST_F(CheckpointStoreTest, AnAbandonedChangeGoesAndTakesAnEmptyCheckpointWithIt) {
  CheckpointStore store(db());
  ASSERT_TRUE(store.open(turn("t1")));
  auto a = store.add_change(change("t1", "/w/a", std::nullopt, "h1"));
  auto b = store.add_change(change("t1", "/w/b", std::nullopt, "h2"));
  ASSERT_TRUE(store.remove_change(*a));
  EXPECT_EQ((*store.get("t1"))->changes.size(), 1U);
  ASSERT_TRUE(store.remove_change(*b));
  EXPECT_FALSE(store.get("t1")->has_value());
  EXPECT_TRUE(store.remove_change(*b));  // twice: nothing left to do
}

TEST_F(CheckpointStoreTest, DeletingTheSessionCascadesAndPruneRemovesUnusedBlobs) {
  CheckpointStore store(db());
  BlobStore blobs(db());
  ASSERT_TRUE(blobs.put("shared", "x"));
  ASSERT_TRUE(blobs.put("only-s1", "y"));
  ASSERT_TRUE(blobs.put("unused", "z"));
  ASSERT_TRUE(store.open(turn("t1")));
  ASSERT_TRUE(store.add_change(change("t1", "/w/a", "shared", "h")));
  ASSERT_TRUE(store.add_change(change("t1", "/w/b", "only-s1", "h")));
  ASSERT_TRUE(store.open(turn("u1", "s2")));
  ASSERT_TRUE(store.add_change(change("u1", "/w/a", "shared", "h")));

  EXPECT_EQ(*blobs.prune(), 1);  // "unused"
  ASSERT_TRUE(SessionStore(db()).remove("s1"));
  EXPECT_EQ(count("SELECT count(*) FROM checkpoints"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM file_changes"), 1);
  EXPECT_EQ(*blobs.prune(), 1);  // "only-s1"; "shared" is still used by s2
  EXPECT_TRUE(blobs.get("shared")->has_value());
}

// A prompt's image is a blob the session itself refers to: it stays while the session does (prune or not),
// its bytes come back with the session, and it goes with the session.
TEST_F(CheckpointStoreTest, ASessionsAttachedBlobsLiveAsLongAsTheSession) {
  BlobStore blobs(db());
  ASSERT_TRUE(blobs.put("img", "png bytes"));
  ASSERT_TRUE(blobs.attach("s1", "img"));
  ASSERT_TRUE(blobs.attach("s1", "img"));  // twice: one reference
  ASSERT_TRUE(blobs.attach("s2", "img"));
  EXPECT_FALSE(blobs.attach("s1", "never-stored"));  // a reference needs its blob
  EXPECT_EQ(*blobs.prune(), 0);
  auto attached = blobs.attached("s1");
  ASSERT_TRUE(attached) << attached.error().message();
  ASSERT_EQ(attached->size(), 1U);
  EXPECT_EQ((*attached)[0].first, "img");
  EXPECT_EQ((*attached)[0].second, "png bytes");
  ASSERT_TRUE(SessionStore(db()).remove("s1"));
  EXPECT_EQ(*blobs.prune(), 0);  // s2 still refers to it
  ASSERT_TRUE(SessionStore(db()).remove("s2"));
  EXPECT_EQ(*blobs.prune(), 1);
  EXPECT_FALSE(blobs.get("img")->has_value());
}

TEST(MigrationV4, UpgradesAVersion2DatabaseAndItsTablesAreStrict) {
  testing::TempDir dir;
  const std::string path = dir.file("v2.db");
  {
    auto v2 = Connection::open(path);
    ASSERT_TRUE(v2);
    ASSERT_EQ(*migrate(*v2, schema_migrations().first(2)), 2);
    ASSERT_TRUE(SessionStore(*v2).create(SessionRecord{"old", "/w", std::nullopt, 1, 1, "{}"}));
  }
  auto db = open_database({path});
  ASSERT_TRUE(db) << db.error().message();
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), schema_migrations().back().version);
  EXPECT_TRUE((*SessionStore(*db).get("old")).has_value());
  for (const char* table : {"blobs", "checkpoints", "file_changes"}) {
    auto stmt = db->prepare(fmt::format("SELECT strict FROM pragma_table_list WHERE name = '{}'", table));
    ASSERT_TRUE(stmt) << stmt.error().message();
    ASSERT_TRUE(*stmt->step()) << table;
    EXPECT_EQ(stmt->column_int64(0), 1) << table;
  }
  CheckpointStore store(*db);
  CheckpointRecord c;
  c.id = "t1";
  c.session_id = "old";
  EXPECT_EQ(*store.open(c), 1);
}

}  // namespace
}  // namespace agentd::storage
