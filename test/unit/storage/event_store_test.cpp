#include "storage/event_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test/unit/storage/storage_fixture.h"

namespace agentd::storage {
namespace {

using support::Errc;

class EventStoreTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    add_session("s1");
    add_session("s2");
  }
  static EventRecord event(std::string session, std::int64_t seq, std::string payload = R"({"text":"x"})") {
    return EventRecord{std::move(session), seq, std::string("t1"), "text_delta", std::move(payload), 100 + seq};
  }
};

TEST_F(EventStoreTest, AppendsAndReplaysInOrder) {
  EventStore events(db());
  EXPECT_EQ(*events.max_seq("s1"), 0);
  EXPECT_TRUE(events.since("s1", 0)->empty());
  // Appended out of order on purpose: replay follows seq, not arrival.
  for (const std::int64_t seq : {2, 1, 3, 5, 4}) {
    ASSERT_TRUE(events.append(event("s1", seq, fmt::format(R"({{"n":{}}})", seq))));
  }
  EventRecord outside_turn{"s1", 6, std::nullopt, "session_info", R"({"title":"t"})", 7};
  ASSERT_TRUE(events.append(outside_turn));
  ASSERT_TRUE(events.append(event("s2", 1)));
  EXPECT_EQ(*events.max_seq("s1"), 6);
  EXPECT_EQ(*events.max_seq("s2"), 1);

  auto all = events.since("s1", 0);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 6u);
  for (std::size_t i = 0; i < 5; ++i) {
    const EventRecord& e = (*all)[i];
    EXPECT_EQ(e.seq, static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(e.session_id, "s1");
    EXPECT_EQ(e.turn_id, "t1");
    EXPECT_EQ(e.kind, "text_delta");
    EXPECT_EQ(e.payload_json, fmt::format(R"({{"n":{}}})", i + 1));
    EXPECT_EQ(e.created_at_ms, static_cast<std::int64_t>(101 + i));
  }
  EXPECT_FALSE((*all)[5].turn_id);
  EXPECT_EQ((*all)[5].kind, "session_info");

  auto after_two = events.since("s1", 2, 2);
  ASSERT_TRUE(after_two);
  ASSERT_EQ(after_two->size(), 2u);
  EXPECT_EQ((*after_two)[0].seq, 3);
  EXPECT_EQ((*after_two)[1].seq, 4);
  EXPECT_TRUE(events.since("s1", 6)->empty());
}

TEST_F(EventStoreTest, ADuplicateSeqIsAConflictAndChangesNothing) {
  EventStore events(db());
  ASSERT_TRUE(events.append(event("s1", 1, R"({"first":true})")));
  auto dup = events.append(event("s1", 1, R"({"second":true})"));
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code(), Errc::conflict);
  EXPECT_EQ((*events.since("s1", 0))[0].payload_json, R"({"first":true})");
  // The same seq in another session is fine.
  EXPECT_TRUE(events.append(event("s2", 1)));
}

TEST_F(EventStoreTest, RefusesMissingSessionsBadPayloadsAndBadSeqs) {
  EventStore events(db());
  EXPECT_EQ(events.append(event("missing", 1)).error().code(), Errc::not_found);
  EXPECT_EQ(events.append(event("s1", 1, "{oops")).error().code(), Errc::invalid_argument);
  EXPECT_EQ(events.append(event("s1", 0)).error().code(), Errc::invalid_argument);
  EXPECT_EQ(count("SELECT count(*) FROM events"), 0);
}

}  // namespace
}  // namespace agentd::storage
