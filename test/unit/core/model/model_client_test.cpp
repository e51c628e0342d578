// ModelClient: the provider request bodies (against our fixtures in test/fixtures/requests), and
// whole streamed calls against the in-process mock model server over loopback: text and tool turns, the
// retry loop (429 with retry-after, 529, 500, a drop before headers), failures that must not be retried,
// stalls, and cancellation. Then connection reuse across calls, against a scripted server that counts
// connections. Every wait is bounded; nothing sleeps.
#include "core/model/model_client.h"

#include <unistd.h>

#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <gtest/gtest.h>

#include "core/model/price_table.h"
#include "core/support/log.h"
#include "core/support/trace.h"
#include "test/mock_model/mock_model_server.h"
#include "test/mock_model/mock_script.h"
#include "test/unit/core/net/raw_http_server.h"

namespace agentd::core::model {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using support::Json;
using Clock = std::chrono::steady_clock;

constexpr const char* kKeyVar = "AGENTD_TEST_MODEL_KEY";
constexpr const char* kKey = "sk-test-0123456789-secret";

Json parse(std::string_view text) {
  auto json = support::parse_json(text);
  EXPECT_TRUE(json) << text;
  return json ? *json : Json();
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// ---- the requests that test/fixtures/requests/*_tool_turn.json hold as provider bodies ----

ModelRequest anthropic_tool_turn() {
  ModelRequest request;
  request.system = "You are agentd, working in a Python service.";
  request.max_tokens = 4096;
  request.tools = {
      {"shell", "Run a command in the project directory.",
       parse(R"({"type":"object","properties":{"command":{"type":"string"},"timeout_s":{"type":"integer"}},
                 "required":["command"]})")},
      {"grep", "Search file contents.",
       parse(R"({"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},
                 "required":["pattern"]})")},
  };
  request.messages.push_back({Role::user, {TextBlock{"Why does test_parse_date fail?"}}});
  request.messages.push_back(
      {Role::assistant,
       {TextBlock{"Running the failing test first."},
        ToolCallBlock{"toolu_own_01", "shell",
                      parse(R"({"command":"pytest -q tests/test_dates.py -k parse_date","timeout_s":120})"), ""}}});
  // A failed tool run goes back marked as an error.
  request.messages.push_back(
      {Role::tool,
       {ToolResultBlock{"toolu_own_01",
                        "FAILED tests/test_dates.py::test_parse_date - ValueError: month must be in 1..12 (got 13)",
                        true}}});
  return request;
}

ModelRequest openai_tool_turn() {
  ModelRequest request;
  request.system = "You are agentd, working in a Python service.";
  request.max_tokens = 2048;
  request.tools = {
      {"list_dir", "List a directory.",
       parse(R"({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]})")},
      {"read_file", "Read a file from a line on.",
       parse(R"({"type":"object","properties":{"path":{"type":"string"},"start_line":{"type":"integer"}},
                 "required":["path"]})")},
  };
  request.messages.push_back({Role::user, {TextBlock{"Which modules use the clock helper?"}}});
  // Two parallel calls whose arguments stay the exact text the model streamed.
  request.messages.push_back(
      {Role::assistant,
       {ToolCallBlock{"call_own_a", "list_dir", Json(), R"({"path":"app"})"},
        ToolCallBlock{"call_own_b", "read_file", Json(), R"({"path":"app/clock.py","start_line":1})"}}});
  request.messages.push_back(
      {Role::tool,
       {ToolResultBlock{"call_own_a", "clock.py\nmain.py\nutil/", false},
        ToolResultBlock{"call_own_b", "import time\n\n\ndef now() -> float:\n    return time.time()\n", false}}});
  return request;
}

TEST(ModelRequestBody, AnthropicMatchesOurFixture) {
  const auto config = default_model_config(Provider::anthropic, "claude-sonnet-4-5-20250929");
  const Json expected =
      parse(read_text(fs::path(AGENTD_SOURCE_DIR) / "test/fixtures/requests/anthropic_tool_turn.json"));
  EXPECT_EQ(anthropic_request_body(config, anthropic_tool_turn()), expected)
      << anthropic_request_body(config, anthropic_tool_turn()).dump();
}

TEST(ModelRequestBody, OpenAiMatchesOurFixture) {
  const auto config = default_model_config(Provider::openai, "gpt-4.1-2025-04-14");
  const Json expected =
      parse(read_text(fs::path(AGENTD_SOURCE_DIR) / "test/fixtures/requests/openai_chat_tool_turn.json"));
  EXPECT_EQ(openai_chat_request_body(config, openai_tool_turn()), expected)
      << openai_chat_request_body(config, openai_tool_turn()).dump();
}

TEST(ModelRequestBody, ThinkingGoesBackVerbatimAndTemperatureIsOptional) {
  const auto config = default_model_config(Provider::anthropic, "claude-sonnet-4-5");
  ModelRequest request;
  request.temperature = 0.5;
  request.messages.push_back({Role::user, {TextBlock{"hi"}}});
  request.messages.push_back(
      {Role::assistant,
       {ThinkingBlock{"let me think", "sig==", ""}, ThinkingBlock{"", "", "opaque"}, TextBlock{"ok"}}});
  request.messages.push_back({Role::user, {TextBlock{"again"}}});
  const Json body = anthropic_request_body(config, request);
  EXPECT_EQ(body["temperature"], Json(0.5));
  EXPECT_FALSE(body.contains("system"));
  EXPECT_FALSE(body.contains("tools"));
  EXPECT_EQ(body["max_tokens"], Json(64'000));
  EXPECT_EQ(body["messages"], parse(R"([
    {"role":"user","content":"hi"},
    {"role":"assistant","content":[{"type":"thinking","thinking":"let me think","signature":"sig=="},
                                   {"type":"redacted_thinking","data":"opaque"},{"type":"text","text":"ok"}]},
    {"role":"user","content":[{"type":"text","text":"again","cache_control":{"type":"ephemeral"}}]}])"));
  // OpenAI drops thinking and has no temperature unless asked.
  request.temperature.reset();
  const Json openai = openai_chat_request_body(default_model_config(Provider::openai, "gpt-4.1"), request);
  EXPECT_FALSE(openai.contains("temperature"));
  EXPECT_FALSE(openai.contains("tools"));
  EXPECT_EQ(openai["messages"], parse(R"([{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},
                                          {"role":"user","content":"again"}])"));
}

// An image goes to each provider in its own form, before the words it came with; the history keeps it
// for later calls, and a user message with an image is never flattened to a string.
TEST(ModelRequestBody, ImagesGoAsEachProvidersImageBlock) {
  ModelRequest request;
  ImageBlock image;
  image.media_type = "image/png";
  image.data = "iVBORw0KGgo=";
  image.hash = "ab";
  image.bytes = 8;
  request.messages.push_back({Role::user, {image, TextBlock{"what is wrong here?"}}});
  const Json anthropic =
      anthropic_request_body(default_model_config(Provider::anthropic, "claude-sonnet-4-5"), request);
  EXPECT_EQ(anthropic["messages"], parse(R"([{"role":"user","content":[
    {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
    {"type":"text","text":"what is wrong here?","cache_control":{"type":"ephemeral"}}]}])"));
  const Json openai = openai_chat_request_body(default_model_config(Provider::openai, "gpt-4.1"), request);
  EXPECT_EQ(openai["messages"], parse(R"([{"role":"user","content":[
    {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
    {"type":"text","text":"what is wrong here?"}]}])"));
}

// ---- streaming against the mock server ----

template <class T>
asio::awaitable<void> store_into(asio::awaitable<T> task, std::optional<T>* out) {
  out->emplace(co_await std::move(task));
}

struct CallRun {
  std::vector<ModelEvent> events;
  std::optional<StreamResult> result;
  std::chrono::milliseconds elapsed{0};
  int terminal_count() const {
    int n = 0;
    for (const auto& event : events) n += is_terminal(event) ? 1 : 0;
    return n;
  }
  template <class T>
  std::vector<T> all() const {
    std::vector<T> out;
    for (const auto& event : events) {
      if (const auto* e = std::get_if<T>(&event)) out.push_back(*e);
    }
    return out;
  }
  std::string text() const {
    std::string out;
    for (const auto& delta : all<TextDelta>()) out += delta.text;
    return out;
  }
};

class ModelClientStreamTest : public ::testing::Test {
 protected:
  void start(std::string_view script_json) {
    auto script = mock_model::parse_script(parse(script_json), fs::current_path());
    ASSERT_TRUE(script) << script.error().message();
    auto server = mock_model::MockModelServer::start(std::move(script).value());
    ASSERT_TRUE(server) << server.error().message();
    server_ = std::move(server).value();
    start_http();
  }

