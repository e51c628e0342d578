// AnthropicStream rules the fixtures do not pin down one by one: usage overwrite, error mapping, tool
// input edge cases, malformed events, and what happens after the terminal event.
#include "core/model/anthropic_stream.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/model/stream_summary.h"
#include "test/unit/core/model/stream_test_util.h"

namespace agentd::core::model {
namespace {

using support::Json;
using testing::decode_whole;
using testing::describe_all;
using testing::summarize;

std::string ev(std::string_view name, std::string_view data) {
  return "event: " + std::string(name) + "\ndata: " + std::string(data) + "\n\n";
}

const std::string kStart =
    ev("message_start", R"({"type":"message_start","message":{"id":"m","role":"assistant","content":[],)"
                        R"("usage":{"input_tokens":10,"cache_creation_input_tokens":3,)"
                        R"("cache_read_input_tokens":4,"output_tokens":1}}})");
const std::string kStop = ev("message_stop", R"({"type":"message_stop"})");

std::string text_block(std::string_view text) {
  return ev("content_block_start",
            R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})") +
         ev("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":")" +
                                       std::string(text) + R"("}})") +
         ev("content_block_stop", R"({"type":"content_block_stop","index":0})");
}

std::string tool_block(int index, std::string_view id, std::vector<std::string> fragments,
                       std::string_view start_input = "{}") {
  std::string out = ev("content_block_start", R"({"type":"content_block_start","index":)" + std::to_string(index) +
                                                  R"(,"content_block":{"type":"tool_use","id":")" + std::string(id) +
                                                  R"(","name":"t","input":)" + std::string(start_input) + "}}");
  for (const auto& f : fragments) {
    out +=
        ev("content_block_delta", R"({"type":"content_block_delta","index":)" + std::to_string(index) +
                                      R"(,"delta":{"type":"input_json_delta","partial_json":)" + Json(f).dump() + "}}");
  }
  return out + ev("content_block_stop", R"({"type":"content_block_stop","index":)" + std::to_string(index) + "}");
}

StreamSummary run(const std::string& body) { return summarize(decode_whole(WireProtocol::anthropic_messages, body)); }

TEST(AnthropicStream, CumulativeUsageOverwritesFieldsPresentAndKeepsTheRest) {
  const auto summary = run(
      kStart + text_block("hi") +
      ev("message_delta",
         R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}})") +
      ev("message_delta",
         R"({"type":"message_delta","delta":{},"usage":{"output_tokens":7,"input_tokens":11,"cache_read_input_tokens":null}})") +
      kStop);
  ASSERT_TRUE(summary.complete);
  ASSERT_TRUE(summary.usage);
  EXPECT_EQ(summary.usage->output_tokens, 7u) << "cumulative: the last value, never a sum";
  EXPECT_EQ(summary.usage->input_tokens, 11u);
  EXPECT_EQ(summary.usage->cache_write_tokens, 3u);
  EXPECT_EQ(summary.usage->cache_read_tokens, 4u) << "null leaves the earlier value";
  EXPECT_EQ(summary.usage->total_input_tokens(), 18u);
  EXPECT_EQ(summary.stop_reason, StopReason::end_turn);
}

TEST(AnthropicStream, StopReasonsNormalise) {
  const std::pair<const char*, StopReason> cases[] = {
      {"end_turn", StopReason::end_turn},
      {"tool_use", StopReason::tool_use},
      {"max_tokens", StopReason::max_tokens},
      {"stop_sequence", StopReason::stop_sequence},
      {"refusal", StopReason::refusal},
      {"pause_turn", StopReason::pause_turn},
      {"model_context_window_exceeded", StopReason::max_tokens},
      {"something_new", StopReason::end_turn},
  };
  for (const auto& [raw, want] : cases) {
    const auto summary = run(kStart +
                             ev("message_delta", std::string(R"({"type":"message_delta","delta":{"stop_reason":")") +
                                                     raw + R"("},"usage":{"output_tokens":1}})") +
                             kStop);
    EXPECT_EQ(summary.stop_reason, want) << raw;
    EXPECT_EQ(summary.stop_reason_raw, raw);
  }
  EXPECT_EQ(anthropic_stop_reason("", /*has_tool_calls=*/true), StopReason::tool_use);
}

