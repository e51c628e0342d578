// HttpClient: the one HTTP/1.1 client the model providers use to POST a JSON body and stream the answer.
// TLS verified against the system CA store (plus optional extra CAs), proxies (CONNECT for https,
// absolute-form for http), per-phase timeouts, cancellation, and a small keep-alive pool. Beast stays in
// http_client.cpp so its compile cost does not spread through every includer.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "core/support/cancel.h"
#include "core/support/enum_names.h"
#include "core/support/result.h"

namespace agentd::net {

struct HttpHeader {
  std::string name;
  std::string value;
  friend bool operator==(const HttpHeader&, const HttpHeader&) = default;
};
using HttpHeaders = std::vector<HttpHeader>;

// The first header named `name` (ASCII case-insensitive), or null.
const std::string* find_header(const HttpHeaders& headers, std::string_view name) noexcept;

// An absolute http or https URL. `target` is the origin-form request target ("/v1/messages?x=1").
struct Url {
  std::string scheme;  // "http" or "https", lower case
  std::string host;    // without IPv6 brackets
  std::uint16_t port = 0;
  std::string target = "/";
  std::string userinfo;  // "user:password" (proxies only), empty when absent

  bool https() const noexcept { return scheme == "https"; }
  // "host:port", with brackets around an IPv6 host: the CONNECT target and the Host header.
  std::string authority() const;
};
support::Result<Url> parse_url(std::string_view text);

// Which proxy to use for which URL. Built from the environment by the daemon (from_environment), or by
// hand in tests and config; the client never reads the environment itself.
struct ProxyConfig {
  std::optional<Url> https_proxy;  // used for https:// targets (CONNECT tunnel)
  std::optional<Url> http_proxy;   // used for http:// targets (absolute-form requests)
  // NO_PROXY entries: "*" (everything), "host" / ".host" / "*.host" (the host and its subdomains),
  // an IP address, and any of these with ":port" to match one port only.
  std::vector<std::string> no_proxy;

  // HTTPS_PROXY/https_proxy, HTTP_PROXY/http_proxy, NO_PROXY/no_proxy (lower case wins, as in curl).
  // A value without a scheme means http://. Unparsable values are ignored.
  static ProxyConfig from_environment();
  // The same, reading variables through `lookup` (returns null for unset), for tests.
  static ProxyConfig from_lookup(const std::function<const char*(const char*)>& lookup);

