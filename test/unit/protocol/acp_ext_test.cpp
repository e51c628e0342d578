// agentd's `_agentd/*` params and results and its `_meta.agentd` payloads (protocol/acp/ext.h). The
// wire order of members is part of what clients have seen, so results are compared as exact text as
// well as whole objects.
#include <map>

#include <gtest/gtest.h>

#include "protocol/acp/ext.h"
#include "test/unit/protocol/acp_test_util.h"

namespace agentd::protocol::acp::ext {
namespace {

using support::Json;
using testing::json;
using testing::read;
using testing::read_error;
using testing::round_trip;
using testing::written;

template <class T>
std::string text(const T& value) {
  std::string out;
  support::JsonWriter w(out);
  w.value(value);
  return out;
}

TEST(AcpExt, ParamsReadAsBefore) {
  auto trace = read<TraceGetRequest>(R"({"sessionId":"s_1","turnId":"t_2"})");
  ASSERT_TRUE(trace) << trace.error().message();
  EXPECT_EQ(trace->session_id, "s_1");
  EXPECT_EQ(trace->turn_id, "t_2");
  EXPECT_EQ(read_error<SessionRequest>("{}"), "params.sessionId: required field is missing");
  EXPECT_EQ(read_error<MemoryAddRequest>(R"({"sessionId":"s"})"), "params.text: required field is missing");
  EXPECT_EQ(read_error<ContextPreviewRequest>(R"({"sessionId":"s","input":3})"),
            "params.input: expected string, got integer");

  auto replay = read<EventsReplayRequest>(R"({"sessionId":"s"})");
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->since, 0);
  EXPECT_EQ(replay->limit, 10000);

  auto trust = read<ProjectTrustRequest>(R"({"cwd":"/w"})");
  ASSERT_TRUE(trust);
  EXPECT_TRUE(trust->trusted);
}

TEST(AcpExt, AuditParamsMayBeLeftOutButNotWrong) {
  auto none = support::read_json<PermissionsAuditRequest>(Json(), "params");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->session_id);
  EXPECT_EQ(none->limit, PermissionsAuditRequest::kDefaultLimit);
  EXPECT_EQ(read_error<PermissionsAuditRequest>(R"({"limit":0})"),
            "params.limit: must be at least 1, got 0 (at most 1000 entries are returned)");
  EXPECT_EQ(read_error<PermissionsAuditRequest>(R"({"sessionId":""})"),
            "params.sessionId: must not be empty; leave it out to read every session's decisions");
}

TEST(AcpExt, CostLedgerSaysUnpricedNeverZero) {
  CostGetResult cost{
      "anthropic:m", "2026-12-02", {10, 2, 0, 0, 1, 0, 0.5, 0.5}, {10, 2, 0, 0, 1, 1, std::nullopt, 0.25}};
  EXPECT_EQ(text(cost),
            R"({"model":"anthropic:m","priceTable":"2026-12-02",)"
            R"("session":{"inputTokens":10,"outputTokens":2,"cacheWriteTokens":0,"cacheReadTokens":0,"modelCalls":1,)"
            R"("unpricedCalls":0,"costUsd":0.5},)"
            R"("lastTurn":{"inputTokens":10,"outputTokens":2,"cacheWriteTokens":0,"cacheReadTokens":0,"modelCalls":1,)"
            R"("unpricedCalls":1,"costUsd":null,"pricedCostUsd":0.25}})");
  EXPECT_EQ(round_trip<CostGetResult>(written(cost), "result"), written(cost));
}

TEST(AcpExt, TraceSpansNest) {
  TraceSpan child{2, "model.call", 5, 3, "error", "boom", json(R"({"k":1})"), {}};
  TraceGetResult trace{"t_1", {TraceSpan{1, "turn.run", 1, 10, "ok", std::nullopt, Json::object(), {child}}}};
  EXPECT_EQ(text(trace),
            R"({"turnId":"t_1","spans":[{"id":1,"name":"turn.run","startUs":1,"durationUs":10,"status":"ok",)"
            R"("attributes":{},"children":[{"id":2,"name":"model.call","startUs":5,"durationUs":3,"status":"error",)"
            R"("statusMessage":"boom","attributes":{"k":1},"children":[]}]}]})");
  EXPECT_EQ(round_trip<TraceGetResult>(written(trace), "result"), written(trace));
}

TEST(AcpExt, TraceFormatIsTreeOrChrome) {
  auto chrome = read<TraceGetRequest>(R"({"sessionId":"s_1","format":"chrome"})");
  ASSERT_TRUE(chrome) << chrome.error().message();
  EXPECT_EQ(chrome->format, TraceFormat::chrome);
  EXPECT_EQ(text(*chrome), R"({"sessionId":"s_1","format":"chrome"})");
  auto tree = read<TraceGetRequest>(R"({"sessionId":"s_1","format":"tree"})");
  ASSERT_TRUE(tree);
  EXPECT_EQ(tree->format, TraceFormat::tree);
  EXPECT_EQ(read_error<TraceGetRequest>(R"({"sessionId":"s","format":"perfetto"})"),
            R"(params.format: must be "tree" (the span tree, the default) or "chrome" (the Trace Event format))");
}

