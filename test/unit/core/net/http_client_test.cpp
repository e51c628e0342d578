// HttpClient against scripted servers on 127.0.0.1: streaming, size, keep-alive (also after a caller finishes
// early), timeouts, cancellation, proxies and TLS verification. Every wait is a bounded run of the io_context;
// nothing sleeps.
#include "core/net/http_client.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <gtest/gtest.h>

#include "core/support/cancel.h"
#include "test/unit/core/net/raw_http_server.h"

namespace agentd::net {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using testing::chunk;
using testing::http_response;
using testing::kChunkedHead;
using testing::RawHttpServer;
using testing::RawScript;
using testing::RawStep;
using Clock = std::chrono::steady_clock;

template <class T>
asio::awaitable<void> store_into(asio::awaitable<T> task, std::optional<T>* out) {
  out->emplace(co_await std::move(task));
}

// Runs `task` to completion, or gives up after `limit`; an empty result means it did not finish.
template <class T>
std::optional<T> run_bounded(asio::io_context& io, asio::awaitable<T> task, std::chrono::milliseconds limit = 10s) {
  std::optional<T> out;
  bool done = false;
  asio::co_spawn(io, store_into(std::move(task), &out), [&done](const std::exception_ptr&) { done = true; });
  const auto deadline = Clock::now() + limit;
  while (!done && Clock::now() < deadline) {
    if (io.run_one_until(deadline) == 0 && io.stopped()) io.restart();
  }
  return out;
}

// One request's result and the body pieces the callback saw, in order.
struct Outcome {
  std::optional<support::Result<HttpResponse>> result;
  std::vector<std::string> chunks;
  std::string body() const {
    std::string all;
    for (const auto& c : chunks) all += c;
    return all;
  }
};

class HttpClientTest : public ::testing::Test {
 protected:
  std::unique_ptr<HttpClient> make_client(HttpClientOptions options = {}) {
    options.use_system_ca = false;  // tests trust only what they add
    auto client = HttpClient::create(io_.get_executor(), std::move(options));
    EXPECT_TRUE(client) << (client ? "" : client.error().message());
    return client ? std::move(client).value() : nullptr;
  }

  Outcome post(HttpClient& client, const std::string& url, support::CancelToken cancel = {},
               std::function<BodyAction(std::string_view)> also = nullptr, std::chrono::milliseconds limit = 10s) {
    Outcome outcome;
    HttpRequest request;
    request.url = url;
    request.headers = {{"content-type", "application/json"}};
    request.body = R"({"model":"m"})";
    outcome.result = run_bounded(io_,
                                 client.send(
                                     std::move(request),
                                     [&outcome, &also](std::string_view piece) {
                                       outcome.chunks.emplace_back(piece);
                                       return also ? also(piece) : BodyAction::more;
                                     },
                                     std::move(cancel)),
                                 limit);
    return outcome;
  }

  // Runs the loop until `done` holds, for at most `limit`: how tests wait for background work.
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit = 5s) {
    const auto deadline = Clock::now() + limit;
    while (!done() && Clock::now() < deadline) {
      if (io_.run_one_until(deadline) == 0 && io_.stopped()) io_.restart();
    }
    return done();
  }

  asio::io_context io_;
};

HttpFailure failure_of(const Outcome& outcome) {
  if (!outcome.result || *outcome.result) return HttpFailure::none;
  return http_failure_of(outcome.result->error());
}

// ---- URLs and proxy configuration ----

TEST(HttpUrl, ParsesSchemesHostsPortsAndTargets) {
  auto url = parse_url("https://API.Anthropic.com/v1/messages?beta=true#frag");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->host, "api.anthropic.com");
  EXPECT_EQ(url->port, 443);
  EXPECT_EQ(url->target, "/v1/messages?beta=true");

  url = parse_url("http://127.0.0.1:11434");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->port, 11434);
  EXPECT_EQ(url->target, "/");
  EXPECT_EQ(url->authority(), "127.0.0.1:11434");

  url = parse_url("http://user:p%40ss@[::1]:3128/");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->userinfo, "user:p%40ss");
  EXPECT_EQ(url->authority(), "[::1]:3128");

  EXPECT_FALSE(parse_url("ftp://example.com/"));
  EXPECT_FALSE(parse_url("example.com/v1"));
  EXPECT_FALSE(parse_url("http://example.com:99999/"));
  EXPECT_FALSE(parse_url("http:///path"));
  EXPECT_FALSE(parse_url("http://a.com/x\r\nInjected: 1"));
}