  void start_http() {
    net::HttpClientOptions options;
    options.use_system_ca = false;
    options.timeouts.connect = 5s;
    options.timeouts.first_byte = 5s;
    options.timeouts.idle = idle_timeout_;
    auto http = net::HttpClient::create(io_.get_executor(), std::move(options));
    ASSERT_TRUE(http) << http.error().message();
    http_ = std::move(http).value();
  }

  ModelConfig config(Provider provider, std::string model = {}) {
    return config_at(server_->url(), provider, std::move(model));
  }

  static ModelConfig config_at(const std::string& origin, Provider provider, std::string model = {}) {
    if (model.empty()) model = provider == Provider::anthropic ? "claude-sonnet-4-5" : "gpt-4.1";
    auto config = default_model_config(provider, std::move(model));
    config.base_url = origin + (provider == Provider::openai ? "/v1" : "");
    config.api_key_env = kKeyVar;
    return config;
  }

  // Runs the loop until `done` holds, for at most `limit`: how tests wait for background work.
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit = 5s) {
    const auto deadline = Clock::now() + limit;
    while (!done() && Clock::now() < deadline) {
      if (io_.run_one_until(deadline) == 0 && io_.stopped()) io_.restart();
    }
    return done();
  }

  ModelClientOptions options() {
    ModelClientOptions options;
    options.env = [](const char* name) -> const char* { return std::string_view(name) == kKeyVar ? kKey : nullptr; };
    options.retry.base_delay = 20ms;
    options.retry.max_delay = 100ms;
    options.jitter_seed = 7;
    return options;
  }

