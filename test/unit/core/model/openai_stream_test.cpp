// OpenAiChatStream rules beyond the fixtures: finish_reason mapping, usage
// arithmetic, error objects, the tool-call correlation rules for local servers, and how a stream may end.
#include "core/model/openai_stream.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/model/stream_summary.h"
#include "test/unit/core/model/stream_test_util.h"

namespace agentd::core::model {
namespace {

using support::Json;
using testing::decode_whole;
using testing::summarize;

std::string sse_data(std::string_view json) { return "data: " + std::string(json) + "\n\n"; }
std::string delta(std::string_view delta_json, std::string_view finish = "null") {
  return sse_data(R"({"choices":[{"index":0,"delta":)" + std::string(delta_json) + R"(,"finish_reason":)" +
                  std::string(finish) + "}]}");
}
const std::string kDone = "data: [DONE]\n\n";

StreamSummary run(const std::string& body) { return summarize(decode_whole(WireProtocol::openai_chat, body)); }

TEST(OpenAiChatStream, FinishReasonsNormalise) {
  const std::tuple<const char*, bool, StopReason> cases[] = {
      {"stop", false, StopReason::end_turn},          {"tool_calls", true, StopReason::tool_use},
      {"function_call", true, StopReason::tool_use},  {"length", false, StopReason::max_tokens},
      {"content_filter", false, StopReason::refusal}, {"stop", true, StopReason::tool_use},
      {"eos", false, StopReason::end_turn},
  };
  for (const auto& [raw, with_call, want] : cases) {
    std::string body = delta(R"({"content":"x"})");
    if (with_call) body += delta(R"({"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]})");
    body += delta("{}", std::string("\"") + raw + "\"") + kDone;
    const auto summary = run(body);
    ASSERT_TRUE(summary.complete) << raw;
    EXPECT_EQ(summary.stop_reason, want) << raw << " with_call=" << with_call;
    EXPECT_EQ(summary.stop_reason_raw, raw);
  }
}

TEST(OpenAiChatStream, UsageSubtractsCachedTokens) {
  const Usage usage = openai_chat_usage(*support::parse_json(
      R"({"prompt_tokens":1000,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":600},"completion_tokens_details":{"reasoning_tokens":20}})"));
  EXPECT_EQ(usage.input_tokens, 400u);
  EXPECT_EQ(usage.cache_read_tokens, 600u);
  EXPECT_EQ(usage.cache_write_tokens, 0u);
  EXPECT_EQ(usage.output_tokens, 50u);
  EXPECT_EQ(usage.reasoning_output_tokens, 20u);
  EXPECT_EQ(usage.total_input_tokens(), 1000u);
  // A server claiming more cached than prompt tokens must not wrap around.
  const Usage odd =
      openai_chat_usage(*support::parse_json(R"({"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":9}})"));
  EXPECT_EQ(odd.input_tokens, 0u);
  EXPECT_EQ(odd.cache_read_tokens, 5u);
  EXPECT_FALSE(odd.reasoning_output_tokens);
}

