// Storage failing under a running daemon (DESIGN.md section 5, "durable before delivered"): a database
// that fills up during a turn, and a database file removed while agentd runs. Every update the client
// was sent is in the log with the same seq and content, nothing unstored is delivered, the prompt whose
// history could not be stored ends with an error the client sees, `_agentd/status` and `initialize`
// say how the database is, and the daemon keeps answering and recovers.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/support/json.h"
#include "daemon/host.h"
#include "storage/db_worker.h"
#include "test/support/agentd_process.h"
#include "test/support/session_fixture.h"

namespace agentd {
namespace {

using support::Json;
using testing::request;

// A turn whose reply is long (about a hundred text updates) and calls a tool, so the loop goes round
// again after it; then a short turn.
std::string exchanges() {
  std::string text;
  for (int i = 0; i < 12'000; ++i) text += fmt::format("w{} ", i % 97);
  return testing::text_reply("before", "Before.") + "," +
         fmt::format(R"({{"name": "long", "response": {{"generate": {{"provider": "anthropic", "text": "{}",
            "text_piece_bytes": 800,
            "tool_calls": [{{"id": "toolu_1", "name": "read_file", "input": {{"path": "notes.txt"}}}}]}}}}}},)",
                     text) +
         testing::text_reply("after-read", "Read it.") + "," + testing::text_reply("recovered", "Back.");
}

void prepare(const std::filesystem::path& work) { std::ofstream(work / "notes.txt") << "notes\n"; }

// Runs `sql` on agentd's own writer connection, on its database thread.
void exec_on_agentd(testing::AcpClient& agentd, std::string sql) {
  storage::DbWorker& worker = agentd.host().database();
  worker.write([sql](storage::Connection& db) { return db.exec(sql); });
  worker.flush();
}

// The database is full the way a full disk looks to SQLite (SQLITE_FULL): no page past the current ones
// and a few more, so the first writes of the turn land and the rest do not.
void fill_database(testing::AcpClient& agentd) {
  storage::DbWorker& worker = agentd.host().database();
  worker.write([](storage::Connection& db) -> support::Result<void> {
    auto pages = db.query_int("PRAGMA page_count");
    if (!pages) return std::move(pages).error();
    return db.exec(fmt::format("PRAGMA max_page_count = {}", *pages + 6));
  });
  worker.flush();
}

std::int64_t seq_of(const Json& update) { return update["_meta"]["agentd"]["seq"].as_int64(); }

// Every update the client was sent is in the replay, with the same content; the seqs it saw only grow,
// from `first`; and what is stored but was not sent is only the user's own messages (logged for replay,
// not echoed live).
void expect_all_stored(testing::SessionFixture& f, const std::vector<Json>& sent, std::int64_t first) {
  Json params = Json::object();
  params["since"] = 0;
  params["limit"] = 10'000;
  Json replay = f.call("_agentd/events/replay", params);
  ASSERT_TRUE(replay.contains("result")) << replay.dump();
  std::map<std::int64_t, Json> stored;
  for (const Json& e : replay["result"]["events"].as_array()) stored.emplace(seq_of(e), e);
  std::int64_t last = first - 1;
  std::set<std::int64_t> seen;
  for (const Json& update : sent) {
    const std::int64_t seq = seq_of(update);
    EXPECT_GT(seq, last) << "out of order, or sent twice";
    last = seq;
    seen.insert(seq);
    auto it = stored.find(seq);
    ASSERT_NE(it, stored.end()) << "update " << seq << " was delivered but is not stored";
    EXPECT_EQ(it->second, update) << "update " << seq << " differs from what is stored";
  }
  for (const auto& [seq, update] : stored) {
    if (seq < first || seq > last || seen.count(seq) != 0) continue;
    EXPECT_EQ(update["update"]["sessionUpdate"].as_string(), "user_message_chunk")
        << "stored update " << seq << " was never sent: " << update.dump();
  }
}

Json status(testing::SessionFixture& f) { return request(*f.agentd, f.next_id++, "_agentd/status", "{}"); }

