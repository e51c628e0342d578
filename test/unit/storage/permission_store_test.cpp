#include "storage/permission_store.h"

#include <gtest/gtest.h>

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

TEST_F(PermissionStoreTest, TheAuditKeepsEveryDecisionInOrder) {
  PermissionStore store(db());
  PermissionAuditRecord e;
  e.session_id = "s1";
  e.turn_id = "t1";
  e.tool_call_id = "c1";
  e.tool = "shell";
  e.input_digest = "abc";
  e.decision = "deny";
  e.decided_by = "policy";
  e.reason = "denied by the rule deny \"shell(rm *)\" (config.json)";
  e.created_at_ms = 1;
  ASSERT_TRUE(store.record(e));
  e.tool_call_id = "c2";
  e.turn_id.reset();
  e.decision = "allow";
  e.decided_by = "user";
  ASSERT_TRUE(store.record(e));
  e.decision = "maybe";
  EXPECT_FALSE(store.record(e));  // CHECK constraint
  auto audit = store.audit("s1");
  ASSERT_TRUE(audit);
  ASSERT_EQ(audit->size(), 2U);
  EXPECT_EQ((*audit)[0].tool_call_id, "c1");
  EXPECT_EQ((*audit)[0].turn_id, "t1");
  EXPECT_EQ((*audit)[1].decided_by, "user");
  EXPECT_FALSE((*audit)[1].turn_id.has_value());
  // The audit goes with its session.
  ASSERT_TRUE(db().exec("DELETE FROM sessions WHERE id = 's1'"));
  EXPECT_TRUE(store.audit("s1")->empty());
}

}  // namespace
}  // namespace agentd::storage
