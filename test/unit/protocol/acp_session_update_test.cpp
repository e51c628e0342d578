#include <gtest/gtest.h>

#include "protocol/acp/session_update.h"
#include "test/unit/protocol/acp_test_util.h"

namespace agentd::protocol::acp {
namespace {

using support::Json;
using testing::json;
using testing::read;
using testing::read_error;
using testing::round_trip;
using testing::written;

SessionNotification notification(SessionUpdate update, std::uint64_t seq) {
  SessionNotification n{.session_id = "s_1", .update = std::move(update)};
  n.meta["agentd"]["seq"] = seq;
  return n;
}

TEST(AcpSessionUpdate, MessageAndThoughtChunks) {
  EXPECT_EQ(written(notification(AgentMessageChunk{.content = TextContent{.text = "Let me look."}}, 2)),
            json(R"({"sessionId":"s_1","update":{"sessionUpdate":"agent_message_chunk",
                 "content":{"type":"text","text":"Let me look."}},"_meta":{"agentd":{"seq":2}}})"));
  EXPECT_EQ(written(SessionUpdate{AgentThoughtChunk{.content = TextContent{.text = "hmm"}, .message_id = "m1"}}),
            json(R"({"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"},"messageId":"m1"})"));
  EXPECT_EQ(written(SessionUpdate{UserMessageChunk{.content = TextContent{.text = "fix it"}}}),
            json(R"({"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"fix it"}})"));
}

TEST(AcpSessionUpdate, NotificationMetaIsOmittedWhileEmpty) {
  SessionNotification n{.session_id = "s_1", .update = CurrentModeUpdate{.current_mode_id = "plan"}};
  EXPECT_EQ(written(n),
            json(R"({"sessionId":"s_1","update":{"sessionUpdate":"current_mode_update","currentModeId":"plan"}})"));
  n.meta = Json::object();
  EXPECT_EQ(written(n),
            json(R"({"sessionId":"s_1","update":{"sessionUpdate":"current_mode_update","currentModeId":"plan"}})"));
}

TEST(AcpSessionUpdate, ToolCallWithEveryField) {
  ToolCall call{.tool_call_id = "tc_1",
                .title = "Run the tests",
                .name = "shell",
                .kind = ToolKind::execute,
                .status = ToolCallStatus::in_progress,
                .content = {ToolCallContentBlock{.content = TextContent{.text = "2 passed"}},
                            Diff{.path = "/w/new.py", .new_text = "x = 1\n"},
                            Terminal{.terminal_id = "term_1", .meta = json(R"({"k":1})")}},
                .locations = {{.path = "/w/a.py", .line = 12}, {.path = "/w/b.py"}},
                .raw_input = json(R"({"command":"pytest -q"})"),
                .raw_output = json(R"({"exitCode":0})"),
                .meta = json(R"({"agentd":{"risk":"low"}})")};
  const Json expected = json(R"({"sessionUpdate":"tool_call","toolCallId":"tc_1","title":"Run the tests",
      "name":"shell","kind":"execute","status":"in_progress",
      "content":[{"type":"content","content":{"type":"text","text":"2 passed"}},
                 {"type":"diff","path":"/w/new.py","newText":"x = 1\n"},
                 {"type":"terminal","terminalId":"term_1","_meta":{"k":1}}],
      "locations":[{"path":"/w/a.py","line":12},{"path":"/w/b.py"}],
      "rawInput":{"command":"pytest -q"},"rawOutput":{"exitCode":0},"_meta":{"agentd":{"risk":"low"}}})");
  EXPECT_EQ(written(SessionUpdate{call}), expected);
  EXPECT_EQ(round_trip<SessionUpdate>(expected), expected);
}

