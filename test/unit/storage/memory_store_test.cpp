// Remembered facts: round trips, project scoping, delete, search, and schema version 5 on a v4 database.
#include "storage/memory_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "storage/compaction_store.h"
#include "storage/migrations.h"
#include "storage/session_store.h"
#include "test/unit/storage/storage_fixture.h"

namespace agentd::storage {
namespace {

using support::Errc;

FactRecord fact(std::string project, std::string text, std::int64_t at = 10) {
  FactRecord f;
  f.project = std::move(project);
  f.text = std::move(text);
  f.source_session_id = "s1";
  f.created_at_ms = at;
  return f;
}

class MemoryStoreTest : public StorageTest {};

TEST_F(MemoryStoreTest, FactsRoundTripExactly) {
  MemoryStore store(db());
  // Bytes as given: UTF-8, quotes, a CRLF and trailing spaces come back unchanged.
  const std::string text = "Tests run with `make check`, not \"npm test\" \xE2\x80\x94 caf\xC3\xA9\r\nsecond line  ";
  auto id = store.add(fact("/p", text, 42));
  ASSERT_TRUE(id) << id.error().message();
  FactRecord no_session = fact("/p", "no session");
  no_session.source_session_id.reset();
  auto id2 = store.add(no_session);
  ASSERT_TRUE(id2);
  EXPECT_GT(*id2, *id);

  auto listed = store.list("/p");
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 2U);
  EXPECT_EQ((*listed)[0].id, *id);
  EXPECT_EQ((*listed)[0].project, "/p");
  EXPECT_EQ((*listed)[0].text, text);
  EXPECT_EQ((*listed)[0].source_session_id, "s1");
  EXPECT_EQ((*listed)[0].created_at_ms, 42);
  EXPECT_FALSE((*listed)[1].source_session_id.has_value());

  auto got = store.get("/p", *id);
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->text, text);
  EXPECT_FALSE(store.get("/q", *id)->has_value());
}

TEST_F(MemoryStoreTest, EmptyTextIsRefused) {
  MemoryStore store(db());
  auto r = store.add(fact("/p", " \n\t"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::invalid_argument);
  EXPECT_TRUE(store.list("/p")->empty());
}

TEST_F(MemoryStoreTest, DeleteIsScopedToTheProject) {
  MemoryStore store(db());
  auto a = store.add(fact("/p", "alpha"));
  auto b = store.add(fact("/q", "beta"));
  ASSERT_TRUE(a && b);
  auto wrong = store.remove("/q", *a);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code(), Errc::not_found);
  EXPECT_EQ(store.list("/p")->size(), 1U);
  ASSERT_TRUE(store.remove("/p", *a));
  EXPECT_TRUE(store.list("/p")->empty());
  EXPECT_EQ(store.list("/q")->size(), 1U);
  auto again = store.remove("/p", *a);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Errc::not_found);
}

TEST_F(MemoryStoreTest, FactsOutliveTheirSession) {
  add_session("s1");
  MemoryStore store(db());
  ASSERT_TRUE(store.add(fact("/p", "kept")));
  ASSERT_TRUE(SessionStore(db()).remove("s1"));
  EXPECT_EQ(store.list("/p")->size(), 1U);
}

TEST_F(MemoryStoreTest, SearchMatchesEveryWordNewestFirst) {
  MemoryStore store(db());
  ASSERT_TRUE(store.add(fact("/p", "The build uses Ninja")));
  ASSERT_TRUE(store.add(fact("/p", "ninja needs -j2 on this machine")));
  ASSERT_TRUE(store.add(fact("/p", "Use 100% of the tests_dir")));
  ASSERT_TRUE(store.add(fact("/q", "ninja elsewhere")));

  auto ninja = store.search("/p", "NINJA");
  ASSERT_TRUE(ninja) << ninja.error().message();
  ASSERT_EQ(ninja->size(), 2U);
  EXPECT_EQ((*ninja)[0].text, "ninja needs -j2 on this machine");  // newest first
  EXPECT_EQ((*ninja)[1].text, "The build uses Ninja");

  auto both = store.search("/p", "  ninja   machine ");
  ASSERT_TRUE(both);
  ASSERT_EQ(both->size(), 1U);
  EXPECT_EQ((*both)[0].text, "ninja needs -j2 on this machine");

  // LIKE's wildcards are taken literally.
  auto percent = store.search("/p", "100%");
  ASSERT_TRUE(percent);
  ASSERT_EQ(percent->size(), 1U);
  EXPECT_TRUE(store.search("/p", "1%0")->empty());
  EXPECT_EQ(store.search("/p", "tests_dir")->size(), 1U);
  EXPECT_TRUE(store.search("/p", "tests-dir")->empty());

  EXPECT_EQ(store.search("/p", "")->size(), 3U);
  EXPECT_EQ(store.search("/p", "", 1)->size(), 1U);
  EXPECT_TRUE(store.search("/p", "absent")->empty());
}

TEST(MigrationV5, UpgradesAVersion4DatabaseAndItsTablesAreStrict) {
  testing::TempDir dir;
  const std::string path = dir.file("v4.db");
  {
    auto v4 = Connection::open(path);
    ASSERT_TRUE(v4);
    ASSERT_TRUE(v4->exec("PRAGMA foreign_keys = ON"));
    ASSERT_EQ(*migrate(*v4, schema_migrations().first(4)), 4);
    ASSERT_TRUE(SessionStore(*v4).create(SessionRecord{"old", "/w", std::string("title"), 1, 2, "{}"}));
    ASSERT_TRUE(SessionStore(*v4).append_message("old", "user", R"({"text":"hi"})"));
    EXPECT_EQ(*v4->query_int("SELECT count(*) FROM sqlite_master WHERE name = 'memory_facts'"), 0);
  }
  auto db = open_database({path});
  ASSERT_TRUE(db) << db.error().message();
  // Later versions (6: the permission audit rebuilt) apply on top in the same open.
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), schema_migrations().back().version);
  // Version 4's data is still there.
  auto old = SessionStore(*db).get("old");
  ASSERT_TRUE(old && old->has_value());
  EXPECT_EQ((*old)->title, "title");
  EXPECT_EQ(SessionStore(*db).messages("old")->size(), 1U);
  for (const char* table : {"memory_facts", "compactions"}) {
    auto stmt = db->prepare(fmt::format("SELECT strict FROM pragma_table_list WHERE name = '{}'", table));
    ASSERT_TRUE(stmt) << stmt.error().message();
    ASSERT_TRUE(*stmt->step()) << table;
    EXPECT_EQ(stmt->column_int64(0), 1) << table;
  }
  // The new tables work on the upgraded database, and the old session takes compaction records.
  EXPECT_TRUE(MemoryStore(*db).add(fact("/w", "remembered")));
  CompactionRecord c;
  c.session_id = "old";
  c.first_turn_id = "t1";
  c.last_turn_id = "t1";
  c.summary_json = "{}";
  EXPECT_TRUE(CompactionStore(*db).add(c));
}

}  // namespace
}  // namespace agentd::storage
