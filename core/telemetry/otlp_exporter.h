// OpenTelemetry export of turn spans over OTLP/HTTP with the JSON encoding (POST <endpoint>/v1/traces,
// Content-Type application/json). Spans are queued as they end and sent in batches by the exporter's
// own thread, never by the event loop; a full queue drops spans (counted) rather than slowing a turn,
// and a collector that does not answer within the timeout costs that batch, not the session.
//
// Model calls carry the GenAI semantic conventions (gen_ai.operation.name "chat", gen_ai.provider.name,
// gen_ai.request.model, gen_ai.usage.input_tokens/output_tokens), tool calls "execute_tool" with
// gen_ai.tool.name, and the turn "invoke_agent" with gen_ai.conversation.id. Every other attribute is
// exported as agentd.<name>: numbers and booleans always, text only from a short list of names that hold
// no prompt or file content (provider, model, stop reason, ...), unless content capture is switched on.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/net/http_client.h"
#include "core/support/result.h"
#include "core/support/trace.h"
#include "core/telemetry/trace_context.h"

namespace boost::asio {
class io_context;
}

namespace agentd::core::telemetry {

struct OtlpConfig {
  std::string endpoint;  // the traces URL itself (".../v1/traces")
  net::HttpHeaders headers;
  std::string service_name = "agentd";
  bool capture_content = false;                    // export text attributes (commands, paths, search terms) too
  std::size_t max_queue = 2048;                    // spans waiting; more are dropped
  std::size_t max_batch = 512;                     // spans per request
  std::chrono::milliseconds schedule_delay{5000};  // the longest a span waits for its batch
  std::chrono::milliseconds timeout{10000};        // one request, connect to answer
};

// The `telemetry` section of the user's own config file (daemon/config.h); the OTEL_* variables win.
struct OtlpSettings {
  std::optional<std::string> endpoint;  // the traces URL itself
  net::HttpHeaders headers;
  std::optional<bool> capture_content;
  std::optional<std::string> service_name;
};

// Whether `name: value` can be sent as an HTTP header (a token name, no control characters but tab).
bool valid_header(std::string_view name, std::string_view value) noexcept;

// The OTEL_* variables (read through `env`, null for unset), over `file`: OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER,
// OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, _HEADERS, _PROTOCOL (http/json; http/protobuf is answered with
// JSON, which collectors take on the same path; grpc is refused), _TIMEOUT, OTEL_SERVICE_NAME,
// OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE, and
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT. Nothing set: no export (nullopt). A value that is
// not usable is Errc::invalid_argument naming the variable.
support::Result<std::optional<OtlpConfig>> otlp_config_from_env(const std::function<const char*(const char*)>& env,
                                                                const OtlpSettings& file = {});

// A finished span with its place in a trace.
struct ExportSpan {
  std::string trace_id;
  std::string span_id;
  std::string parent_span_id;  // "" for a root without a caller
  support::SpanRecord record;
};

// The OTLP/JSON ExportTraceServiceRequest for a batch.
std::string otlp_traces_json(const OtlpConfig& config, const std::vector<ExportSpan>& spans);

class OtlpExporter {
 public:
  struct Stats {
    std::uint64_t exported = 0;  // spans the collector accepted
    std::uint64_t dropped = 0;   // spans lost: queue full, a failed request, or left at shutdown
    std::uint64_t failed_requests = 0;
    std::optional<std::string> last_error;
  };

  // Starts the exporter's thread. `proxy` is agentd's (HTTPS_PROXY, NO_PROXY).
  static support::Result<std::unique_ptr<OtlpExporter>> start(OtlpConfig config, net::ProxyConfig proxy);
  // Sends what is queued (within 2 s) and stops the thread; spans still queued then are dropped.
  ~OtlpExporter();
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  // Queues a span; never blocks on the network.
  void submit(ExportSpan span);
  Stats stats() const;
  const OtlpConfig& config() const noexcept { return config_; }

 private:
  OtlpExporter(OtlpConfig config, std::unique_ptr<boost::asio::io_context> io, std::unique_ptr<net::HttpClient> client);
  void run();
  struct Attempt {
    std::optional<std::string> error;
    bool retryable = false;
  };
  // One batch, on the exporter's thread, within `deadline` (retries included); the error, if it failed.
  std::optional<std::string> send(const std::vector<ExportSpan>& batch, std::chrono::milliseconds deadline);
  Attempt send_once(const std::string& body, std::chrono::milliseconds deadline);

  OtlpConfig config_;
  std::unique_ptr<boost::asio::io_context> io_;  // the thread's loop, for the client
  std::unique_ptr<net::HttpClient> client_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<ExportSpan> queue_;
  bool stopping_ = false;
  // When a request in flight must give up: never, until the destructor sets it.
  std::atomic<std::chrono::steady_clock::time_point> stop_by_{std::chrono::steady_clock::time_point::max()};
  Stats stats_;
  std::thread thread_;
};

// One turn's spans on their way to the exporter: ids from the turn's trace (the caller's when given).
class TurnExport {
 public:
  TurnExport(std::shared_ptr<OtlpExporter> exporter, const std::optional<TraceParent>& parent)
      : exporter_(std::move(exporter)), trace_(parent) {}
  const std::string& trace_id() const noexcept { return trace_.trace_id(); }
  void record(const support::SpanRecord& span) const;

 private:
  std::shared_ptr<OtlpExporter> exporter_;
  TurnTrace trace_;
};

}  // namespace agentd::core::telemetry