TEST(HttpProxy, NoProxyMatchesSuffixesWildcardsAndPorts) {
  const auto entries = split_no_proxy(" localhost,.internal.example , *.corp.test,10.0.0.7, api.test:8443 ,[::1]:9000");
  ASSERT_EQ(entries.size(), 6u);
  struct Case {
    const char* host;
    std::uint16_t port;
    bool bypass;
  } cases[] = {
      {"localhost", 443, true},
      {"LOCALHOST", 80, true},
      {"notlocalhost", 443, false},
      {"internal.example", 443, true},
      {"a.b.internal.example", 443, true},
      {"xinternal.example", 443, false},
      {"corp.test", 443, true},
      {"git.corp.test", 80, true},
      {"10.0.0.7", 443, true},
      {"10.0.0.70", 443, false},
      {"api.test", 8443, true},
      {"api.test", 443, false},
      {"::1", 9000, true},
      {"::1", 9001, false},
      {"api.anthropic.com", 443, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(no_proxy_matches(entries, c.host, c.port), c.bypass) << c.host << ":" << c.port;
  }
  EXPECT_TRUE(no_proxy_matches(split_no_proxy("*"), "anything.example", 443));
  EXPECT_FALSE(no_proxy_matches(split_no_proxy(""), "anything.example", 443));
}

TEST(HttpProxy, ConfigFromEnvironmentPrefersLowerCaseAndAddsScheme) {
  std::map<std::string, std::string> env = {{"HTTPS_PROXY", "http://upper:1"},
                                            {"https_proxy", "proxy.corp:3128"},
                                            {"HTTP_PROXY", "http://plain.corp:8080"},
                                            {"NO_PROXY", "localhost,127.0.0.1"}};
  const ProxyConfig config = ProxyConfig::from_lookup([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  ASSERT_TRUE(config.https_proxy);
  EXPECT_EQ(config.https_proxy->authority(), "proxy.corp:3128");
  ASSERT_TRUE(config.http_proxy);
  EXPECT_EQ(config.http_proxy->authority(), "plain.corp:8080");
  EXPECT_EQ(config.no_proxy, (std::vector<std::string>{"localhost", "127.0.0.1"}));

  EXPECT_EQ(config.proxy_for(*parse_url("https://api.anthropic.com/v1")), &*config.https_proxy);
  EXPECT_EQ(config.proxy_for(*parse_url("http://ollama.lan:11434/")), &*config.http_proxy);
  EXPECT_EQ(config.proxy_for(*parse_url("https://127.0.0.1:8443/")), nullptr);
  EXPECT_EQ(config.proxy_for(*parse_url("http://localhost:11434/")), nullptr);
}

// ---- streaming ----

TEST_F(HttpClientTest, StreamsChunkedBodyPieceByPiece) {
  // The second chunk is only sent after the test has seen the first: a client that buffered the body
  // would never see it and the request would time out.
  RawHttpServer server(io_,
                       {{RawStep::read_request(), RawStep::write(std::string(kChunkedHead) + chunk("event: a\n\n")),
                         RawStep::gate(1), RawStep::write(chunk("event: b\n\n") + chunk(""))}});
  auto client = make_client();
  auto outcome = post(*client, server.url("/v1/messages"), {}, [&server](std::string_view piece) {
    if (piece == "event: a\n\n") server.open_gate(1);
    return BodyAction::more;
  });
  ASSERT_TRUE(outcome.result);
  ASSERT_TRUE(*outcome.result) << outcome.result->error().message();
  const HttpResponse& response = **outcome.result;
  EXPECT_EQ(response.status, 200);
  EXPECT_TRUE(response.complete);
  EXPECT_FALSE(response.body_error);
  EXPECT_EQ(outcome.chunks, (std::vector<std::string>{"event: a\n\n", "event: b\n\n"}));
  ASSERT_NE(find_header(response.headers, "content-type"), nullptr);
  EXPECT_EQ(*find_header(response.headers, "Content-Type"), "text/event-stream");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_TRUE(server.requests()[0].starts_with("POST /v1/messages HTTP/1.1\r\n")) << server.requests()[0];
  EXPECT_NE(server.requests()[0].find("\r\n\r\n{\"model\":\"m\"}"), std::string::npos);
}

TEST_F(HttpClientTest, ReadsBodiesLargerThanBeastsDefaultLimit) {
  constexpr std::size_t kSize = 9 * 1024 * 1024 + 17;  // past Beast's 8 MB default body_limit
  std::string body(kSize, 'x');
  for (std::size_t i = 0; i < kSize; i += 4096) body[i] = static_cast<char>('a' + (i / 4096) % 26);
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(http_response(200, body))}});
  auto client = make_client();
  auto outcome = post(*client, server.url());
  ASSERT_TRUE(outcome.result);
  ASSERT_TRUE(*outcome.result) << outcome.result->error().message();
  EXPECT_TRUE((*outcome.result)->complete);
  EXPECT_EQ((*outcome.result)->body_bytes, kSize);
  EXPECT_TRUE(outcome.body() == body);
  EXPECT_GT(outcome.chunks.size(), 1u);
}

TEST_F(HttpClientTest, ChunkedBodyLargerThanDefaultLimit) {
  std::string stream(kChunkedHead);
  const std::string piece(std::size_t{64} * 1024, 'y');
  for (int i = 0; i < 140; ++i) stream += chunk(piece);  // 8.75 MiB
  stream += chunk("");
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(stream)}});
  auto client = make_client();
  auto outcome = post(*client, server.url());
  ASSERT_TRUE(outcome.result && *outcome.result);
  EXPECT_TRUE((*outcome.result)->complete);
  EXPECT_EQ((*outcome.result)->body_bytes, 140u * piece.size());
}

// ---- keep-alive ----

TEST_F(HttpClientTest, ReusesKeepAliveConnection) {
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(http_response(200, "one")),
                              RawStep::read_request(), RawStep::write(http_response(200, "two"))}});
  auto client = make_client();
  auto first = post(*client, server.url());
  ASSERT_TRUE(first.result && *first.result);
  EXPECT_FALSE((*first.result)->reused_connection);
  EXPECT_EQ(client->idle_connections(), 1u);
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result && *second.result) << (second.result ? second.result->error().message() : "timeout");
  EXPECT_TRUE((*second.result)->reused_connection);
  EXPECT_EQ(first.body(), "one");
  EXPECT_EQ(second.body(), "two");
  EXPECT_EQ(server.accepted(), 1);
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST_F(HttpClientTest, ConnectionCloseIsNotPooled) {
  RawHttpServer server(io_, {{RawStep::read_request(),
                              RawStep::write(http_response(200, "one", "Connection: close\r\n")), RawStep::close()},
                             {RawStep::read_request(), RawStep::write(http_response(200, "two"))}});
  auto client = make_client();
  auto first = post(*client, server.url());
  ASSERT_TRUE(first.result && *first.result);
  EXPECT_EQ(client->idle_connections(), 0u);
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result && *second.result);
  EXPECT_EQ(second.body(), "two");
  EXPECT_EQ(server.accepted(), 2);
}

TEST_F(HttpClientTest, DeadPooledConnectionIsRetriedOnceOnAFreshOne) {
  // The server keeps the first connection open, then drops it when the second request arrives, without
  // answering: the client must resend on a new connection, invisibly to the caller.
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(http_response(200, "one")),
                              RawStep::read_request(), RawStep::close()},
                             {RawStep::read_request(), RawStep::write(http_response(200, "two"))}});
  auto client = make_client();
  auto first = post(*client, server.url());
  ASSERT_TRUE(first.result && *first.result);
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result);
  ASSERT_TRUE(*second.result) << second.result->error().message();
  EXPECT_EQ(second.body(), "two");
  EXPECT_FALSE((*second.result)->reused_connection);
  EXPECT_EQ(server.accepted(), 2);
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST_F(HttpClientTest, DeadPooledConnectionIsRetriedOnlyOnce) {
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(http_response(200, "one")),
                              RawStep::read_request(), RawStep::close()},
                             {RawStep::read_request(), RawStep::close()}});
  auto client = make_client();
  ASSERT_TRUE(post(*client, server.url()).result);
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result);
  ASSERT_FALSE(*second.result);
  EXPECT_EQ(failure_of(second), HttpFailure::closed) << second.result->error().message();
  EXPECT_EQ(server.accepted(), 2);  // one retry, not a loop
}

