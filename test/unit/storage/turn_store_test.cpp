#include "storage/turn_store.h"

#include <gtest/gtest.h>

#include "test/unit/storage/storage_fixture.h"

namespace agentd::storage {
namespace {

using support::Errc;

class TurnStoreTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    add_session("s1");
    add_session("s2");
  }
  static TurnRecord turn(std::string id, std::string session, std::int64_t seq, std::int64_t started = 1000) {
    return TurnRecord{std::move(id), std::move(session), seq,          "fix the test",
                      started,       std::nullopt,       std::nullopt, "{}"};
  }
};

void expect_same(const TurnRecord& a, const TurnRecord& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.session_id, b.session_id);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.input, b.input);
  EXPECT_EQ(a.started_at_ms, b.started_at_ms);
  EXPECT_EQ(a.ended_at_ms, b.ended_at_ms);
  EXPECT_EQ(a.stop_reason, b.stop_reason);
  EXPECT_EQ(a.metadata_json, b.metadata_json);
}

TEST_F(TurnStoreTest, BeginsFinishesAndReadsTurnsBack) {
  TurnStore turns(db());
  EXPECT_EQ(*turns.next_seq("s1"), 1);
  EXPECT_FALSE(turns.latest("s1")->has_value());
  TurnRecord first = turn("t1", "s1", 1);
  first.input = "héllo \"quoted\"\nline two";
  ASSERT_TRUE(turns.begin(first));
  EXPECT_EQ(*turns.next_seq("s1"), 2);
  EXPECT_EQ(*turns.next_seq("s2"), 1);
  ASSERT_TRUE(turns.begin(turn("t2", "s1", 2, 2000)));
  ASSERT_TRUE(turns.begin(turn("u1", "s2", 1)));

  auto got = turns.get("t1");
  ASSERT_TRUE(got && got->has_value());
  expect_same(**got, first);
  EXPECT_FALSE(turns.get("nope")->has_value());

  ASSERT_TRUE(turns.finish("t1", 1500, "end_turn", std::string_view(R"({"steps":3})")));
  ASSERT_TRUE(turns.finish("t2", 2500, "cancelled"));  // keeps its metadata
  TurnRecord finished = first;
  finished.ended_at_ms = 1500;
  finished.stop_reason = "end_turn";
  finished.metadata_json = R"({"steps":3})";
  expect_same(**turns.get("t1"), finished);
  EXPECT_EQ((*turns.get("t2"))->metadata_json, "{}");

  auto all = turns.for_session("s1");
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, "t1");
  EXPECT_EQ((*all)[1].id, "t2");
  auto latest = turns.latest("s1");
  ASSERT_TRUE(latest && latest->has_value());
  EXPECT_EQ((*latest)->id, "t2");
  EXPECT_EQ((*latest)->stop_reason, "cancelled");
}

TEST_F(TurnStoreTest, RefusesDuplicatesMissingSessionsAndSecondFinishes) {
  TurnStore turns(db());
  ASSERT_TRUE(turns.begin(turn("t1", "s1", 1)));
  EXPECT_EQ(turns.begin(turn("t1", "s1", 2)).error().code(), Errc::conflict);
  EXPECT_EQ(turns.begin(turn("t9", "s1", 1)).error().code(), Errc::conflict);
  EXPECT_EQ(turns.begin(turn("t9", "missing", 1)).error().code(), Errc::not_found);
  EXPECT_EQ(turns.begin(turn("t9", "s1", 0)).error().code(), Errc::invalid_argument);
  TurnRecord bad_metadata = turn("t9", "s1", 2);
  bad_metadata.metadata_json = "[unclosed";
  EXPECT_EQ(turns.begin(bad_metadata).error().code(), Errc::invalid_argument);

  EXPECT_EQ(turns.finish("nope", 1, "end_turn").error().code(), Errc::not_found);
  EXPECT_EQ(turns.finish("t1", 1, "end_turn", std::string_view("nope")).error().code(), Errc::invalid_argument);
  ASSERT_TRUE(turns.finish("t1", 2, "end_turn"));
  auto again = turns.finish("t1", 3, "cancelled");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Errc::conflict);
  EXPECT_EQ((*turns.get("t1"))->stop_reason, "end_turn");
  EXPECT_EQ(count("SELECT count(*) FROM turns"), 1);
}

}  // namespace
}  // namespace agentd::storage
