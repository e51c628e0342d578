// The retry policy: decisions as a table, backoff and jitter bounds with a seeded generator, Retry-After
// parsing, and the mapping of our recorded HTTP error responses (test/fixtures/http) onto
// ModelError.
#include "core/model/retry.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace agentd::core::model {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

// ---- raw HTTP fixtures ----

struct RawResponse {
  int status = 0;
  net::HttpHeaders headers;
  std::string body;
};

std::optional<RawResponse> read_http_fixture(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  RawResponse out;
  const std::size_t head_end = all.find("\r\n\r\n");
  if (head_end == std::string::npos || !all.starts_with("HTTP/1.1 ")) return std::nullopt;
  out.status = std::stoi(all.substr(9, 3));
  out.body = all.substr(head_end + 4);
  std::size_t line = all.find("\r\n") + 2;
  while (line < head_end) {
    const std::size_t end = all.find("\r\n", line);
    const std::string field = all.substr(line, end - line);
    const std::size_t colon = field.find(':');
    std::size_t value = colon + 1;
    while (value < field.size() && field[value] == ' ') ++value;
    out.headers.push_back({field.substr(0, colon), field.substr(value)});
    line = end + 2;
  }
  return out;
}

const std::filesystem::path kOurs = std::filesystem::path(AGENTD_SOURCE_DIR) / "test/fixtures/http";
// A fixed "now" so HTTP-date arithmetic is exact.
const auto kNow = std::chrono::sys_days(std::chrono::year(2015) / 10 / 21) + 7h + 27min + 50s;

ModelError map_fixture(const std::filesystem::path& path) {
  auto raw = read_http_fixture(path);
  EXPECT_TRUE(raw) << "cannot read " << path;
  if (!raw) return {};
  return model_error_from_http(raw->status, raw->headers, raw->body, kNow);
}

ModelError retryable_error(std::optional<milliseconds> retry_after = std::nullopt) {
  ModelError error;
  error.kind = ErrorKind::server;
  error.retryable = true;
  error.retry_after = retry_after;
  return error;
}

// ---- decisions ----

TEST(RetryDecide, Table) {
  RetryPolicy policy;  // 4 attempts, 500 ms base, 30 s cap, retry-after up to 60 s, jitter 0.25
  ModelError quota = map_fixture(kOurs / "openai_429_insufficient_quota.http");
  ModelError limited = map_fixture(kOurs / "anthropic_429_retry_after.http");
  ModelError overloaded = map_fixture(kOurs / "anthropic_529_overloaded.http");
  ModelError invalid = map_fixture(kOurs / "anthropic_400_prompt_too_long.http");
  struct Case {
    const char* name;
    ModelError error;
    int attempt;
    bool output_delivered;
    RetryDecision want;
  } cases[] = {
      {"429 with retry-after waits what it says", limited, 1, false, {true, 17000ms, "retry-after"}},
      {"529 without retry-after backs off", overloaded, 1, false, {true, 500ms, "backoff"}},
      {"second failure doubles", overloaded, 2, false, {true, 1000ms, "backoff"}},
      {"third failure doubles again", overloaded, 3, false, {true, 2000ms, "backoff"}},
      {"attempts exhausted", overloaded, 4, false, {false, 0ms, "attempts exhausted"}},
      {"never after output", overloaded, 1, true, {false, 0ms, "output already reached the client"}},
      {"never after output, even with retry-after",
       limited,
       1,
       true,
       {false, 0ms, "output already reached the client"}},
      {"insufficient_quota is not retried", quota, 1, false, {false, 0ms, "not retryable"}},
      {"invalid request is not retried", invalid, 1, false, {false, 0ms, "not retryable"}},
      {"retry-after above the cap gives up", retryable_error(61s), 1, false, {false, 0ms, "retry-after too long"}},
      {"retry-after at the cap waits", retryable_error(60s), 1, false, {true, 60000ms, "retry-after"}},
      {"retry-after zero retries at once", retryable_error(0ms), 1, false, {true, 0ms, "retry-after"}},
  };
  for (const Case& c : cases) {
    // unit_random 0 means no jitter taken off, so the backoff values are exact.
    EXPECT_EQ(decide_retry(policy, c.attempt, c.error, c.output_delivered, 0.0), c.want) << c.name;
  }
}

