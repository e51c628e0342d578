// OpenTelemetry export (core/telemetry): W3C traceparent parsing, the OTEL_* configuration, the OTLP/JSON
// a batch becomes (GenAI attributes, no content unless asked), and the exporter's thread against a
// local collector (the mock server answering 200, or not answering at all).
#include "core/telemetry/otlp_exporter.h"

#include <chrono>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/mock_model/mock_model_server.h"
#include "test/support/temp_dir.h"

namespace agentd::core::telemetry {
namespace {

using support::Errc;
using support::Json;

constexpr std::string_view kTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceParent, ParsesTheW3CFormAndRefusesTheRest) {
  auto parent = parse_traceparent(kTraceParent);
  ASSERT_TRUE(parent) << parent.error().message();
  EXPECT_EQ(parent->trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(parent->parent_id, "00f067aa0ba902b7");
  EXPECT_TRUE(parent->sampled);
  EXPECT_EQ(format_traceparent(*parent), kTraceParent);
  EXPECT_FALSE(parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")->sampled);
  // A later version's first four fields are read, as the spec asks.
  EXPECT_TRUE(parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-next"));

  for (const char* bad : {
           "",
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",    // upper case
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",    // zero trace id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",    // zero parent id
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // version ff
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  // version 00 has four fields
           "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
           "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
       }) {
    auto r = parse_traceparent(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), Errc::invalid_argument);
  }
}

TEST(TraceParent, ATurnTraceKeepsTheCallersTraceAndNamesItsSpans) {
  TurnTrace joined(parse_traceparent(kTraceParent).value());
  EXPECT_EQ(joined.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(joined.span_id(0), "00f067aa0ba902b7") << "the root's parent is the caller's span";
  EXPECT_EQ(joined.span_id(1).size(), 16U);
  EXPECT_NE(joined.span_id(1), joined.span_id(2));
  EXPECT_EQ(joined.span_id(2), joined.span_id(2));

  TurnTrace fresh(std::nullopt);
  EXPECT_EQ(fresh.trace_id().size(), 32U);
  EXPECT_NE(fresh.trace_id(), TurnTrace(std::nullopt).trace_id());
  EXPECT_EQ(fresh.span_id(0), "") << "no caller: the root has no parent";
}

std::function<const char*(const char*)> env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(OtlpConfig, ComesFromTheOtelVariables) {
  auto none = otlp_config_from_env(env_of({}));
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none) << "nothing set: no export";

  auto base = otlp_config_from_env(env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"}}));
  ASSERT_TRUE(base && *base);
  EXPECT_EQ((*base)->endpoint, "http://collector:4318/v1/traces");
  EXPECT_FALSE((*base)->capture_content);
  EXPECT_EQ((*base)->service_name, "agentd");
  auto slash = otlp_config_from_env(env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"}}));
  EXPECT_EQ((*slash)->endpoint, "http://collector:4318/v1/traces");

  auto full = otlp_config_from_env(env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"},
                                           {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://b/otlp/traces"},
                                           {"OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20abc, x-team = core"},
                                           {"OTEL_EXPORTER_OTLP_TIMEOUT", "2500"},
                                           {"OTEL_SERVICE_NAME", "agentd-ci"},
                                           {"OTEL_BSP_SCHEDULE_DELAY", "100"},
                                           {"OTEL_BSP_MAX_QUEUE_SIZE", "64"},
                                           {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "128"},
                                           {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"},
                                           {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "TRUE"}}));
  ASSERT_TRUE(full && *full) << (full ? "" : full.error().message());
  const OtlpConfig& c = **full;
  EXPECT_EQ(c.endpoint, "https://b/otlp/traces") << "the traces endpoint is used as it is";
  ASSERT_EQ(c.headers.size(), 2U);
  EXPECT_EQ(c.headers[0].name, "Authorization");
  EXPECT_EQ(c.headers[0].value, "Bearer abc");
  EXPECT_EQ(c.headers[1].name, "x-team");
  EXPECT_EQ(c.headers[1].value, "core");
  EXPECT_EQ(c.timeout.count(), 2500);
  EXPECT_EQ(c.service_name, "agentd-ci");
  EXPECT_EQ(c.schedule_delay.count(), 100);
  EXPECT_EQ(c.max_queue, 64U);
  EXPECT_EQ(c.max_batch, 64U) << "a batch is never larger than the queue";
  EXPECT_TRUE(c.capture_content);

  for (const auto& off : std::vector<std::map<std::string, std::string>>{
           {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"}, {"OTEL_SDK_DISABLED", "true"}},
           {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"}, {"OTEL_TRACES_EXPORTER", "none"}}}) {
    auto r = otlp_config_from_env(env_of(off));
    ASSERT_TRUE(r);
    EXPECT_FALSE(*r);
  }

  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> bad = {
      {{{"OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"}}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
      {{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4317"}, {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}}, "grpc"},
      {{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a"}, {"OTEL_EXPORTER_OTLP_HEADERS", "x=a%0D%0AInjected: 1"}},
       "OTEL_EXPORTER_OTLP_HEADERS"},
      {{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a"}, {"OTEL_EXPORTER_OTLP_HEADERS", "novalue"}},
       "OTEL_EXPORTER_OTLP_HEADERS"},
      {{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a"}, {"OTEL_BSP_MAX_QUEUE_SIZE", "0"}}, "OTEL_BSP_MAX_QUEUE_SIZE"},
      {{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a"}, {"OTEL_EXPORTER_OTLP_TIMEOUT", "10s"}},
       "OTEL_EXPORTER_OTLP_TIMEOUT"},
  };
  for (const auto& [vars, named] : bad) {
    auto r = otlp_config_from_env(env_of(vars));
    ASSERT_FALSE(r) << named;
    EXPECT_EQ(r.error().code(), Errc::invalid_argument);
    EXPECT_NE(r.error().message().find(named), std::string::npos) << r.error().message();
  }
}

TEST(OtlpConfig, TheConfigFileAppliesWhereTheVariablesSayNothing) {
  OtlpSettings file;
  file.endpoint = "https://otel.example/v1/traces";
  file.headers = {{"x-team", "secret-token"}};
  file.capture_content = true;
  file.service_name = "laptop";
  auto from_file = otlp_config_from_env(env_of({}), file);
  ASSERT_TRUE(from_file && *from_file);
  EXPECT_EQ((*from_file)->endpoint, "https://otel.example/v1/traces");
  ASSERT_EQ((*from_file)->headers.size(), 1U);
  EXPECT_TRUE((*from_file)->capture_content);
  EXPECT_EQ((*from_file)->service_name, "laptop");

  // The environment's endpoint wins, and the file's headers (its token) do not follow it there.
  auto env_wins = otlp_config_from_env(env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://local:4318"},
                                               {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "false"}}),
                                       file);
  ASSERT_TRUE(env_wins && *env_wins);
  EXPECT_EQ((*env_wins)->endpoint, "http://local:4318/v1/traces");
  EXPECT_TRUE((*env_wins)->headers.empty());
  EXPECT_FALSE((*env_wins)->capture_content);

  auto disabled = otlp_config_from_env(env_of({{"OTEL_SDK_DISABLED", "true"}}), file);
  ASSERT_TRUE(disabled);
  EXPECT_FALSE(*disabled);
}

support::SpanRecord span(std::uint64_t id, std::uint64_t parent, std::string name,
                         std::vector<std::pair<std::string, Json>> attributes) {
  support::SpanRecord s;
  s.id = id;
  s.parent_id = parent;
  s.name = std::move(name);
  s.start_us = 1'700'000'000'000'000 + static_cast<std::int64_t>(id);
  s.end_us = s.start_us + 1500;
  for (auto& [k, v] : attributes) s.attributes.emplace_back(std::move(k), std::move(v));
  return s;
}

std::vector<ExportSpan> sample_turn() {
  TurnTrace trace(parse_traceparent(kTraceParent).value());
  std::vector<support::SpanRecord> records = {
      span(1, 0, "turn.run", {{"session", Json("s_1")}, {"turn", Json("t_1")}}),
      span(2, 1, "model.call",
           {{"provider", Json("anthropic")},
            {"model", Json("claude-sonnet-4-5")},
            {"input_tokens", Json(std::uint64_t{1200})},
            {"output_tokens", Json(std::uint64_t{80})},
            {"stop_reason", Json("tool_use")}}),
      span(3, 1, "tool.shell",
           {{"tool_call_id", Json("toolu_1")}, {"command", Json("cat secret-plan.txt")}, {"timeout_ms", Json(2000)}}),
      span(4, 1, "context.search", {{"terms", Json("secret-plan")}}),
  };
  records[3].status = support::SpanStatus::error;
  records[3].status_message = "the index is gone";
  std::vector<ExportSpan> out;
  for (auto& r : records) {
    out.push_back(ExportSpan{trace.trace_id(), trace.span_id(r.id), trace.span_id(r.parent_id), std::move(r)});
  }
  return out;
}

// name -> {attribute key -> value JSON}
std::map<std::string, std::map<std::string, Json>> attributes_by_span(const Json& body) {
  std::map<std::string, std::map<std::string, Json>> out;
  for (const Json& s : body["resourceSpans"].as_array()[0]["scopeSpans"].as_array()[0]["spans"].as_array()) {
    auto& attributes = out[s["name"].as_string()];
    for (const Json& a : s["attributes"].as_array()) attributes[a["key"].as_string()] = a["value"];
  }
  return out;
}

TEST(OtlpJson, ModelAndToolSpansCarryTheGenAiConventionsAndNoContent) {
  OtlpConfig config;
  config.endpoint = "http://collector/v1/traces";
  const auto spans = sample_turn();
  const std::string text = otlp_traces_json(config, spans);
  auto body = support::parse_json(text);
  ASSERT_TRUE(body) << text;
  EXPECT_EQ(text.find("secret-plan"), std::string::npos) << "no command or search text without content capture";

  const Json& resource = (*body)["resourceSpans"].as_array()[0]["resource"]["attributes"];
  EXPECT_EQ(resource.as_array()[0]["key"].as_string(), "service.name");
  EXPECT_EQ(resource.as_array()[0]["value"]["stringValue"].as_string(), "agentd");
  const Json& list = (*body)["resourceSpans"].as_array()[0]["scopeSpans"].as_array()[0]["spans"];
  ASSERT_EQ(list.size(), 4U);
  const Json& root = list.as_array()[0];
  EXPECT_EQ(root["traceId"].as_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(root["parentSpanId"].as_string(), "00f067aa0ba902b7") << "the caller's span is the root's parent";
  EXPECT_EQ(list.as_array()[1]["parentSpanId"], root["spanId"]);
  EXPECT_EQ(root["startTimeUnixNano"].as_string(), "1700000000000001000");
  EXPECT_EQ(root["endTimeUnixNano"].as_string(), "1700000000001501000");
  EXPECT_EQ(list.as_array()[1]["kind"].as_int64(), 3) << "a model call is a client span";
  EXPECT_EQ(list.as_array()[3]["status"]["code"].as_int64(), 2);
  EXPECT_EQ(list.as_array()[3]["status"]["message"].as_string(), "the index is gone");
  EXPECT_FALSE(list.as_array()[1]["status"].contains("code")) << "unset, not OK, for a span that went well";

  auto by = attributes_by_span(*body);
  ASSERT_TRUE(by.count("invoke_agent agentd"));
  EXPECT_EQ(by["invoke_agent agentd"]["gen_ai.operation.name"]["stringValue"].as_string(), "invoke_agent");
  EXPECT_EQ(by["invoke_agent agentd"]["gen_ai.conversation.id"]["stringValue"].as_string(), "s_1");
  ASSERT_TRUE(by.count("chat claude-sonnet-4-5"));
  auto& chat = by["chat claude-sonnet-4-5"];
  EXPECT_EQ(chat["gen_ai.operation.name"]["stringValue"].as_string(), "chat");
  EXPECT_EQ(chat["gen_ai.provider.name"]["stringValue"].as_string(), "anthropic");
  EXPECT_EQ(chat["gen_ai.request.model"]["stringValue"].as_string(), "claude-sonnet-4-5");
  EXPECT_EQ(chat["gen_ai.usage.input_tokens"]["intValue"].as_string(), "1200");
  EXPECT_EQ(chat["gen_ai.usage.output_tokens"]["intValue"].as_string(), "80");
  EXPECT_EQ(chat["gen_ai.response.finish_reasons"]["stringValue"].as_string(), R"(["tool_use"])");
  EXPECT_EQ(chat["agentd.span.name"]["stringValue"].as_string(), "model.call");
  ASSERT_TRUE(by.count("execute_tool shell"));
  auto& tool = by["execute_tool shell"];
  EXPECT_EQ(tool["gen_ai.tool.name"]["stringValue"].as_string(), "shell");
  EXPECT_EQ(tool["gen_ai.tool.call.id"]["stringValue"].as_string(), "toolu_1");
  EXPECT_EQ(tool["agentd.timeout_ms"]["intValue"].as_string(), "2000") << "numbers are always exported";
  EXPECT_FALSE(tool.count("agentd.command"));

  config.capture_content = true;
  const std::string with_content = otlp_traces_json(config, spans);
  auto captured = attributes_by_span(*support::parse_json(with_content));
  EXPECT_EQ(captured["execute_tool shell"]["agentd.command"]["stringValue"].as_string(), "cat secret-plan.txt");
}

struct Collector {
  testing::TempDir dir;
  std::unique_ptr<mock_model::MockModelServer> server;

  explicit Collector(const std::string& response, int answers = 8) {
    std::string exchanges;
    for (int i = 0; i < answers; ++i) {
      exchanges += std::string(i > 0 ? "," : "") + R"({"name":"export )" + std::to_string(i) + R"(","response":)" +
                   response + "}";
    }
    auto script = mock_model::parse_script(*support::parse_json(R"({"exchanges":[)" + exchanges + "]}"), dir.path());
    EXPECT_TRUE(script) << (script ? "" : script.error().message());
    auto started = mock_model::MockModelServer::start(std::move(*script));
    EXPECT_TRUE(started);
    server = std::move(*started);
  }
};

template <class Done>
bool wait_for(Done done) {
  for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return done();
}

TEST(OtlpExporter, SendsBatchesFromItsOwnThread) {
  Collector collector(R"({"status":200,"body":{}})");
  OtlpConfig config;
  config.endpoint = collector.server->url() + "/v1/traces";
  config.headers = {{"x-team", "core"}};
  config.schedule_delay = std::chrono::milliseconds(50);
  auto exporter = OtlpExporter::start(config, net::ProxyConfig{});
  ASSERT_TRUE(exporter) << exporter.error().message();
  for (auto& s : sample_turn()) (*exporter)->submit(std::move(s));
  ASSERT_TRUE(wait_for([&] { return (*exporter)->stats().exported == 4; })) << (*exporter)->stats().exported;
  EXPECT_EQ((*exporter)->stats().dropped, 0U);

  auto requests = collector.server->requests();
  ASSERT_EQ(requests.size(), 1U) << "one batch";
  EXPECT_EQ(requests[0]["method"].as_string(), "POST");
  EXPECT_EQ(requests[0]["path"].as_string(), "/v1/traces");
  EXPECT_EQ(requests[0]["headers"]["content-type"].as_string(), "application/json");
  EXPECT_EQ(requests[0]["headers"]["x-team"].as_string(), "core");
  EXPECT_EQ(requests[0]["body"]["resourceSpans"].as_array()[0]["scopeSpans"].as_array()[0]["spans"].size(), 4U);
}

TEST(OtlpExporter, ASlowCollectorCostsSpansNotTime) {
  // The collector takes 5 s to answer; the exporter waits 300 ms per request and holds 2 spans.
  Collector collector(R"({"status":200,"body":{},"headers_delay_ms":5000})");
  OtlpConfig config;
  config.endpoint = collector.server->url() + "/v1/traces";
  config.schedule_delay = std::chrono::milliseconds(10);
  config.timeout = std::chrono::milliseconds(300);
  config.max_queue = 2;
  config.max_batch = 1;
  auto exporter = OtlpExporter::start(config, net::ProxyConfig{});
  ASSERT_TRUE(exporter) << exporter.error().message();
  std::uint64_t submitted = 0;
  for (int round = 0; round < 5; ++round) {
    for (auto& s : sample_turn()) {
      (*exporter)->submit(std::move(s));
      ++submitted;
    }
  }
  ASSERT_TRUE(wait_for([&] { return (*exporter)->stats().failed_requests >= 1; }));
  const auto stats = (*exporter)->stats();
  EXPECT_EQ(stats.exported, 0U);
  EXPECT_GE(stats.dropped, submitted - 3) << "at most the queue and the request in flight were kept";
  ASSERT_TRUE(stats.last_error.has_value());
  EXPECT_NE(stats.last_error->find("no answer within"), std::string::npos) << *stats.last_error;
}

TEST(OtlpExporter, ABusyCollectorIsAskedAgain) {
  testing::TempDir dir;
  auto script = mock_model::parse_script(*support::parse_json(R"({"exchanges":[
      {"name":"busy","response":{"status":503,"body":{}}},
      {"name":"unavailable","response":{"status":429,"body":{}}},
      {"name":"taken","response":{"status":200,"body":{}}}]})"),
                                         dir.path());
  ASSERT_TRUE(script);
  auto collector = mock_model::MockModelServer::start(std::move(*script));
  ASSERT_TRUE(collector);
  OtlpConfig config;
  config.endpoint = (*collector)->url() + "/v1/traces";
  config.schedule_delay = std::chrono::milliseconds(20);
  auto exporter = OtlpExporter::start(config, net::ProxyConfig{});
  ASSERT_TRUE(exporter);
  for (auto& s : sample_turn()) (*exporter)->submit(std::move(s));
  ASSERT_TRUE(wait_for([&] { return (*exporter)->stats().exported == 4; }));
  EXPECT_EQ((*exporter)->stats().failed_requests, 0U);
  EXPECT_EQ((*collector)->requests().size(), 3U) << "503 and 429 are asked again, the same batch";
}

// A collector that never answers holds agentd's exit for the two seconds the README promises, not for
// the request's 60 s timeout. (A bound far from both, not a measurement.)
TEST(OtlpExporter, ShutdownDoesNotWaitForASilentCollector) {
  Collector collector(R"({"status":200,"body":{},"headers_delay_ms":30000})", 1);
  OtlpConfig config;
  config.endpoint = collector.server->url() + "/v1/traces";
  config.schedule_delay = std::chrono::milliseconds(10);
  config.timeout = std::chrono::milliseconds(60000);
  auto exporter = OtlpExporter::start(config, net::ProxyConfig{});
  ASSERT_TRUE(exporter);
  for (auto& s : sample_turn()) (*exporter)->submit(std::move(s));
  ASSERT_TRUE(wait_for([&] { return collector.server->requests().size() == 1; })) << "the request is in flight";
  const auto start = std::chrono::steady_clock::now();
  exporter->reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(OtlpExporter, ARefusingCollectorIsCountedAndNamed) {
  Collector collector(R"({"status":401,"body":{"error":"bad token"}})");
  OtlpConfig config;
  config.endpoint = collector.server->url() + "/v1/traces";
  config.schedule_delay = std::chrono::milliseconds(20);
  auto exporter = OtlpExporter::start(config, net::ProxyConfig{});
  ASSERT_TRUE(exporter);
  for (auto& s : sample_turn()) (*exporter)->submit(std::move(s));
  ASSERT_TRUE(wait_for([&] { return (*exporter)->stats().failed_requests == 1; }));
  const auto stats = (*exporter)->stats();
  EXPECT_EQ(stats.dropped, 4U);
  EXPECT_NE(stats.last_error->find("401"), std::string::npos) << *stats.last_error;
}

}  // namespace
}  // namespace agentd::core::telemetry