  CallRun run(ModelClient& client, ModelRequest request, support::CancelToken cancel = {},
              support::Span* span = nullptr, std::function<void(const ModelEvent&)> also = nullptr) {
    CallRun out;
    bool finished = false;
    bool thrown = false;
    const auto started = Clock::now();
    asio::co_spawn(io_,
                   store_into(client.stream(
                                  std::move(request),
                                  [&out, &also](const ModelEvent& event) {
                                    out.events.push_back(event);
                                    if (also) also(event);
                                  },
                                  std::move(cancel), span),
                              &out.result),
                   [&finished, &thrown](const std::exception_ptr& error) {
                     finished = true;
                     thrown = error != nullptr;
                   });
    const auto deadline = started + 15s;
    while (!finished && Clock::now() < deadline) {
      if (io_.run_one_until(deadline) == 0 && io_.stopped()) io_.restart();
    }
    out.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    EXPECT_FALSE(thrown) << "stream() threw";
    EXPECT_TRUE(out.result) << "the call did not finish in time";
    EXPECT_EQ(out.terminal_count(), 1);
    if (!out.events.empty()) {
      EXPECT_TRUE(is_terminal(out.events.back()));
    }
    return out;
  }

  static ModelRequest hello() {
    ModelRequest request;
    request.system = "Be brief.";
    request.messages.push_back({Role::user, {TextBlock{"Say hello."}}});
    return request;
  }

  static ModelRequest with_tools() {
    ModelRequest request = hello();
    request.tools.push_back(
        {"read_file", "Read a file.",
         parse(R"({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]})")});
    return request;
  }

  std::chrono::milliseconds idle_timeout_ = 5s;
  asio::io_context io_;
  std::unique_ptr<mock_model::MockModelServer> server_;
  std::unique_ptr<net::HttpClient> http_;
};

TEST_F(ModelClientStreamTest, AnthropicTextTurn) {
  start(R"({"exchanges":[{"name":"text","expect":{"path":"/v1/messages"},
            "response":{"generate":{"provider":"anthropic","text":"Hello there, friend.",
                        "usage":{"input_tokens":25,"output_tokens":7,"cache_read_input_tokens":3}}}}]})");
  const auto cfg = config(Provider::anthropic);
  ModelClient client(cfg, *http_, options());
  const CallRun r = run(client, hello());
  ASSERT_TRUE(r.result);
  EXPECT_TRUE(r.result->ok);
  EXPECT_EQ(r.result->attempts, 1);
  EXPECT_EQ(r.text(), "Hello there, friend.");
  EXPECT_GE(r.all<TextDelta>().size(), 2U);
  const auto done = std::get<MessageDone>(r.events.back());
  EXPECT_EQ(done.stop_reason, StopReason::end_turn);
  ASSERT_TRUE(done.usage);
  EXPECT_EQ(done.usage->input_tokens, 25U);
  EXPECT_EQ(done.usage->output_tokens, 7U);
  EXPECT_EQ(done.usage->cache_read_tokens, 3U);

  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0]["path"], Json("/v1/messages"));
  EXPECT_EQ(requests[0]["body"], anthropic_request_body(cfg, hello()));
  EXPECT_EQ(requests[0]["body"]["stream"], Json(true));
  EXPECT_EQ(requests[0]["headers"]["x-api-key"], Json("[redacted]"));
  EXPECT_EQ(requests[0]["headers"]["anthropic-version"], Json("2023-06-01"));
  EXPECT_EQ(requests[0].dump().find(kKey), std::string::npos);
}

TEST_F(ModelClientStreamTest, AnthropicToolCallTurn) {
  start(R"({"exchanges":[{"name":"tool","expect":{"body_matches":{"/tools/0/name":"read_file"}},
            "response":{"generate":{"provider":"anthropic","text":"Let me look.",
                        "tool_calls":[{"id":"toolu_1","name":"read_file","input":{"path":"a.txt"}}]},
                        "chunk_size":7}}]})");
  ModelClient client(config(Provider::anthropic), *http_, options());
  const CallRun r = run(client, with_tools());
  ASSERT_TRUE(r.result);
  EXPECT_TRUE(r.result->ok);
  EXPECT_EQ(r.text(), "Let me look.");
  const auto deltas = r.all<ToolCallDelta>();
  ASSERT_FALSE(deltas.empty());
  EXPECT_EQ(deltas.front().id, "toolu_1");
  const auto calls = r.all<ToolCallDone>();
  ASSERT_EQ(calls.size(), 1U);
  EXPECT_EQ(calls[0].name, "read_file");
  EXPECT_EQ(calls[0].input, parse(R"({"path":"a.txt"})"));
  // Order: text before the tool call, the call's deltas before its done event.
  std::size_t last_text = 0;
  std::size_t first_tool = r.events.size();
  std::size_t done_at = 0;
  for (std::size_t i = 0; i < r.events.size(); ++i) {
    if (std::holds_alternative<TextDelta>(r.events[i])) last_text = i;
    if (std::holds_alternative<ToolCallDelta>(r.events[i]) && first_tool == r.events.size()) first_tool = i;
    if (std::holds_alternative<ToolCallDone>(r.events[i])) done_at = i;
  }
  EXPECT_LT(last_text, first_tool);
  EXPECT_LT(first_tool, done_at);
  EXPECT_EQ(std::get<MessageDone>(r.events.back()).stop_reason, StopReason::tool_use);
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_FALSE(requests[0].contains("expectation_failures")) << requests[0].dump();
  EXPECT_EQ(requests[0]["body"]["tools"].as_array().back()["cache_control"], parse(R"({"type":"ephemeral"})"));
}