TEST_F(HttpClientTest, FreshConnectionClosedBeforeResponseIsAnError) {
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::close()}});
  auto client = make_client();
  auto outcome = post(*client, server.url());
  ASSERT_TRUE(outcome.result);
  ASSERT_FALSE(*outcome.result);
  EXPECT_EQ(failure_of(outcome), HttpFailure::closed);
  EXPECT_EQ(server.accepted(), 1);  // a fresh connection is not silently retried: the retry policy decides
}

TEST_F(HttpClientTest, PooledConnectionClosedWhileIdleIsReplacedWithoutAnError) {
  // The server answers as if it kept the connection (no "Connection: close"), then closes it while it
  // sits in our pool: the classic stale keep-alive socket. The next request must not see it.
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(http_response(200, "one")), RawStep::close()},
                             {RawStep::read_request(), RawStep::write(http_response(200, "two"))}});
  auto client = make_client();
  auto first = post(*client, server.url());
  ASSERT_TRUE(first.result && *first.result);
  EXPECT_EQ(client->idle_connections(), 1u);
  ASSERT_TRUE(run_until([&] { return server.ended() == 1; }));
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result);
  ASSERT_TRUE(*second.result) << second.result->error().message();
  EXPECT_EQ(second.body(), "two");
  EXPECT_FALSE((*second.result)->reused_connection);
  EXPECT_EQ(server.accepted(), 2);
  EXPECT_EQ(server.requests().size(), 2u);  // seen dead in the pool: the request went out once
}

// ---- BodyAction::finish: the caller stops at the stream's end, the connection is kept ----

// What a model client does: finish at the piece that holds the terminal event.
BodyAction finish_at_stop(std::string_view piece) {
  return piece.find("STOP") != std::string_view::npos ? BodyAction::finish : BodyAction::more;
}

TEST_F(HttpClientTest, FinishWithTheRestOfTheBodyBufferedPoolsTheConnectionAtOnce) {
  // One write: the last chunk arrives with the final event, so no wait is needed to reuse the connection.
  RawHttpServer server(
      io_, {{RawStep::read_request(),
             RawStep::write(std::string(kChunkedHead) + chunk("data: 1\n\n") + chunk("event: STOP\n\n") + chunk("")),
             RawStep::read_request(), RawStep::write(http_response(200, "two"))}});
  auto client = make_client();
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result);
  EXPECT_EQ(first.body(), "data: 1\n\nevent: STOP\n\n");
  EXPECT_EQ(client->idle_connections(), 1u);
  EXPECT_EQ(client->draining_connections(), 0u);
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result && *second.result);
  EXPECT_TRUE((*second.result)->reused_connection);
  EXPECT_EQ(second.body(), "two");
  EXPECT_EQ(server.accepted(), 1);
}

TEST_F(HttpClientTest, FinishReturnsAtOnceAndTheTailIsDrainedInTheBackground) {
  // The rest of the body is held back until the test opens the gate: send() must have returned before.
  RawHttpServer server(
      io_, {{RawStep::read_request(),
             RawStep::write(std::string(kChunkedHead) + chunk("data: 1\n\n") + chunk("event: STOP\n\n")),
             RawStep::gate(1), RawStep::write(chunk(": trailing comment\n\n") + chunk("")), RawStep::read_request(),
             RawStep::write(http_response(200, "two"))}});
  auto client = make_client();
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result);
  const HttpResponse& response = **first.result;
  EXPECT_TRUE(response.stopped);
  EXPECT_FALSE(response.complete);
  EXPECT_FALSE(response.body_error);
  EXPECT_EQ(first.body(), "data: 1\n\nevent: STOP\n\n");
  EXPECT_EQ(client->draining_connections(), 1u);
  EXPECT_EQ(client->idle_connections(), 0u);

  server.open_gate(1);
  ASSERT_TRUE(run_until([&] { return client->idle_connections() == 1; }));
  EXPECT_EQ(client->draining_connections(), 0u);
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result && *second.result) << (second.result ? second.result->error().message() : "timeout");
  EXPECT_TRUE((*second.result)->reused_connection);
  EXPECT_EQ(second.body(), "two");
  EXPECT_EQ(first.chunks.size(), 2u);  // the drained tail never reaches the callback
  EXPECT_EQ(server.accepted(), 1);
}

TEST_F(HttpClientTest, TailOverTheDrainLimitClosesTheConnection) {
  const std::string filler(std::size_t{16} * 1024, 'z');
  std::string tail;
  for (int i = 0; i < 5; ++i) tail += chunk(filler);  // 80 KiB after the final event: over the 64 KiB default
  RawHttpServer server(io_,
                       {{RawStep::read_request(), RawStep::write(std::string(kChunkedHead) + chunk("event: STOP\n\n")),
                         RawStep::write(tail), RawStep::write(chunk("")), RawStep::read_request(),
                         RawStep::write(http_response(200, "must not be used"))},
                        {RawStep::read_request(), RawStep::write(http_response(200, "fresh"))}});
  auto client = make_client();
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result);
  ASSERT_TRUE(run_until([&] { return client->draining_connections() == 0 && server.ended() == 1; }));
  EXPECT_EQ(client->idle_connections(), 0u);
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result && *second.result);
  EXPECT_EQ(second.body(), "fresh");
  EXPECT_FALSE((*second.result)->reused_connection);
  EXPECT_EQ(server.accepted(), 2);
}

TEST_F(HttpClientTest, TailUnderTheDrainLimitKeepsTheConnection) {
  const std::string filler(std::size_t{16} * 1024, 'z');
  std::string tail;
  for (int i = 0; i < 3; ++i) tail += chunk(filler);  // 48 KiB: under the 64 KiB default
  RawHttpServer server(io_,
                       {{RawStep::read_request(), RawStep::write(std::string(kChunkedHead) + chunk("event: STOP\n\n")),
                         RawStep::write(tail), RawStep::write(chunk("")), RawStep::read_request(),
                         RawStep::write(http_response(200, "two"))}});
  auto client = make_client();
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result);
  ASSERT_TRUE(run_until([&] { return client->idle_connections() == 1; }));
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result && *second.result);
  EXPECT_TRUE((*second.result)->reused_connection);
  EXPECT_EQ(server.accepted(), 1);
}