TEST(AcpSessionUpdate, ToolCallDefaultsAndLenientReading) {
  EXPECT_EQ(
      written(SessionUpdate{ToolCall{.tool_call_id = "tc_1", .title = "Think"}}),
      json(R"({"sessionUpdate":"tool_call","toolCallId":"tc_1","title":"Think","kind":"other","status":"pending"})"));
  // From another agent, a kind we do not know or a bad location is dropped, as the schema says.
  auto update = read<SessionUpdate>(R"({"sessionUpdate":"tool_call","toolCallId":"tc_1","title":"T",
      "kind":"teleport","status":7,"locations":[{"path":"/a"},{"line":3}]})");
  ASSERT_TRUE(update) << update.error().message();
  const auto& call = std::get<ToolCall>(*update);
  EXPECT_EQ(call.kind, ToolKind::other);
  EXPECT_EQ(call.status, ToolCallStatus::pending);
  ASSERT_EQ(call.locations.size(), 1u);
  EXPECT_EQ(call.locations[0].path, "/a");
}

TEST(AcpSessionUpdate, ToolCallUpdateWritesOnlyWhatChanged) {
  ToolCallUpdate done{
      .tool_call_id = "tc_2",
      .status = ToolCallStatus::completed,
      .content = std::vector<ToolCallContent>{
          Diff{.path = "/w/ops.py", .old_text = "return a / b\n", .new_text = "return a / b if b else 0\n"}}};
  done.meta["agentd"]["changedLines"] = 1;
  EXPECT_EQ(written(SessionUpdate{done}),
            json(R"({"sessionUpdate":"tool_call_update","toolCallId":"tc_2","status":"completed",
                 "content":[{"type":"diff","path":"/w/ops.py","oldText":"return a / b\n",
                             "newText":"return a / b if b else 0\n"}],
                 "_meta":{"agentd":{"changedLines":1}}})"));
  // On its own (as request_permission's toolCall) it carries no sessionUpdate tag.
  EXPECT_EQ(written(ToolCallUpdate{.tool_call_id = "tc_3", .title = "Edit", .kind = ToolKind::edit}),
            json(R"({"toolCallId":"tc_3","title":"Edit","kind":"edit"})"));
  // An empty content list is sent (it clears what the client showed); an absent one is not.
  EXPECT_EQ(written(ToolCallUpdate{.tool_call_id = "tc_4", .content = std::vector<ToolCallContent>{}}),
            json(R"({"toolCallId":"tc_4","content":[]})"));
}

TEST(AcpSessionUpdate, EveryToolKindAndStatusHasAName) {
  for (int i = 0; i <= static_cast<int>(ToolKind::other); ++i) {
    const auto kind = static_cast<ToolKind>(i);
    ToolKind parsed{};
    ASSERT_TRUE(parse(name(kind), parsed));
    EXPECT_EQ(parsed, kind);
  }
  EXPECT_EQ(name(ToolKind::delete_), "delete");
  EXPECT_EQ(name(ToolKind::switch_mode), "switch_mode");
  EXPECT_EQ(name(ToolCallStatus::in_progress), "in_progress");
  EXPECT_EQ(name(ToolCallStatus::failed), "failed");
}

TEST(AcpSessionUpdate, PlanCommandsModeConfig) {
  EXPECT_EQ(written(SessionUpdate{Plan{.entries = {{.content = "Read ops.py",
                                                    .priority = PlanEntryPriority::high,
                                                    .status = PlanEntryStatus::completed},
                                                   {.content = "Fix div", .status = PlanEntryStatus::in_progress}}}}),
            json(R"({"sessionUpdate":"plan","entries":[
                {"content":"Read ops.py","priority":"high","status":"completed"},
                {"content":"Fix div","priority":"medium","status":"in_progress"}]})"));
  EXPECT_EQ(
      written(SessionUpdate{AvailableCommandsUpdate{
          .available_commands = {{.name = "help", .description = "List commands"},
                                 {.name = "model", .description = "Switch model", .input = {{.hint = "name"}}}}}}),
      json(R"({"sessionUpdate":"available_commands_update","availableCommands":[
                {"name":"help","description":"List commands"},
                {"name":"model","description":"Switch model","input":{"hint":"name"}}]})"));
  EXPECT_EQ(written(SessionUpdate{ConfigOptionUpdate{.config_options = {{.id = "model",
                                                                         .name = "Model",
                                                                         .current_value = "a",
                                                                         .options = {{.value = "a", .name = "A"}}}}}}),
            json(R"({"sessionUpdate":"config_option_update","configOptions":[
                {"type":"select","id":"model","name":"Model","currentValue":"a","options":[{"value":"a","name":"A"}]}]})"));
  EXPECT_EQ(read_error<SessionUpdate>(R"({"sessionUpdate":"plan","entries":[{"content":"x","priority":"urgent",
      "status":"pending"}]})"),
            R"(params.entries[0].priority: unknown plan entry priority "urgent" (expected one of high, medium, low))");
}