  // The proxy for `target`, or null to connect directly.
  const Url* proxy_for(const Url& target) const;
};

// True when `host:port` matches one NO_PROXY entry (see ProxyConfig::no_proxy).
bool no_proxy_matches(const std::vector<std::string>& entries, std::string_view host, std::uint16_t port);
// Splits a NO_PROXY value on commas and whitespace.
std::vector<std::string> split_no_proxy(std::string_view value);

struct HttpTimeouts {
  std::chrono::milliseconds connect{30'000};      // TCP connect, proxy CONNECT and TLS handshake together
  std::chrono::milliseconds first_byte{120'000};  // request written -> response headers received
  std::chrono::milliseconds idle{120'000};        // between two reads of the body
};

struct HttpClientOptions {
  HttpTimeouts timeouts;
  ProxyConfig proxy;
  bool use_system_ca = true;
  std::string extra_ca_pem;  // more trusted CAs (company roots, test CAs), PEM, possibly several
  std::size_t max_idle_per_host = 4;
  std::chrono::milliseconds idle_ttl{60'000};           // a pooled connection older than this is closed
  std::size_t max_error_body = std::size_t{64} * 1024;  // bytes of a non-2xx body kept for the caller
  // After BodyAction::finish: the rest of the body is read and dropped, at most this many bytes within
  // this time (and never longer than timeouts.idle), so the connection can go back to the pool.
  std::size_t drain_max_bytes = std::size_t{64} * 1024;
  std::chrono::milliseconds drain_timeout{5'000};
  // A request that finds no pooled connection to its host while one is being drained waits this long
  // for the drain to end, rather than paying a new TCP and TLS handshake: the next model call of a
  // tool round trip often starts while the last response's final bytes are still on their way.
  std::chrono::milliseconds reuse_wait{250};
  std::string user_agent = "agentd";
};

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  HttpHeaders headers;  // Host, Content-Length and (unless given) User-Agent are added by the client
  std::string body;
  // Called once the response head has arrived, before any of the body: for callers that must act on a
  // header (a session id, the content type) while the body still streams. Null: not called.
  std::function<void(int status, const HttpHeaders& headers)> on_head;
};

// Why a request failed below HTTP. HttpClient errors carry it as their native_code.
enum class HttpFailure {
  none = 0,
  bad_request,         // unparsable URL, unsupported scheme, bad header: retrying cannot help
  resolve,             // the host name did not resolve
  connect,             // refused, unreachable, reset during connect
  connect_timeout,     // connect + proxy + TLS handshake exceeded timeouts.connect
  proxy,               // the proxy refused the CONNECT or answered garbage
  tls,                 // the TLS handshake failed for another reason
  tls_verify,          // the certificate or host name did not verify: retrying cannot help
  closed,              // the server closed or reset the connection before the response head
  first_byte_timeout,  // no response head within timeouts.first_byte
  idle_timeout,        // no body bytes for timeouts.idle
  protocol,            // the response is not valid HTTP/1.1
  cancelled,           // the caller's CancelToken fired
};
std::string_view http_failure_name(HttpFailure failure) noexcept;
std::span<const support::EnumName<HttpFailure>> enum_names(HttpFailure) noexcept;
// The HttpFailure of an error returned by HttpClient (none for other errors).
HttpFailure http_failure_of(const support::Error& error) noexcept;

// What came back once the response head arrived.
struct HttpResponse {
  int status = 0;
  HttpHeaders headers;
  // Non-2xx only: the body, cut at max_error_body bytes (error_body_truncated says so).
  std::string error_body;
  bool error_body_truncated = false;
  std::uint64_t body_bytes = 0;  // body bytes received (all of them, also past the error cap)
  bool complete = false;         // the body ended as framed (length, last chunk, or a clean close)
  bool stopped = false;          // the body callback returned finish or abort before the body ended
  // The body failed after the head (idle timeout, reset, cancellation, bad chunk framing). Its
  // native_code is an HttpFailure.
  std::optional<support::Error> body_error;
  bool reused_connection = false;  // the response came over a pooled connection

  bool ok_status() const noexcept { return status >= 200 && status < 300; }
};

// What the body callback wants after a piece of the body.
enum class BodyAction {
  more,  // keep reading
  // The caller has all it needs (a model stream's terminal event): send() returns now, and the rest of
  // the body is read in the background, within drain_max_bytes and drain_timeout. A body that then ends
  // cleanly returns its connection to the pool; any other is closed. A cancelled request is never drained.
  finish,
  abort,  // stop reading and close the connection
};

// Called for each piece of a 2xx body as it arrives (never for non-2xx). Anything but `more` makes the
// call return with `stopped` set.
using HttpBodyCallback = std::function<BodyAction(std::string_view chunk)>;

class HttpClient {
 public:
  // Fails when extra_ca_pem does not parse. Cheap otherwise: the TLS context (OpenSSL's set-up and the
  // system CA store, 10 ms or more; bench/README.md) is made on the first https connection, and a
  // failure there (no CA store) fails that request with HttpFailure::tls_verify.
  static support::Result<std::unique_ptr<HttpClient>> create(boost::asio::any_io_executor executor,
                                                             HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `request` and streams the response body to `on_body`. An error means no response head
  // arrived (its native_code is an HttpFailure); after the head, failures land in body_error. A pooled
  // connection that dies before any response byte is retried once on a fresh connection. Run it on the
  // executor given to create(); one client is not thread-safe.
  boost::asio::awaitable<support::Result<HttpResponse>> send(HttpRequest request, HttpBodyCallback on_body,
                                                             support::CancelToken cancel = {});

  // Connections kept for reuse, over all hosts.
  std::size_t idle_connections() const noexcept;
  // Connections whose body is still being read after BodyAction::finish (see there).
  std::size_t draining_connections() const noexcept;
  // Closes the idle connections and the draining ones.
  void close_idle_connections();
  // The coroutines draining those connections; 0 once shutdown() has returned.
  std::size_t background_tasks() const noexcept;
  // For the owner, before the client goes: closes every pooled and draining connection, cancels the
  // drains and waits until they have ended. Requests may still be sent after it, but their connections
  // are closed when they end, never pooled or drained. (A client destroyed without it leaves its closed
  // drains to end on the loop's next turns.)
  boost::asio::awaitable<void> shutdown();

 private:
  struct Impl;
  explicit HttpClient(std::shared_ptr<Impl> impl);
  // Shared so a background drain can tell, through a weak_ptr, that the client is gone.
  std::shared_ptr<Impl> impl_;
};

}  // namespace agentd::net
