// session/fork's copy in storage (core/engine/session_fork.h): what a fork holds of its source, under
// which ids, and what it refuses, on a real database.
#include "core/engine/session_fork.h"

#include <gtest/gtest.h>

#include "core/engine/events.h"
#include "core/engine/history.h"
#include "storage/blob_store.h"
#include "storage/compaction_store.h"
#include "storage/event_store.h"
#include "storage/session_store.h"
#include "storage/turn_store.h"
#include "test/unit/storage/storage_fixture.h"

namespace agentd::core {
namespace {

using support::Errc;
using support::Json;

class SessionForkTest : public storage::StorageTest {
 protected:
  // Source "src": turns t1..t3 (each a user and an assistant message and two events), a mode change
  // logged between t2 and t3, a compaction of t1 logged after t2, an image blob, cleared after `cleared`.
  void SetUp() override {
    StorageTest::SetUp();
    storage::SessionStore sessions(db());
    ASSERT_TRUE(sessions.create(storage::SessionRecord{
        "src", "/w", std::string("Fix the parser"), 1, 1,
        R"({"mode":"acceptEdits","model":"anthropic:claude-sonnet-4-5","additionalDirectories":["/lib"],"clearedAfterTurn":0})"}));
    storage::EventStore events(db());
    std::int64_t seq = 0;
    auto log = [&](std::optional<std::string> turn, std::string kind, std::string payload) {
      auto r =
          events.append(storage::EventRecord{"src", ++seq, std::move(turn), std::move(kind), std::move(payload), 1});
      ASSERT_TRUE(r) << r.error().message();
    };
    log(std::nullopt, "commands", R"({"commands":[]})");
    for (int i = 1; i <= 3; ++i) {
      const std::string turn = "t" + std::to_string(i);
      if (i == 3) log(std::nullopt, "mode", R"({"mode":"plan"})");
      ASSERT_TRUE(storage::TurnStore(db()).begin(storage::TurnRecord{turn, "src", i, "ask " + turn, 10, {}, {}, "{}"}));
      ASSERT_TRUE(storage::TurnStore(db()).finish(turn, 20, "end_turn", R"({"n":)" + std::to_string(i) + "}"));
      model::Message user{model::Role::user, {model::TextBlock{"ask " + turn}}};
      model::Message answer{model::Role::assistant, {model::TextBlock{"answer " + turn}}};
      ASSERT_TRUE(sessions.append_message("src", "user", message_to_json(user, turn)));
      ASSERT_TRUE(sessions.append_message("src", "assistant", message_to_json(answer, turn)));
      log(turn, "user_message", R"({"text":"ask )" + turn + R"("})");
      log(turn, "agent_text", R"({"text":"answer )" + turn + R"("})");
      if (i == 2) {
        auto id = storage::CompactionStore(db()).add(
            storage::CompactionRecord{0, "src", "t1", "t1", R"({"summary":"t1 in short"})", 100, 10, 30});
        ASSERT_TRUE(id);
        compaction_id_ = *id;
        log(std::nullopt, "compaction",
            R"({"text":"compacted","id":)" + std::to_string(*id) + R"(,"firstTurn":"t1","lastTurn":"t1","turns":1})");
      }
    }
    storage::BlobStore blobs(db());
    ASSERT_TRUE(blobs.put("ab12", "png bytes"));
    ASSERT_TRUE(blobs.attach("src", "ab12"));
  }

  ForkSpec spec(std::optional<std::string> up_to = std::nullopt) const {
    ForkSpec s;
    s.source_id = "src";
    s.fork_id = "fork";
    s.cwd = "/w2";
    s.up_to_turn = std::move(up_to);
    s.now_ms = 99;
    return s;
  }

  std::vector<storage::TurnRecord> turns(const std::string& session) {
    auto t = storage::TurnStore(db()).for_session(session);
    EXPECT_TRUE(t);
    return t ? *t : std::vector<storage::TurnRecord>{};
  }