TEST(AnthropicStream, InStreamErrorsMapToKinds) {
  struct Case {
    const char* type;
    const char* message;
    ErrorKind kind;
    bool retryable;
  };
  const Case cases[] = {
      {"overloaded_error", "Overloaded", ErrorKind::overloaded, true},
      {"rate_limit_error", "slow down", ErrorKind::rate_limited, true},
      {"api_error", "Internal server error", ErrorKind::server, true},
      {"timeout_error", "timeout", ErrorKind::server, true},
      {"authentication_error", "invalid x-api-key", ErrorKind::auth, false},
      {"permission_error", "no", ErrorKind::auth, false},
      {"invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", ErrorKind::context_too_long,
       false},
      {"invalid_request_error", "messages.1: bad", ErrorKind::invalid_request, false},
      {"mystery_error", "what", ErrorKind::server, false},
  };
  for (const auto& c : cases) {
    const auto events = decode_whole(WireProtocol::anthropic_messages,
                                     kStart + ev("error", std::string(R"({"type":"error","error":{"type":")") + c.type +
                                                              R"(","message":")" + c.message + R"("}})"));
    ASSERT_EQ(events.size(), 1u) << c.type;
    const auto* error = std::get_if<ModelError>(&events.back());
    ASSERT_NE(error, nullptr) << c.type;
    EXPECT_EQ(error->kind, c.kind) << c.type;
    EXPECT_EQ(error->retryable, c.retryable) << c.type;
    EXPECT_EQ(error->code, c.type);
    EXPECT_EQ(error->message, c.message);
    EXPECT_EQ(error->source, ErrorSource::in_stream);
  }
}

TEST(AnthropicStream, EndingWithoutMessageStopIsTruncatedNotSuccess) {
  const auto summary = run(kStart + text_block("all the text") +
                           ev("message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn"}})"));
  EXPECT_FALSE(summary.complete);
  EXPECT_EQ(summary.text, "all the text");
  ASSERT_TRUE(summary.error);
  EXPECT_EQ(summary.error->kind, ErrorKind::stream_truncated);
  EXPECT_TRUE(summary.error->retryable);
  EXPECT_EQ(summary.error->source, ErrorSource::transport);
  EXPECT_FALSE(summary.usage) << "usage belongs to a finished message only";
}

TEST(AnthropicStream, EmptyBodyIsTruncated) {
  const auto summary = run("");
  ASSERT_TRUE(summary.error);
  EXPECT_EQ(summary.error->kind, ErrorKind::stream_truncated);
}

TEST(AnthropicStream, ToolInputEdgeCases) {
  const auto summary =
      run(kStart + tool_block(0, "a", {"{\"x\":", " [1, 2]}"}) + tool_block(1, "b", {}) + tool_block(2, "c", {"  "}) +
          tool_block(3, "d", {"{\"unterminated"}) + tool_block(4, "e", {}, R"({"given":"whole"})") +
          ev("message_delta", R"({"type":"message_delta","delta":{"stop_reason":"tool_use"}})") + kStop);
  ASSERT_TRUE(summary.complete);
  ASSERT_EQ(summary.tool_calls.size(), 5u);
  EXPECT_EQ(summary.tool_calls[0].input, Json(Json::Object{{"x", Json(Json::Array{Json(1), Json(2)})}}));
  EXPECT_EQ(summary.tool_calls[1].input, Json::object()) << "no fragments: no arguments";
  EXPECT_EQ(summary.tool_calls[2].input, Json::object()) << "blank fragments: no arguments";
  EXPECT_TRUE(summary.tool_calls[3].input.is_null());
  ASSERT_TRUE(summary.tool_calls[3].input_error);
  EXPECT_NE(summary.tool_calls[3].input_error->find("not valid JSON"), std::string::npos);
  EXPECT_EQ(summary.tool_calls[3].arguments_json, "{\"unterminated");
  EXPECT_EQ(summary.tool_calls[4].input, Json(Json::Object{{"given", Json("whole")}}))
      << "input given whole in content_block_start counts when no fragments follow";
  EXPECT_EQ(summary.stop_reason, StopReason::tool_use);
}

