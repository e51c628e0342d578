#include "core/telemetry/otlp_exporter.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <fmt/format.h>

#include "core/support/json_writer.h"
#include "core/support/log.h"
#include "core/support/text.h"
#include "core/support/version.h"

namespace agentd::core::telemetry {

namespace asio = boost::asio;
namespace log = support::log;
using support::Errc;
using support::Error;
using support::Json;
using support::JsonWriter;
using support::Result;

namespace {

constexpr auto kShutdownFlush = std::chrono::milliseconds(2000);

// Text attributes that hold no prompt, file or command text: exported even without content capture.
constexpr std::array<std::string_view, 13> kPlainTextAttributes = {
    "provider",   "model", "mode",    "stop_reason", "outcome",      "permission", "risk",
    "error_kind", "task",  "session", "turn",        "tool_call_id", "decided_by"};

bool plain_text(std::string_view key) {
  return std::find(kPlainTextAttributes.begin(), kPlainTextAttributes.end(), key) != kPlainTextAttributes.end();
}

const char* first_set(const std::function<const char*(const char*)>& env, std::initializer_list<const char*> names,
                      const char** which) {
  for (const char* name : names) {
    const char* value = env(name);
    if (value != nullptr && *value != '\0') {
      *which = name;
      return value;
    }
  }
  return nullptr;
}

Result<std::uint64_t> positive(const char* name, const char* value, std::uint64_t max) {
  std::uint64_t n = 0;
  const std::string_view text(value);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n == 0 || n > max) {
    return Error(Errc::invalid_argument,
                 fmt::format("{}=\"{}\": expected a whole number from 1 to {}", name, value, max));
  }
  return n;
}

// "k1=v1,k2=v2", values percent-encoded (the OTLP exporter spec); each a valid header.
Result<net::HttpHeaders> parse_headers(const char* name, std::string_view text) {
  net::HttpHeaders out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view entry = support::trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (entry.empty()) continue;
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Error(Errc::invalid_argument, fmt::format("{}: \"{}\" is not key=value", name, entry));
    }
    std::string key(support::trim(entry.substr(0, eq)));
    std::string value = support::percent_decode(support::trim(entry.substr(eq + 1)));
    if (!valid_header(key, value)) {
      return Error(Errc::invalid_argument, fmt::format("{}: the header \"{}\" is not a valid HTTP header", name, key));
    }
    out.push_back(net::HttpHeader{std::move(key), std::move(value)});
  }
  return out;
}

void write_value(JsonWriter& w, const Json& value) {
  w.begin_object();
  if (value.is_bool()) {
    w.member("boolValue", value.as_bool());
  } else if (value.is_integer()) {
    w.member("intValue", value.dump());  // int64 is a string in OTLP/JSON
  } else if (value.is_number()) {
    w.member("doubleValue", value.as_double());
  } else if (value.is_string()) {
    w.member("stringValue", value.as_string());
  } else {
    w.member("stringValue", value.dump());
  }
  w.end_object();
}

void write_attribute(JsonWriter& w, std::string_view key, const Json& value) {
  w.begin_object().member("key", key).key("value");
  write_value(w, value);
  w.end_object();
}

