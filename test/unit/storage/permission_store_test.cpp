// Approvals and the permission audit: per-project approvals, the audit newest first, filtered and
// limited, kept when its session is deleted, and schema version 6 on a version 5 database.
#include "storage/permission_store.h"

#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "storage/database.h"
#include "storage/migrations.h"
#include "storage/session_store.h"
#include "test/unit/storage/storage_fixture.h"

namespace agentd::storage {
namespace {

using support::Errc;

class PermissionStoreTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    add_session("s1");
  }
  static ApprovalRecord approval(std::string project, std::string rule, std::string verdict = "allow") {
    ApprovalRecord a;
    a.project = std::move(project);
    a.rule = std::move(rule);
    a.verdict = std::move(verdict);
    a.session_id = "s1";
    a.created_at_ms = 10;
    return a;
  }
};

TEST_F(PermissionStoreTest, ApprovalsArePerProjectReplaceableAndRevocable) {
  PermissionStore store(db());
  auto a = store.add_approval(approval("/p", "shell(npm test)"));
  auto b = store.add_approval(approval("/p", "write_file"));
  auto other = store.add_approval(approval("/q", "write_file"));
  ASSERT_TRUE(a && b && other);
  // The same rule again replaces the verdict, keeping one row.
  auto again = store.add_approval(approval("/p", "write_file", "deny"));
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *b);
  auto listed = store.approvals("/p");
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 2U);
  EXPECT_EQ((*listed)[0].rule, "shell(npm test)");
  EXPECT_EQ((*listed)[1].verdict, "deny");
  EXPECT_EQ((*listed)[1].session_id, "s1");

  // Revoking needs the right project: one project cannot drop another's approvals.
  auto wrong = store.revoke("/q", *a);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code(), Errc::not_found);
  ASSERT_TRUE(store.revoke("/p", *a));
  EXPECT_EQ(store.approvals("/p")->size(), 1U);
  EXPECT_EQ(store.approvals("/q")->size(), 1U);
  EXPECT_FALSE(store.revoke("/p", *a));
  // Approvals outlive the session they were given in.
  ASSERT_TRUE(db().exec("DELETE FROM sessions WHERE id = 's1'"));
  EXPECT_EQ(store.approvals("/p")->size(), 1U);
}

PermissionAuditRecord decision(std::string session, std::string call, std::int64_t at) {
  PermissionAuditRecord e;
  e.session_id = std::move(session);
  e.turn_id = "t1";
  e.tool_call_id = std::move(call);
  e.tool = "shell";
  e.input_digest = "sha256:abc";
  e.decision = "deny";
  e.decided_by = "policy";
  e.reason = "denied by the rule deny \"shell(rm *)\" (config.json)";
  e.created_at_ms = at;
  return e;
}

TEST_F(PermissionStoreTest, TheAuditKeepsEveryDecisionNewestFirst) {
  PermissionStore store(db());
  PermissionAuditRecord e = decision("s1", "c1", 1);
  e.risk = "execute|network";
  ASSERT_TRUE(store.record(e));
  e.tool_call_id = "c2";
  e.turn_id.reset();
  e.decision = "allow";
  e.decided_by = "user";
  e.risk.clear();
  e.cwd = "/elsewhere";
  ASSERT_TRUE(store.record(e));
  e.decision = "maybe";
  EXPECT_FALSE(store.record(e));  // CHECK constraint
  auto audit = store.audit("s1");
  ASSERT_TRUE(audit) << audit.error().message();
  ASSERT_EQ(audit->size(), 2U);
  EXPECT_EQ((*audit)[0].tool_call_id, "c2");
  EXPECT_EQ((*audit)[0].decided_by, "user");
  EXPECT_FALSE((*audit)[0].turn_id.has_value());
  EXPECT_EQ((*audit)[0].cwd, "/elsewhere");  // a cwd the caller gives is kept
  EXPECT_EQ((*audit)[0].risk, "");
  EXPECT_EQ((*audit)[1].tool_call_id, "c1");
  EXPECT_EQ((*audit)[1].turn_id, "t1");
  EXPECT_EQ((*audit)[1].decision, "deny");
  EXPECT_EQ((*audit)[1].reason, "denied by the rule deny \"shell(rm *)\" (config.json)");
  EXPECT_EQ((*audit)[1].input_digest, "sha256:abc");
  EXPECT_EQ((*audit)[1].created_at_ms, 1);
  EXPECT_EQ((*audit)[1].cwd, "/w");  // none given: the session's
  EXPECT_EQ((*audit)[1].risk, "execute|network");
  EXPECT_LT((*audit)[1].id, (*audit)[0].id);
}