TEST_F(ModelClientStreamTest, OpenAiTextTurn) {
  start(R"({"exchanges":[{"name":"text","expect":{"path":"/v1/chat/completions"},
            "response":{"generate":{"provider":"openai","text":"Hi from OpenAI.",
                        "usage":{"input_tokens":11,"output_tokens":5}}}}]})");
  const auto cfg = config(Provider::openai);
  ModelClient client(cfg, *http_, options());
  const CallRun r = run(client, hello());
  ASSERT_TRUE(r.result);
  EXPECT_TRUE(r.result->ok);
  EXPECT_EQ(r.text(), "Hi from OpenAI.");
  const auto done = std::get<MessageDone>(r.events.back());
  ASSERT_TRUE(done.usage);
  EXPECT_EQ(done.usage->input_tokens, 11U);
  EXPECT_EQ(done.usage->output_tokens, 5U);
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0]["path"], Json("/v1/chat/completions"));
  EXPECT_EQ(requests[0]["body"], openai_chat_request_body(cfg, hello()));
  EXPECT_EQ(requests[0]["body"]["stream_options"], parse(R"({"include_usage":true})"));
  EXPECT_EQ(requests[0]["headers"]["authorization"], Json("[redacted]"));
}

TEST_F(ModelClientStreamTest, OpenAiToolCallTurn) {
  start(R"({"exchanges":[{"name":"tool",
            "response":{"generate":{"provider":"openai",
                        "tool_calls":[{"id":"call_1","name":"read_file","input":{"path":"b.txt"}}]},
                        "random_chunks":{"seed":3,"max_bytes":9}}}]})");
  ModelClient client(config(Provider::openai), *http_, options());
  const CallRun r = run(client, with_tools());
  ASSERT_TRUE(r.result);
  EXPECT_TRUE(r.result->ok);
  const auto calls = r.all<ToolCallDone>();
  ASSERT_EQ(calls.size(), 1U);
  EXPECT_EQ(calls[0].id, "call_1");
  EXPECT_EQ(calls[0].input, parse(R"({"path":"b.txt"})"));
  EXPECT_EQ(std::get<MessageDone>(r.events.back()).stop_reason, StopReason::tool_use);
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0]["body"]["tools"].as_array().at(0)["function"]["name"], Json("read_file"));
  EXPECT_EQ(requests[0]["body"]["parallel_tool_calls"], Json(true));
}

TEST_F(ModelClientStreamTest, RateLimitedHonoursRetryAfterAndLogsWithoutTheKey) {
  start(R"({"exchanges":[
    {"name":"429","response":{"status":429,"headers":{"retry-after-ms":"250"},
      "body":{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}}},
    {"name":"ok","response":{"generate":{"provider":"anthropic","text":"Done."}}}]})");
  const fs::path log_path = fs::temp_directory_path() / ("agentd_model_client_log_" + std::to_string(::getpid()));
  ASSERT_TRUE(support::log::set_file(log_path.string()));
  support::log::set_level(support::log::Level::debug);
  ModelClient client(config(Provider::anthropic), *http_, options());
  const CallRun r = run(client, hello());
  ASSERT_TRUE(r.result);
  EXPECT_TRUE(r.result->ok);
  EXPECT_EQ(r.result->attempts, 2);
  EXPECT_EQ(r.text(), "Done.");
  // Our own backoff is 20 ms: only honouring retry-after-ms makes the call take this long.
  EXPECT_GE(r.elapsed, 250ms);
  EXPECT_EQ(server_->requests().size(), 2U);
  const std::string log = read_text(log_path);
  fs::remove(log_path);
  std::ignore = support::log::set_file("/dev/stderr");  // later tests in this process log as usual
  EXPECT_NE(log.find("retrying in 250 ms"), std::string::npos) << log;
  EXPECT_EQ(log.find(kKey), std::string::npos);
}

TEST_F(ModelClientStreamTest, OverloadedThenSuccessIsRetried) {
  start(R"({"exchanges":[
    {"name":"529","response":{"status":529,"body":{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}}},
    {"name":"ok","response":{"generate":{"provider":"anthropic","text":"Fine now."}}}]})");
  ModelClient client(config(Provider::anthropic), *http_, options());
  const CallRun r = run(client, hello());
  ASSERT_TRUE(r.result);
  EXPECT_TRUE(r.result->ok);
  EXPECT_EQ(r.result->attempts, 2);
  EXPECT_EQ(r.text(), "Fine now.");
  EXPECT_TRUE(r.all<ModelError>().empty());
}