const Json* attribute(const support::SpanRecord& span, std::string_view key) {
  for (const auto& [k, v] : span.attributes) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string text_of(const Json* value) { return value != nullptr && value->is_string() ? value->as_string() : ""; }

// Span kinds of OTLP: 1 internal, 3 client.
void write_span(JsonWriter& w, const OtlpConfig& config, const ExportSpan& e) {
  const support::SpanRecord& s = e.record;
  std::string name = s.name;
  int kind = 1;
  std::vector<std::pair<std::string, Json>> semantic;
  if (s.name == "model.call") {
    const std::string model = text_of(attribute(s, "model"));
    name = model.empty() ? "chat" : "chat " + model;
    kind = 3;
    semantic.emplace_back("gen_ai.operation.name", Json("chat"));
    if (const Json* p = attribute(s, "provider")) semantic.emplace_back("gen_ai.provider.name", *p);
    if (!model.empty()) semantic.emplace_back("gen_ai.request.model", Json(model));
    if (const Json* t = attribute(s, "input_tokens")) semantic.emplace_back("gen_ai.usage.input_tokens", *t);
    if (const Json* t = attribute(s, "output_tokens")) semantic.emplace_back("gen_ai.usage.output_tokens", *t);
    if (const Json* r = attribute(s, "stop_reason"); r != nullptr && r->is_string()) {
      Json reasons = Json::array();
      reasons.push_back(*r);
      semantic.emplace_back("gen_ai.response.finish_reasons", std::move(reasons));
    }
  } else if (s.name.starts_with("tool.")) {
    const std::string tool = s.name.substr(5);
    name = "execute_tool " + tool;
    semantic.emplace_back("gen_ai.operation.name", Json("execute_tool"));
    semantic.emplace_back("gen_ai.tool.name", Json(tool));
    if (const Json* id = attribute(s, "tool_call_id")) semantic.emplace_back("gen_ai.tool.call.id", *id);
  } else if (s.name == "turn.run") {
    name = "invoke_agent agentd";
    semantic.emplace_back("gen_ai.operation.name", Json("invoke_agent"));
    semantic.emplace_back("gen_ai.agent.name", Json("agentd"));
    if (const Json* session = attribute(s, "session")) semantic.emplace_back("gen_ai.conversation.id", *session);
  }

  w.begin_object().member("traceId", e.trace_id).member("spanId", e.span_id);
  if (!e.parent_span_id.empty()) w.member("parentSpanId", e.parent_span_id);
  w.member("name", name).member("kind", kind);
  w.member("startTimeUnixNano", std::to_string(s.start_us * 1000));
  w.member("endTimeUnixNano", std::to_string(std::max(s.end_us, s.start_us) * 1000));
  w.key("attributes").begin_array();
  write_attribute(w, "agentd.span.name", Json(s.name));
  for (const auto& [key, value] : semantic) write_attribute(w, key, value);
  for (const auto& [key, value] : s.attributes) {
    const bool number = value.is_number() || value.is_bool();
    if (!number && !config.capture_content && !plain_text(key)) continue;
    write_attribute(w, "agentd." + key, value);
  }
  if (s.status == support::SpanStatus::cancelled) write_attribute(w, "agentd.cancelled", Json(true));
  w.end_array();
  // Status: unset (0) unless the span failed (2, with its message); a cancelled step is not an error.
  w.key("status").begin_object();
  if (s.status == support::SpanStatus::error) {
    w.member("code", 2);
    if (!s.status_message.empty()) w.member("message", s.status_message);
  }
  w.end_object();
  w.end_object();
}

}  // namespace

bool valid_header(std::string_view name, std::string_view value) noexcept {
  const bool name_ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
  return name_ok && std::all_of(value.begin(), value.end(), [](char c) {
           return c == '\t' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
         });
}

