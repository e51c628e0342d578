// Tests of the mock model server over real loopback sockets: transcripts served byte for byte,
// generated streams that decode, expectation failures, disconnects, stalls, HTTP errors, running out of
// script, request recording with redaction, keep-alive, the control endpoints and the executable.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/model/stream_decoder.h"
#include "core/model/stream_summary.h"
#include "core/support/json.h"
#include "test/mock_model/mock_model_server.h"
#include "test/support/child_process.h"
#include "test/support/temp_dir.h"
#include "test/unit/mock_model/http_test_client.h"

namespace agentd::mock_model {
namespace {

namespace fs = std::filesystem;
using core::model::StreamSummary;
using core::model::WireProtocol;
using support::Json;
using testing::HttpResponse;
using testing::TestConnection;
using namespace std::chrono_literals;

constexpr std::string_view kAnthropicRequest =
    R"({"model":"claude-test","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hi"}]})";
constexpr std::string_view kOpenAiRequest =
    R"({"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]})";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Json parse(std::string_view text) {
  auto json = support::parse_json(text);
  EXPECT_TRUE(json) << (json ? "" : json.error().message()) << " in: " << text;
  return json ? std::move(json).value() : Json();
}

std::unique_ptr<MockModelServer> start_server(std::string_view script_json, const fs::path& base_dir = ".",
                                              ServerOptions options = {}) {
  auto script = parse_script(parse(script_json), base_dir);
  EXPECT_TRUE(script) << (script ? "" : script.error().message());
  if (!script) return nullptr;
  auto server = MockModelServer::start(std::move(script).value(), std::move(options));
  EXPECT_TRUE(server) << (server ? "" : server.error().message());
  return server ? std::move(server).value() : nullptr;
}

StreamSummary decode(WireProtocol protocol, std::string_view body) {
  auto decoder = core::model::make_stream_decoder(protocol);
  std::vector<core::model::ModelEvent> events;
  decoder->feed(body, events);
  decoder->finish(events);
  core::model::StreamAccumulator acc;
  acc.add_all(events);
  return std::move(acc).take();
}

std::vector<fs::path> files_with_extension(const fs::path& dir, std::string_view ext) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ext) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Plays every .sse file of `dir` in one script (random write sizes, 1-byte writes included)
// over one kept-alive connection, and checks each body arrives byte for byte.
void check_sse_files_served_exactly(const fs::path& dir) {
  const auto files = files_with_extension(dir, ".sse");
  ASSERT_FALSE(files.empty()) << dir;
  std::string script = R"({"exchanges":[)";
  for (std::size_t i = 0; i < files.size(); ++i) {
    script += fmt::format(R"({}{{"response":{{"sse_file":{},"random_chunks":{{"seed":{},"max_bytes":{}}}}}}})",
                          i == 0 ? "" : ",", Json(files[i].filename().string()).dump(), i + 1, 1 + i % 40);
  }
  script += "]}";
  auto server = start_server(script, dir);
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  ASSERT_TRUE(connection.connected());
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
    const HttpResponse response = connection.read_response();
    ASSERT_TRUE(response.complete);
    EXPECT_EQ(response.status, 200);
    EXPECT_TRUE(response.chunked);
    EXPECT_EQ(response.header("content-type"), "text/event-stream; charset=utf-8");
    EXPECT_TRUE(response.body == read_file(file)) << "body differs from the file";
  }
  EXPECT_EQ(server->exchanges_used(), files.size());
}

TEST(MockModelServer, ServesEveryOwnFixtureByteForByte) {
  check_sse_files_served_exactly(fs::path(AGENTD_SOURCE_DIR) / "test" / "fixtures" / "sse");
}