TEST(AnthropicStream, ToolCallDeltaAnnouncesIdAndNameFirst) {
  const auto events = decode_whole(WireProtocol::anthropic_messages, kStart + tool_block(2, "toolu_x", {"{}"}) + kStop);
  ASSERT_GE(events.size(), 3u);
  const auto* first = std::get_if<ToolCallDelta>(&events[0]);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->index, 2u);
  EXPECT_EQ(first->id, "toolu_x");
  EXPECT_EQ(first->name, "t");
  EXPECT_EQ(first->input_json, "");
  const auto* done = std::get_if<ToolCallDone>(&events[2]);
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->index, 2u);
}

TEST(AnthropicStream, MalformedEventDataIsAnErrorNotACrash) {
  for (const std::string bad : {"{not json", "[1,2]", "", "\"text\""}) {
    const auto events = decode_whole(WireProtocol::anthropic_messages, kStart + ev("content_block_delta", bad) + kStop);
    ASSERT_EQ(events.size(), 1u) << bad;
    const auto* error = std::get_if<ModelError>(&events[0]);
    ASSERT_NE(error, nullptr) << bad;
    EXPECT_EQ(error->kind, ErrorKind::server);
    EXPECT_EQ(error->code, "malformed_event");
  }
}

TEST(AnthropicStream, UnknownEventsAndBlocksAreIgnored) {
  const auto summary = run(
      kStart + ev("brand_new_event", R"({"type":"brand_new_event","x":1})") +
      ev("content_block_start",
         R"({"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s","name":"web_search","input":{}}})") +
      ev("content_block_delta",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}})") +
      ev("content_block_stop", R"({"type":"content_block_stop","index":0})") +
      ev("content_block_delta",
         R"({"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{}}})") +
      kStop);
  EXPECT_TRUE(summary.complete);
  EXPECT_TRUE(summary.tool_calls.empty());
}

TEST(AnthropicStream, DataTypeWinsOverEventName) {
  // Some proxies drop or rename the `event:` line; the payload's type is what counts.
  const auto summary =
      run("data: " + std::string(R"({"type":"message_start","message":{"usage":{"input_tokens":2}}})") +
          "\n\ndata: {\"type\":\"message_stop\"}\n\n");
  EXPECT_TRUE(summary.complete);
  ASSERT_TRUE(summary.usage);
  EXPECT_EQ(summary.usage->input_tokens, 2u);
}

TEST(AnthropicStream, NothingAfterTheTerminalEvent) {
  auto decoder = make_stream_decoder(WireProtocol::anthropic_messages);
  std::vector<ModelEvent> events;
  decoder->feed(kStart + kStop, events);
  EXPECT_TRUE(decoder->done());
  decoder->feed(text_block("late"), events);
  decoder->finish(events);
  decoder->finish(events);
  ASSERT_EQ(events.size(), 1u) << ::testing::PrintToString(describe_all(events));
  EXPECT_TRUE(std::holds_alternative<MessageDone>(events[0]));
}

TEST(AnthropicStream, ThinkingSignatureAndRedactedDataAreKeptVerbatim) {
  const auto summary = run(
      kStart +
      ev("content_block_start",
         R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}})") +
      ev("content_block_delta",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}})") +
      ev("content_block_delta",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG+/=="}})") +
      ev("content_block_stop", R"({"type":"content_block_stop","index":0})") +
      ev("content_block_start",
         R"({"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"REDACTED=="}})") +
      ev("content_block_stop", R"({"type":"content_block_stop","index":1})") + kStop);
  ASSERT_EQ(summary.blocks.size(), 2u);
  EXPECT_EQ(summary.blocks[0].kind, StreamBlock::Kind::thinking);
  EXPECT_EQ(summary.blocks[0].text, "hmm");
  EXPECT_EQ(summary.blocks[0].signature, "SIG+/==");
  EXPECT_EQ(summary.blocks[1].kind, StreamBlock::Kind::redacted_thinking);
  EXPECT_EQ(summary.blocks[1].redacted_data, "REDACTED==");
  EXPECT_EQ(summary.thinking, "hmm");
}

}  // namespace
}  // namespace agentd::core::model
