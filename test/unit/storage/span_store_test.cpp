#include "storage/span_store.h"

#include <cstdint>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "storage/turn_store.h"
#include "test/unit/storage/storage_fixture.h"

namespace agentd::storage {
namespace {

using support::Errc;
using support::Json;
using support::SpanRecord;
using support::SpanStatus;

class SpanStoreTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    add_session("s1");
    TurnStore turns(db());
    ASSERT_TRUE(turns.begin(TurnRecord{"t1", "s1", 1, "hi", 1, std::nullopt, std::nullopt, "{}"}));
    ASSERT_TRUE(turns.begin(TurnRecord{"t2", "s1", 2, "hi", 1, std::nullopt, std::nullopt, "{}"}));
  }
  static SpanRecord span(std::uint64_t id, std::uint64_t parent, std::string name, std::int64_t start) {
    SpanRecord s;
    s.id = id;
    s.parent_id = parent;
    s.name = std::move(name);
    s.start_us = start;
    s.end_us = start + 10;
    return s;
  }
};

void expect_same(const SpanRecord& a, const SpanRecord& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.parent_id, b.parent_id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.start_us, b.start_us);
  EXPECT_EQ(a.end_us, b.end_us);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.status_message, b.status_message);
  EXPECT_EQ(Json(a.attributes), Json(b.attributes)) << Json(a.attributes).dump();
}

TEST_F(SpanStoreTest, RoundTripsSpansWithAttributesInStartOrder) {
  SpanStore spans(db());
  SpanRecord root = span(1, 0, "turn.run", 1000);
  root.end_us = 5000;
  root.attributes = {
      {"task", "bugfix"}, {"steps", 3},
      {"ok", true},       {"ratio", 0.25},
      {"none", nullptr},  {"nested", Json(Json::Object{{"files", Json(Json::Array{"a.cpp", "b \"q\".h"})}})}};
  SpanRecord call = span(2, 1, "model.call", 1100);
  call.status = SpanStatus::error;
  call.status_message = "overloaded";
  SpanRecord tool = span(3, 1, "tool.shell", 1100);  // same start as its sibling: id breaks the tie
  tool.status = SpanStatus::cancelled;
  SpanRecord big_id = span(std::uint64_t{1} << 63 | 7, 1, "tool.grep", 1200);
  for (const SpanRecord* s : {&big_id, &tool, &root, &call}) ASSERT_TRUE(spans.append("t1", *s));
  ASSERT_TRUE(spans.append("t2", span(1, 0, "turn.run", 1)));

  auto got = spans.for_turn("t1");
  ASSERT_TRUE(got) << got.error().message();
  ASSERT_EQ(got->size(), 4u);
  expect_same((*got)[0], root);
  expect_same((*got)[1], call);
  expect_same((*got)[2], tool);
  expect_same((*got)[3], big_id);
  EXPECT_EQ(spans.for_turn("t2")->size(), 1u);
  EXPECT_TRUE(spans.for_turn("nope")->empty());
}

TEST_F(SpanStoreTest, RefusesUnknownTurnsAndDuplicateIds) {
  SpanStore spans(db());
  EXPECT_EQ(spans.append("missing", span(1, 0, "x", 1)).error().code(), Errc::not_found);
  ASSERT_TRUE(spans.append("t1", span(1, 0, "x", 1)));
  EXPECT_EQ(spans.append("t1", span(1, 0, "y", 2)).error().code(), Errc::conflict);
  EXPECT_EQ(count("SELECT count(*) FROM spans"), 1);
}

}  // namespace
}  // namespace agentd::storage