TEST(StorageFailure, AFullDatabaseStopsTheTurnAndNothingUnstoredIsDelivered) {
  testing::SessionFixture f(exchanges(), prepare);
  ASSERT_FALSE(f.session.empty());
  std::vector<Json> sent;
  Json first = f.prompt("warm up", &sent);
  ASSERT_TRUE(first.contains("result")) << first.dump();
  const std::int64_t first_seq = sent.empty() ? 1 : seq_of(sent.front());

  fill_database(*f.agentd);
  const std::size_t before = sent.size();
  Json failed = f.prompt("write a long answer", &sent);
  ASSERT_TRUE(failed.contains("error")) << "the turn's history was not stored, yet the prompt succeeded: "
                                        << failed.dump();
  EXPECT_NE(failed["error"]["message"].as_string().find("full"), std::string::npos) << failed.dump();
  EXPECT_LT(sent.size() - before, 50U) << "most of the long reply could not be stored, so it was not delivered";
  // The loop did not go on to build on history it could not store.
  EXPECT_EQ(f.mock->requests().size(), 2U);

  Json health = status(f);
  ASSERT_TRUE(health.contains("result")) << health.dump();
  EXPECT_GE(health["result"]["database"]["failedWrites"].as_int64(), 1);
  EXPECT_NE(health["result"]["database"]["lastError"].as_string().find("full"), std::string::npos) << health.dump();
  expect_all_stored(f, sent, first_seq);

  // While the database stays full, a prompt is refused with the cause (the kept updates were tried
  // again, and failed again), and nothing is run.
  Json refused = f.prompt("again", &sent);
  ASSERT_TRUE(refused.contains("error")) << refused.dump();
  EXPECT_NE(refused["error"]["message"].as_string().find("the database is failing"), std::string::npos)
      << refused.dump();
  EXPECT_EQ(f.mock->requests().size(), 2U);
  // Whether `ok` reads false now depends on timing: a full database still takes the small writes that fit
  // in its free pages, and a batch of those that commits counts as healthy (DbWorkerTest covers `ok`).
  const std::int64_t failed_before = health["result"]["database"]["failedWrites"].as_int64();
  health = status(f);
  EXPECT_GT(health["result"]["database"]["failedWrites"].as_int64(), failed_before) << health.dump();

  // Space comes back: the kept updates are stored and delivered in order, and the next turn runs.
  exec_on_agentd(*f.agentd, "PRAGMA max_page_count = 1073741823");
  Json recovered = f.prompt("go on", &sent);
  ASSERT_TRUE(recovered.contains("result")) << recovered.dump();
  EXPECT_TRUE(status(f)["result"]["database"]["ok"].as_bool());
  expect_all_stored(f, sent, first_seq);
}

TEST(StorageFailure, ADatabaseFileRemovedUnderTheDaemonLosesNothing) {
  testing::SessionFixture f(exchanges(), prepare);
  ASSERT_FALSE(f.session.empty());
  std::vector<Json> sent;
  ASSERT_TRUE(f.prompt("warm up", &sent).contains("result"));
  const std::string db = f.dir.file("agentd.db");
  ASSERT_EQ(::unlink(db.c_str()), 0);

  Json answer = f.prompt("write a long answer", &sent);
  ASSERT_TRUE(answer.contains("result")) << answer.dump();
  EXPECT_TRUE(std::filesystem::exists(db)) << "the database was not put back";
  EXPECT_TRUE(status(f)["result"]["database"]["ok"].as_bool());

  // A restart finds every update of both turns, as the client was sent them.
  f.agentd.reset();
  f.agentd = testing::start_in_process_with_mock(f.dir, f.mock->url());
  request(*f.agentd, f.next_id++, "initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  expect_all_stored(f, sent, seq_of(sent.front()));
}

TEST(StorageFailure, StatusAndInitializeSayHowTheDatabaseIs) {
  testing::TempDir dir;
  auto agentd = testing::start_in_process_with_mock(dir, "http://127.0.0.1:9");
  // Allowed before initialize, for a liveness check.
  Json early = request(*agentd, 1, "_agentd/status", "{}");
  ASSERT_TRUE(early.contains("result")) << early.dump();
  EXPECT_TRUE(early["result"]["version"].is_string());
  EXPECT_EQ(early["result"]["openSessions"].as_int64(), 0);
  EXPECT_TRUE(early["result"]["database"]["ok"].as_bool());
  EXPECT_EQ(early["result"]["database"]["failedWrites"].as_int64(), 0);
  EXPECT_FALSE(early["result"]["database"].contains("lastError"));

  Json init = request(*agentd, 2, "initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  ASSERT_TRUE(init.contains("result")) << init.dump();
  EXPECT_TRUE(init["result"]["_meta"]["agentd"]["database"]["ok"].as_bool()) << init.dump();
}

}  // namespace
}  // namespace agentd
