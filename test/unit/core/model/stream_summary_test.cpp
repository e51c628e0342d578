// StreamAccumulator and the summary's JSON form, plus the small shared helpers of the decoders.
#include "core/model/stream_summary.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/model/stream_decoder.h"
#include "core/support/json.h"
#include "test/unit/core/model/stream_test_util.h"

namespace agentd::core::model {
namespace {

using support::Json;

TEST(StreamAccumulator, BuildsBlocksInOrderAndMergesConsecutiveDeltas) {
  StreamAccumulator acc;
  acc.add(ThinkingDelta{0, "a", "", ""});
  acc.add(ThinkingDelta{0, "b", "", ""});
  acc.add(ThinkingDelta{0, "", "sig", ""});
  acc.add(TextDelta{1, "x"});
  acc.add(TextDelta{1, "y"});
  acc.add(ToolCallDelta{2, "id", "f", "{}"});
  ToolCallDone done{2, "id", "f", "{}", Json::object(), std::nullopt};
  acc.add(done);
  acc.add(TextDelta{3, "z"});
  acc.add(MessageDone{StopReason::tool_use, "tool_use", Usage{1, 2, 3, 4, std::nullopt}});
  const auto& s = acc.summary();
  ASSERT_EQ(s.blocks.size(), 4u);
  EXPECT_EQ(s.blocks[0].kind, StreamBlock::Kind::thinking);
  EXPECT_EQ(s.blocks[0].text, "ab");
  EXPECT_EQ(s.blocks[0].signature, "sig");
  EXPECT_EQ(s.blocks[1].text, "xy");
  EXPECT_EQ(s.blocks[2].kind, StreamBlock::Kind::tool_call);
  EXPECT_EQ(s.blocks[2].tool_call, 0u);
  EXPECT_EQ(s.blocks[3].text, "z");
  EXPECT_EQ(s.text, "xyz");
  EXPECT_EQ(s.thinking, "ab");
  EXPECT_TRUE(acc.finished());
}

TEST(StreamAccumulator, NothingCountsAfterATerminalEvent) {
  StreamAccumulator acc;
  acc.add(TextDelta{0, "kept"});
  acc.add(truncated_error("cut"));
  acc.add(TextDelta{0, " ignored"});
  acc.add(MessageDone{});
  EXPECT_EQ(acc.summary().text, "kept");
  EXPECT_FALSE(acc.summary().complete);
  ASSERT_TRUE(acc.summary().error);
}

TEST(StreamSummaryJson, SuccessShape) {
  StreamAccumulator acc;
  acc.add(TextDelta{0, "hé"});
  acc.add(ToolCallDone{1, "c1", "f", R"({"a":1})", *support::parse_json(R"({"a":1})"), std::nullopt});
  acc.add(MessageDone{StopReason::tool_use, "tool_calls", Usage{10, 5, 2, 3, 0}});
  const Json got = testing::summary_json(acc.summary());
  const Json want = *support::parse_json(R"({
    "complete": true, "text": "hé", "thinking": null,
    "tool_calls": [{"id": "c1", "name": "f", "arguments_json": "{\"a\":1}", "input": {"a": 1}}],
    "stop_reason": "tool_use", "stop_reason_raw": "tool_calls",
    "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 3,
              "cache_creation_input_tokens": 2, "reasoning_output_tokens": 0, "total_input_tokens": 15},
    "error": null})");
  EXPECT_EQ(got, want) << got.dump();
}

TEST(StreamSummaryJson, ErrorShape) {
  StreamAccumulator acc;
  ModelError error;
  error.kind = ErrorKind::rate_limited;
  error.code = "rate_limit_error";
  error.message = "slow";
  error.retryable = true;
  error.retry_after = std::chrono::milliseconds(1200);
  error.source = ErrorSource::http;
  error.http_status = 429;
  acc.add(error);
  const Json got = testing::summary_json(acc.summary());
  const Json want = *support::parse_json(R"({
    "complete": false, "text": "", "thinking": null, "tool_calls": [], "stop_reason": null, "stop_reason_raw": null,
    "usage": null,
    "error": {"kind": "rate_limited", "code": "rate_limit_error", "message": "slow", "retryable": true,
              "source": "http", "retry_after_ms": 1200, "http_status": 429}})");
  EXPECT_EQ(got, want) << got.dump();
}

TEST(StreamDecoderHelpers, RetryAfterFromMessage) {
  EXPECT_EQ(retry_after_from_message("Please try again in 3.45s."), std::chrono::milliseconds(3450));
  EXPECT_EQ(retry_after_from_message("try again in 360ms"), std::chrono::milliseconds(360));
  EXPECT_EQ(retry_after_from_message("try again in 2s"), std::chrono::milliseconds(2000));
  EXPECT_FALSE(retry_after_from_message("try again later"));
  EXPECT_FALSE(retry_after_from_message("try again in 5 minutes"));
  EXPECT_FALSE(retry_after_from_message("no hint here"));
  EXPECT_FALSE(retry_after_from_message("try again in 99999999999999999999s"));
}

TEST(StreamDecoderHelpers, ParseToolInput) {
  ToolCallDone call;
  call.arguments_json = " \n";
  parse_tool_input(call);
  EXPECT_EQ(call.input, Json::object());
  call.arguments_json = "[1";
  parse_tool_input(call);
  EXPECT_TRUE(call.input.is_null());
  EXPECT_TRUE(call.input_error);
  call.arguments_json = R"({"k":"v"})";
  parse_tool_input(call);
  EXPECT_EQ(call.input, Json(Json::Object{{"k", Json("v")}}));
  EXPECT_FALSE(call.input_error);
}

TEST(StreamDecoderHelpers, ProtocolNamesRoundTrip) {
  for (const auto p : {WireProtocol::anthropic_messages, WireProtocol::openai_chat}) {
    EXPECT_EQ(parse_wire_protocol(wire_protocol_name(p)), p);
  }
  EXPECT_FALSE(parse_wire_protocol("gemini"));
}

}  // namespace
}  // namespace agentd::core::model