TEST_F(HttpClientTest, ContentLengthTailOverTheLimitIsNotRead) {
  // The length says 100 KiB are left after the final event: not worth reading, closed at once.
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(13 + 100 * 1024) + "\r\n\r\n";
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(head + "event: STOP\n\n")}});
  auto client = make_client();
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result);
  EXPECT_EQ(client->draining_connections(), 0u);
  EXPECT_EQ(client->idle_connections(), 0u);
  EXPECT_TRUE(run_until([&] { return server.ended() == 1; }));
}

TEST_F(HttpClientTest, ContentLengthTailIsDrainedAndTheConnectionKept) {
  const std::string tail = ": padding\n\n";
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(13 + tail.size()) + "\r\n\r\n";
  RawHttpServer server(
      io_, {{RawStep::read_request(), RawStep::write(head + "event: STOP\n\n"), RawStep::gate(1), RawStep::write(tail),
             RawStep::read_request(), RawStep::write(http_response(200, "two"))}});
  auto client = make_client();
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result);
  EXPECT_EQ(client->draining_connections(), 1u);
  server.open_gate(1);
  ASSERT_TRUE(run_until([&] { return client->idle_connections() == 1; }));
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result && *second.result);
  EXPECT_TRUE((*second.result)->reused_connection);
  EXPECT_EQ(server.accepted(), 1);
}

// A tool round trip: the next model call starts while the last response's final bytes are still on their
// way. It waits for the drain and reuses the connection instead of paying a new handshake.
TEST_F(HttpClientTest, ARequestRightAfterAFinishWaitsForTheDrainAndReusesTheConnection) {
  RawHttpServer server(io_,
                       {{RawStep::read_request(),
                         RawStep::write(std::string(kChunkedHead) + chunk("data: 1\n\n") + chunk("event: STOP\n\n")),
                         RawStep::pause(50ms), RawStep::write(chunk("")), RawStep::read_request(),
                         RawStep::write(http_response(200, "two"))},
                        {RawStep::read_request(), RawStep::write(http_response(200, "fresh"))}});
  auto client = make_client();
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result);
  ASSERT_EQ(client->draining_connections(), 1u);
  auto second = post(*client, server.url());  // at once, while the tail is 50 ms away
  ASSERT_TRUE(second.result && *second.result) << (second.result ? second.result->error().message() : "timeout");
  EXPECT_EQ(second.body(), "two");
  EXPECT_TRUE((*second.result)->reused_connection);
  EXPECT_EQ(server.accepted(), 1);
}

// The wait is bounded: a tail that takes longer than reuse_wait does not hold the next request back.
TEST_F(HttpClientTest, TheWaitForADrainIsBounded) {
  RawHttpServer server(io_, {{RawStep::read_request(),
                              RawStep::write(std::string(kChunkedHead) + chunk("event: STOP\n\n")), RawStep::hold()},
                             {RawStep::read_request(), RawStep::write(http_response(200, "fresh"))}});
  HttpClientOptions options;
  options.reuse_wait = 100ms;
  auto client = make_client(options);
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result);
  const auto started = Clock::now();
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result && *second.result) << (second.result ? second.result->error().message() : "timeout");
  EXPECT_GE(Clock::now() - started, 90ms);
  EXPECT_LT(Clock::now() - started, 2s);
  EXPECT_EQ(second.body(), "fresh");
  EXPECT_FALSE((*second.result)->reused_connection);
  EXPECT_EQ(server.accepted(), 2);
}

// Cancelling a request that waits for a drain ends it at once.
TEST_F(HttpClientTest, CancelWhileWaitingForADrain) {
  RawHttpServer server(io_, {{RawStep::read_request(),
                              RawStep::write(std::string(kChunkedHead) + chunk("event: STOP\n\n")), RawStep::hold()}});
  HttpClientOptions options;
  options.reuse_wait = 10s;
  auto client = make_client(options);
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result);
  support::CancelSource source;
  asio::steady_timer timer(io_, 50ms);
  timer.async_wait([&source](boost::system::error_code) { source.cancel(); });
  const auto started = Clock::now();
  auto second = post(*client, server.url(), source.token());
  ASSERT_TRUE(second.result.has_value());
  EXPECT_EQ(failure_of(second), HttpFailure::cancelled);
  EXPECT_LT(Clock::now() - started, 1s);
}

TEST_F(HttpClientTest, SlowTailIsClosedAfterTheDrainTimeoutWithoutDelayingTheCaller) {
  // The body never ends: the caller gets its response at once, the drain gives up after drain_timeout.
  RawHttpServer server(
      io_, {{RawStep::read_request(), RawStep::write(std::string(kChunkedHead) + chunk("event: STOP\n\n"))}});
  HttpClientOptions options;
  options.drain_timeout = 200ms;
  options.timeouts.idle = 30s;
  auto client = make_client(options);
  auto first = post(*client, server.url(), {}, finish_at_stop);
  const auto returned_at = Clock::now();
  ASSERT_TRUE(first.result && *first.result);
  EXPECT_EQ(client->draining_connections(), 1u);
  ASSERT_TRUE(run_until([&] { return client->draining_connections() == 0; }));
  EXPECT_GE(Clock::now() - returned_at, 150ms);
  EXPECT_EQ(client->idle_connections(), 0u);
  EXPECT_TRUE(run_until([&] { return server.ended() == 1; }));
}

TEST_F(HttpClientTest, CancelledWhenFinishingClosesInsteadOfDraining) {
  // Even with the whole body at hand (which would pool the connection), a cancelled request closes it.
  RawHttpServer server(io_, {{RawStep::read_request(),
                              RawStep::write(std::string(kChunkedHead) + chunk("event: STOP\n\n") + chunk(""))}});
  auto client = make_client();
  support::CancelSource source;
  auto first = post(*client, server.url(), source.token(), [&source](std::string_view piece) {
    source.cancel();
    return finish_at_stop(piece);
  });
  ASSERT_TRUE(first.result && *first.result);
  EXPECT_EQ(client->draining_connections(), 0u);
  EXPECT_EQ(client->idle_connections(), 0u);
  EXPECT_TRUE(run_until([&] { return server.ended() == 1; }));
}

TEST_F(HttpClientTest, DestroyingTheClientEndsADrain) {
  RawHttpServer server(
      io_, {{RawStep::read_request(), RawStep::write(std::string(kChunkedHead) + chunk("event: STOP\n\n"))}});
  auto client = make_client();
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result);
  ASSERT_EQ(client->draining_connections(), 1u);
  client.reset();
  EXPECT_TRUE(run_until([&] { return server.ended() == 1; }));
}