TEST(RetryDecide, TransportFailuresBeforeTheFirstByte) {
  RetryPolicy policy;
  auto decide = [&](net::HttpFailure failure) {
    const support::Error error(support::Errc::unavailable, "x", static_cast<int>(failure));
    return decide_retry(policy, 1, model_error_from_transport(error), false, 0.0).retry;
  };
  EXPECT_TRUE(decide(net::HttpFailure::connect));
  EXPECT_TRUE(decide(net::HttpFailure::connect_timeout));
  EXPECT_TRUE(decide(net::HttpFailure::closed));
  EXPECT_TRUE(decide(net::HttpFailure::first_byte_timeout));
  EXPECT_TRUE(decide(net::HttpFailure::resolve));
  EXPECT_TRUE(decide(net::HttpFailure::tls));
  EXPECT_FALSE(decide(net::HttpFailure::tls_verify));
  EXPECT_FALSE(decide(net::HttpFailure::bad_request));
  EXPECT_FALSE(decide(net::HttpFailure::cancelled));

  const support::Error stalled(support::Errc::timeout, "stalled", static_cast<int>(net::HttpFailure::idle_timeout));
  const ModelError mapped = model_error_from_transport(stalled);
  EXPECT_EQ(mapped.kind, ErrorKind::network);
  EXPECT_EQ(mapped.source, ErrorSource::transport);
  EXPECT_EQ(mapped.code, "idle_timeout");
  EXPECT_EQ(mapped.message, "stalled");
  // A stall before any event reached the client may be retried; after output it may not.
  EXPECT_TRUE(decide_retry(policy, 1, mapped, false, 0.5).retry);
  EXPECT_FALSE(decide_retry(policy, 1, mapped, true, 0.5).retry);
}

TEST(RetryBackoff, JitterStaysWithinBoundsAndCap) {
  RetryPolicy policy;
  policy.base_delay = 1000ms;
  policy.max_delay = 8000ms;
  policy.jitter = 0.5;
  RetryJitter jitter(42);
  for (int attempt = 1; attempt <= 8; ++attempt) {
    const double full = std::min(8000.0, 1000.0 * (1 << (attempt - 1)));
    milliseconds lowest = milliseconds::max();
    milliseconds highest = milliseconds::min();
    for (int i = 0; i < 2000; ++i) {
      const milliseconds d = backoff_delay(policy, attempt, jitter.next());
      lowest = std::min(lowest, d);
      highest = std::max(highest, d);
    }
    EXPECT_GE(lowest.count(), full * 0.5) << attempt;
    EXPECT_LE(highest.count(), full) << attempt;
    // The jitter really spreads the delays across the range (2000 draws cover it well).
    EXPECT_LT(lowest.count(), full * 0.55) << attempt;
    EXPECT_GT(highest.count(), full * 0.95) << attempt;
  }
  EXPECT_EQ(backoff_delay(policy, 1, 0.0), 1000ms);
  EXPECT_EQ(backoff_delay(policy, 1, 0.999999), 500ms);
  EXPECT_EQ(backoff_delay(policy, 100, 0.0), 8000ms);  // no overflow far past the cap
}

TEST(RetryBackoff, SeededJitterIsDeterministic) {
  RetryJitter a(7);
  RetryJitter b(7);
  RetryPolicy policy;
  for (int i = 0; i < 10; ++i) {
    const double ua = a.next();
    EXPECT_GE(ua, 0.0);
    EXPECT_LT(ua, 1.0);
    EXPECT_EQ(decide_retry(policy, 2, retryable_error(), false, ua),
              decide_retry(policy, 2, retryable_error(), false, b.next()));
  }
}

// ---- Retry-After ----

TEST(RetryAfter, ParsesSecondsAndHttpDates) {
  EXPECT_EQ(parse_retry_after("17", kNow), 17000ms);
  EXPECT_EQ(parse_retry_after(" 4 ", kNow), 4000ms);
  EXPECT_EQ(parse_retry_after("0", kNow), 0ms);
  EXPECT_EQ(parse_retry_after("1.5", kNow), 1500ms);
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", kNow), 10000ms);
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", kNow), 0ms);  // in the past: now
  EXPECT_EQ(parse_retry_after("Thu, 22 Oct 2015 07:27:50 GMT", kNow), 86400000ms);
  EXPECT_EQ(parse_retry_after("", kNow), std::nullopt);
  EXPECT_EQ(parse_retry_after("-1", kNow), std::nullopt);
  EXPECT_EQ(parse_retry_after("soon", kNow), std::nullopt);
  EXPECT_EQ(parse_retry_after("Wed, 32 Oct 2015 07:28:00 GMT", kNow), std::nullopt);
  EXPECT_EQ(parse_retry_after("Wed, 21 Foo 2015 07:28:00 GMT", kNow), std::nullopt);
  EXPECT_EQ(parse_retry_after("99999999999", kNow), std::nullopt);
}

TEST(RetryAfter, MillisecondsHeaderWins) {
  EXPECT_EQ(retry_after_from_headers({{"Retry-After", "2"}, {"retry-after-ms", "1250"}}, kNow), 1250ms);
  EXPECT_EQ(retry_after_from_headers({{"Retry-After", "2"}}, kNow), 2000ms);
  EXPECT_EQ(retry_after_from_headers({{"retry-after-ms", "junk"}, {"retry-after", "3"}}, kNow), 3000ms);
  EXPECT_EQ(retry_after_from_headers({}, kNow), std::nullopt);
}

// ---- HTTP errors -> ModelError ----

