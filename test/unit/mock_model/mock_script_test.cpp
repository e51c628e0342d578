// Tests of the mock model server's script handling without sockets: parsing and its error paths, JSON
// pointers, expectation messages, and that the generated streams decode (through core/model's decoders)
// to exactly what the description said, however the bytes are split.
#include "test/mock_model/mock_script.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/model/stream_decoder.h"
#include "core/model/stream_summary.h"
#include "core/support/json.h"

namespace agentd::mock_model {
namespace {

using core::model::StopReason;
using core::model::StreamSummary;
using core::model::WireProtocol;
using support::Json;

Json parse(std::string_view text) {
  auto json = support::parse_json(text);
  EXPECT_TRUE(json) << (json ? "" : json.error().message());
  return json ? std::move(json).value() : Json();
}

std::string join(const std::vector<std::string>& pieces) {
  std::string out;
  for (const auto& piece : pieces) out += piece;
  return out;
}

// Decodes `body` fed in pieces of at most `max_piece` bytes (seeded random sizes; 0 = whole).
StreamSummary decode(WireProtocol protocol, std::string_view body, std::size_t max_piece = 0, unsigned seed = 7) {
  auto decoder = core::model::make_stream_decoder(protocol);
  std::vector<core::model::ModelEvent> events;
  std::mt19937 rng(seed);
  while (!body.empty()) {
    const std::size_t n = max_piece == 0 ? body.size() : std::min<std::size_t>(body.size(), 1 + rng() % max_piece);
    decoder->feed(body.substr(0, n), events);
    body.remove_prefix(n);
  }
  decoder->finish(events);
  core::model::StreamAccumulator acc;
  acc.add_all(events);
  return std::move(acc).take();
}

GenerateSpec tool_turn() {
  GenerateSpec spec;
  spec.text = "Let me read ünïcödé 東京 🚀 first.";
  spec.tool_calls.push_back({"", "read_file", parse(R"({"path":"a.txt","note":"quote \" and é"})")});
  spec.tool_calls.push_back({"toolu_given", "list_dir", Json::object()});
  spec.usage = {412, 96, 5, 6890};
  return spec;
}

TEST(MockScript, ParsesAllBodyKindsAndOptions) {
  const Json json = parse(R"({"exchanges":[
    {"name":"first","expect":{"path":"/v1/messages","model":"m","body_contains":"hello",
      "body_matches":{"/messages/0/role":"user"}},
     "response":{"generate":{"provider":"anthropic","text":"Hi"},"chunk_delay_ms":5}},
    {"response":{"status":429,"headers":{"retry-after":"17","x-n":3},"body":{"type":"error"}}},
    {"response":{"events":[{"event":"ping","data":{"type":"ping"}},{"data":"a\nb"},{"raw":": comment\n\n"}],
      "stall_after_bytes":10}}],
    "loop":true})");
  auto script = parse_script(json, ".");
  ASSERT_TRUE(script) << script.error().message();
  ASSERT_EQ(script->exchanges.size(), 3u);
  EXPECT_TRUE(script->loop);
  EXPECT_EQ(script->exchanges[0].name, "first");
  EXPECT_EQ(script->exchanges[1].name, "exchange 2");
  ASSERT_TRUE(script->exchanges[0].expect);
  EXPECT_EQ(script->exchanges[0].expect->body_contains, std::vector<std::string>{"hello"});
  EXPECT_EQ(script->exchanges[0].response.kind, Response::BodyKind::generate);
  EXPECT_EQ(script->exchanges[0].response.chunk_delay_ms, 5u);
  const Response& error = script->exchanges[1].response;
  EXPECT_EQ(error.status, 429);
  EXPECT_EQ(error.headers, (std::vector<std::pair<std::string, std::string>>{{"retry-after", "17"}, {"x-n", "3"}}));
  EXPECT_TRUE(error.body_is_json);
  EXPECT_EQ(error.body, R"({"type":"error"})");
  const Response& events = script->exchanges[2].response;
  EXPECT_EQ(events.events, (std::vector<std::string>{"event: ping\ndata: {\"type\":\"ping\"}\n\n",
                                                     "data: a\ndata: b\n\n", ": comment\n\n"}));
  EXPECT_EQ(events.stall_after_bytes, 10u);
}

TEST(MockScript, ErrorsNameTheOffendingField) {
  const auto error_of = [](std::string_view text) {
    auto script = parse_script(parse(text), "/nonexistent-dir");
    return script ? std::string("parsed") : script.error().message();
  };
  EXPECT_EQ(error_of(R"({"exchanges":[{"response":{"chunk_sise":3}}]})").substr(0, 47),
            "script.exchanges[0].response.chunk_sise: unknow");
  EXPECT_EQ(error_of(R"({"exchanges":[{"response":{"status":"200"}}]})"),
            "script.exchanges[0].response.status: expected 32-bit integer, got string");
  EXPECT_EQ(error_of(R"({"exchanges":[{"response":{"body":"a","events":[]}}]})"),
            "script.exchanges[0].response: give at most one of body, events, sse_file, http_file, generate");
  EXPECT_EQ(error_of(R"({"exchanges":[{}]})"), "script.exchanges[0].response: required field is missing");
  EXPECT_EQ(error_of(R"({"exchanges":[{"response":{"sse_file":"missing.sse"}}]})"),
            "script.exchanges[0].response.sse_file: cannot read /nonexistent-dir/missing.sse");
  EXPECT_EQ(error_of(R"({"exchanges":[{"response":{"generate":{"provider":"gemini"}}}]})"),
            "script.exchanges[0].response.generate.provider: expected \"anthropic\" or \"openai\"");
  EXPECT_EQ(error_of(R"({"exchanges":[{"expect":{"body_matches":{"model":1}},"response":{}}]})"),
            "script.exchanges[0].expect.body_matches.model: a JSON pointer starts with '/' (or is \"\" for the "
            "whole body)");
  EXPECT_EQ(error_of(R"([{"response":{}}])"), "parsed");  // a bare array is the list of exchanges
}

TEST(MockScript, JsonPointerFollowsRfc6901) {
  const Json doc = parse(R"({"a":[{"b":1},{"c/d":2,"e~f":3}],"":4})");
  ASSERT_NE(resolve_json_pointer(doc, ""), nullptr);
  EXPECT_EQ(*resolve_json_pointer(doc, ""), doc);
  EXPECT_EQ(*resolve_json_pointer(doc, "/a/0/b"), Json(1));
  EXPECT_EQ(*resolve_json_pointer(doc, "/a/1/c~1d"), Json(2));
  EXPECT_EQ(*resolve_json_pointer(doc, "/a/1/e~0f"), Json(3));
  EXPECT_EQ(*resolve_json_pointer(doc, "/"), Json(4));
  EXPECT_EQ(resolve_json_pointer(doc, "/a/2"), nullptr);
  EXPECT_EQ(resolve_json_pointer(doc, "/a/01"), nullptr);
  EXPECT_EQ(resolve_json_pointer(doc, "/a/-"), nullptr);
  EXPECT_EQ(resolve_json_pointer(doc, "/x"), nullptr);
  EXPECT_EQ(resolve_json_pointer(doc, "a"), nullptr);
}

TEST(MockScript, ExpectationFailuresSayExpectedAndGot) {
  Expectation expect;
  expect.method = "POST";
  expect.path = "/v1/messages";
  expect.model = "claude-x";
  expect.body_contains = {"tool_result", "hello"};
  expect.body_matches = {{"/stream", Json(true)}, {"/messages/0/role", Json("user")}, {"/tools", Json::array()}};
  ReceivedRequest request{"POST", "/v1/chat/completions",
                          R"({"model":"gpt","stream":true,"messages":[{"role":"system"}]})", std::nullopt};
  request.body_json = parse(request.body);
  EXPECT_EQ(check_expectation(expect, request),
            (std::vector<std::string>{
                R"(path: expected "/v1/messages", got "/v1/chat/completions")",
                R"(model: expected "claude-x", got "gpt")",
                R"(body_contains: the body does not contain "tool_result")",
                R"(body_contains: the body does not contain "hello")",
                R"(body_matches "/messages/0/role": expected "user", got "system")",
                R"(body_matches "/tools": expected [], but the body has nothing there)",
            }));
  request.path = "/v1/messages";
  request.body =
      R"({"model":"claude-x","stream":true,"messages":[{"role":"user","content":"hello tool_result"}],"tools":[]})";
  request.body_json = parse(request.body);
  EXPECT_EQ(check_expectation(expect, request), std::vector<std::string>{});
}

TEST(MockScript, GeneratedAnthropicStreamDecodesToTheDescription) {
  const GenerateSpec spec = tool_turn();
  const std::string body = join(generate_anthropic_stream(spec, "claude-test", 3));
  for (const std::size_t max_piece : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
    SCOPED_TRACE(max_piece);
    const StreamSummary summary = decode(WireProtocol::anthropic_messages, body, max_piece);
    ASSERT_FALSE(summary.error) << summary.error->message;
    EXPECT_TRUE(summary.complete);
    EXPECT_EQ(summary.text, spec.text);
    ASSERT_EQ(summary.tool_calls.size(), 2u);
    EXPECT_EQ(summary.tool_calls[0].id, "toolu_mock_0003_1");
    EXPECT_EQ(summary.tool_calls[0].name, "read_file");
    EXPECT_EQ(summary.tool_calls[0].input, spec.tool_calls[0].input);
    EXPECT_EQ(summary.tool_calls[1].id, "toolu_given");
    EXPECT_EQ(summary.tool_calls[1].input, Json::object());
    EXPECT_EQ(summary.stop_reason, StopReason::tool_use);
    ASSERT_TRUE(summary.usage);
    EXPECT_EQ(summary.usage->input_tokens, 412u);
    EXPECT_EQ(summary.usage->output_tokens, 96u);
    EXPECT_EQ(summary.usage->cache_write_tokens, 5u);
    EXPECT_EQ(summary.usage->cache_read_tokens, 6890u);
  }
  EXPECT_NE(body.find(R"("model":"claude-test")"), std::string::npos);
  // Text arrives in several deltas, and the tool input in fragments after the API's empty first one.
  const auto count = [&](std::string_view needle) {
    std::size_t n = 0;
    for (std::size_t at = body.find(needle); at != std::string::npos; at = body.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(R"("type":"text_delta")"), 3u);
  EXPECT_EQ(count(R"("partial_json":"")"), 2u);
  EXPECT_GE(count(R"("type":"input_json_delta")"), 6u);
  EXPECT_EQ(count("event: message_stop\n"), 1u);
}

TEST(MockScript, GeneratedAnthropicThinkingAndTinyPieces) {
  GenerateSpec spec;
  spec.thinking = "Hmm 🤔 ok";
  spec.text = "é🚀x";
  spec.text_piece_bytes = 1;  // smaller than a character: whole characters still, one per delta
  spec.stop_reason = "max_tokens";
  const std::string body = join(generate_anthropic_stream(spec, "m", 1));
  const StreamSummary summary = decode(WireProtocol::anthropic_messages, body, 3);
  ASSERT_FALSE(summary.error) << summary.error->message;
  EXPECT_EQ(summary.text, "é🚀x");
  EXPECT_EQ(summary.thinking, "Hmm 🤔 ok");
  ASSERT_FALSE(summary.blocks.empty());
  EXPECT_EQ(summary.blocks[0].signature, "mock-signature");
  EXPECT_EQ(summary.stop_reason, StopReason::max_tokens);
  EXPECT_NE(body.find(R"("text":"🚀")"), std::string::npos);
}

TEST(MockScript, GeneratedOpenAiStreamDecodesToTheDescription) {
  const GenerateSpec spec = tool_turn();
  const std::string body = join(generate_openai_stream(spec, "gpt-test", 2));
  for (const std::size_t max_piece : {std::size_t{0}, std::size_t{1}, std::size_t{5}}) {
    SCOPED_TRACE(max_piece);
    const StreamSummary summary = decode(WireProtocol::openai_chat, body, max_piece);
    ASSERT_FALSE(summary.error) << summary.error->message;
    EXPECT_TRUE(summary.complete);
    EXPECT_EQ(summary.text, spec.text);
    ASSERT_EQ(summary.tool_calls.size(), 2u);
    EXPECT_EQ(summary.tool_calls[0].id, "call_mock_0002_1");
    EXPECT_EQ(summary.tool_calls[0].input, spec.tool_calls[0].input);
    EXPECT_EQ(summary.tool_calls[1].id, "toolu_given");
    EXPECT_EQ(summary.tool_calls[1].name, "list_dir");
    EXPECT_EQ(summary.stop_reason, StopReason::tool_use);
    EXPECT_EQ(summary.stop_reason_raw, "tool_calls");
    ASSERT_TRUE(summary.usage);
    EXPECT_EQ(summary.usage->input_tokens, 412u);
    EXPECT_EQ(summary.usage->output_tokens, 96u);
    EXPECT_EQ(summary.usage->cache_read_tokens, 6890u);  // cache writes have no OpenAI spelling
  }
  EXPECT_TRUE(body.ends_with("data: [DONE]\n\n"));
  EXPECT_NE(body.find(R"("choices":[],"usage":{"prompt_tokens":7302)"), std::string::npos);
}

TEST(MockScript, GeneratedOpenAiTextOnly) {
  GenerateSpec spec;
  spec.text = "Hello";
  spec.thinking = "think";
  const StreamSummary summary = decode(WireProtocol::openai_chat, join(generate_openai_stream(spec, "m", 1)));
  ASSERT_FALSE(summary.error) << summary.error->message;
  EXPECT_EQ(summary.text, "Hello");
  EXPECT_EQ(summary.thinking, "think");
  EXPECT_EQ(summary.stop_reason, StopReason::end_turn);
}

TEST(MockScript, PrepareBodyChoosesProviderModelAndChunks) {
  auto script = parse_script(parse(R"([{"response":{"generate":{"text":"Hi there"}}},
    {"response":{"sse_file":"x","chunk_size":4}}])"),
                             ".");
  ASSERT_FALSE(script);  // the file does not exist
  Response response;
  response.kind = Response::BodyKind::generate;
  response.generate = GenerateSpec{};
  response.generate->text = "Hi there";
  ReceivedRequest openai{"POST", "/v1/chat/completions", R"({"model":"qwen"})", parse(R"({"model":"qwen"})")};
  PreparedBody body = prepare_body(response, openai, 1);
  EXPECT_TRUE(body.stream);
  EXPECT_EQ(body.content_type, "text/event-stream; charset=utf-8");
  EXPECT_EQ(decode(WireProtocol::openai_chat, join(body.pieces)).text, "Hi there");
  EXPECT_NE(join(body.pieces).find(R"("model":"qwen")"), std::string::npos);

  const ReceivedRequest anthropic{"POST", "/v1/messages", "", std::nullopt};
  response.chunk_size = 5;
  body = prepare_body(response, anthropic, 1);
  EXPECT_EQ(decode(WireProtocol::anthropic_messages, join(body.pieces)).text, "Hi there");
  EXPECT_NE(join(body.pieces).find(R"("model":"mock-model")"), std::string::npos);
  for (std::size_t i = 0; i + 1 < body.pieces.size(); ++i) EXPECT_EQ(body.pieces[i].size(), 5u);

  response.chunk_size.reset();
  response.random_chunks = RandomChunks{3, 4};
  const PreparedBody random = prepare_body(response, anthropic, 1);
  EXPECT_EQ(join(random.pieces), join(body.pieces));
  for (const auto& piece : random.pieces) EXPECT_LE(piece.size(), 4u);
}

}  // namespace
}  // namespace agentd::mock_model