Result<std::optional<OtlpConfig>> otlp_config_from_env(const std::function<const char*(const char*)>& env,
                                                       const OtlpSettings& file) {
  auto get = [&](const char* name) -> std::string_view {
    const char* v = env(name);
    return v == nullptr ? std::string_view() : std::string_view(v);
  };
  if (support::ascii_lower_copy(get("OTEL_SDK_DISABLED")) == "true") return std::optional<OtlpConfig>();
  if (const auto exporters = support::ascii_lower_copy(get("OTEL_TRACES_EXPORTER"));
      !exporters.empty() && exporters.find("otlp") == std::string::npos) {
    return std::optional<OtlpConfig>();
  }
  OtlpConfig config;
  const char* which = nullptr;
  if (const char* url = first_set(env, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"}, &which)) {
    config.endpoint = url;
  } else if (const char* base = first_set(env, {"OTEL_EXPORTER_OTLP_ENDPOINT"}, &which)) {
    config.endpoint = base;
    config.endpoint += config.endpoint.ends_with('/') ? "v1/traces" : "/v1/traces";
  } else if (file.endpoint) {
    config.endpoint = *file.endpoint;
    which = nullptr;
  } else {
    return std::optional<OtlpConfig>();
  }
  if (auto url = net::parse_url(config.endpoint); !url) {
    if (which == nullptr) {
      return Error(Errc::invalid_argument,
                   fmt::format("config telemetry.endpoint \"{}\": {}", config.endpoint, url.error().message()));
    }
    return Error(Errc::invalid_argument, fmt::format("{}=\"{}\": {}", which, env(which), url.error().message()));
  }
  // The file's headers (a token, often) are for the file's endpoint, never for another.
  if (which == nullptr) config.headers = file.headers;
  if (file.service_name) config.service_name = *file.service_name;
  config.capture_content = file.capture_content.value_or(false);
  if (const char* protocol =
          first_set(env, {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"}, &which)) {
    const std::string_view p(protocol);
    if (p == "grpc") {
      return Error(Errc::invalid_argument,
                   fmt::format("{}=grpc: agentd exports OTLP over HTTP only; set http/json and the collector's HTTP "
                               "port (4318)",
                               which));
    }
    if (p != "http/json" && p != "http/protobuf") {
      return Error(Errc::invalid_argument, fmt::format("{}=\"{}\": expected http/json", which, protocol));
    }
  }
  if (const char* headers =
          first_set(env, {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"}, &which)) {
    auto parsed = parse_headers(which, headers);
    if (!parsed) return std::move(parsed).error();
    config.headers = std::move(*parsed);
  }
  if (const char* timeout =
          first_set(env, {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"}, &which)) {
    auto ms = positive(which, timeout, 600'000);
    if (!ms) return std::move(ms).error();
    config.timeout = std::chrono::milliseconds(*ms);
  }
  if (const char* name = first_set(env, {"OTEL_SERVICE_NAME"}, &which)) config.service_name = name;
  if (const char* delay = first_set(env, {"OTEL_BSP_SCHEDULE_DELAY"}, &which)) {
    auto ms = positive(which, delay, 600'000);
    if (!ms) return std::move(ms).error();
    config.schedule_delay = std::chrono::milliseconds(*ms);
  }
  if (const char* queue = first_set(env, {"OTEL_BSP_MAX_QUEUE_SIZE"}, &which)) {
    auto n = positive(which, queue, 1'000'000);
    if (!n) return std::move(n).error();
    config.max_queue = *n;
  }
  if (const char* batch = first_set(env, {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE"}, &which)) {
    auto n = positive(which, batch, 1'000'000);
    if (!n) return std::move(n).error();
    config.max_batch = *n;
  }
  config.max_batch = std::min(config.max_batch, config.max_queue);
  if (const auto capture = get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"); !capture.empty()) {
    config.capture_content = support::ascii_lower_copy(capture) == "true";
  }
  return std::optional<OtlpConfig>(std::move(config));
}

std::string otlp_traces_json(const OtlpConfig& config, const std::vector<ExportSpan>& spans) {
  std::string out;
  JsonWriter w(out);
  w.begin_object().key("resourceSpans").begin_array().begin_object();
  w.key("resource").begin_object().key("attributes").begin_array();
  write_attribute(w, "service.name", Json(config.service_name));
  write_attribute(w, "service.version", Json(std::string(support::kVersion)));
  write_attribute(w, "process.pid", Json(static_cast<std::int64_t>(::getpid())));
  w.end_array().end_object();
  w.key("scopeSpans").begin_array().begin_object();
  w.key("scope").begin_object().member("name", "agentd").member("version", support::kVersion).end_object();
  w.key("spans").begin_array();
  for (const auto& span : spans) write_span(w, config, span);
  w.end_array().end_object().end_array();
  w.end_object().end_array().end_object();
  return out;
}

Result<std::unique_ptr<OtlpExporter>> OtlpExporter::start(OtlpConfig config, net::ProxyConfig proxy) {
  auto io = std::make_unique<asio::io_context>(1);
  net::HttpClientOptions options;
  options.proxy = std::move(proxy);
  options.timeouts = net::HttpTimeouts{config.timeout, config.timeout, config.timeout};
  options.max_idle_per_host = 1;
  options.user_agent = fmt::format("agentd/{}", support::kVersion);
  auto client = net::HttpClient::create(io->get_executor(), std::move(options));
  if (!client) return std::move(client).error();
  std::unique_ptr<OtlpExporter> exporter(new OtlpExporter(std::move(config), std::move(io), std::move(*client)));
  exporter->thread_ = std::thread([raw = exporter.get()] { raw->run(); });
  log::info("exporting turn spans to {} (OTLP/HTTP JSON)", exporter->config_.endpoint);
  return exporter;
}

OtlpExporter::OtlpExporter(OtlpConfig config, std::unique_ptr<asio::io_context> io,
                           std::unique_ptr<net::HttpClient> client)
    : config_(std::move(config)), io_(std::move(io)), client_(std::move(client)) {}

OtlpExporter::~OtlpExporter() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  // A request in flight (a collector that does not answer) gets the same two seconds, not its timeout.
  stop_by_.store(std::chrono::steady_clock::now() + kShutdownFlush);
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void OtlpExporter::submit(ExportSpan span) {
  bool full_batch = false;
  {
    const std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= config_.max_queue) {
      ++stats_.dropped;
      return;
    }
    queue_.push_back(std::move(span));
    full_batch = queue_.size() >= config_.max_batch;
  }
  if (full_batch) wake_.notify_one();
}

OtlpExporter::Stats OtlpExporter::stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

void OtlpExporter::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, config_.schedule_delay, [&] { return stopping_ || queue_.size() >= config_.max_batch; });
    if (queue_.empty()) {
      if (stopping_) break;
      continue;
    }
    const bool last = stopping_;
    std::vector<ExportSpan> batch;
    const std::size_t n = last ? queue_.size() : std::min(queue_.size(), config_.max_batch);
    batch.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    lock.unlock();
    const std::size_t count = batch.size();
    const auto deadline = last ? std::min<std::chrono::milliseconds>(kShutdownFlush, config_.timeout) : config_.timeout;
    std::optional<std::string> error = send(batch, deadline);
    lock.lock();
    if (error) {
      stats_.dropped += count;
      ++stats_.failed_requests;
      stats_.last_error = *error;
      // The first failure is worth a warning; a collector that stays away would flood the log.
      if (stats_.failed_requests == 1) {
        log::warn("OTLP export to {} failed ({} spans dropped): {}", config_.endpoint, count, *error);
      } else {
        log::debug("OTLP export to {} failed ({} spans dropped): {}", config_.endpoint, count, *error);
      }
    } else {
      stats_.exported += count;
    }
    if (last) break;
  }
  stats_.dropped += queue_.size();
  queue_.clear();
  lock.unlock();
  // The pooled connection goes with the client; nothing is left running on the loop.
  asio::co_spawn(*io_, client_->shutdown(), [](const std::exception_ptr&) {});
  io_->restart();
  io_->run_for(std::chrono::milliseconds(500));
}

std::optional<std::string> OtlpExporter::send(const std::vector<ExportSpan>& batch,
                                              std::chrono::milliseconds deadline) {
  const std::string body = otlp_traces_json(config_, batch);
  const auto until = std::chrono::steady_clock::now() + deadline;
  // The OTLP spec's retryable answers (429, 502, 503, 504) and a connection that failed are tried again
  // after 100, 200, 400 ms while the deadline allows and agentd is not stopping; anything else is final.
  auto backoff = std::chrono::milliseconds(100);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    Attempt attempt = send_once(body, std::max(left, std::chrono::milliseconds(1)));
    if (!attempt.error || !attempt.retryable) return attempt.error;
    if (std::chrono::steady_clock::now() + backoff >= until) return attempt.error;
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_for(lock, backoff, [&] { return stopping_; })) return attempt.error;
    }
    backoff *= 2;
  }
}

OtlpExporter::Attempt OtlpExporter::send_once(const std::string& body, std::chrono::milliseconds deadline) {
  net::HttpRequest request;
  request.url = config_.endpoint;
  request.headers = config_.headers;
  request.headers.push_back(net::HttpHeader{"Content-Type", "application/json"});
  request.body = body;
  support::CancelSource cancel;
  // Shared with the completion, which may run on a later turn of the loop if the request outlives its
  // deadline.
  auto outcome = std::make_shared<Attempt>();
  auto done = std::make_shared<bool>(false);
  // Parameters, not captures: the coroutine outlives this call when the deadline passes first.
  auto exchange = [](net::HttpClient& client, net::HttpRequest req, support::CancelToken token,
                     std::shared_ptr<Attempt> out, std::shared_ptr<bool> finished) -> asio::awaitable<void> {
    auto response = co_await client.send(
        std::move(req), [](std::string_view) { return net::BodyAction::more; }, token);
    *finished = true;
    if (!response) {
      out->error = response.error().message();
      const auto failure = net::http_failure_of(response.error());
      out->retryable = failure == net::HttpFailure::connect || failure == net::HttpFailure::closed;
    } else if (!response->ok_status()) {
      out->error = fmt::format("the collector answered {}: {}", response->status, response->error_body.substr(0, 200));
      const int status = response->status;
      out->retryable = status == 429 || status == 502 || status == 503 || status == 504;
    }
  };
  support::CancelToken token = cancel.token();  // named: GCC 12 destroys class temporaries passed to coroutines twice
  asio::co_spawn(*io_, exchange(*client_, std::move(request), token, outcome, done),
                 [outcome, done](const std::exception_ptr& thrown) {
                   if (!thrown) return;
                   *done = true;
                   outcome->error = "the request failed";
                 });
  // In slices, so that a shutdown (stop_by_) cuts a request short.
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    const auto end = std::min(until, stop_by_.load());
    if (*done || now >= end) break;
    io_->restart();
    io_->run_for(std::min<std::chrono::steady_clock::duration>(end - now, std::chrono::milliseconds(50)));
  }
  if (!*done) {
    cancel.cancel();
    io_->restart();
    io_->run_for(std::chrono::milliseconds(500));
    return Attempt{fmt::format("no answer within {} ms", deadline.count()), false};
  }
  return *outcome;
}

void TurnExport::record(const support::SpanRecord& span) const {
  if (!exporter_) return;
  ExportSpan e;
  e.trace_id = trace_.trace_id();
  e.span_id = trace_.span_id(span.id);
  e.parent_span_id = trace_.span_id(span.parent_id);
  e.record = span;
  exporter_->submit(std::move(e));
}

}  // namespace agentd::core::telemetry
