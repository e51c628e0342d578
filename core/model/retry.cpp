// Retry decisions and the mapping of HTTP/transport failures onto ModelError. The error-body reading
// reuses the providers' own error mappers (anthropic_error, openai_error), so an error means the same
// whether it came inside a 200 stream or as an HTTP status.
#include "core/model/retry.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/model/anthropic_stream.h"
#include "core/model/json_access.h"
#include "core/model/openai_stream.h"
#include "core/model/stream_decoder.h"
#include "core/support/json.h"
#include "core/support/text.h"

namespace agentd::core::model {

using std::chrono::milliseconds;

namespace {

constexpr std::size_t kMessageExcerpt = 200;
constexpr double kMaxRetryAfterSeconds = 7 * 24 * 3600.0;  // anything longer is nonsense; treat as unparsable

// A non-negative decimal number, "17" or "1.5", and nothing else.
std::optional<double> parse_decimal(std::string_view s) noexcept {
  std::size_t used = 0;
  auto value = parse_decimal_prefix(s, used);
  if (!value || used != s.size()) return std::nullopt;
  return value;
}

std::optional<int> parse_int(std::string_view s) noexcept {
  if (s.empty() || s.size() > 4) return std::nullopt;
  int value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT", the only HTTP-date form senders may generate (RFC 9110).
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view s) {
  static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  // "Www, DD Mon YYYY HH:MM:SS GMT" is exactly 29 characters.
  if (s.size() != 29 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' || s[19] != ':' ||
      s[22] != ':' || s[25] != ' ' || s.substr(26) != "GMT") {
    return std::nullopt;
  }
  const auto day = parse_int(s.substr(5, 2));
  const auto year = parse_int(s.substr(12, 4));
  const auto hour = parse_int(s.substr(17, 2));
  const auto minute = parse_int(s.substr(20, 2));
  const auto second = parse_int(s.substr(23, 2));
  const std::string_view month_name = s.substr(8, 3);
  const auto month_it = std::find(std::begin(kMonths), std::end(kMonths), month_name);
  if (!day || !year || !hour || !minute || !second || month_it == std::end(kMonths) || *hour > 23 || *minute > 59 ||
      *second > 60) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(*year),
                                         std::chrono::month(static_cast<unsigned>(month_it - std::begin(kMonths) + 1)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) return std::nullopt;
  return std::chrono::sys_days(date) + std::chrono::hours(*hour) + std::chrono::minutes(*minute) +
         std::chrono::seconds(*second);
}

// The provider's error object in an error body, mapped by the provider's own rules.
std::optional<ModelError> error_from_body(std::string_view body) {
  auto parsed = support::parse_json(body);
  if (!parsed || !parsed->is_object()) return std::nullopt;
  const support::Json& root = *parsed;
  const support::Json* error = root.find("error");
  if (error == nullptr) return std::nullopt;
  // Anthropic: {"type":"error","error":{"type":"rate_limit_error","message":...}}.
  if (detail::string_or_empty(root, "type") == "error" && error->is_object()) {
    return anthropic_error(detail::string_or_empty(*error, "type"), detail::string_or_empty(*error, "message"));
  }
  // OpenAI and the compatible servers: {"error":{"message","type","code"}} or {"error":"text"}.
  if (error->is_object() || error->is_string()) return openai_error(*error);
  return std::nullopt;
}

std::string excerpt(std::string_view body) {
  body = support::trim(body);
  if (body.size() <= kMessageExcerpt) return std::string(body);
  return std::string(body.substr(0, kMessageExcerpt)) + "...";
}

}  // namespace

milliseconds backoff_delay(const RetryPolicy& policy, int attempt, double unit_random) noexcept {
  const double u = std::clamp(unit_random, 0.0, 1.0);
  const double jitter = std::clamp(policy.jitter, 0.0, 1.0);
  const int doublings = std::clamp(attempt, 1, 40) - 1;
  const double cap = static_cast<double>(policy.max_delay.count());
  const double full = std::min(cap, static_cast<double>(policy.base_delay.count()) * std::ldexp(1.0, doublings));
  return milliseconds(static_cast<std::int64_t>(std::llround(full * (1.0 - jitter * u))));
}

RetryDecision decide_retry(const RetryPolicy& policy, int attempt, const ModelError& error, bool output_delivered,
                           double unit_random) noexcept {
  if (output_delivered) return {false, milliseconds(0), "output already reached the client"};
  if (!error.retryable) return {false, milliseconds(0), "not retryable"};
  if (attempt >= policy.max_attempts) return {false, milliseconds(0), "attempts exhausted"};
  if (error.retry_after) {
    if (*error.retry_after > policy.max_retry_after) return {false, milliseconds(0), "retry-after too long"};
    return {true, std::max(milliseconds(0), *error.retry_after), "retry-after"};
  }
  return {true, backoff_delay(policy, attempt, unit_random), "backoff"};
}

std::optional<milliseconds> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now) {
  value = support::trim(value);
  if (auto seconds = parse_decimal(value)) {
    if (*seconds > kMaxRetryAfterSeconds) return std::nullopt;
    return milliseconds(static_cast<std::int64_t>(std::ceil(*seconds * 1000)));
  }
  if (auto date = parse_http_date(value)) {
    if (*date <= now) return milliseconds(0);
    const auto wait = std::chrono::ceil<milliseconds>(*date - now);
    if (wait > std::chrono::duration<double>(kMaxRetryAfterSeconds)) return std::nullopt;
    return wait;
  }
  return std::nullopt;
}