struct Expected {
  const char* file;
  ErrorKind kind;
  bool retryable;
  std::optional<milliseconds> retry_after;
  const char* code;
  const char* message_part;
};

void expect_mapping(const std::filesystem::path& dir, const Expected& e) {
  SCOPED_TRACE(e.file);
  const ModelError error = map_fixture(dir / e.file);
  EXPECT_EQ(error_kind_name(error.kind), error_kind_name(e.kind));
  EXPECT_EQ(error.retryable, e.retryable);
  EXPECT_EQ(error.retry_after, e.retry_after);
  EXPECT_EQ(error.code, e.code);
  EXPECT_NE(error.message.find(e.message_part), std::string::npos) << error.message;
  EXPECT_EQ(error.source, ErrorSource::http);
  EXPECT_GT(error.http_status, 0);
}

TEST(RetryHttpErrors, OurFixtures) {
  const Expected cases[] = {
      {"anthropic_429_retry_after.http", ErrorKind::rate_limited, true, 17000ms, "rate_limit_error", "rate limit"},
      {"anthropic_529_overloaded.http", ErrorKind::overloaded, true, std::nullopt, "overloaded_error", "Overloaded"},
      {"anthropic_400_prompt_too_long.http", ErrorKind::context_too_long, false, std::nullopt, "invalid_request_error",
       "prompt is too long"},
      {"anthropic_401_auth.http", ErrorKind::auth, false, std::nullopt, "authentication_error", "x-api-key"},
      {"anthropic_400_invalid_request.http", ErrorKind::invalid_request, false, std::nullopt, "invalid_request_error",
       "tool_result"},
      {"openai_429_insufficient_quota.http", ErrorKind::rate_limited, false, std::nullopt, "insufficient_quota",
       "quota"},
      {"openai_429_retry_after_ms.http", ErrorKind::rate_limited, true, 1250ms, "rate_limit_exceeded", "Rate limit"},
      // The retry-after header wins over the delay the message names.
      {"openai_429_rate_limit_reset_headers.http", ErrorKind::rate_limited, true, 4000ms, "rate_limit_exceeded",
       "tokens per min"},
      {"openai_400_context_length.http", ErrorKind::context_too_long, false, std::nullopt, "context_length_exceeded",
       "maximum context length"},
      {"openai_500_server_error.http", ErrorKind::server, true, std::nullopt, "server_error", "server had an error"},
      {"ollama_404_model_not_found.http", ErrorKind::invalid_request, false, std::nullopt, "error", "not found"},
      {"gateway_502_html.http", ErrorKind::server, true, std::nullopt, "http_502", "502 Bad Gateway"},
      {"gateway_503_date_no_retry.http", ErrorKind::server, false, 10000ms, "http_503", "maintenance"},
  };
  for (const Expected& e : cases) expect_mapping(kOurs, e);
}

TEST(RetryHttpErrors, ShouldRetryHeaderOverridesTheStatus) {
  const ModelError forced = model_error_from_http(409, {{"x-should-retry", "true"}}, "conflict", kNow);
  EXPECT_EQ(forced.kind, ErrorKind::invalid_request);
  EXPECT_TRUE(forced.retryable);
  const ModelError refused = model_error_from_http(500, {{"X-Should-Retry", "false"}}, "", kNow);
  EXPECT_EQ(refused.kind, ErrorKind::server);
  EXPECT_FALSE(refused.retryable);
  EXPECT_EQ(refused.message, "HTTP 500");
}

TEST(RetryHttpErrors, StatusKindsWithoutABody) {
  struct Case {
    int status;
    ErrorKind kind;
    bool retryable;
  } cases[] = {
      {400, ErrorKind::invalid_request, false},
      {401, ErrorKind::auth, false},
      {403, ErrorKind::auth, false},
      {404, ErrorKind::invalid_request, false},
      {408, ErrorKind::network, true},
      {422, ErrorKind::invalid_request, false},
      {429, ErrorKind::rate_limited, true},
      {500, ErrorKind::server, true},
      {502, ErrorKind::server, true},
      {503, ErrorKind::server, true},
      {529, ErrorKind::overloaded, true},
      {302, ErrorKind::server, false},
  };
  for (const Case& c : cases) {
    const ModelError error = model_error_from_http(c.status, {}, "", kNow);
    EXPECT_EQ(error_kind_name(error.kind), error_kind_name(c.kind)) << c.status;
    EXPECT_EQ(error.retryable, c.retryable) << c.status;
    EXPECT_EQ(error.http_status, c.status);
  }
}

TEST(RetryHttpErrors, LongPlainBodiesAreCutInTheMessage) {
  const ModelError error = model_error_from_http(502, {}, std::string(5000, 'z'), kNow);
  EXPECT_LT(error.message.size(), 300u);
  EXPECT_TRUE(error.message.ends_with("..."));
}

}  // namespace
}  // namespace agentd::core::model