TEST(MockModelServer, ServesRawHttpResponsesAsTheyAre) {
  const fs::path dir = fs::path(AGENTD_SOURCE_DIR) / "test" / "fixtures" / "http";
  const auto files = files_with_extension(dir, ".http");
  ASSERT_FALSE(files.empty());
  std::string script = R"({"exchanges":[)";
  for (std::size_t i = 0; i < files.size(); ++i) {
    script += fmt::format(R"({}{{"response":{{"http_file":{},"chunk_size":7}}}})", i == 0 ? "" : ",",
                          Json(files[i].filename().string()).dump());
  }
  script += "]}";
  auto server = start_server(script, dir);
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    const std::string raw = read_file(file);
    ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
    const HttpResponse response = connection.read_response();
    ASSERT_TRUE(response.complete);
    EXPECT_EQ(std::to_string(response.status), raw.substr(9, 3));
    EXPECT_EQ(response.body, raw.substr(raw.find("\r\n\r\n") + 4));
  }
  const HttpResponse response = [&] {
    TestConnection again(server->port());
    again.send_request("POST", "/v1/messages", kAnthropicRequest);
    return again.read_response();
  }();
  EXPECT_EQ(response.status, 500);  // the script ran out
}

TEST(MockModelServer, GeneratedStreamsDecodeForBothProviders) {
  auto server = start_server(R"({"exchanges":[
    {"response":{"generate":{"text":"Hello, wörld","tool_calls":[{"name":"read_file","input":{"path":"a.txt"}}],
                             "usage":{"input_tokens":20,"output_tokens":7,"cache_read_input_tokens":3}}}},
    {"response":{"generate":{"text":"Hi from OpenAI","usage":{"input_tokens":11,"output_tokens":4}}}}]})");
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  HttpResponse response = connection.read_response();
  ASSERT_TRUE(response.complete);
  EXPECT_EQ(response.header("x-mock-exchange"), "1");
  StreamSummary summary = decode(WireProtocol::anthropic_messages, response.body);
  ASSERT_FALSE(summary.error) << summary.error->message;
  EXPECT_EQ(summary.text, "Hello, wörld");
  ASSERT_EQ(summary.tool_calls.size(), 1u);
  EXPECT_EQ(summary.tool_calls[0].name, "read_file");
  EXPECT_EQ(summary.tool_calls[0].input, parse(R"({"path":"a.txt"})"));
  ASSERT_TRUE(summary.usage);
  EXPECT_EQ(summary.usage->input_tokens, 20u);
  EXPECT_EQ(summary.usage->output_tokens, 7u);
  EXPECT_EQ(summary.usage->cache_read_tokens, 3u);
  EXPECT_NE(response.body.find(R"("model":"claude-test")"), std::string::npos);  // echoes the request's model

  // No provider named: the path says OpenAI.
  ASSERT_TRUE(connection.send_request("POST", "/v1/chat/completions", kOpenAiRequest));
  response = connection.read_response();
  ASSERT_TRUE(response.complete);
  summary = decode(WireProtocol::openai_chat, response.body);
  ASSERT_FALSE(summary.error) << summary.error->message;
  EXPECT_TRUE(summary.complete);
  EXPECT_EQ(summary.text, "Hi from OpenAI");
  ASSERT_TRUE(summary.usage);
  EXPECT_EQ(summary.usage->input_tokens, 11u);
  EXPECT_EQ(summary.usage->output_tokens, 4u);
}

TEST(MockModelServer, ExpectationMismatchIsA400ThatExplains) {
  auto server = start_server(R"({"exchanges":[
    {"name":"first turn","expect":{"path":"/v1/messages","model":"claude-other","body_matches":{"/stream":true}},
     "response":{"generate":{"text":"never sent"}}},
    {"expect":{"body_contains":"\"hi\""},"response":{"generate":{"text":"second"}}}]})");
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  HttpResponse response = connection.read_response();
  ASSERT_TRUE(response.complete);
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.header("x-mock-error"), "expectation_failed");
  const Json body = parse(response.body);
  EXPECT_EQ(body["error"]["type"], Json("mock_expectation_failed"));
  EXPECT_EQ(body["error"]["message"],
            Json("request 1 did not match first turn of the mock script:\n  model: expected \"claude-other\", got "
                 "\"claude-test\""));
  EXPECT_EQ(body["mock"], parse(R"({"exchange":1,"name":"first turn",
    "expected":{"path":"/v1/messages","model":"claude-other","body_matches":{"/stream":true}},
    "received":{"method":"POST","path":"/v1/messages","model":"claude-test"},
    "failures":["model: expected \"claude-other\", got \"claude-test\""]})"));
  const auto recorded = server->requests();
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_EQ(recorded[0]["expectation_failures"], parse(R"(["model: expected \"claude-other\", got \"claude-test\""])"));

  // The mismatch used its exchange; the next one matches and streams on the same connection.
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  response = connection.read_response();
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(decode(WireProtocol::anthropic_messages, response.body).text, "second");
}

