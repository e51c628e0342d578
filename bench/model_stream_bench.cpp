// agentd_bench_model_stream: the model streaming pipeline against the mock model server over a real
// loopback socket. An Anthropic stream of N text deltas is read by HttpClient and decoded (SSE parser +
// Anthropic decoder) into ModelEvents. Reports text deltas per second and the latency each delta adds
// from the moment its bytes come off the socket (the body callback) to the moment its event is emitted.
// Baseline in the same run: the same response read by the same client with no decoding.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "bench/bench_common.h"
#include "core/model/stream_decoder.h"
#include "core/net/http_client.h"
#include "core/support/log.h"
#include "test/mock_model/mock_model_server.h"
#include "test/mock_model/mock_script.h"

namespace {

namespace asio = boost::asio;
namespace model = agentd::core::model;
namespace net = agentd::net;
using agentd::bench::Clock;

// One Anthropic text turn with `deltas` text deltas, framed as the API sends it.
std::vector<std::string> anthropic_events(long deltas) {
  using agentd::mock_model::frame_sse_event;
  std::vector<std::string> events;
  events.reserve(static_cast<std::size_t>(deltas) + 6);
  events.push_back(frame_sse_event(
      "message_start",
      R"({"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"bench",)"
      R"("content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}})"));
  events.push_back(frame_sse_event(
      "content_block_start", R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"));
  for (long i = 0; i < deltas; ++i) {
    events.push_back(
        frame_sse_event("content_block_delta",
                        R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"token )" +
                            std::to_string(i) + R"( "}})"));
  }
  events.push_back(frame_sse_event("content_block_stop", R"({"type":"content_block_stop","index":0})"));
  events.push_back(frame_sse_event(
      "message_delta",
      R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":)" +
          std::to_string(deltas) + "}}"));
  events.push_back(frame_sse_event("message_stop", R"({"type":"message_stop"})"));
  return events;
}

struct Trial {
  double seconds = 0;
  long deltas = 0;
  std::size_t bytes = 0;
  bool complete = false;
  std::vector<double> latencies_us;  // one per text delta
};

// Sends one request and reads the whole stream; decodes it when `decode` is set.
Trial run_trial(const std::string& url, bool decode) {
  asio::io_context io;
  net::HttpClientOptions options;
  options.use_system_ca = false;
  auto client = net::HttpClient::create(io.get_executor(), options);
  if (!client) throw std::runtime_error("HttpClient: " + client.error().message());
  Trial trial;
  auto decoder = model::make_stream_decoder(model::WireProtocol::anthropic_messages);
  std::vector<model::ModelEvent> events;
  if (decode) trial.latencies_us.reserve(400000);
  std::string failure;
  const auto start = Clock::now();
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        net::HttpRequest request;
        request.url = url + "/v1/messages";
        request.headers = {{"content-type", "application/json"}};
        request.body = R"({"model":"bench","stream":true})";
        auto response = co_await (*client)->send(request, [&](std::string_view bytes) {
          trial.bytes += bytes.size();
          if (!decode) return net::BodyAction::more;
          const auto arrived = Clock::now();
          events.clear();
          decoder->feed(bytes, events);
          for (const auto& event : events) {
            if (std::holds_alternative<model::TextDelta>(event)) {
              ++trial.deltas;
              trial.latencies_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - arrived).count());
            } else if (std::holds_alternative<model::MessageDone>(event)) {
              trial.complete = true;
            }
          }
          return net::BodyAction::more;
        });
        if (!response) {
          failure = response.error().message();
          co_return;
        }
        if (decode) {
          events.clear();
          decoder->finish(events);  // a stream without message_stop ends here with an error, not MessageDone
        } else {
          trial.complete = response->complete;
        }
      },
      asio::detached);
  io.run();
  trial.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!failure.empty()) throw std::runtime_error("request failed: " + failure);
  return trial;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1));
  return values[index];
}