TEST(OpenAiChatStream, ErrorObjectsMapToKinds) {
  struct Case {
    const char* error_json;
    ErrorKind kind;
    bool retryable;
    const char* code;
  };
  const Case cases[] = {
      {R"({"message":"boom","type":"server_error","code":null})", ErrorKind::server, true, "server_error"},
      {R"({"message":"Rate limit. Please try again in 20ms.","type":"tokens","code":"rate_limit_exceeded"})",
       ErrorKind::rate_limited, true, "rate_limit_exceeded"},
      {R"({"message":"quota","type":"insufficient_quota","code":"insufficient_quota"})", ErrorKind::rate_limited, false,
       "insufficient_quota"},
      {R"({"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"})",
       ErrorKind::context_too_long, false, "context_length_exceeded"},
      {R"({"message":"the request exceeds the available context size","type":"exceed_context_size_error","code":400})",
       ErrorKind::context_too_long, false, "400"},
      {R"({"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"})", ErrorKind::auth,
       false, "invalid_api_key"},
      {R"({"message":"bad"})", ErrorKind::server, false, "error"},
      {R"("model 'x' not found")", ErrorKind::server, false, "error"},
  };
  for (const auto& c : cases) {
    const auto events =
        decode_whole(WireProtocol::openai_chat,
                     delta(R"({"content":"a"})") + sse_data(std::string(R"({"error":)") + c.error_json + "}"));
    ASSERT_EQ(events.size(), 2u) << c.error_json;
    const auto* error = std::get_if<ModelError>(&events.back());
    ASSERT_NE(error, nullptr) << c.error_json;
    EXPECT_EQ(error->kind, c.kind) << c.error_json;
    EXPECT_EQ(error->retryable, c.retryable) << c.error_json;
    EXPECT_EQ(error->code, c.code) << c.error_json;
    EXPECT_FALSE(error->message.empty());
  }
  const auto events = decode_whole(
      WireProtocol::openai_chat,
      sse_data(R"({"error":{"message":"Rate limit. Please try again in 20ms.","code":"rate_limit_exceeded"}})"));
  EXPECT_EQ(std::get<ModelError>(events.back()).retry_after, std::chrono::milliseconds(20));
}

TEST(OpenAiChatStream, EndingWithoutDoneOrFinishReasonIsTruncated) {
  const auto summary = run(delta(R"({"content":"partial"})"));
  EXPECT_FALSE(summary.complete);
  ASSERT_TRUE(summary.error);
  EXPECT_EQ(summary.error->kind, ErrorKind::stream_truncated);
  EXPECT_TRUE(summary.error->retryable);
  EXPECT_EQ(summary.text, "partial");
}

TEST(OpenAiChatStream, DoneWithoutFinishReasonStillCompletes) {
  const auto plain = run(delta(R"({"content":"hi"})") + kDone);
  EXPECT_TRUE(plain.complete);
  EXPECT_EQ(plain.stop_reason, StopReason::end_turn);
  EXPECT_EQ(plain.stop_reason_raw, "");
  const auto calls =
      run(delta(R"({"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{}"}}]})") + kDone);
  EXPECT_TRUE(calls.complete);
  EXPECT_EQ(calls.stop_reason, StopReason::tool_use);
  ASSERT_EQ(calls.tool_calls.size(), 1u);
}

TEST(OpenAiChatStream, DoneIsRecognisedWithSurroundingSpace) {
  EXPECT_TRUE(run(delta(R"({"content":"x"})") + "data:  [DONE] \n\n").complete);
}

TEST(OpenAiChatStream, FragmentsWithoutIndexContinueTheLatestCall) {
  const auto summary = run(delta(R"({"tool_calls":[{"id":"c1","function":{"name":"f","arguments":"{\"a\""}}]})") +
                           delta(R"({"tool_calls":[{"function":{"arguments":":1}"}}]})") +
                           delta(R"({"tool_calls":[{"function":{"name":"g","arguments":"{}"}}]})") +
                           delta("{}", "\"tool_calls\"") + kDone);
  ASSERT_EQ(summary.tool_calls.size(), 2u);
  EXPECT_EQ(summary.tool_calls[0].id, "c1");
  EXPECT_EQ(summary.tool_calls[0].arguments_json, R"({"a":1})");
  EXPECT_EQ(summary.tool_calls[1].id, "call_local_1");
  EXPECT_EQ(summary.tool_calls[1].name, "g");
}

TEST(OpenAiChatStream, IdRepeatedOnEveryDeltaIsOneCall) {
  const auto summary =
      run(delta(R"({"tool_calls":[{"index":0,"id":"same","function":{"name":"f","arguments":"{\"a\":"}}]})") +
          delta(R"({"tool_calls":[{"index":0,"id":"same","function":{"arguments":"2}"}}]})") +
          delta("{}", "\"tool_calls\"") + kDone);
  ASSERT_EQ(summary.tool_calls.size(), 1u);
  EXPECT_EQ(summary.tool_calls[0].input, Json(Json::Object{{"a", Json(2)}}));
}

