#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "storage/database.h"
#include "storage/migrations.h"
#include "storage/session_store.h"
#include "test/support/temp_dir.h"

namespace agentd::storage {
namespace {

using support::Errc;
using testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Database, CreatesAPrivateFileInWalModeAtTheLatestSchema) {
  TempDir dir;
  const std::string path = dir.file("nested/dir/agentd.db");
  auto db = open_database({path});
  ASSERT_TRUE(db) << db.error().message();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir.file("nested/dir").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u);
  auto stmt = db->prepare("PRAGMA journal_mode");
  ASSERT_TRUE(stmt);
  ASSERT_TRUE(*stmt->step());
  EXPECT_EQ(stmt->column_text(0), "wal");
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), schema_migrations().back().version);
  EXPECT_EQ(*db->query_int("PRAGMA foreign_keys"), 1);
}

TEST(Database, ReopeningIsIdempotent) {
  TempDir dir;
  const std::string path = dir.file("a.db");
  { ASSERT_TRUE(open_database({path})); }
  auto again = open_database({path});
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(*again->query_int("SELECT count(*) FROM sqlite_master WHERE name = 'sessions'"), 1);
}

TEST(Database, NewerSchemaIsRefusedAndLeftUntouched) {
  TempDir dir;
  const std::string path = dir.file("future.db");
  {
    auto raw = Connection::open(path);
    ASSERT_TRUE(raw);
    ASSERT_TRUE(raw->exec("CREATE TABLE future_things (x); PRAGMA user_version = 999;"));
  }
  const std::string before = slurp(path);
  auto db = open_database({path});
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code(), Errc::conflict);
  EXPECT_NE(db.error().message().find("schema version 999"), std::string::npos) << db.error().message();
  EXPECT_NE(db.error().message().find("untouched"), std::string::npos);
  EXPECT_EQ(slurp(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(Migrations, AFailingStepRollsEverythingBack) {
  TempDir dir;
  auto db = Connection::open(dir.file("m.db"));
  ASSERT_TRUE(db);
  const Migration steps[] = {
      {1, "good", "CREATE TABLE a (x);"},
      {2, "bad", "CREATE TABLE b (y); THIS IS NOT SQL;"},
  };
  auto r = migrate(*db, steps);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("migration 2 (bad)"), std::string::npos) << r.error().message();
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), 0);
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM sqlite_master"), 0);
}

TEST(Migrations, RunOnlyThePendingSteps) {
  TempDir dir;
  auto db = Connection::open(dir.file("m.db"));
  ASSERT_TRUE(db);
  const Migration v1[] = {{1, "one", "CREATE TABLE a (x);"}};
  const Migration v2[] = {{1, "one", "CREATE TABLE a (x);"}, {2, "two", "CREATE TABLE b (y);"}};
  EXPECT_EQ(*migrate(*db, v1), 1);
  EXPECT_EQ(*migrate(*db, v2), 2);
  EXPECT_EQ(*migrate(*db, v2), 2);
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM sqlite_master WHERE type = 'table'"), 2);
}

TEST(Database, DefaultPathFollowsXdg) {
  const char* saved_xdg = std::getenv("XDG_DATA_HOME");
  const std::string saved = saved_xdg != nullptr ? saved_xdg : "";
  ::setenv("XDG_DATA_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(*default_database_path(), "/tmp/xdg-test/agentd/agentd.db");
  ::unsetenv("XDG_DATA_HOME");
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(*default_database_path(), "/home/someone/.local/share/agentd/agentd.db");
  if (saved_xdg != nullptr) ::setenv("XDG_DATA_HOME", saved.c_str(), 1);
}

TEST(Sqlite, ErrorsKeepTheExtendedCode) {
  TempDir dir;
  auto db = open_database({dir.file("e.db")});
  ASSERT_TRUE(db);
  auto bad = db->prepare("SELECT * FROM no_such_table");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::storage);
  EXPECT_NE(bad.error().message().find("no such table"), std::string::npos);
  ASSERT_TRUE(db->exec("CREATE TABLE u (k TEXT PRIMARY KEY)"));
  ASSERT_TRUE(db->exec("INSERT INTO u VALUES ('a')"));
  auto dup = db->exec("INSERT INTO u VALUES ('a')");
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code(), Errc::conflict);
  EXPECT_EQ(dup.error().native_code(), 1555);  // SQLITE_CONSTRAINT_PRIMARYKEY
}