TEST_F(ModelClientStreamTest, ServerErrorThenSuccessIsRetriedWithSpans) {
  start(R"({"exchanges":[
    {"name":"500","response":{"status":500,"body":{"error":{"message":"boom","type":"server_error"}}}},
    {"name":"ok","response":{"generate":{"provider":"openai","text":"Recovered."}}}]})");
  support::MemorySpanSink sink;
  support::Tracer tracer(&sink);
  ModelClient client(config(Provider::openai), *http_, options());
  {
    support::Span turn = tracer.start("turn");
    const CallRun r = run(client, hello(), {}, &turn);
    ASSERT_TRUE(r.result);
    EXPECT_TRUE(r.result->ok);
    EXPECT_EQ(r.result->attempts, 2);
    EXPECT_EQ(r.text(), "Recovered.");
  }
  const auto spans = sink.spans();
  const support::SpanRecord* call = nullptr;
  int attempts = 0;
  for (const auto& span : spans) {
    if (span.name == "model.call") call = &span;
  }
  ASSERT_NE(call, nullptr);
  for (const auto& span : spans) {
    if (span.name == "model.attempt" && span.parent_id == call->id) ++attempts;
  }
  EXPECT_EQ(attempts, 2);
  Json attributes(call->attributes);
  EXPECT_EQ(attributes["retries"], Json(1));
  EXPECT_EQ(attributes["attempts"], Json(2));
}

TEST_F(ModelClientStreamTest, DisconnectBeforeHeadersIsRetried) {
  start(R"({"exchanges":[
    {"name":"drop","response":{"disconnect_before_headers":true}},
    {"name":"ok","response":{"generate":{"provider":"anthropic","text":"Second try."}}}]})");
  ModelClient client(config(Provider::anthropic), *http_, options());
  const CallRun r = run(client, hello());
  ASSERT_TRUE(r.result);
  EXPECT_TRUE(r.result->ok);
  EXPECT_EQ(r.result->attempts, 2);
  EXPECT_EQ(r.text(), "Second try.");
  EXPECT_EQ(server_->requests().size(), 2U);
}

constexpr const char* kMessageStart =
    R"({"event":"message_start","data":{"type":"message_start","message":{"id":"msg_1","type":"message",
        "role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,
        "usage":{"input_tokens":9,"output_tokens":1}}}})";
constexpr const char* kOverloadedEvent =
    R"({"event":"error","data":{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}})";

TEST_F(ModelClientStreamTest, InStreamErrorBeforeOutputIsRetriedAndHiddenFromTheCaller) {
  start(std::string(R"({"exchanges":[{"name":"early error","response":{"events":[)") + kMessageStart +
        R"(,{"event":"ping","data":{"type":"ping"}},)" + kOverloadedEvent + R"(]}},
        {"name":"ok","response":{"generate":{"provider":"anthropic","text":"After the error."}}}]})");
  ModelClient client(config(Provider::anthropic), *http_, options());
  const CallRun r = run(client, hello());
  ASSERT_TRUE(r.result);
  EXPECT_TRUE(r.result->ok);
  EXPECT_EQ(r.result->attempts, 2);
  EXPECT_EQ(r.text(), "After the error.");
  EXPECT_TRUE(r.all<ModelError>().empty());
}

TEST_F(ModelClientStreamTest, InStreamErrorAfterOutputIsNotRetried) {
  start(std::string(R"({"exchanges":[{"name":"late error","response":{"events":[)") + kMessageStart +
        R"(,{"event":"content_block_start","data":{"type":"content_block_start","index":0,
              "content_block":{"type":"text","text":""}}},
            {"event":"content_block_delta","data":{"type":"content_block_delta","index":0,
              "delta":{"type":"text_delta","text":"Let me look"}}},)" +
        kOverloadedEvent + R"(]}},
        {"name":"unused","response":{"generate":{"provider":"anthropic","text":"must not be used"}}}]})");
  ModelClient client(config(Provider::anthropic), *http_, options());
  const CallRun r = run(client, hello());
  ASSERT_TRUE(r.result);
  EXPECT_FALSE(r.result->ok);
  EXPECT_EQ(r.result->attempts, 1);
  EXPECT_EQ(r.text(), "Let me look");
  ASSERT_TRUE(r.result->error);
  EXPECT_EQ(r.result->error->kind, ErrorKind::overloaded);
  EXPECT_EQ(server_->requests().size(), 1U);
}

// A long text in small pieces, so a cut or a stall lands after some text reached the caller.
constexpr const char* kLongStream = R"("generate":{"provider":"anthropic","text_piece_bytes":10,
  "text":"0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij"})";