asio::awaitable<bool> shut_down(HttpClient& client) {
  co_await client.shutdown();
  co_return true;
}

TEST_F(HttpClientTest, ShutdownCancelsADrainInFlightAndWaitsForIt) {
  // The tail never comes: left alone, the drain would wait out drain_timeout.
  RawHttpServer server(
      io_, {{RawStep::read_request(), RawStep::write(std::string(kChunkedHead) + chunk("event: STOP\n\n"))}});
  auto client = make_client();
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result);
  ASSERT_EQ(client->draining_connections(), 1u);
  ASSERT_EQ(client->background_tasks(), 1u);
  const auto started = Clock::now();
  ASSERT_TRUE(run_bounded(io_, shut_down(*client), 2s));
  EXPECT_LT(Clock::now() - started, 2s);
  EXPECT_EQ(client->background_tasks(), 0u);
  EXPECT_EQ(client->draining_connections(), 0u);
  EXPECT_EQ(client->idle_connections(), 0u);
  EXPECT_TRUE(run_until([&] { return server.ended() == 1; }));
}

TEST_F(HttpClientTest, AfterShutdownAFinishedExchangeIsNotPooled) {
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(http_response(200, "one"))}});
  auto client = make_client();
  ASSERT_TRUE(run_bounded(io_, shut_down(*client), 2s));
  auto first = post(*client, server.url());
  ASSERT_TRUE(first.result && *first.result) << (first.result ? first.result->error().message() : "timeout");
  EXPECT_EQ(first.body(), "one");
  EXPECT_EQ(client->idle_connections(), 0u);
  EXPECT_EQ(client->background_tasks(), 0u);
}

TEST_F(HttpClientTest, ConnectionCloseResponseIsNotDrained) {
  RawHttpServer server(io_,
                       {{RawStep::read_request(),
                         RawStep::write("HTTP/1.1 200 OK\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                        chunk("event: STOP\n\n")),
                         RawStep::gate(1), RawStep::write(chunk("")), RawStep::close()},
                        {RawStep::read_request(), RawStep::write(http_response(200, "two"))}});
  auto client = make_client();
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result);
  EXPECT_EQ(client->draining_connections(), 0u);
  EXPECT_EQ(client->idle_connections(), 0u);
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result && *second.result);
  EXPECT_EQ(second.body(), "two");
  EXPECT_EQ(server.accepted(), 2);
}

// ---- errors and timeouts ----

TEST_F(HttpClientTest, ErrorStatusKeepsBoundedBodyAndHeaders) {
  const std::string big(std::size_t{100} * 1024, 'e');
  RawHttpServer server(
      io_, {{RawStep::read_request(),
             RawStep::write(http_response(429, R"({"error":"slow down"})", "retry-after: 3\r\n", "Too Many Requests")),
             RawStep::read_request(), RawStep::write(http_response(500, big)), RawStep::hold()}});
  HttpClientOptions options;
  options.max_error_body = 1024;
  auto client = make_client(options);
  auto limited = post(*client, server.url());
  ASSERT_TRUE(limited.result && *limited.result);
  EXPECT_EQ((*limited.result)->status, 429);
  EXPECT_EQ((*limited.result)->error_body, R"({"error":"slow down"})");
  EXPECT_TRUE(limited.chunks.empty());  // error bodies never reach the stream callback
  ASSERT_NE(find_header((*limited.result)->headers, "Retry-After"), nullptr);
  EXPECT_EQ(*find_header((*limited.result)->headers, "retry-after"), "3");

  auto huge = post(*client, server.url());
  ASSERT_TRUE(huge.result && *huge.result);
  EXPECT_EQ((*huge.result)->status, 500);
  EXPECT_EQ((*huge.result)->error_body.size(), 1024u);
  EXPECT_TRUE((*huge.result)->error_body_truncated);
  EXPECT_EQ(client->idle_connections(), 0u);  // not drained, so not reusable
}

TEST_F(HttpClientTest, ConnectTimeoutWhenTlsHandshakeNeverAnswers) {
  // The server accepts and says nothing: connect + handshake share the connect deadline.
  RawHttpServer server(io_, {{RawStep::hold()}});
  HttpClientOptions options;
  options.timeouts.connect = 200ms;
  auto client = make_client(options);
  const auto start = Clock::now();
  auto outcome = post(*client, "https://127.0.0.1:" + std::to_string(server.port()) + "/");
  const auto elapsed = Clock::now() - start;
  ASSERT_TRUE(outcome.result);
  ASSERT_FALSE(*outcome.result);
  EXPECT_EQ(failure_of(outcome), HttpFailure::connect_timeout) << outcome.result->error().message();
  EXPECT_EQ(outcome.result->error().code(), support::Errc::timeout);
  EXPECT_GE(elapsed, 150ms);
  EXPECT_LT(elapsed, 2s);
}

TEST_F(HttpClientTest, ConnectTimeoutWhenListenBacklogIsFull) {
  // A listener that never accepts, with its queue filled: further SYNs are dropped, so the TCP connect
  // itself hangs until our deadline.
  tcp::acceptor listener(io_);
  tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  listener.open(endpoint.protocol());
  listener.bind(endpoint);
  listener.listen(0);
  const auto target = listener.local_endpoint();
  std::vector<std::unique_ptr<tcp::socket>> fillers;
  for (int i = 0; i < 8; ++i) {
    auto socket = std::make_unique<tcp::socket>(io_);
    socket->async_connect(target, [](boost::system::error_code) {});
    fillers.push_back(std::move(socket));
  }
  io_.run_for(50ms);  // let the kernel queue what it will (a bounded run, not a sleep of the test)
  HttpClientOptions options;
  options.timeouts.connect = 300ms;
  options.timeouts.first_byte = 5s;
  auto client = make_client(options);
  auto outcome = post(*client, "http://127.0.0.1:" + std::to_string(target.port()) + "/");
  ASSERT_TRUE(outcome.result);
  ASSERT_FALSE(*outcome.result);
  EXPECT_EQ(failure_of(outcome), HttpFailure::connect_timeout) << outcome.result->error().message();
}