TEST_F(PermissionStoreTest, TheAuditIsFilteredBySessionAndLimited) {
  add_session("s2", 1, "/other");
  PermissionStore store(db());
  // Recorded order decides "newest", not the clock: c4 is stamped earlier but recorded last.
  for (const auto& [session, call, at] : {std::tuple{"s1", "c1", 10}, std::tuple{"s2", "c2", 20},
                                          std::tuple{"s1", "c3", 30}, std::tuple{"s2", "c4", 5}}) {
    ASSERT_TRUE(store.record(decision(session, call, at)));
  }
  auto calls = [&](const std::optional<std::string>& session, std::size_t limit) {
    std::vector<std::string> out;
    auto rows = store.audit(session, limit);
    EXPECT_TRUE(rows) << rows.error().message();
    if (rows) {
      for (const auto& r : *rows) out.push_back(r.tool_call_id);
    }
    return out;
  };
  using Calls = std::vector<std::string>;
  EXPECT_EQ(calls(std::nullopt, 100), (Calls{"c4", "c3", "c2", "c1"}));
  EXPECT_EQ(calls(std::nullopt, 2), (Calls{"c4", "c3"}));
  EXPECT_EQ(calls("s1", 100), (Calls{"c3", "c1"}));
  EXPECT_EQ(calls("s2", 1), (Calls{"c4"}));
  EXPECT_EQ(calls("nobody", 100), Calls{});
  EXPECT_EQ(calls("s1", 0), Calls{});
  EXPECT_EQ((*store.audit("s2"))[0].cwd, "/other");

  // More than the maximum is clamped to it.
  auto tx = Transaction::begin(db());
  ASSERT_TRUE(tx);
  for (std::size_t i = 0; i < PermissionStore::kMaxAuditLimit + 5; ++i) {
    ASSERT_TRUE(store.record(decision("s1", fmt::format("bulk{}", i), 100)));
  }
  ASSERT_TRUE(tx->commit());
  EXPECT_EQ(store.audit(std::nullopt, PermissionStore::kMaxAuditLimit + 100)->size(), PermissionStore::kMaxAuditLimit);
  EXPECT_EQ(store.audit(std::nullopt)->size(), PermissionStore::kDefaultAuditLimit);
}

TEST_F(PermissionStoreTest, TheAuditOutlivesADeletedSession) {
  PermissionStore store(db());
  ASSERT_TRUE(store.record(decision("s1", "c1", 1)));
  ASSERT_TRUE(SessionStore(db()).remove("s1"));
  EXPECT_EQ(count("SELECT count(*) FROM sessions"), 0);
  auto kept = store.audit("s1");
  ASSERT_TRUE(kept) << kept.error().message();
  ASSERT_EQ(kept->size(), 1U);
  EXPECT_EQ((*kept)[0].tool_call_id, "c1");
  EXPECT_EQ((*kept)[0].cwd, "/w");  // still says which project
  // A decision recorded for a session that is gone (a write queued before the delete) is kept too; it
  // only cannot learn its cwd any more.
  ASSERT_TRUE(store.record(decision("s1", "c2", 2)));
  EXPECT_EQ((*store.audit("s1"))[0].cwd, "");
}

