// The retry policy for model calls: which failures are worth another attempt and after how long, and the
// mapping of HTTP error responses and transport failures onto ModelError, so the policy sees one shape
// whatever failed. Pure functions: the caller passes the clock reading and the random sample.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string_view>

#include "core/model/model_event.h"
#include "core/net/http_client.h"
#include "core/support/result.h"

namespace agentd::core::model {

struct RetryPolicy {
  int max_attempts = 4;  // attempts in all, the first one included
  std::chrono::milliseconds base_delay{500};
  std::chrono::milliseconds max_delay{30'000};  // cap on our own exponential backoff
  // A server asking for a longer wait than this is not waited for: the error (with its retry_after)
  // goes to the client instead of a turn that silently hangs for minutes.
  std::chrono::milliseconds max_retry_after{60'000};
  double jitter = 0.25;  // the fraction of each backoff that is randomised away, 0..1
};

struct RetryDecision {
  bool retry = false;
  std::chrono::milliseconds delay{0};
  std::string_view reason;  // a short static phrase for the log line and the trace span

  friend bool operator==(const RetryDecision&, const RetryDecision&) = default;
};

// Whether to retry after attempt number `attempt` (1 for the first) failed with `error`.
// `output_delivered`: some ModelEvent of this attempt already reached the client, so a retry would
// duplicate output: never retried. `unit_random` is uniform in [0, 1) (see RetryJitter).
RetryDecision decide_retry(const RetryPolicy& policy, int attempt, const ModelError& error, bool output_delivered,
                           double unit_random) noexcept;

// base_delay * 2^(attempt-1), capped at max_delay, minus up to `jitter` of itself:
// within [d * (1 - jitter), d].
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int attempt, double unit_random) noexcept;

// A Retry-After value: delay-seconds ("17", also "1.5") or an IMF-fixdate HTTP-date
// ("Wed, 21 Oct 2015 07:28:00 GMT", read relative to `now`; a past date means 0).
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                           std::chrono::system_clock::time_point now);
// retry-after-ms (OpenAI, Anthropic SDKs) first, then retry-after.
std::optional<std::chrono::milliseconds> retry_after_from_headers(const net::HttpHeaders& headers,
                                                                  std::chrono::system_clock::time_point now);

// A non-2xx response as a ModelError (source http). The status decides the kind, the body (Anthropic or
// OpenAI error JSON, or plain text) refines it: context_too_long, insufficient_quota (not retried).
// `x-should-retry: true|false` overrides whether it is retryable.
ModelError model_error_from_http(int status, const net::HttpHeaders& headers, std::string_view body,
                                 std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

// A failure below HTTP (an HttpClient error or an HttpResponse::body_error) as a network ModelError
// (source transport). Retryable unless retrying cannot help (bad URL, certificate, cancellation).
ModelError model_error_from_transport(const support::Error& error);

// The random source for decide_retry: seeded for tests, from std::random_device otherwise.
class RetryJitter {
 public:
  RetryJitter() : engine_(std::random_device{}()) {}
  explicit RetryJitter(std::uint64_t seed) : engine_(seed) {}
  double next() { return std::uniform_real_distribution<double>(0.0, 1.0)(engine_); }

 private:
  std::mt19937_64 engine_;
};

}  // namespace agentd::core::model