TEST_F(HttpClientTest, ConnectRefusedIsAConnectFailure) {
  std::uint16_t port;
  {
    tcp::acceptor probe(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = probe.local_endpoint().port();
  }  // closed: nothing listens there now
  auto client = make_client();
  auto outcome = post(*client, "http://127.0.0.1:" + std::to_string(port) + "/");
  ASSERT_TRUE(outcome.result);
  ASSERT_FALSE(*outcome.result);
  EXPECT_EQ(failure_of(outcome), HttpFailure::connect) << outcome.result->error().message();
}

TEST_F(HttpClientTest, FirstByteTimeout) {
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::hold()}});
  HttpClientOptions options;
  options.timeouts.first_byte = 200ms;
  auto client = make_client(options);
  const auto start = Clock::now();
  auto outcome = post(*client, server.url());
  ASSERT_TRUE(outcome.result);
  ASSERT_FALSE(*outcome.result);
  EXPECT_EQ(failure_of(outcome), HttpFailure::first_byte_timeout) << outcome.result->error().message();
  EXPECT_GE(Clock::now() - start, 150ms);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(HttpClientTest, IdleTimeoutMidStream) {
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(std::string(kChunkedHead) + chunk("data: 1\n\n")),
                              RawStep::hold()}});
  HttpClientOptions options;
  options.timeouts.idle = 200ms;
  auto client = make_client(options);
  auto outcome = post(*client, server.url());
  ASSERT_TRUE(outcome.result);
  ASSERT_TRUE(*outcome.result);
  const HttpResponse& response = **outcome.result;
  EXPECT_EQ(outcome.body(), "data: 1\n\n");
  EXPECT_FALSE(response.complete);
  ASSERT_TRUE(response.body_error);
  EXPECT_EQ(http_failure_of(*response.body_error), HttpFailure::idle_timeout) << response.body_error->message();
  EXPECT_EQ(client->idle_connections(), 0u);
}

TEST_F(HttpClientTest, SlowButSteadyStreamDoesNotHitIdleTimeout) {
  // Each pause is under the idle timeout, the total is over it: the timeout is per gap, not per body.
  RawScript script{RawStep::read_request(), RawStep::write(std::string(kChunkedHead))};
  for (int i = 0; i < 4; ++i) {
    script.push_back(RawStep::pause(100ms));
    script.push_back(RawStep::write(chunk("x")));
  }
  script.push_back(RawStep::write(chunk("")));
  RawHttpServer server(io_, {script});
  HttpClientOptions options;
  options.timeouts.idle = 300ms;
  auto client = make_client(options);
  auto outcome = post(*client, server.url());
  ASSERT_TRUE(outcome.result && *outcome.result);
  EXPECT_TRUE((*outcome.result)->complete);
  EXPECT_FALSE((*outcome.result)->body_error);
  EXPECT_EQ(outcome.body(), "xxxx");
}

TEST_F(HttpClientTest, ConnectionDroppedMidStreamIsABodyError) {
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(std::string(kChunkedHead) + chunk("data: 1\n\n")),
                              RawStep::close()}});
  auto client = make_client();
  auto outcome = post(*client, server.url());
  ASSERT_TRUE(outcome.result && *outcome.result);
  EXPECT_FALSE((*outcome.result)->complete);
  ASSERT_TRUE((*outcome.result)->body_error);
  EXPECT_EQ(http_failure_of(*(*outcome.result)->body_error), HttpFailure::closed);
}

// ---- cancellation ----

TEST_F(HttpClientTest, CancelMidStreamReturnsPromptly) {
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(std::string(kChunkedHead) + chunk("data: 1\n\n")),
                              RawStep::hold()}});
  HttpClientOptions options;
  options.timeouts.idle = 30s;  // only the cancellation can end this
  auto client = make_client(options);
  support::CancelSource source;
  Clock::time_point cancelled_at;
  auto outcome = post(*client, server.url(), source.token(), [&](std::string_view) {
    cancelled_at = Clock::now();
    source.cancel();
    return BodyAction::more;
  });
  const auto returned_at = Clock::now();
  ASSERT_TRUE(outcome.result);
  ASSERT_TRUE(*outcome.result);
  ASSERT_TRUE((*outcome.result)->body_error);
  EXPECT_EQ(http_failure_of(*(*outcome.result)->body_error), HttpFailure::cancelled);
  EXPECT_EQ((*outcome.result)->body_error->code(), support::Errc::cancelled);
  EXPECT_LT(returned_at - cancelled_at, 100ms);
  EXPECT_EQ(client->idle_connections(), 0u);
}

TEST_F(HttpClientTest, CancelFromAnotherThreadBeforeResponse) {
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::hold()}});
  auto client = make_client();
  support::CancelSource source;
  std::thread canceller;
  // Cancel from a foreign thread once the server has the request: the abort must hop onto our executor.
  asio::steady_timer poll(io_);
  std::function<void()> watch = [&] {
    if (!server.requests().empty()) {
      canceller = std::thread([&source] { source.cancel(); });
      return;
    }
    poll.expires_after(5ms);
    poll.async_wait([&](boost::system::error_code ec) {
      if (!ec) watch();
    });
  };
  watch();
  const auto start = Clock::now();
  auto outcome = post(*client, server.url(), source.token());
  if (canceller.joinable()) canceller.join();
  ASSERT_TRUE(outcome.result);
  ASSERT_FALSE(*outcome.result);
  EXPECT_EQ(failure_of(outcome), HttpFailure::cancelled) << outcome.result->error().message();
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST_F(HttpClientTest, AlreadyCancelledTokenFailsAtOnce) {
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::hold()}});
  auto client = make_client();
  support::CancelSource source;
  source.cancel();
  auto outcome = post(*client, server.url(), source.token());
  EXPECT_EQ(failure_of(outcome), HttpFailure::cancelled);
  EXPECT_EQ(server.accepted(), 0);
}

TEST_F(HttpClientTest, CallbackCanStopReading) {
  RawHttpServer server(
      io_, {{RawStep::read_request(), RawStep::write(std::string(kChunkedHead) + chunk("first")), RawStep::hold()}});
  auto client = make_client();
  auto outcome = post(*client, server.url(), {}, [](std::string_view) { return BodyAction::abort; });
  ASSERT_TRUE(outcome.result && *outcome.result);
  EXPECT_TRUE((*outcome.result)->stopped);
  EXPECT_FALSE((*outcome.result)->complete);
  EXPECT_EQ(client->idle_connections(), 0u);
}

// ---- proxies ----