// turn.run [100, 200) holds tool.a [110, 150) (with permission.request [112, 115)) and tool.b [120, 160),
// which overlap without nesting, then model.call [160, 190).
TEST(AcpExt, ChromeTraceKeepsEachTrackNested) {
  TraceSpan permission{4, "permission.request", 112, 3, "ok", std::nullopt, Json::object(), {}};
  TraceSpan a{2, "tool.a", 110, 40, "ok", std::nullopt, json(R"({"tool":"a"})"), {permission}};
  TraceSpan b{3, "tool.b", 120, 40, "error", "refused", Json::object(), {}};
  TraceSpan model{5, "model.call", 160, 30, "ok", std::nullopt, Json::object(), {}};
  TraceSpan root{1, "turn.run", 100, 100, "ok", std::nullopt, Json::object(), {a, b, model}};
  const Json events = chrome_trace_events("t_9", {root});
  std::map<std::string, Json> by_name;
  std::map<std::int64_t, std::string> tracks;
  for (const Json& e : events.as_array()) {
    if (e["ph"].as_string() == "X") by_name[e["name"].as_string()] = e;
    if (e["ph"].as_string() == "M" && e["name"].as_string() == "thread_name") {
      tracks[e["tid"].as_int64()] = e["args"]["name"].as_string();
    }
    if (e["ph"].as_string() == "M" && e["name"].as_string() == "process_name") {
      EXPECT_EQ(e["args"]["name"].as_string(), "agentd turn t_9");
    }
  }
  ASSERT_EQ(by_name.size(), 5U);
  EXPECT_EQ(tracks, (std::map<std::int64_t, std::string>{{1, "turn"}, {2, "concurrent 1"}}));
  EXPECT_EQ(by_name["turn.run"]["ts"].as_int64(), 0);
  EXPECT_EQ(by_name["turn.run"]["dur"].as_int64(), 100);
  EXPECT_EQ(by_name["tool.a"]["ts"].as_int64(), 10);
  EXPECT_EQ(by_name["turn.run"]["tid"].as_int64(), 1);
  EXPECT_EQ(by_name["tool.a"]["tid"].as_int64(), 1);
  EXPECT_EQ(by_name["permission.request"]["tid"].as_int64(), 1) << "stays on its parent's track";
  EXPECT_EQ(by_name["tool.b"]["tid"].as_int64(), 2) << "overlaps tool.a without nesting in it";
  EXPECT_EQ(by_name["model.call"]["tid"].as_int64(), 1) << "tool.a has ended by then";
  EXPECT_EQ(by_name["tool.a"]["args"]["tool"].as_string(), "a");
  EXPECT_EQ(by_name["tool.b"]["args"]["status"].as_string(), "error");
  EXPECT_EQ(by_name["tool.b"]["args"]["statusMessage"].as_string(), "refused");
  EXPECT_EQ(by_name["tool.b"]["args"]["spanId"].as_int64(), 3);

  TraceGetResult result{"t_9", {}, events};
  const std::string written_text = text(result);
  EXPECT_TRUE(written_text.starts_with(R"({"turnId":"t_9","traceEvents":[)")) << written_text;
  EXPECT_TRUE(written_text.ends_with(R"(],"displayTimeUnit":"ms"})")) << written_text;
  EXPECT_EQ(round_trip<TraceGetResult>(written(result), "result"), written(result));
  EXPECT_TRUE(chrome_trace_events("t_0", {}).size() == 1U) << "only the process name";
}

TEST(AcpExt, MemoryResults) {
  MemoryAddResult added{{3, "use pytest", "2026-12-05T07:20:38.123Z"}, "/w"};
  EXPECT_EQ(text(added), R"({"id":3,"text":"use pytest","createdAt":"2026-12-05T07:20:38.123Z","project":"/w"})");
  EXPECT_EQ(round_trip<MemoryAddResult>(written(added), "result"), written(added));
  MemoryListResult list{"/w", {added.fact}};
  EXPECT_EQ(text(list),
            R"({"project":"/w","facts":[{"id":3,"text":"use pytest","createdAt":"2026-12-05T07:20:38.123Z"}]})");
}