TEST_F(ModelClientStreamTest, DisconnectMidStreamIsTruncatedAndNotRetried) {
  start(std::string(R"({"exchanges":[{"name":"cut","response":{)") + kLongStream +
        R"(,"disconnect_after_bytes":2500}},
        {"name":"unused","response":{"generate":{"provider":"anthropic","text":"must not be used"}}}]})");
  ModelClient client(config(Provider::anthropic), *http_, options());
  const CallRun r = run(client, hello());
  ASSERT_TRUE(r.result);
  EXPECT_FALSE(r.result->ok);
  EXPECT_EQ(r.result->attempts, 1);
  EXPECT_TRUE(r.result->output_delivered);
  EXPECT_FALSE(r.text().empty());
  ASSERT_TRUE(r.result->error);
  EXPECT_EQ(r.result->error->kind, ErrorKind::stream_truncated);
  EXPECT_EQ(std::get<ModelError>(r.events.back()).kind, ErrorKind::stream_truncated);
  EXPECT_EQ(server_->requests().size(), 1U);
}

TEST_F(ModelClientStreamTest, StallEndsWithIdleTimeout) {
  idle_timeout_ = 300ms;
  start(std::string(R"({"exchanges":[{"name":"stall","response":{)") + kLongStream +
        R"(,"stall_after_bytes":2500}}]})");
  ModelClient client(config(Provider::anthropic), *http_, options());
  const CallRun r = run(client, hello());
  ASSERT_TRUE(r.result);
  EXPECT_FALSE(r.result->ok);
  EXPECT_EQ(r.result->attempts, 1);
  EXPECT_FALSE(r.text().empty());
  ASSERT_TRUE(r.result->error);
  EXPECT_EQ(r.result->error->kind, ErrorKind::network);
  EXPECT_EQ(r.result->error->code, "idle_timeout");
  EXPECT_GE(r.elapsed, 300ms);
  EXPECT_LT(r.elapsed, 5s);
}

TEST_F(ModelClientStreamTest, CancelMidStreamReturnsPromptly) {
  start(std::string(R"({"exchanges":[{"name":"slow","response":{)") + kLongStream + R"(,"chunk_delay_ms":100}}]})");
  ModelClient client(config(Provider::anthropic), *http_, options());
  support::CancelSource source;
  std::optional<Clock::time_point> cancelled_at;
  const CallRun r = run(client, hello(), source.token(), nullptr, [&](const ModelEvent& event) {
    if (!cancelled_at && std::holds_alternative<TextDelta>(event)) {
      cancelled_at = Clock::now();
      source.cancel();
    }
  });
  const auto finished_at = Clock::now();
  ASSERT_TRUE(cancelled_at);
  ASSERT_TRUE(r.result);
  EXPECT_FALSE(r.result->ok);
  ASSERT_TRUE(r.result->error);
  EXPECT_EQ(r.result->error->kind, ErrorKind::network);
  EXPECT_EQ(r.result->error->code, "cancelled");
  EXPECT_FALSE(r.result->error->retryable);
  EXPECT_LT(finished_at - *cancelled_at, 200ms);
  EXPECT_EQ(r.result->attempts, 1);
  EXPECT_EQ(http_->idle_connections(), 0U);  // closed at once, neither pooled nor drained
  EXPECT_EQ(http_->draining_connections(), 0U);
}

TEST_F(ModelClientStreamTest, CancelDuringRetryWaitReturnsPromptly) {
  start(R"({"exchanges":[{"name":"429","response":{"status":429,"headers":{"retry-after":"30"},
            "body":{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}}}]})");
  auto opts = options();
  opts.retry.max_retry_after = 60s;
  ModelClient client(config(Provider::anthropic), *http_, opts);
  support::CancelSource source;
  asio::steady_timer trigger(io_, 300ms);
  trigger.async_wait([&source](boost::system::error_code) { source.cancel(); });
  const CallRun r = run(client, hello(), source.token());
  ASSERT_TRUE(r.result);
  ASSERT_TRUE(r.result->error);
  EXPECT_EQ(r.result->error->code, "cancelled");
  EXPECT_LT(r.elapsed, 2s);
}

TEST_F(ModelClientStreamTest, InsufficientQuotaIsNotRetried) {
  start(R"({"exchanges":[
    {"name":"quota","response":{"status":429,"headers":{"retry-after":"0"},
      "body":{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","code":"insufficient_quota"}}}},
    {"name":"unused","response":{"generate":{"provider":"openai","text":"must not be used"}}}]})");
  ModelClient client(config(Provider::openai), *http_, options());
  const CallRun r = run(client, hello());
  ASSERT_TRUE(r.result);
  EXPECT_FALSE(r.result->ok);
  EXPECT_EQ(r.result->attempts, 1);
  ASSERT_TRUE(r.result->error);
  EXPECT_FALSE(r.result->error->retryable);
  EXPECT_EQ(r.result->error->http_status, 429);
  EXPECT_EQ(server_->requests().size(), 1U);
}

TEST_F(ModelClientStreamTest, MissingKeyIsAnAuthErrorWithoutARequest) {
  start(R"({"exchanges":[{"name":"unused","response":{"generate":{"provider":"anthropic","text":"x"}}}]})");
  auto opts = options();
  opts.env = [](const char*) -> const char* { return nullptr; };
  ModelClient client(config(Provider::anthropic), *http_, opts);
  const CallRun r = run(client, hello());
  ASSERT_TRUE(r.result);
  ASSERT_TRUE(r.result->error);
  EXPECT_EQ(r.result->error->kind, ErrorKind::auth);
  EXPECT_NE(r.result->error->message.find(kKeyVar), std::string::npos);
  EXPECT_TRUE(server_->requests().empty());
}

TEST_F(ModelClientStreamTest, UnpricedModelReportsUnpriced) {
  start(R"({"exchanges":[{"name":"local","response":{"generate":{"provider":"openai","text":"local answer",
            "usage":{"input_tokens":4,"output_tokens":2}}}}]})");
  ModelClient client(config(Provider::openai, "qwen2.5-coder:7b"), *http_, options());
  const CallRun r = run(client, hello());
  ASSERT_TRUE(r.result);
  ASSERT_TRUE(r.result->ok);
  ASSERT_TRUE(r.result->done->usage);
  EXPECT_EQ(r.result->done->usage->output_tokens, 2U);
  EXPECT_FALSE(find_price(client.config().model).has_value());
  EXPECT_TRUE(find_price("gpt-4.1").has_value());
}