std::optional<milliseconds> retry_after_from_headers(const net::HttpHeaders& headers,
                                                     std::chrono::system_clock::time_point now) {
  if (const std::string* ms = net::find_header(headers, "retry-after-ms")) {
    if (auto value = parse_decimal(support::trim(*ms)); value && *value <= kMaxRetryAfterSeconds * 1000) {
      return milliseconds(static_cast<std::int64_t>(std::ceil(*value)));
    }
  }
  if (const std::string* value = net::find_header(headers, "retry-after")) return parse_retry_after(*value, now);
  return std::nullopt;
}

ModelError model_error_from_http(int status, const net::HttpHeaders& headers, std::string_view body,
                                 std::chrono::system_clock::time_point now) {
  const std::optional<ModelError> from_body = error_from_body(body);
  ModelError error;
  if (from_body) {
    error = *from_body;
  } else {
    error.code = fmt::format("http_{}", status);
    const std::string text = excerpt(body);
    error.message = text.empty() ? fmt::format("HTTP {}", status) : fmt::format("HTTP {}: {}", status, text);
  }
  error.source = ErrorSource::http;
  error.http_status = status;

  const bool body_says_too_long = from_body && from_body->kind == ErrorKind::context_too_long;
  const bool no_quota = from_body && from_body->code == "insufficient_quota";
  const bool body_says_overloaded = from_body && from_body->kind == ErrorKind::overloaded;
  if (status == 401 || status == 403) {
    error.kind = ErrorKind::auth;
    error.retryable = false;
  } else if (status == 429) {
    error.kind = ErrorKind::rate_limited;
    error.retryable = !no_quota;  // a billing problem: waiting will not help
  } else if (status == 529) {
    error.kind = ErrorKind::overloaded;
    error.retryable = true;
  } else if (status == 408) {
    error.kind = ErrorKind::network;
    error.retryable = true;
  } else if (status >= 500 && status <= 599) {
    error.kind = body_says_overloaded ? ErrorKind::overloaded : ErrorKind::server;
    error.retryable = true;
  } else if (status >= 400 && status <= 499) {
    error.kind = body_says_too_long ? ErrorKind::context_too_long : ErrorKind::invalid_request;
    error.retryable = false;
  } else {
    error.kind = ErrorKind::server;  // 1xx/3xx where a 2xx stream was expected
    error.retryable = false;
  }

  if (auto wait = retry_after_from_headers(headers, now)) error.retry_after = wait;
  // Anthropic (and OpenAI) say explicitly whether a retry can help; their word beats our guess.
  if (const std::string* should = net::find_header(headers, "x-should-retry")) {
    const std::string_view v = support::trim(*should);
    if (v == "true") error.retryable = !no_quota;
    if (v == "false") error.retryable = false;
  }
  return error;
}

ModelError model_error_from_transport(const support::Error& error) {
  ModelError out;
  out.kind = ErrorKind::network;
  out.source = ErrorSource::transport;
  out.message = error.message();
  const net::HttpFailure failure = net::http_failure_of(error);
  out.code = failure != net::HttpFailure::none ? std::string(net::http_failure_name(failure)) : "transport_error";
  switch (failure) {
    case net::HttpFailure::bad_request:
    case net::HttpFailure::tls_verify:
    case net::HttpFailure::cancelled:
    case net::HttpFailure::protocol: out.retryable = false; break;
    case net::HttpFailure::none:
      out.retryable = error.code() == support::Errc::unavailable || error.code() == support::Errc::timeout ||
                      error.code() == support::Errc::io;
      break;
    default: out.retryable = true; break;
  }
  return out;
}

}  // namespace agentd::core::model
