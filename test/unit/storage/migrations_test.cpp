// Schema version 2 on top of databases that version 1 wrote.
#include "storage/migrations.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "storage/database.h"
#include "storage/event_store.h"
#include "storage/session_store.h"
#include "storage/turn_store.h"
#include "test/support/temp_dir.h"

namespace agentd::storage {
namespace {

using testing::TempDir;

TEST(MigrationV2, UpgradesAVersion1DatabaseAndKeepsItsData) {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  std::int64_t updated_at = 0;
  {
    // What an agentd with only migration 1 left behind.
    auto v1 = Connection::open(path);
    ASSERT_TRUE(v1);
    ASSERT_TRUE(v1->exec("PRAGMA foreign_keys = ON"));
    ASSERT_EQ(*migrate(*v1, schema_migrations().first(1)), 1);
    SessionStore sessions(*v1);
    ASSERT_TRUE(sessions.create(SessionRecord{"old", "/w", std::string("kept title"), 10, 20, R"({"mode":"plan"})"}));
    ASSERT_TRUE(sessions.append_message("old", "user", R"({"text":"hi"})"));
    updated_at = (*sessions.get("old"))->updated_at_ms;  // the append touched it
    EXPECT_EQ(*v1->query_int("SELECT count(*) FROM sqlite_master WHERE name = 'turns'"), 0);
  }

  auto db = open_database({path});
  ASSERT_TRUE(db) << db.error().message();
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), schema_migrations().back().version);
  SessionStore sessions(*db);
  auto old = sessions.get("old");
  ASSERT_TRUE(old && old->has_value());
  EXPECT_EQ((*old)->title, "kept title");
  EXPECT_EQ((*old)->created_at_ms, 10);
  EXPECT_EQ((*old)->updated_at_ms, updated_at);
  EXPECT_EQ((*old)->metadata_json, R"({"mode":"plan"})");
  auto messages = sessions.messages("old");
  ASSERT_EQ(messages->size(), 1u);
  EXPECT_EQ((*messages)[0].content_json, R"({"text":"hi"})");

  // The old session takes the new records, and its cascade reaches them.
  TurnStore turns(*db);
  EventStore events(*db);
  ASSERT_TRUE(turns.begin(TurnRecord{"t1", "old", 1, "go on", 30, std::nullopt, std::nullopt, "{}"}));
  ASSERT_TRUE(events.append(EventRecord{"old", 1, std::string("t1"), "text_delta", R"({"text":"ok"})", 31}));
  ASSERT_TRUE(sessions.remove("old"));
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM turns"), 0);
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM events"), 0);
}

TEST(MigrationV2, NewTablesAreStrict) {
  TempDir dir;
  auto db = open_database({dir.file("s.db")});
  ASSERT_TRUE(db);
  for (const char* table : {"turns", "events", "spans", "usage"}) {
    auto stmt = db->prepare(fmt::format("SELECT strict FROM pragma_table_list WHERE name = '{}'", table));
    ASSERT_TRUE(stmt) << stmt.error().message();
    ASSERT_TRUE(*stmt->step()) << table;
    EXPECT_EQ(stmt->column_int64(0), 1) << table;
  }
}

}  // namespace
}  // namespace agentd::storage