// ---- connection reuse: a streamed reply must leave its connection in the pool ----

using net::testing::RawHttpServer;
using net::testing::RawScript;
using net::testing::RawStep;

enum class Framing { chunked, content_length };

// A streamed reply as an API server writes it: the head, one write per SSE event, then `tail` (more body
// after the terminal event, which the client must drop) and the end of the body.
std::vector<RawStep> streamed_reply(const std::vector<std::string>& events, Framing framing,
                                    std::string_view extra_headers = "", const std::string& tail = "") {
  std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n";
  head += extra_headers;
  std::size_t length = tail.size();
  for (const auto& event : events) length += event.size();
  head += framing == Framing::chunked ? std::string("Transfer-Encoding: chunked\r\n")
                                      : "Content-Length: " + std::to_string(length) + "\r\n";
  head += "\r\n";
  std::vector<RawStep> steps{RawStep::write(head)};
  const auto body = [framing](const std::string& bytes) {
    return framing == Framing::chunked ? net::testing::chunk(bytes) : bytes;
  };
  for (const auto& event : events) steps.push_back(RawStep::write(body(event)));
  if (!tail.empty()) steps.push_back(RawStep::write(body(tail)));
  if (framing == Framing::chunked) steps.push_back(RawStep::write(net::testing::chunk("")));
  return steps;
}

std::vector<std::string> text_turn(Provider provider, const std::string& text, std::size_t exchange) {
  mock_model::GenerateSpec spec;
  spec.text = text;
  return provider == Provider::anthropic ? mock_model::generate_anthropic_stream(spec, "claude-sonnet-4-5", exchange)
                                         : mock_model::generate_openai_stream(spec, "gpt-4.1", exchange);
}

// read a request, play `reply`; as many times as there are replies.
RawScript serve_each(const std::vector<std::vector<RawStep>>& replies, bool close_after_last = false) {
  RawScript script;
  for (const auto& reply : replies) {
    script.push_back(RawStep::read_request());
    script.insert(script.end(), reply.begin(), reply.end());
  }
  if (close_after_last) script.push_back(RawStep::close());
  return script;
}

struct ReuseCase {
  Provider provider;
  Framing framing;
};

class ModelClientReuseTest : public ModelClientStreamTest, public ::testing::WithParamInterface<ReuseCase> {};

TEST_P(ModelClientReuseTest, TwoStreamedCallsShareOneConnection) {
  const auto [provider, framing] = GetParam();
  RawHttpServer server(io_, {serve_each({streamed_reply(text_turn(provider, "First answer.", 1), framing),
                                         streamed_reply(text_turn(provider, "Second answer.", 2), framing)})});
  start_http();
  ModelClient client(config_at(server.url(""), provider), *http_, options());

  const CallRun first = run(client, hello());
  ASSERT_TRUE(first.result);
  EXPECT_TRUE(first.result->ok);
  EXPECT_EQ(first.text(), "First answer.");
  // The end of the body may still be on its way when the call returns; it is read in the background.
  ASSERT_TRUE(run_until([&] { return http_->idle_connections() == 1; }));

  const CallRun second = run(client, hello());
  ASSERT_TRUE(second.result);
  EXPECT_TRUE(second.result->ok);
  EXPECT_EQ(second.result->attempts, 1);
  EXPECT_EQ(second.text(), "Second answer.");
  EXPECT_EQ(server.accepted(), 1);
  EXPECT_EQ(server.requests().size(), 2U);
}

INSTANTIATE_TEST_SUITE_P(ProvidersAndFramings, ModelClientReuseTest,
                         ::testing::Values(ReuseCase{Provider::anthropic, Framing::chunked},
                                           ReuseCase{Provider::anthropic, Framing::content_length},
                                           ReuseCase{Provider::openai, Framing::chunked},
                                           ReuseCase{Provider::openai, Framing::content_length}),
                         [](const ::testing::TestParamInfo<ReuseCase>& info) {
                           return std::string(info.param.provider == Provider::anthropic ? "Anthropic" : "OpenAi") +
                                  (info.param.framing == Framing::chunked ? "Chunked" : "ContentLength");
                         });