  std::int64_t compaction_id_ = 0;
};

TEST_F(SessionForkTest, AForkHoldsTheHistoryUpToItsTurnUnderNewIds) {
  auto copy = fork_session_history(db(), spec("t2"));
  ASSERT_TRUE(copy) << copy.error().message();
  EXPECT_EQ(copy->turns, 2U);
  EXPECT_EQ(copy->messages, 4U);
  EXPECT_EQ(copy->last_turn, "t2");

  auto forked = storage::SessionStore(db()).get("fork");
  ASSERT_TRUE(forked && *forked);
  EXPECT_EQ((*forked)->cwd, "/w2");
  EXPECT_EQ((*forked)->title, "Fix the parser");
  Json metadata = *support::parse_json((*forked)->metadata_json);
  EXPECT_EQ(metadata["mode"].as_string(), "acceptEdits") << "the source's settings come along";
  EXPECT_EQ(metadata["model"].as_string(), "anthropic:claude-sonnet-4-5");
  EXPECT_EQ(metadata["additionalDirectories"].size(), 0U) << "the fork's own list, empty here";
  EXPECT_EQ(metadata["forkedFrom"]["sessionId"].as_string(), "src");
  EXPECT_EQ(metadata["forkedFrom"]["turnId"].as_string(), "t2");

  // The turns: same numbers, inputs, ends and metadata; ids of their own.
  auto fork_turns = turns("fork");
  ASSERT_EQ(fork_turns.size(), 2U);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(fork_turns[i].seq, static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(fork_turns[i].input, "ask t" + std::to_string(i + 1));
    EXPECT_EQ(fork_turns[i].stop_reason, "end_turn");
    EXPECT_EQ(fork_turns[i].ended_at_ms, 20);
    EXPECT_EQ(fork_turns[i].metadata_json, R"({"n":)" + std::to_string(i + 1) + "}");
    EXPECT_NE(fork_turns[i].id, "t" + std::to_string(i + 1));
    EXPECT_EQ(fork_turns[i].id.rfind("t_", 0), 0U) << fork_turns[i].id;
  }

  // The messages name the fork's turns.
  auto messages = storage::SessionStore(db()).messages("fork");
  ASSERT_TRUE(messages);
  ASSERT_EQ(messages->size(), 4U);
  for (std::size_t i = 0; i < 4; ++i) {
    Json m = *support::parse_json((*messages)[i].content_json);
    EXPECT_EQ(message_turn_id(m), fork_turns[i / 2].id);
    auto message = message_from_json((*messages)[i].role, m);
    ASSERT_TRUE(message);
    const std::string text = std::get<model::TextBlock>(message->content[0]).text;
    EXPECT_EQ(text, (i % 2 == 0 ? "ask t" : "answer t") + std::to_string(i / 2 + 1));
  }

  // The log up to the first event of t3: the mode change logged between t2 and t3 is there, t3 is not.
  auto events = storage::EventStore(db()).since("fork", 0);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 7U);
  EXPECT_EQ(events->back().kind, "mode");
  EXPECT_EQ((*events)[1].turn_id, fork_turns[0].id);
  for (std::size_t i = 0; i < events->size(); ++i) EXPECT_EQ((*events)[i].seq, static_cast<std::int64_t>(i + 1));
  const auto& logged_compaction = (*events)[5];
  ASSERT_EQ(logged_compaction.kind, "compaction");
  Json payload = *support::parse_json(logged_compaction.payload_json);
  EXPECT_EQ(payload["firstTurn"].as_string(), fork_turns[0].id);
  EXPECT_EQ(payload["lastTurn"].as_string(), fork_turns[0].id);

  // The compaction, renamed; its event names the fork's record.
  auto compactions = storage::CompactionStore(db()).for_session("fork");
  ASSERT_TRUE(compactions);
  ASSERT_EQ(compactions->size(), 1U);
  EXPECT_EQ((*compactions)[0].first_turn_id, fork_turns[0].id);
  EXPECT_EQ((*compactions)[0].summary_json, R"({"summary":"t1 in short"})");
  EXPECT_NE((*compactions)[0].id, compaction_id_);
  EXPECT_EQ(payload["id"].as_int64(), (*compactions)[0].id);