TEST(AcpSessionUpdate, SessionInfoCanSetClearOrLeaveFields) {
  SessionInfoUpdate info{.title = std::optional<std::string>("fix div"), .updated_at = std::optional<std::string>()};
  const Json expected = json(R"({"sessionUpdate":"session_info_update","title":"fix div","updatedAt":null})");
  EXPECT_EQ(written(SessionUpdate{info}), expected);
  auto back = read<SessionUpdate>(expected.dump());
  ASSERT_TRUE(back);
  const auto& read_info = std::get<SessionInfoUpdate>(*back);
  ASSERT_TRUE(read_info.title);
  EXPECT_EQ(*read_info.title, "fix div");
  ASSERT_TRUE(read_info.updated_at);    // present...
  EXPECT_FALSE(*read_info.updated_at);  // ...as null: clear it
  EXPECT_EQ(written(SessionUpdate{SessionInfoUpdate{}}), json(R"({"sessionUpdate":"session_info_update"})"));
}

TEST(AcpSessionUpdate, UsageUpdate) {
  UsageUpdate usage{.used = 5120, .size = 200000, .cost = Cost{.amount = 0.0213, .currency = "USD"}};
  usage.meta["agentd"]["inputTokens"] = 4200;
  EXPECT_EQ(written(SessionUpdate{usage}),
            json(R"({"sessionUpdate":"usage_update","used":5120,"size":200000,"cost":{"amount":0.0213,"currency":"USD"},
                 "_meta":{"agentd":{"inputTokens":4200}}})"));
  EXPECT_EQ(written(SessionUpdate{UsageUpdate{.used = 1, .size = 2}}),
            json(R"({"sessionUpdate":"usage_update","used":1,"size":2})"));
}

TEST(AcpSessionUpdate, UnknownOrMalformedUpdatesNameTheField) {
  EXPECT_EQ(read_error<SessionNotification>(R"({"sessionId":"s","update":{"sessionUpdate":"notice","title":"x"}})"),
            R"(params.update.sessionUpdate: unknown session update "notice")");
  EXPECT_EQ(read_error<SessionNotification>(R"({"sessionId":"s","update":{"content":{"type":"text","text":"x"}}})"),
            "params.update.sessionUpdate: required field is missing");
  EXPECT_EQ(read_error<SessionNotification>(
                R"({"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"txt"}}})"),
            R"(params.update.content.type: unknown content block type "txt")");
  EXPECT_EQ(read_error<SessionNotification>(
                R"({"sessionId":"s","update":{"sessionUpdate":"usage_update","used":-1,"size":2}})"),
            "params.update.used: integer -1 is out of range for non-negative integer");
  EXPECT_EQ(read_error<ToolCallContent>(R"({"type":"image"})"),
            R"(params.type: unknown tool call content type "image")");
  EXPECT_EQ(read_error<ToolCallContent>(R"({"type":"diff","path":"/a"})"), "params.newText: required field is missing");
}

}  // namespace
}  // namespace agentd::protocol::acp