TEST_F(ModelClientStreamTest, TailAfterTheTerminalEventWithinTheBoundKeepsTheConnection) {
  // Some servers send keep-alive comments or padding after the last event; a few KiB are read and dropped.
  std::string padding;
  for (int i = 0; i < 100; ++i) padding += ": keep-alive padding, ignore me\n\n";
  RawHttpServer server(
      io_, {serve_each({streamed_reply(text_turn(Provider::anthropic, "One.", 1), Framing::chunked, "", padding),
                        streamed_reply(text_turn(Provider::anthropic, "Two.", 2), Framing::chunked)})});
  start_http();
  ModelClient client(config_at(server.url(""), Provider::anthropic), *http_, options());
  const CallRun first = run(client, hello());
  ASSERT_TRUE(first.result);
  EXPECT_TRUE(first.result->ok);
  ASSERT_TRUE(run_until([&] { return http_->idle_connections() == 1; }));
  const CallRun second = run(client, hello());
  ASSERT_TRUE(second.result);
  EXPECT_TRUE(second.result->ok);
  EXPECT_EQ(second.text(), "Two.");
  EXPECT_EQ(server.accepted(), 1);
}

TEST_F(ModelClientStreamTest, TailAfterTheTerminalEventOverTheBoundClosesTheConnection) {
  const std::string padding(std::size_t{96} * 1024, ' ');  // over the 64 KiB drain limit
  const auto first_reply =
      streamed_reply(text_turn(Provider::openai, "One.", 1), Framing::chunked, "", ": " + padding + "\n\n");
  RawHttpServer server(
      io_, {serve_each({first_reply, streamed_reply(text_turn(Provider::openai, "unused", 2), Framing::chunked)}),
            serve_each({streamed_reply(text_turn(Provider::openai, "Two.", 2), Framing::chunked)})});
  start_http();
  ModelClient client(config_at(server.url(""), Provider::openai), *http_, options());
  const CallRun first = run(client, hello());
  ASSERT_TRUE(first.result);
  EXPECT_TRUE(first.result->ok);
  EXPECT_EQ(first.text(), "One.");
  ASSERT_TRUE(run_until([&] { return http_->draining_connections() == 0 && server.ended() == 1; }));
  EXPECT_EQ(http_->idle_connections(), 0U);
  const CallRun second = run(client, hello());
  ASSERT_TRUE(second.result);
  EXPECT_TRUE(second.result->ok);
  EXPECT_EQ(second.result->attempts, 1);
  EXPECT_EQ(second.text(), "Two.");
  EXPECT_EQ(server.accepted(), 2);
}

TEST_F(ModelClientStreamTest, ServerClosingAfterTheStreamMeansAFreshConnectionAndNoError) {
  RawHttpServer server(
      io_, {serve_each(
                {streamed_reply(text_turn(Provider::anthropic, "One.", 1), Framing::chunked, "Connection: close\r\n")},
                true),
            serve_each({streamed_reply(text_turn(Provider::anthropic, "Two.", 2), Framing::chunked)})});
  start_http();
  ModelClient client(config_at(server.url(""), Provider::anthropic), *http_, options());
  const CallRun first = run(client, hello());
  ASSERT_TRUE(first.result);
  EXPECT_TRUE(first.result->ok);
  EXPECT_EQ(http_->idle_connections(), 0U);
  EXPECT_EQ(http_->draining_connections(), 0U);
  const CallRun second = run(client, hello());
  ASSERT_TRUE(second.result);
  EXPECT_TRUE(second.result->ok);
  EXPECT_EQ(second.result->attempts, 1);
  EXPECT_EQ(second.text(), "Two.");
  EXPECT_EQ(server.accepted(), 2);
}

TEST_F(ModelClientStreamTest, ConnectionClosedWhileIdleIsReplacedWithoutAnError) {
  // No "Connection: close": the connection is pooled, then the server drops it before the next call.
  RawHttpServer server(
      io_, {serve_each({streamed_reply(text_turn(Provider::openai, "One.", 1), Framing::content_length)}, true),
            serve_each({streamed_reply(text_turn(Provider::openai, "Two.", 2), Framing::content_length)})});
  start_http();
  ModelClient client(config_at(server.url(""), Provider::openai), *http_, options());
  const CallRun first = run(client, hello());
  ASSERT_TRUE(first.result);
  EXPECT_TRUE(first.result->ok);
  ASSERT_TRUE(run_until([&] { return http_->draining_connections() == 0 && server.ended() == 1; }));
  const CallRun second = run(client, hello());
  ASSERT_TRUE(second.result);
  EXPECT_TRUE(second.result->ok);
  EXPECT_EQ(second.result->attempts, 1);
  EXPECT_EQ(second.text(), "Two.");
  EXPECT_EQ(server.accepted(), 2);
  EXPECT_EQ(server.requests().size(), 2U);
}

}  // namespace
}  // namespace agentd::core::model