  // The image stays stored while either session holds it.
  auto hashes = storage::BlobStore(db()).attached_hashes("fork");
  ASSERT_TRUE(hashes);
  EXPECT_EQ(*hashes, std::vector<std::string>{"ab12"});

  // The source is as it was.
  EXPECT_EQ(turns("src").size(), 3U);
  EXPECT_EQ(count("SELECT count(*) FROM messages WHERE session_id = 'src'"), 6);
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE session_id = 'src'"), 9);
  ASSERT_TRUE(storage::SessionStore(db()).remove("src"));
  EXPECT_EQ(count("SELECT count(*) FROM messages WHERE session_id = 'fork'"), 4) << "the fork outlives its source";
  auto pruned = storage::BlobStore(db()).prune();
  ASSERT_TRUE(pruned);
  EXPECT_EQ(count("SELECT count(*) FROM blobs WHERE hash = 'ab12'"), 1);
}

TEST_F(SessionForkTest, WithoutATurnTheForkTakesEveryTurnButTheRunningOne) {
  auto all = fork_session_history(db(), spec());
  ASSERT_TRUE(all) << all.error().message();
  EXPECT_EQ(all->turns, 3U);
  EXPECT_EQ(all->events, 9U);
  EXPECT_EQ(all->last_turn, "t3");

  ForkSpec running = spec();
  running.fork_id = "fork2";
  running.running_turn = "t3";
  auto copy = fork_session_history(db(), running);
  ASSERT_TRUE(copy) << copy.error().message();
  EXPECT_EQ(copy->turns, 2U);
  EXPECT_EQ(copy->messages, 4U);
  EXPECT_EQ(copy->last_turn, "t2");

  running.fork_id = "fork3";
  running.up_to_turn = "t3";
  auto refused = fork_session_history(db(), running);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::invalid_argument);
  EXPECT_NE(refused.error().message().find("still running"), std::string::npos) << refused.error().message();
}

TEST_F(SessionForkTest, AClearAfterTheCutIsNotTheForks) {
  ASSERT_TRUE(storage::SessionStore(db()).update_metadata("src", R"({"clearedAfterTurn":2})"));
  ASSERT_TRUE(fork_session_history(db(), spec("t2")));
  auto before = storage::SessionStore(db()).get("fork");
  EXPECT_EQ((*support::parse_json((*before)->metadata_json))["clearedAfterTurn"].as_int64(), 0)
      << "the /clear came after turn 2 ended";

  ForkSpec later = spec("t3");
  later.fork_id = "fork2";
  ASSERT_TRUE(fork_session_history(db(), later));
  auto after = storage::SessionStore(db()).get("fork2");
  EXPECT_EQ((*support::parse_json((*after)->metadata_json))["clearedAfterTurn"].as_int64(), 2);
}

TEST_F(SessionForkTest, BadSourcesAndTurnsAreRefusedAndLeaveNothing) {
  ForkSpec unknown = spec();
  unknown.source_id = "nope";
  auto missing = fork_session_history(db(), unknown);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::not_found);

  auto stranger = fork_session_history(db(), spec("t_of_another_session"));
  ASSERT_FALSE(stranger);
  EXPECT_EQ(stranger.error().code(), Errc::invalid_argument);
  EXPECT_NE(stranger.error().message().find("params._meta.agentd.turnId"), std::string::npos);
  EXPECT_EQ(count("SELECT count(*) FROM sessions"), 1);

  // A fork id that is taken fails as a whole: no turn, message or event of it is left behind.
  add_session("fork");
  auto taken = fork_session_history(db(), spec("t2"));
  ASSERT_FALSE(taken);
  EXPECT_EQ(count("SELECT count(*) FROM turns WHERE session_id = 'fork'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE session_id = 'fork'"), 0);
}

}  // namespace
}  // namespace agentd::core