// Runs the trials against one server and prints the median; returns 1 when a trial lost deltas.
int measure(const std::string& url, long deltas, long trials, const char* label) {
  std::vector<Trial> decoded;
  std::vector<Trial> raw;
  for (long t = 0; t < trials; ++t) {
    raw.push_back(run_trial(url, false));
    decoded.push_back(run_trial(url, true));
    const Trial& d = decoded.back();
    if (!d.complete || d.deltas != deltas) {
      std::fprintf(stderr, "trial %ld: decoded %ld of %ld deltas, complete=%d\n", t, d.deltas, deltas, d.complete);
      return 1;
    }
  }
  auto by_time = [](const Trial& a, const Trial& b) { return a.seconds < b.seconds; };
  std::sort(decoded.begin(), decoded.end(), by_time);
  std::sort(raw.begin(), raw.end(), by_time);
  const Trial& d = decoded[decoded.size() / 2];
  const Trial& r = raw[raw.size() / 2];
  const double rate = static_cast<double>(d.deltas) / d.seconds;
  const double p99 = percentile(d.latencies_us, 0.99);
  std::printf("model stream (%s): %ld Anthropic text deltas (%.1f MiB of SSE), %ld trial(s), median shown\n", label,
              deltas, static_cast<double>(d.bytes) / (1024.0 * 1024.0), trials);
  std::printf("  read only (baseline):    %8.3f s   %10.0f events/s\n", r.seconds,
              static_cast<double>(deltas) / r.seconds);
  std::printf("  read + decode:           %8.3f s   %10.0f deltas/s   (%.2fx the baseline's time)\n", d.seconds, rate,
              d.seconds / r.seconds);
  std::printf("  added latency per delta: p50 %.2f us, p99 %.2f us, max %.2f us\n", percentile(d.latencies_us, 0.5),
              p99, percentile(d.latencies_us, 1.0));
  std::printf("  target deltas/s > 200000: %s; target p99 < 50 us: %s\n", rate > 200000 ? "PASS" : "FAIL",
              p99 < 50 ? "PASS" : "FAIL");
  return 0;
}

void print_usage() {
  std::fprintf(stderr,
               "usage: agentd_bench_model_stream [--deltas N] [--trials N] [--quick]\n"
               "  streams N Anthropic text deltas from the mock model server through HttpClient and the\n"
               "  stream decoder; reports deltas/s and per-delta added latency (p50/p99)\n");
}

}  // namespace

int main(int argc, char** argv) {
  long deltas = 200000;
  long trials = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      deltas = 20000;
      trials = 1;
    } else if ((arg == "--deltas" || arg == "--trials") && i + 1 < argc) {
      auto n = agentd::bench::parse_count(argv[++i]);
      if (!n) {
        print_usage();
        return 2;
      }
      (arg == "--deltas" ? deltas : trials) = *n;
    } else if (arg == "--help" || arg == "-h") {
      print_usage();
      return 0;
    } else {
      std::fprintf(stderr, "agentd_bench_model_stream: unknown argument '%s'\n", argv[i]);
      print_usage();
      return 2;
    }
  }

  agentd::support::log::set_level(agentd::support::log::Level::warn);  // the server logs every request
  try {
    // Two servers: one writes every event on its own (as an API streaming token by token does), one
    // coalesces writes into 16 KiB (as a busy network delivers them), which shows the client's capacity.
    int failures = 0;
    for (const std::size_t write_bytes : {std::size_t{0}, std::size_t{16384}}) {
      agentd::mock_model::Response response;
      response.kind = agentd::mock_model::Response::BodyKind::events;
      response.events = anthropic_events(deltas);
      if (write_bytes != 0) response.chunk_size = write_bytes;
      agentd::mock_model::Script script;
      script.exchanges.push_back(agentd::mock_model::Exchange{"bench stream", std::nullopt, std::move(response)});
      script.loop = true;
      auto server = agentd::mock_model::MockModelServer::start(std::move(script));
      if (!server) throw std::runtime_error("mock server: " + server.error().message());
      failures += measure((*server)->url(), deltas, trials,
                          write_bytes == 0 ? "server writes each event separately" : "server writes 16 KiB at a time");
    }
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agentd_bench_model_stream: %s\n", e.what());
    return 1;
  }
}