TEST(MockModelServer, DisconnectsMidStreamAfterExactlyNBytes) {
  const fs::path dir = fs::path(AGENTD_SOURCE_DIR) / "test" / "fixtures" / "sse";
  auto server = start_server(
      R"([{"response":{"sse_file":"anthropic_text.sse","chunk_size":64,"disconnect_after_bytes":100}},
          {"response":{"sse_file":"anthropic_text.sse","disconnect_after_bytes":0}}])",
      dir);
  ASSERT_TRUE(server);
  const std::string file = read_file(dir / "anthropic_text.sse");
  TestConnection connection(server->port());
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  HttpResponse response = connection.read_response();
  EXPECT_EQ(response.status, 200);
  EXPECT_FALSE(response.complete);
  EXPECT_TRUE(response.closed);
  EXPECT_EQ(response.body, file.substr(0, 100));
  const StreamSummary summary = decode(WireProtocol::anthropic_messages, response.body);
  ASSERT_TRUE(summary.error);
  EXPECT_EQ(summary.error->kind, core::model::ErrorKind::stream_truncated);

  TestConnection second(server->port());
  ASSERT_TRUE(second.send_request("POST", "/v1/messages", kAnthropicRequest));
  response = second.read_response();
  EXPECT_EQ(response.status, 200);  // headers, then nothing
  EXPECT_TRUE(response.closed);
  EXPECT_EQ(response.body, "");
}

TEST(MockModelServer, DisconnectsBeforeHeaders) {
  auto server = start_server(R"([{"response":{"generate":{"text":"x"},"disconnect_before_headers":true}},
                                 {"response":{"generate":{"text":"after"}}}])");
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  HttpResponse response = connection.read_response();
  EXPECT_EQ(response.status, 0);
  EXPECT_TRUE(response.closed);
  EXPECT_EQ(server->requests().size(), 1u);  // recorded even though nothing was answered

  TestConnection retry(server->port());
  ASSERT_TRUE(retry.send_request("POST", "/v1/messages", kAnthropicRequest));
  response = retry.read_response();
  EXPECT_EQ(decode(WireProtocol::anthropic_messages, response.body).text, "after");
}

TEST(MockModelServer, StallKeepsTheSocketOpenUntilTheClientGivesUp) {
  auto server = start_server(R"([{"response":{"generate":{"text":"stalled"},"stall_after_bytes":50}},
                                 {"response":{"generate":{"text":"fine"}}}])");
  ASSERT_TRUE(server);
  auto connection = std::make_unique<TestConnection>(server->port());
  ASSERT_TRUE(connection->send_request("POST", "/v1/messages", kAnthropicRequest));
  const HttpResponse stalled = connection->read_response(1s);
  EXPECT_EQ(stalled.status, 200);
  EXPECT_TRUE(stalled.timed_out);
  EXPECT_FALSE(stalled.closed);
  EXPECT_EQ(stalled.body.size(), 50u);
  connection.reset();  // the client gives up

  // The stalled connection holds nothing else up.
  TestConnection next(server->port());
  ASSERT_TRUE(next.send_request("POST", "/v1/messages", kAnthropicRequest));
  EXPECT_EQ(decode(WireProtocol::anthropic_messages, next.read_response().body).text, "fine");
}

TEST(MockModelServer, StallIsReleasedWhenTheServerStops) {
  auto server = start_server(R"([{"response":{"generate":{"text":"stalled"},"stall_after_bytes":0}}])");
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  ASSERT_TRUE(server->wait_for_requests(1, 5s));
  const auto started = std::chrono::steady_clock::now();
  server->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 4s);  // cancelled, not the forced fallback
  EXPECT_TRUE(connection.wait_closed(5s));
}