TEST(OpenAiChatStream, SameIndexWithoutIdsButANewNameAfterCompleteArgumentsIsANewCall) {
  const auto summary = run(delta(R"({"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"n\":1}"}}]})") +
                           delta(R"({"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"n\":2}"}}]})") +
                           delta("{}", "\"tool_calls\"") + kDone);
  ASSERT_EQ(summary.tool_calls.size(), 2u);
  EXPECT_EQ(summary.tool_calls[0].id, "call_local_0");
  EXPECT_EQ(summary.tool_calls[1].id, "call_local_1");
  EXPECT_EQ(summary.tool_calls[1].input, Json(Json::Object{{"n", Json(2)}}));
}

TEST(OpenAiChatStream, ArgumentsAsObjectAndInvalidArguments) {
  const auto summary =
      run(delta(R"({"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":{"k":[1,"two"]}}}]})") +
          delta(R"({"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{oops"}}]})") +
          delta("{}", "\"tool_calls\"") + kDone);
  ASSERT_EQ(summary.tool_calls.size(), 2u);
  EXPECT_EQ(summary.tool_calls[0].arguments_json, R"({"k":[1,"two"]})");
  EXPECT_EQ(summary.tool_calls[0].input, *support::parse_json(R"({"k":[1,"two"]})"));
  EXPECT_TRUE(summary.tool_calls[1].input.is_null());
  EXPECT_TRUE(summary.tool_calls[1].input_error.has_value());
}

TEST(OpenAiChatStream, LegacyFunctionCallDelta) {
  const auto summary =
      run(delta(R"({"function_call":{"name":"f","arguments":"{\"x\""}})") +
          delta(R"({"function_call":{"arguments":":true}"}})") + delta("{}", "\"function_call\"") + kDone);
  ASSERT_EQ(summary.tool_calls.size(), 1u);
  EXPECT_EQ(summary.tool_calls[0].name, "f");
  EXPECT_EQ(summary.tool_calls[0].input, Json(Json::Object{{"x", Json(true)}}));
  EXPECT_EQ(summary.stop_reason, StopReason::tool_use);
}

TEST(OpenAiChatStream, OnlyTheFirstChoiceCounts) {
  const auto summary =
      run(sse_data(R"({"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"ours"}}]})") +
          delta("{}", "\"stop\"") + kDone);
  EXPECT_EQ(summary.text, "ours");
}

TEST(OpenAiChatStream, ReasoningAndRefusalDeltas) {
  const auto summary =
      run(delta(R"({"reasoning_content":"think "})") + delta(R"({"reasoning":"more"})") +
          delta(R"({"refusal":"I can't help with that."})") + delta("{}", "\"content_filter\"") + kDone);
  EXPECT_EQ(summary.thinking, "think more");
  EXPECT_EQ(summary.text, "I can't help with that.");
  EXPECT_EQ(summary.stop_reason, StopReason::refusal);
}

TEST(OpenAiChatStream, GarbageChunkIsAnError) {
  const auto summary = run(delta(R"({"content":"a"})") + sse_data("<html>502 Bad Gateway</html>"));
  ASSERT_TRUE(summary.error);
  EXPECT_EQ(summary.error->code, "malformed_event");
  EXPECT_FALSE(summary.complete);
}

TEST(OpenAiChatStream, ToolCallsCloseAtFinishReasonBeforeUsageArrives) {
  auto decoder = make_stream_decoder(WireProtocol::openai_chat);
  std::vector<ModelEvent> events;
  decoder->feed(delta(R"({"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]})") +
                    delta("{}", "\"tool_calls\""),
                events);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<ToolCallDone>(events[1])) << "the engine may start the tool right away";
  EXPECT_FALSE(decoder->done()) << "the usage chunk and [DONE] are still to come";
}

}  // namespace
}  // namespace agentd::core::model