// Version 6 rebuilds version 3's permission_audit without the cascade: rows keep their ids and values,
// take their session's cwd, and the index is back.
TEST(MigrationV6, KeepsTheAuditOfAVersion5DatabaseAndStopsTheCascade) {
  testing::TempDir dir;
  const std::string path = dir.file("v5.db");
  {
    auto v5 = Connection::open(path);
    ASSERT_TRUE(v5);
    ASSERT_TRUE(v5->exec("PRAGMA foreign_keys = ON"));
    ASSERT_EQ(*migrate(*v5, schema_migrations().first(5)), 5);
    ASSERT_TRUE(SessionStore(*v5).create(SessionRecord{"old", "/proj", std::nullopt, 1, 2, "{}"}));
    ASSERT_TRUE(SessionStore(*v5).create(SessionRecord{"gone", "/gone", std::nullopt, 1, 2, "{}"}));
    // What version 5's PermissionStore::record wrote (no cwd, no risk), ids chosen with a gap.
    ASSERT_TRUE(
        v5->exec("INSERT INTO permission_audit (id, session_id, turn_id, tool_call_id, tool, input_digest, decision, "
                 "decided_by, reason, created_at) VALUES "
                 "(7, 'old', 't1', 'c1', 'shell', 'sha256:1', 'deny', 'policy', 'plan mode is read-only', 100), "
                 "(9, 'old', NULL, 'c2', 'write_file', 'sha256:2', 'allow', 'user', 'the user allowed it', 200), "
                 "(12, 'gone', 't9', 'c3', 'shell', 'sha256:3', 'allow', 'no_client', 'headless allow', 300)"));
    // Under version 5 a delete takes the session's audit with it.
    ASSERT_TRUE(SessionStore(*v5).remove("gone"));
    EXPECT_EQ(*v5->query_int("SELECT count(*) FROM permission_audit"), 2);
  }

  auto db = open_database({path});
  ASSERT_TRUE(db) << db.error().message();
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), schema_migrations().back().version);  // and on to the latest
  PermissionStore store(*db);
  auto rows = store.audit("old");
  ASSERT_TRUE(rows) << rows.error().message();
  ASSERT_EQ(rows->size(), 2U);
  const PermissionAuditRecord& c2 = (*rows)[0];
  EXPECT_EQ(c2.id, 9);
  EXPECT_EQ(c2.session_id, "old");
  EXPECT_FALSE(c2.turn_id.has_value());
  EXPECT_EQ(c2.tool_call_id, "c2");
  EXPECT_EQ(c2.tool, "write_file");
  EXPECT_EQ(c2.input_digest, "sha256:2");
  EXPECT_EQ(c2.decision, "allow");
  EXPECT_EQ(c2.decided_by, "user");
  EXPECT_EQ(c2.reason, "the user allowed it");
  EXPECT_EQ(c2.created_at_ms, 200);
  EXPECT_EQ(c2.cwd, "/proj");
  EXPECT_EQ(c2.risk, "");
  EXPECT_EQ((*rows)[1].id, 7);
  EXPECT_EQ((*rows)[1].turn_id, "t1");

  // Still strict, still indexed, no foreign key left.
  EXPECT_EQ(*db->query_int("SELECT strict FROM pragma_table_list WHERE name = 'permission_audit'"), 1);
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                           "name = 'permission_audit_by_session' AND tbl_name = 'permission_audit'"),
            1);
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM pragma_foreign_key_list('permission_audit')"), 0);
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM sqlite_master WHERE name = 'permission_audit_v6'"), 0);

  // New rows continue after the old ids, and now outlive their session.
  PermissionAuditRecord e = decision("old", "c4", 400);
  auto id = store.record(e);
  ASSERT_TRUE(id);
  EXPECT_GT(*id, 9);
  ASSERT_TRUE(SessionStore(*db).remove("old"));
  EXPECT_EQ(store.audit("old")->size(), 3U);
}

}  // namespace
}  // namespace agentd::storage