TEST(MockModelServer, HttpErrorsCarryTheirHeadersThenTheScriptContinues) {
  auto server = start_server(R"([
    {"response":{"status":429,"headers":{"retry-after":"2","x-should-retry":"true"},
                 "body":{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}}},
    {"response":{"status":529,"body":{"type":"error","error":{"type":"overloaded_error","message":"busy"}}}},
    {"response":{"status":500,"body":"plain failure"}},
    {"response":{"generate":{"text":"ok now"}}}])");
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  HttpResponse response = connection.read_response();
  EXPECT_EQ(response.status, 429);
  EXPECT_EQ(response.header("retry-after"), "2");
  EXPECT_EQ(response.header("x-should-retry"), "true");
  EXPECT_EQ(response.header("content-type"), "application/json");
  EXPECT_FALSE(response.chunked);
  EXPECT_EQ(parse(response.body)["error"]["type"], Json("rate_limit_error"));

  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  response = connection.read_response();
  EXPECT_EQ(response.status, 529);
  EXPECT_EQ(parse(response.body)["error"]["type"], Json("overloaded_error"));

  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  response = connection.read_response();
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(response.body, "plain failure");
  EXPECT_EQ(response.header("content-type"), "text/plain; charset=utf-8");

  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  EXPECT_EQ(decode(WireProtocol::anthropic_messages, connection.read_response().body).text, "ok now");
}

TEST(MockModelServer, RunningOutOfScriptIsA500ThatSaysSo) {
  auto server = start_server(R"([{"response":{"generate":{"text":"only"}}}])");
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  EXPECT_EQ(connection.read_response().status, 200);
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  const HttpResponse response = connection.read_response();
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(response.header("x-mock-error"), "script_exhausted");
  const Json body = parse(response.body);
  EXPECT_EQ(body["error"]["type"], Json("mock_script_exhausted"));
  EXPECT_EQ(body["error"]["message"],
            Json("the mock model script is exhausted: it has 1 exchange and all were used; request 2 (POST "
                 "/v1/messages) has no answer"));
  EXPECT_EQ(server->requests().back()["exchange"], Json());
}

TEST(MockModelServer, LoopingScriptStartsOver) {
  auto server = start_server(R"({"loop":true,"exchanges":[{"response":{"generate":{"text":"a"}}},
                                                          {"response":{"generate":{"text":"b"}}}]})");
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  std::string texts;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
    texts += decode(WireProtocol::anthropic_messages, connection.read_response().body).text;
  }
  EXPECT_EQ(texts, "ababa");
}

TEST(MockModelServer, RecordsRequestsWithCredentialsRedacted) {
  agentd::testing::TempDir temp;
  ServerOptions options;
  options.record_file = temp.file("requests.jsonl");
  auto server = start_server(R"([{"response":{"generate":{"text":"a"}}},{"response":{"body":"b"}}])", ".", options);
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages?beta=true", kAnthropicRequest,
                                      "x-api-key: sk-ant-secret\r\nanthropic-version: 2023-06-01\r\n"));
  connection.read_response();
  ASSERT_TRUE(
      connection.send_request("POST", "/v1/chat/completions", "not json", "Authorization: Bearer sk-secret\r\n"));
  connection.read_response();
  ASSERT_TRUE(server->wait_for_requests(2, 5s));

  const auto recorded = server->requests();
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_EQ(recorded[0]["seq"], Json(1));
  EXPECT_EQ(recorded[0]["exchange"], Json(1));
  EXPECT_EQ(recorded[0]["method"], Json("POST"));
  EXPECT_EQ(recorded[0]["path"], Json("/v1/messages"));
  EXPECT_EQ(recorded[0]["target"], Json("/v1/messages?beta=true"));
  EXPECT_EQ(recorded[0]["headers"]["x-api-key"], Json("[redacted]"));
  EXPECT_EQ(recorded[0]["headers"]["anthropic-version"], Json("2023-06-01"));
  EXPECT_EQ(recorded[0]["body"], parse(kAnthropicRequest));
  EXPECT_EQ(recorded[1]["headers"]["authorization"], Json("[redacted]"));
  EXPECT_EQ(recorded[1]["body"], Json());
  EXPECT_EQ(recorded[1]["body_text"], Json("not json"));

  // The same list over HTTP, and in the --record file; no secret anywhere.
  ASSERT_TRUE(connection.send_request("GET", "/_mock/requests"));
  const HttpResponse listed = connection.read_response();
  EXPECT_EQ(parse(listed.body), Json(Json::Array(recorded.begin(), recorded.end())));
  const std::string jsonl = read_file(options.record_file);
  std::istringstream lines(jsonl);
  std::vector<Json> from_file;
  for (std::string line; std::getline(lines, line);) from_file.push_back(parse(line));
  EXPECT_EQ(from_file, recorded);
  EXPECT_EQ(jsonl.find("secret"), std::string::npos);
  EXPECT_EQ(listed.body.find("secret"), std::string::npos);
}