TEST(AcpExt, CheckpointResults) {
  Checkpoint c{"t_1", 1, "turn", std::nullopt, false, "D", {{"/w/a", "created", std::nullopt, "h2"}}};
  EXPECT_EQ(text(CheckpointsListResult{{c}}),
            R"({"checkpoints":[{"turnId":"t_1","seq":1,"kind":"turn","undone":false,"createdAt":"D",)"
            R"("files":[{"path":"/w/a","change":"created","beforeHash":null,"afterHash":"h2"}]}]})");
  CheckpointsRestoreResult restored{
      "t_1", std::nullopt, {{"/w/a", "conflict", "changed since"}, {"/w/b", "removed", {}}}, 1};
  EXPECT_EQ(text(restored),
            R"({"restoredTurnId":"t_1","checkpointId":null,"files":[{"path":"/w/a","action":"conflict",)"
            R"("detail":"changed since"},{"path":"/w/b","action":"removed"}],"conflicts":1})");
  EXPECT_EQ(round_trip<CheckpointsRestoreResult>(written(restored), "result"), written(restored));
}

TEST(AcpExt, PermissionResults) {
  PermissionsListResult list{
      "/w",
      "default",
      "deny",
      {{"shell(git *)", "allow", "config.json", std::nullopt}, {"write_file", "deny", "approved in session s", 4}}};
  EXPECT_EQ(text(list), R"({"project":"/w","mode":"default","headless":"deny","rules":[)"
                        R"j({"rule":"shell(git *)","verdict":"allow","source":"config.json"},)j"
                        R"({"rule":"write_file","verdict":"deny","source":"approved in session s","approvalId":4}]})");
  PermissionAuditEntry entry{1,          2,       "s",    std::nullopt, "tc", "shell",
                             "sha256:x", "allow", "user", "asked",      "",   "execute"};
  EXPECT_EQ(text(entry), R"({"id":1,"time":2,"sessionId":"s","toolCallId":"tc","tool":"shell",)"
                         R"("inputDigest":"sha256:x","decision":"allow","decidedBy":"user","reason":"asked",)"
                         R"("risk":"execute"})");
  EXPECT_EQ(round_trip<PermissionsAuditResult>(written(PermissionsAuditResult{{entry}}), "result"),
            written(PermissionsAuditResult{{entry}}));
}

TEST(AcpExt, EventsReplayCarriesNotifications) {
  SessionNotification n;
  n.session_id = "s";
  n.update = AgentMessageChunk{TextContent{"hi", {}, {}}, std::nullopt, {}};
  n.meta = to_meta(UpdateMeta{7});
  EventsReplayResult replay{{n}, 7};
  EXPECT_EQ(text(replay), R"({"events":[{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk",)"
                          R"("content":{"type":"text","text":"hi"}},"_meta":{"agentd":{"seq":7}}}],"lastSeq":7})");
  EXPECT_EQ(round_trip<EventsReplayResult>(written(replay), "result"), written(replay));
}

TEST(AcpExt, MetaPayloads) {
  EXPECT_EQ(to_meta(UpdateMeta{3}).dump(), R"({"agentd":{"seq":3}})");
  EXPECT_EQ(to_meta(PromptMeta{"t_1"}).dump(), R"({"agentd":{"turnId":"t_1"}})");
  EXPECT_EQ(to_meta(UsageMeta{1, 2, 3, 4, "m", true}).dump(),
            R"({"agentd":{"inputTokens":1,"outputTokens":2,"cacheReadTokens":3,"cacheWriteTokens":4,"model":"m",)"
            R"("cost":"unpriced"}})");
  EXPECT_EQ(to_meta(CompactionMeta{5, "t_a", "t_b", 2, 900, 100, true}).dump(),
            R"({"agentd":{"compaction":{"id":5,"firstTurnId":"t_a","lastTurnId":"t_b","turns":2,"tokensBefore":900,)"
            R"("tokensAfter":100,"forced":true}}})");
  EXPECT_EQ(to_meta(PermissionRequestMeta{"sha256:x", "why", "write"}).dump(),
            R"({"agentd":{"inputDigest":"sha256:x","reason":"why","risk":"write"}})");

  const ProjectTrustMeta trust{false, "/w", "/w/.agentd/config.json", "d", {"mode = bypass"}, "ignored"};
  const Json meta = to_meta(trust);
  EXPECT_EQ(meta.dump(), R"({"agentd":{"projectTrust":{"trusted":false,"project":"/w",)"
                         R"("file":"/w/.agentd/config.json","digest":"d","ignored":["mode = bypass"],)"
                         R"("message":"ignored"}}})");
  auto back = read_meta<ProjectTrustMeta>(meta);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->ignored, trust.ignored);
  EXPECT_EQ(back->message, "ignored");
  EXPECT_FALSE(read_meta<ProjectTrustMeta>(to_meta(UpdateMeta{1})));
  auto usage = read_meta<UsageMeta>(to_meta(UsageMeta{1, 2, 3, 4, "m", true}));
  ASSERT_TRUE(usage);
  EXPECT_TRUE(usage->unpriced);
}

}  // namespace
}  // namespace agentd::protocol::acp::ext
