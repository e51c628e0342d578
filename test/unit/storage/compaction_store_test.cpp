// Compaction records: round trips, ordering, the latest record, constraints and the session cascade.
#include "storage/compaction_store.h"

#include <gtest/gtest.h>

#include "storage/session_store.h"
#include "test/unit/storage/storage_fixture.h"

namespace agentd::storage {
namespace {

using support::Errc;

class CompactionStoreTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    add_session("s1");
    add_session("s2");
  }
  static CompactionRecord record(std::string session, std::string first, std::string last, std::int64_t before,
                                 std::int64_t after) {
    CompactionRecord c;
    c.session_id = std::move(session);
    c.first_turn_id = std::move(first);
    c.last_turn_id = std::move(last);
    c.summary_json = R"({"goals":["ship it"],"decisions":[],"files_touched":["a.cpp"]})";
    c.tokens_before = before;
    c.tokens_after = after;
    c.created_at_ms = 77;
    return c;
  }
};

TEST_F(CompactionStoreTest, RecordsRoundTripInOrder) {
  CompactionStore store(db());
  auto first = store.add(record("s1", "t1", "t4", 9000, 1200));
  ASSERT_TRUE(first) << first.error().message();
  auto second = store.add(record("s1", "t1", "t8", 8000, 1500));
  ASSERT_TRUE(second);
  ASSERT_TRUE(store.add(record("s2", "u1", "u2", 100, 50)));

  auto all = store.for_session("s1");
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2U);
  const CompactionRecord& r = (*all)[0];
  EXPECT_EQ(r.id, *first);
  EXPECT_EQ(r.session_id, "s1");
  EXPECT_EQ(r.first_turn_id, "t1");
  EXPECT_EQ(r.last_turn_id, "t4");
  EXPECT_EQ(r.summary_json, R"({"goals":["ship it"],"decisions":[],"files_touched":["a.cpp"]})");
  EXPECT_EQ(r.tokens_before, 9000);
  EXPECT_EQ(r.tokens_after, 1200);
  EXPECT_EQ(r.created_at_ms, 77);
  EXPECT_EQ((*all)[1].last_turn_id, "t8");

  auto latest = store.latest("s1");
  ASSERT_TRUE(latest && latest->has_value());
  EXPECT_EQ((*latest)->id, *second);
  EXPECT_FALSE(store.latest("nobody")->has_value());
  EXPECT_TRUE(store.for_session("nobody")->empty());
}

TEST_F(CompactionStoreTest, RefusesUnknownSessionsBadJsonAndNegativeCounts) {
  CompactionStore store(db());
  auto no_session = store.add(record("ghost", "t1", "t2", 1, 1));
  ASSERT_FALSE(no_session);
  EXPECT_EQ(no_session.error().code(), Errc::not_found);

  auto bad_json = record("s1", "t1", "t2", 1, 1);
  bad_json.summary_json = "{not json";
  auto r = store.add(bad_json);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::invalid_argument);

  auto r2 = store.add(record("s1", "t1", "t2", -1, 1));
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code(), Errc::invalid_argument);
  EXPECT_TRUE(store.for_session("s1")->empty());
}

TEST_F(CompactionStoreTest, RecordsGoWithTheirSession) {
  CompactionStore store(db());
  ASSERT_TRUE(store.add(record("s1", "t1", "t2", 10, 5)));
  ASSERT_TRUE(store.add(record("s2", "u1", "u2", 10, 5)));
  ASSERT_TRUE(SessionStore(db()).remove("s1"));
  EXPECT_TRUE(store.for_session("s1")->empty());
  EXPECT_EQ(store.for_session("s2")->size(), 1U);
}

}  // namespace
}  // namespace agentd::storage