TEST_F(HttpClientTest, PlainHttpGoesThroughProxyInAbsoluteForm) {
  // The "proxy" is a scripted server: it must see the absolute-form target and the origin's Host.
  RawHttpServer proxy(io_, {{RawStep::read_request(), RawStep::write(http_response(200, "via proxy"))}});
  HttpClientOptions options;
  options.proxy.http_proxy = *parse_url("http://user:secret@127.0.0.1:" + std::to_string(proxy.port()));
  auto client = make_client(options);
  auto outcome = post(*client, "http://model.test.invalid:8080/v1/chat/completions");
  ASSERT_TRUE(outcome.result && *outcome.result) << (outcome.result ? outcome.result->error().message() : "");
  EXPECT_EQ(outcome.body(), "via proxy");
  ASSERT_EQ(proxy.requests().size(), 1u);
  const std::string& request = proxy.requests()[0];
  EXPECT_TRUE(request.starts_with("POST http://model.test.invalid:8080/v1/chat/completions HTTP/1.1\r\n")) << request;
  EXPECT_NE(request.find("Host: model.test.invalid:8080\r\n"), std::string::npos) << request;
  EXPECT_NE(request.find("Proxy-Authorization: Basic dXNlcjpzZWNyZXQ=\r\n"), std::string::npos) << request;
}

TEST_F(HttpClientTest, NoProxyBypassesTheProxy) {
  RawHttpServer proxy(io_, {{RawStep::read_request(), RawStep::write(http_response(502, "wrong way"))}});
  RawHttpServer origin(io_, {{RawStep::read_request(), RawStep::write(http_response(200, "direct"))}});
  HttpClientOptions options;
  options.proxy.http_proxy = *parse_url("http://127.0.0.1:" + std::to_string(proxy.port()));
  options.proxy.no_proxy = split_no_proxy("localhost,127.0.0.1");
  auto client = make_client(options);
  auto outcome = post(*client, origin.url());
  ASSERT_TRUE(outcome.result && *outcome.result);
  EXPECT_EQ(outcome.body(), "direct");
  EXPECT_EQ(proxy.accepted(), 0);
  EXPECT_EQ(origin.accepted(), 1);
}

// ---- TLS ----

class HttpTlsTest : public HttpClientTest {
 protected:
  static void SetUpTestSuite() {
    good_cert = new testing::TestCertificate(
        testing::make_self_signed("agentd test", "DNS:localhost,DNS:api.test.invalid,IP:127.0.0.1"));
    other_cert = new testing::TestCertificate(testing::make_self_signed("elsewhere", "DNS:elsewhere.test.invalid"));
  }
  static void TearDownTestSuite() {
    delete good_cert;
    delete other_cert;
  }
  static inline testing::TestCertificate* good_cert = nullptr;
  static inline testing::TestCertificate* other_cert = nullptr;
};

TEST_F(HttpTlsTest, RefusesSelfSignedCertificateByDefault) {
  auto tls = testing::make_server_tls(*good_cert);
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(http_response(200, "secret"))}}, tls.get());
  auto client = make_client();
  auto outcome = post(*client, server.url());
  ASSERT_TRUE(outcome.result);
  ASSERT_FALSE(*outcome.result);
  EXPECT_EQ(failure_of(outcome), HttpFailure::tls_verify) << outcome.result->error().message();
  EXPECT_NE(outcome.result->error().message().find("self"), std::string::npos) << outcome.result->error().message();
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(HttpTlsTest, AcceptsCertificateWhenItsCaIsAdded) {
  auto tls = testing::make_server_tls(*good_cert);
  RawHttpServer server(io_,
                       {{RawStep::read_request(), RawStep::write(http_response(200, "secret")), RawStep::read_request(),
                         RawStep::write(http_response(200, "again"))}},
                       tls.get());
  HttpClientOptions options;
  options.extra_ca_pem = good_cert->cert_pem;
  auto client = make_client(options);
  auto outcome = post(*client, server.url("/v1/messages"));
  ASSERT_TRUE(outcome.result);
  ASSERT_TRUE(*outcome.result) << outcome.result->error().message();
  EXPECT_EQ(outcome.body(), "secret");
  auto again = post(*client, server.url("/v1/messages"));
  ASSERT_TRUE(again.result && *again.result);
  EXPECT_TRUE((*again.result)->reused_connection);
  EXPECT_EQ(server.accepted(), 1);

  // By name too (SNI + DNS SAN): localhost resolves to loopback.
  RawHttpServer named(io_, {{RawStep::read_request(), RawStep::write(http_response(200, "named"))}}, tls.get());
  auto by_name = post(*client, "https://localhost:" + std::to_string(named.port()) + "/");
  if (by_name.result && !*by_name.result && http_failure_of(by_name.result->error()) == HttpFailure::connect) {
    GTEST_SKIP() << "localhost does not resolve to 127.0.0.1 here: " << by_name.result->error().message();
  }
  ASSERT_TRUE(by_name.result && *by_name.result) << (by_name.result ? by_name.result->error().message() : "");
  EXPECT_EQ(by_name.body(), "named");
}

TEST_F(HttpTlsTest, PooledTlsConnectionClosedWhileIdleIsReplacedWithoutAnError) {
  auto tls = testing::make_server_tls(*good_cert);
  RawHttpServer server(io_,
                       {{RawStep::read_request(), RawStep::write(http_response(200, "one")), RawStep::close()},
                        {RawStep::read_request(), RawStep::write(http_response(200, "two"))}},
                       tls.get());
  HttpClientOptions options;
  options.extra_ca_pem = good_cert->cert_pem;
  auto client = make_client(options);
  auto first = post(*client, server.url());
  ASSERT_TRUE(first.result && *first.result) << (first.result ? first.result->error().message() : "timeout");
  EXPECT_EQ(client->idle_connections(), 1u);
  ASSERT_TRUE(run_until([&] { return server.ended() == 1; }));
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result);
  ASSERT_TRUE(*second.result) << second.result->error().message();
  EXPECT_EQ(second.body(), "two");
  EXPECT_FALSE((*second.result)->reused_connection);
  EXPECT_EQ(server.accepted(), 2);
}