TEST(MockModelServer, ControlEndpoints) {
  auto server = start_server(R"([{"response":{"generate":{"text":"old"}}}])");
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  ASSERT_TRUE(connection.send_request("GET", "/_mock/health"));
  EXPECT_EQ(parse(connection.read_response().body), parse(R"({"ok":true,"exchanges":1,"used":0,"requests":0})"));

  ASSERT_TRUE(connection.send_request("POST", "/_mock/script", R"({"exchanges":[{"response":{"sse_fil":"x"}}]})"));
  HttpResponse response = connection.read_response();
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(parse(response.body)["error"]["message"].as_string().find("script.exchanges[0].response.sse_fil"),
            std::string::npos);

  ASSERT_TRUE(connection.send_request(
      "POST", "/_mock/script", R"([{"response":{"generate":{"text":"new"}}},{"response":{"generate":{"text":"2"}}}])"));
  EXPECT_EQ(parse(connection.read_response().body), parse(R"({"ok":true,"exchanges":2})"));
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  EXPECT_EQ(decode(WireProtocol::anthropic_messages, connection.read_response().body).text, "new");

  ASSERT_TRUE(connection.send_request("GET", "/_mock/health"));
  EXPECT_EQ(parse(connection.read_response().body), parse(R"({"ok":true,"exchanges":2,"used":1,"requests":1})"));
  ASSERT_TRUE(connection.send_request("DELETE", "/_mock/requests"));
  EXPECT_EQ(parse(connection.read_response().body), parse(R"({"cleared":1})"));
  EXPECT_TRUE(server->requests().empty());
  ASSERT_TRUE(connection.send_request("GET", "/_mock/nope"));
  EXPECT_EQ(connection.read_response().status, 404);
}

TEST(MockModelServer, ChunkDelaysSpaceTheWrites) {
  auto server = start_server(R"([{"response":{"events":[{"data":"1"},{"data":"2"},{"data":"3"}],
                                               "chunk_delay_ms":40,"headers_delay_ms":40}}])");
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(connection.send_request("POST", "/v1/chat/completions", kOpenAiRequest));
  const HttpResponse response = connection.read_response();
  EXPECT_GE(std::chrono::steady_clock::now() - started, 120ms);
  EXPECT_EQ(response.body, "data: 1\n\ndata: 2\n\ndata: 3\n\n");
}

TEST(MockModelServer, ConnectionCloseIsHonoured) {
  auto server = start_server(R"([{"response":{"generate":{"text":"a"}}}])");
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest, {}, /*keep_alive=*/false));
  const HttpResponse response = connection.read_response();
  EXPECT_TRUE(response.complete);
  EXPECT_EQ(response.header("connection"), "close");
  EXPECT_TRUE(connection.wait_closed(5s));
}

TEST(MockModelServer, AnswersExpectContinueBeforeTheBody) {
  auto server = start_server(R"([{"expect":{"body_contains":"hi"},"response":{"generate":{"text":"a"}}}])");
  ASSERT_TRUE(server);
  TestConnection connection(server->port());
  const std::string body(kAnthropicRequest);
  ASSERT_TRUE(connection.send_raw("POST /v1/messages HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: " +
                                  std::to_string(body.size()) + "\r\n\r\n"));
  EXPECT_EQ(connection.read_response(5s).status, 100);
  ASSERT_TRUE(connection.send_raw(body));
  const HttpResponse response = connection.read_response();
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(decode(WireProtocol::anthropic_messages, response.body).text, "a");
}

