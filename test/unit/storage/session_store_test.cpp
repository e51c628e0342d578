// SessionStore's paging, metadata and title edits, and the cascade over everything a session owns.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "storage/event_store.h"
#include "storage/span_store.h"
#include "storage/turn_store.h"
#include "storage/usage_store.h"
#include "test/unit/storage/storage_fixture.h"

namespace agentd::storage {
namespace {

using support::Errc;

std::vector<std::string> ids(const std::vector<SessionRecord>& sessions) {
  std::vector<std::string> out;
  for (const auto& s : sessions) out.push_back(s.id);
  return out;
}

using SessionPagingTest = StorageTest;

TEST_F(SessionPagingTest, PagesInRecencyOrderWithACursor) {
  // Ties on updated_at are broken by id, so the order is total and pages are deterministic.
  add_session("s1", 100);
  add_session("s2", 300);
  add_session("s3", 200);
  add_session("s4", 300);
  add_session("s5", 100);
  add_session("s6", 50);
  add_session("s7", 300);
  SessionStore sessions(db());

  std::vector<std::vector<std::string>> pages;
  std::optional<std::string> cursor;
  do {
    auto page = sessions.list_page(SessionListQuery{std::nullopt, cursor, 3});
    ASSERT_TRUE(page) << page.error().message();
    pages.push_back(ids(page->sessions));
    cursor = page->next_cursor;
  } while (cursor && pages.size() < 10);
  const std::vector<std::vector<std::string>> expected = {{"s2", "s4", "s7"}, {"s3", "s1", "s5"}, {"s6"}};
  EXPECT_EQ(pages, expected);

  // A page that ends exactly at the last session says there is no more.
  auto all = sessions.list_page(SessionListQuery{std::nullopt, std::nullopt, 7});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->sessions.size(), 7u);
  EXPECT_FALSE(all->next_cursor);
  // The unpaged list agrees.
  EXPECT_EQ(ids(*sessions.list(std::nullopt, 10)), ids(all->sessions));
}

TEST_F(SessionPagingTest, FiltersByCwdAndSurvivesDeletionOfTheCursorRow) {
  add_session("a1", 10, "/a");
  add_session("b1", 20, "/b");
  add_session("a:2", 30, "/a");  // ids may hold the cursor's separator
  add_session("a3", 40, "/a");
  SessionStore sessions(db());
  auto first = sessions.list_page(SessionListQuery{std::string("/a"), std::nullopt, 2});
  ASSERT_TRUE(first);
  EXPECT_EQ(ids(first->sessions), (std::vector<std::string>{"a3", "a:2"}));
  ASSERT_TRUE(first->next_cursor);
  ASSERT_TRUE(sessions.remove("a:2"));
  auto second = sessions.list_page(SessionListQuery{std::string("/a"), first->next_cursor, 2});
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(ids(second->sessions), (std::vector<std::string>{"a1"}));
  EXPECT_FALSE(second->next_cursor);
}

TEST_F(SessionPagingTest, RefusesBadCursorsAndLimits) {
  SessionStore sessions(db());
  for (const char* bad : {"", "garbage", ":s1", "12x:s1", "1.5:s1"}) {
    auto page = sessions.list_page(SessionListQuery{std::nullopt, std::string(bad), 5});
    ASSERT_FALSE(page) << bad;
    EXPECT_EQ(page.error().code(), Errc::invalid_argument) << bad;
  }
  auto zero = sessions.list_page(SessionListQuery{std::nullopt, std::nullopt, 0});
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code(), Errc::invalid_argument);
}

using SessionEditTest = StorageTest;

TEST_F(SessionEditTest, UpdatesMetadataAndTitleWithoutTouching) {
  add_session("s1", 100);
  SessionStore sessions(db());
  ASSERT_TRUE(sessions.update_metadata("s1", R"({"mode":"plan"})"));
  ASSERT_TRUE(sessions.set_title("s1", std::string_view("Fix the build")));
  auto got = sessions.get("s1");
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->metadata_json, R"({"mode":"plan"})");
  EXPECT_EQ((*got)->title, "Fix the build");
  EXPECT_EQ((*got)->updated_at_ms, 100);
  ASSERT_TRUE(sessions.set_title("s1", std::nullopt));
  EXPECT_FALSE((*sessions.get("s1"))->title);

  auto bad = sessions.update_metadata("s1", "{not json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::invalid_argument);
  EXPECT_EQ((*sessions.get("s1"))->metadata_json, R"({"mode":"plan"})");

  EXPECT_EQ(sessions.update_metadata("nope", "{}").error().code(), Errc::not_found);
  EXPECT_EQ(sessions.set_title("nope", std::string_view("x")).error().code(), Errc::not_found);
  EXPECT_EQ(sessions.touch("nope", 1).error().code(), Errc::not_found);
}

TEST_F(SessionEditTest, TouchNeverMovesBackwards) {
  add_session("s1", 100);
  SessionStore sessions(db());
  ASSERT_TRUE(sessions.touch("s1", 500));
  EXPECT_EQ((*sessions.get("s1"))->updated_at_ms, 500);
  ASSERT_TRUE(sessions.touch("s1", 200));
  EXPECT_EQ((*sessions.get("s1"))->updated_at_ms, 500);
}

using SessionCascadeTest = StorageTest;

TEST_F(SessionCascadeTest, RemovingASessionRemovesEverythingItOwns) {
  for (const char* id : {"gone", "kept"}) {
    add_session(id);
    const std::string turn = std::string(id) + "-t1";
    SessionStore sessions(db());
    ASSERT_TRUE(sessions.append_message(id, "user", "{}"));
    ASSERT_TRUE(TurnStore(db()).begin(TurnRecord{turn, id, 1, "hi", 1, std::nullopt, std::nullopt, "{}"}));
    ASSERT_TRUE(EventStore(db()).append(EventRecord{id, 1, turn, "text_delta", "{}", 1}));
    support::SpanRecord span;
    span.id = 1;
    span.name = "turn.run";
    ASSERT_TRUE(SpanStore(db()).append(turn, span));
    UsageRecord usage;
    usage.session_id = id;
    usage.turn_id = turn;
    usage.provider = "anthropic";
    usage.model = "claude-sonnet-4-5";
    ASSERT_TRUE(UsageStore(db()).append(usage));
  }
  ASSERT_TRUE(SessionStore(db()).remove("gone"));
  for (const char* table : {"messages", "turns", "events", "usage"}) {
    EXPECT_EQ(count(fmt::format("SELECT count(*) FROM {} WHERE session_id = 'gone'", table)), 0) << table;
    EXPECT_EQ(count(fmt::format("SELECT count(*) FROM {} WHERE session_id = 'kept'", table)), 1) << table;
  }
  EXPECT_EQ(count("SELECT count(*) FROM spans WHERE turn_id = 'gone-t1'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM spans WHERE turn_id = 'kept-t1'"), 1);
}

}  // namespace
}  // namespace agentd::storage