TEST_F(HttpTlsTest, FinishedTlsStreamKeepsItsConnection) {
  auto tls = testing::make_server_tls(*good_cert);
  RawHttpServer server(
      io_,
      {{RawStep::read_request(),
        RawStep::write(std::string(kChunkedHead) + chunk("data: 1\n\n") + chunk("event: STOP\n\n")), RawStep::gate(1),
        RawStep::write(chunk("")), RawStep::read_request(), RawStep::write(http_response(200, "two"))}},
      tls.get());
  HttpClientOptions options;
  options.extra_ca_pem = good_cert->cert_pem;
  auto client = make_client(options);
  auto first = post(*client, server.url(), {}, finish_at_stop);
  ASSERT_TRUE(first.result && *first.result) << (first.result ? first.result->error().message() : "timeout");
  EXPECT_EQ(client->draining_connections(), 1u);
  server.open_gate(1);
  ASSERT_TRUE(run_until([&] { return client->idle_connections() == 1; }));
  auto second = post(*client, server.url());
  ASSERT_TRUE(second.result && *second.result);
  EXPECT_TRUE((*second.result)->reused_connection);
  EXPECT_EQ(server.accepted(), 1);
}

TEST_F(HttpTlsTest, RefusesCertificateForAnotherHostEvenWhenTrusted) {
  auto tls = testing::make_server_tls(*other_cert);
  RawHttpServer server(io_, {{RawStep::read_request(), RawStep::write(http_response(200, "secret"))}}, tls.get());
  HttpClientOptions options;
  options.extra_ca_pem = other_cert->cert_pem;
  auto client = make_client(options);
  auto outcome = post(*client, server.url());
  ASSERT_TRUE(outcome.result);
  ASSERT_FALSE(*outcome.result);
  EXPECT_EQ(failure_of(outcome), HttpFailure::tls_verify) << outcome.result->error().message();
  EXPECT_NE(outcome.result->error().message().find("host name"), std::string::npos);
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(HttpTlsTest, HttpsThroughConnectProxy) {
  auto tls = testing::make_server_tls(*good_cert);
  RawHttpServer origin(io_, {{RawStep::read_request(), RawStep::write(http_response(200, "tunnelled"))}}, tls.get());
  testing::TunnelProxy proxy(io_, origin.port());
  HttpClientOptions options;
  options.extra_ca_pem = good_cert->cert_pem;
  options.proxy.https_proxy = *parse_url("http://127.0.0.1:" + std::to_string(proxy.port()));
  auto client = make_client(options);
  // A name that cannot resolve: only the proxy can reach it, and TLS verifies that name, not the proxy's.
  auto outcome = post(*client, "https://api.test.invalid/v1/messages");
  ASSERT_TRUE(outcome.result);
  ASSERT_TRUE(*outcome.result) << outcome.result->error().message();
  EXPECT_EQ(outcome.body(), "tunnelled");
  ASSERT_EQ(proxy.connect_heads().size(), 1u);
  EXPECT_TRUE(proxy.connect_heads()[0].starts_with("CONNECT api.test.invalid:443 HTTP/1.1\r\n"))
      << proxy.connect_heads()[0];
  ASSERT_EQ(origin.requests().size(), 1u);
  EXPECT_NE(origin.requests()[0].find("Host: api.test.invalid\r\n"), std::string::npos) << origin.requests()[0];
}

TEST_F(HttpTlsTest, ProxyRefusingConnectIsAProxyFailure) {
  RawHttpServer proxy(io_,
                      {{RawStep::read_request(), RawStep::write(http_response(407, "", "Proxy-Authenticate: Basic\r\n",
                                                                              "Proxy Authentication Required"))}});
  HttpClientOptions options;
  options.proxy.https_proxy = *parse_url("http://127.0.0.1:" + std::to_string(proxy.port()));
  auto client = make_client(options);
  auto outcome = post(*client, "https://api.test.invalid/v1/messages");
  ASSERT_TRUE(outcome.result);
  ASSERT_FALSE(*outcome.result);
  EXPECT_EQ(failure_of(outcome), HttpFailure::proxy) << outcome.result->error().message();
  EXPECT_NE(outcome.result->error().message().find("407"), std::string::npos);
}

// Sets or clears an environment variable for one scope, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;  // NOLINT(concurrency-mt-unsafe): tests run one by one
    set(value);
  }
  ~ScopedEnv() { set(saved_ ? saved_->c_str() : nullptr); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void set(const char* value) {
    if (value != nullptr) {
      ::setenv(name_, value, 1);  // NOLINT(concurrency-mt-unsafe)
    } else {
      ::unsetenv(name_);  // NOLINT(concurrency-mt-unsafe)
    }
  }
  const char* name_;
  std::optional<std::string> saved_;
};

TEST_F(HttpTlsTest, DefaultClientVerifiesAgainstTheSystemCaStore) {
  // The default client uses the system store, found the way OpenSSL always finds it. SSL_CERT_FILE (its
  // standard override of the store's location) first names a file holding only our test CA, then is
  // cleared so the built-in location (the distribution's store) applies. The TLS context is made on a
  // client's first https request, which is when the variable is read.
  auto tls = testing::make_server_tls(*good_cert);
  RawHttpServer server(io_,
                       {{RawStep::read_request(), RawStep::write(http_response(200, "trusted"))},
                        {RawStep::read_request(), RawStep::write(http_response(200, "must not be trusted"))}},
                       tls.get());
  const std::filesystem::path ca_file =
      std::filesystem::temp_directory_path() / ("agentd_http_test_ca_" + std::to_string(::getpid()) + ".pem");
  std::ofstream(ca_file) << good_cert->cert_pem;
  Outcome trusted;
  {
    const ScopedEnv env("SSL_CERT_FILE", ca_file.c_str());
    auto client = HttpClient::create(io_.get_executor(), HttpClientOptions{});
    ASSERT_TRUE(client);
    trusted = post(**client, server.url());
  }
  std::filesystem::remove(ca_file);
  ASSERT_TRUE(trusted.result);
  ASSERT_TRUE(*trusted.result) << trusted.result->error().message();
  EXPECT_EQ(trusted.body(), "trusted");

  Outcome refused;
  {
    const ScopedEnv env("SSL_CERT_FILE", nullptr);
    auto client = HttpClient::create(io_.get_executor(), HttpClientOptions{});
    ASSERT_TRUE(client);
    refused = post(**client, server.url());
  }
  ASSERT_TRUE(refused.result);
  ASSERT_FALSE(*refused.result);
  EXPECT_EQ(failure_of(refused), HttpFailure::tls_verify) << refused.result->error().message();
}

TEST(HttpClientCreate, RejectsUnparsableExtraCa) {
  asio::io_context io;
  HttpClientOptions options;
  options.use_system_ca = false;
  options.extra_ca_pem = "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  auto client = HttpClient::create(io.get_executor(), options);
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error().code(), support::Errc::invalid_argument);
}

}  // namespace
}  // namespace agentd::net