TEST(MockModelExecutable, PrintsItsPortAndServes) {
  agentd::testing::TempDir temp;
  {
    std::ofstream script(temp.file("script.json"));
    script << R"({"exchanges":[{"expect":{"path":"/v1/chat/completions"},
                   "response":{"generate":{"text":"from the binary"}}}]})";
  }
  agentd::testing::ChildProcess child(
      {AGENTD_MOCK_MODEL_BIN, "--script", temp.file("script.json"), "--record", temp.file("rec.jsonl")});
  const auto line = child.read_line(10s);
  ASSERT_TRUE(line) << child.stderr_text();
  const Json announced = parse(*line);
  ASSERT_TRUE(announced["port"].is_integer()) << *line;
  const auto port = static_cast<std::uint16_t>(announced["port"].as_int64());
  EXPECT_EQ(announced["url"], Json(fmt::format("http://127.0.0.1:{}", port)));

  TestConnection connection(port);
  ASSERT_TRUE(connection.send_request("POST", "/v1/chat/completions", kOpenAiRequest));
  const HttpResponse response = connection.read_response();
  EXPECT_EQ(decode(WireProtocol::openai_chat, response.body).text, "from the binary");

  child.signal(SIGTERM);
  const auto status = child.wait(10s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->exited);
  EXPECT_EQ(status->code, 0);
  EXPECT_NE(read_file(temp.file("rec.jsonl")).find(R"("path":"/v1/chat/completions")"), std::string::npos);
}

TEST(MockModelExecutable, RejectsABadScriptWithItsPath) {
  agentd::testing::TempDir temp;
  {
    std::ofstream script(temp.file("bad.json"));
    script << R"({"exchanges":[{"response":{"stauts":200}}]})";
  }
  agentd::testing::ChildProcess child({AGENTD_MOCK_MODEL_BIN, "--script", temp.file("bad.json")});
  const auto status = child.wait(10s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 1);
  EXPECT_NE(child.stderr_text().find("script.exchanges[0].response.stauts: unknown field"), std::string::npos)
      << child.stderr_text();
}

TEST(MockModelExecutable, ShippedExampleScriptsLoad) {
  const fs::path dir = fs::path(AGENTD_SOURCE_DIR) / "test" / "mock_model" / "scripts";
  const auto files = files_with_extension(dir, ".json");
  ASSERT_GE(files.size(), 2u);
  for (const auto& file : files) {
    auto script = load_script_file(file);
    EXPECT_TRUE(script) << (script ? "" : script.error().message());
  }
}

TEST(MockModelExecutable, ShippedToolCallExamplePlaysThrough) {
  const fs::path dir = fs::path(AGENTD_SOURCE_DIR) / "test" / "mock_model" / "scripts";
  auto script = load_script_file(dir / "anthropic_tool_call.json");
  ASSERT_TRUE(script) << script.error().message();
  auto started = MockModelServer::start(std::move(script).value());
  ASSERT_TRUE(started);
  auto& server = *started;
  TestConnection connection(server->port());
  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  StreamSummary summary = decode(WireProtocol::anthropic_messages, connection.read_response().body);
  ASSERT_EQ(summary.tool_calls.size(), 1u);
  EXPECT_EQ(summary.tool_calls[0].id, "toolu_demo_1");
  EXPECT_EQ(summary.tool_calls[0].input, parse(R"({"path":"README.md"})"));

  ASSERT_TRUE(connection.send_request("POST", "/v1/messages",
                                      R"({"model":"claude-test","stream":true,"messages":[
    {"role":"user","content":"hi"},
    {"role":"assistant","content":[{"type":"tool_use","id":"toolu_demo_1","name":"read_file","input":{}}]},
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_demo_1","content":"# agentd"}]}]})"));
  HttpResponse response = connection.read_response();
  EXPECT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(decode(WireProtocol::anthropic_messages, response.body).text,
            "The README describes the project. Anything else?");

  ASSERT_TRUE(connection.send_request("POST", "/v1/messages", kAnthropicRequest));
  response = connection.read_response();
  EXPECT_TRUE(response.body == read_file(fs::path(AGENTD_SOURCE_DIR) / "test/fixtures/sse/anthropic_text.sse"));
}

}  // namespace
}  // namespace agentd::mock_model