TEST(Sqlite, TransactionRollsBackUnlessCommitted) {
  TempDir dir;
  auto db = open_database({dir.file("t.db")});
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("CREATE TABLE t (x INTEGER)"));
  {
    auto tx = Transaction::begin(*db);
    ASSERT_TRUE(tx);
    ASSERT_TRUE(db->exec("INSERT INTO t VALUES (1)"));
  }
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM t"), 0);
  {
    auto tx = Transaction::begin(*db);
    ASSERT_TRUE(tx);
    ASSERT_TRUE(db->exec("INSERT INTO t VALUES (1)"));
    ASSERT_TRUE(tx->commit());
  }
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM t"), 1);
}

TEST(Sqlite, ATransactionInsideATransactionNestsAsASavepoint) {
  TempDir dir;
  auto db = open_database({dir.file("n.db")});
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("CREATE TABLE t (x INTEGER)"));
  {
    auto outer = Transaction::begin(*db);
    ASSERT_TRUE(outer);
    ASSERT_TRUE(db->exec("INSERT INTO t VALUES (1)"));
    {
      auto dropped = Transaction::begin(*db);
      ASSERT_TRUE(dropped) << dropped.error().message();
      ASSERT_TRUE(db->exec("INSERT INTO t VALUES (2)"));
    }
    EXPECT_TRUE(db->in_transaction());  // the inner rollback undid only its own insert
    {
      auto kept = Transaction::begin(*db);
      ASSERT_TRUE(kept);
      ASSERT_TRUE(db->exec("INSERT INTO t VALUES (3)"));
      ASSERT_TRUE(kept->commit());
    }
    ASSERT_TRUE(outer->commit());
  }
  EXPECT_FALSE(db->in_transaction());
  EXPECT_EQ(*db->query_int("SELECT group_concat(x, '') FROM t ORDER BY x"), 13);
}

TEST(Sqlite, ConstraintErrorsSayWhichConstraint) {
  TempDir dir;
  auto db = open_database({dir.file("k.db")});
  ASSERT_TRUE(db);
  ASSERT_TRUE(
      db->exec("CREATE TABLE p (id INTEGER PRIMARY KEY); "
               "CREATE TABLE c (pid INTEGER NOT NULL REFERENCES p(id), v TEXT CHECK (json_valid(v)));"
               "INSERT INTO p VALUES (1);"));
  EXPECT_EQ(constraint_of(db->exec("INSERT INTO p VALUES (1)").error()), Constraint::unique);
  EXPECT_EQ(constraint_of(db->exec("INSERT INTO c VALUES (2, '{}')").error()), Constraint::foreign_key);
  EXPECT_EQ(constraint_of(db->exec("INSERT INTO c VALUES (1, '{')").error()), Constraint::check);
  EXPECT_EQ(constraint_of(db->exec("INSERT INTO c VALUES (NULL, '{}')").error()), Constraint::not_null);
  EXPECT_EQ(constraint_of(db->exec("SELECT * FROM nowhere").error()), Constraint::none);
}

TEST(Sqlite, CachedStatementsAreResetWhenTheLeaseEnds) {
  TempDir dir;
  auto db = open_database({dir.file("c.db")});
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3);"));
  for (int round = 0; round < 3; ++round) {
    auto s = db->cached("SELECT x FROM t WHERE x >= ? ORDER BY x");
    ASSERT_TRUE(s);
    (*s)->bind(1, 2);
    ASSERT_TRUE(*(*s)->step());
    EXPECT_EQ((*s)->column_int64(0), 2);
    // Stop mid-way: the lease must rewind it, or the next round would read 3.
  }
  // A half-read SELECT must not keep a read transaction open: a writer on another connection would
  // then be unable to checkpoint; here we just check that a write transaction can begin.
  auto tx = Transaction::begin(*db);
  ASSERT_TRUE(tx);
}

class SessionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = open_database({dir_.file("s.db")});
    ASSERT_TRUE(opened) << opened.error().message();
    db_.emplace(std::move(*opened));
    store_.emplace(*db_);
  }
  SessionRecord session(std::string id, std::string cwd, std::int64_t updated) {
    return SessionRecord{std::move(id), std::move(cwd), std::nullopt, updated, updated, "{}"};
  }
  TempDir dir_;
  std::optional<Connection> db_;
  std::optional<SessionStore> store_;
};

TEST_F(SessionStoreTest, CreatesGetsListsAndRemovesSessions) {
  ASSERT_TRUE(store_->create(session("s1", "/w/a", 100)));
  ASSERT_TRUE(store_->create(session("s2", "/w/b", 200)));
  SessionRecord titled = session("s3", "/w/a", 300);
  titled.title = "fix the build";
  ASSERT_TRUE(store_->create(titled));
  auto dup = store_->create(session("s1", "/w/a", 1));
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code(), Errc::conflict);

  auto got = store_->get("s3");
  ASSERT_TRUE(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->title, "fix the build");
  EXPECT_FALSE(store_->get("nope")->has_value());

  auto all = store_->list(std::nullopt, 10);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, "s3");
  auto in_a = store_->list(std::string_view("/w/a"), 10);
  ASSERT_EQ(in_a->size(), 2u);
  EXPECT_EQ(store_->list(std::nullopt, 1)->size(), 1u);

  ASSERT_TRUE(store_->remove("s2"));
  auto again = store_->remove("s2");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Errc::not_found);
}

TEST_F(SessionStoreTest, MessagesGetIncreasingSequenceNumbers) {
  ASSERT_TRUE(store_->create(session("s1", "/w", 1)));
  ASSERT_TRUE(store_->create(session("s2", "/w", 1)));
  EXPECT_EQ(*store_->append_message("s1", "user", R"({"text":"hi"})"), 1);
  EXPECT_EQ(*store_->append_message("s1", "assistant", R"({"text":"hello"})"), 2);
  EXPECT_EQ(*store_->append_message("s2", "user", R"({"text":"other"})"), 1);
  auto msgs = store_->messages("s1");
  ASSERT_TRUE(msgs);
  ASSERT_EQ(msgs->size(), 2u);
  EXPECT_EQ((*msgs)[1].role, "assistant");
  EXPECT_EQ((*msgs)[1].content_json, R"({"text":"hello"})");
  EXPECT_EQ(store_->messages("s1", 1)->size(), 1u);
  // The session was touched.
  EXPECT_GT((*store_->get("s1"))->updated_at_ms, 1);
}

TEST_F(SessionStoreTest, BadMessagesAreRefusedAndChangeNothing) {
  ASSERT_TRUE(store_->create(session("s1", "/w", 1)));
  auto no_session = store_->append_message("missing", "user", "{}");
  ASSERT_FALSE(no_session);
  EXPECT_EQ(no_session.error().code(), Errc::not_found);
  EXPECT_FALSE(store_->append_message("s1", "robot", "{}"));
  EXPECT_FALSE(store_->append_message("s1", "user", "{not json"));
  EXPECT_TRUE(store_->messages("s1")->empty());
  EXPECT_EQ((*store_->get("s1"))->updated_at_ms, 1);
}

TEST_F(SessionStoreTest, RemovingASessionRemovesItsMessages) {
  ASSERT_TRUE(store_->create(session("s1", "/w", 1)));
  ASSERT_TRUE(store_->append_message("s1", "user", "{}"));
  ASSERT_TRUE(store_->remove("s1"));
  EXPECT_EQ(*db_->query_int("SELECT count(*) FROM messages"), 0);
}

TEST_F(SessionStoreTest, DataSurvivesReopening) {
  ASSERT_TRUE(store_->create(session("s1", "/w", 1)));
  ASSERT_TRUE(store_->append_message("s1", "user", R"({"text":"keep me"})"));
  store_.reset();
  db_.reset();
  auto reopened = open_database({dir_.file("s.db")});
  ASSERT_TRUE(reopened);
  SessionStore store(*reopened);
  auto msgs = store.messages("s1");
  ASSERT_EQ(msgs->size(), 1u);
  EXPECT_EQ((*msgs)[0].content_json, R"({"text":"keep me"})");
}

}  // namespace
}  // namespace agentd::storage
