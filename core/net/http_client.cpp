// HttpClient over Beast + OpenSSL. Every socket sits in a beast::tcp_stream, whose expires_after gives the
// per-phase timeouts; cancellation closes the socket from the client's executor, which makes the pending
// operation complete at once. Errors are read with as_tuple, never thrown. One file because the
// connection pool, the drains and the exchanges share the connection state and its invariants.
#include "core/net/http_client.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <map>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include "core/support/base64.h"
#include "core/support/clock.h"
#include "core/support/log.h"
#include "core/support/task_group.h"
#include "core/support/text.h"

namespace agentd::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using support::Errc;
using support::Error;
using support::Result;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kHeaderLimit = std::size_t{64} * 1024;
constexpr std::size_t kReadChunk = std::size_t{16} * 1024;

using BodyParser = http::response_parser<http::buffer_body>;

char ascii_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

std::optional<std::uint16_t> parse_port(std::string_view s) noexcept {
  if (s.empty() || s.size() > 5) return std::nullopt;
  unsigned value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value == 0 || value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

bool is_ip_address(const std::string& host) {
  error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

std::string host_header(const Url& url) {
  const bool default_port = (url.https() && url.port == 443) || (!url.https() && url.port == 80);
  if (default_port) return url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host;
  return url.authority();
}

bool has_crlf(std::string_view s) noexcept { return s.find_first_of("\r\n") != std::string_view::npos; }

Error http_error(HttpFailure failure, std::string message) {
  Errc code = Errc::unavailable;
  switch (failure) {
    case HttpFailure::bad_request:
    case HttpFailure::tls_verify: code = Errc::invalid_argument; break;
    case HttpFailure::connect_timeout:
    case HttpFailure::first_byte_timeout:
    case HttpFailure::idle_timeout: code = Errc::timeout; break;
    case HttpFailure::protocol: code = Errc::parse_error; break;
    case HttpFailure::cancelled: code = Errc::cancelled; break;
    default: break;
  }
  return Error(code, std::move(message), static_cast<int>(failure));
}

// The server went away: what a dead keep-alive connection looks like.
bool is_connection_drop(const error_code& ec) noexcept {
  return ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::connection_aborted || ec == asio::ssl::error::stream_truncated;
}

enum class Phase { connect, first_byte, body };

// What becomes of a connection once its exchange is over.
enum class Disposal { close, pool, drain };

// Parses what is already buffered of a body the caller no longer wants, without touching the socket.
// Adds the body bytes it drops to `dropped`; false when the body cannot end cleanly within `limit`.
bool drop_buffered_body(BodyParser& parser, beast::flat_buffer& buffer, std::uint64_t& dropped, std::uint64_t limit) {
  std::array<char, 4096> scratch;
  while (!parser.is_done() && buffer.size() > 0) {
    parser.get().body().data = scratch.data();
    parser.get().body().size = scratch.size();
    error_code ec;
    const std::size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    dropped += scratch.size() - parser.get().body().size;
    if (dropped > limit) return false;
    if (ec == http::error::need_more) return true;  // the rest is still on its way
    if (ec && ec != http::error::need_buffer) return false;
    if (used == 0 && !ec) return true;  // no progress possible from these bytes alone
  }
  return true;
}

struct Connection {
  std::string key;
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  support::SteadyClock::time_point idle_since;
  std::shared_ptr<bool> host_mismatch = std::make_shared<bool>(false);

  beast::tcp_stream& tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
  void close() noexcept {
    error_code ignored;
    tcp().socket().close(ignored);
    tcp().expires_never();
  }
  // A pooled connection the server has closed (or that has unexpected bytes waiting) is not reusable.
  bool looks_alive() {
    if (!tcp().socket().is_open() || buffer.size() != 0) return false;
    char byte;
    const ssize_t n = ::recv(tcp().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
};

// One request in flight: what a cancellation has to close.
struct Exchange {
  std::function<void(int status, const HttpHeaders& headers)> on_head;  // HttpRequest::on_head
  bool finished = false;
  bool cancelled = false;
  std::shared_ptr<tcp::resolver> resolver;
  std::shared_ptr<Connection> connection;
  asio::steady_timer* waiting = nullptr;  // while it waits for a drain to end (take_connection)

  void abort() {
    cancelled = true;
    if (resolver) resolver->cancel();
    if (connection) connection->close();
    if (waiting != nullptr) waiting->cancel();
  }
};

Error transport_error(const error_code& ec, Phase phase, const Exchange& exchange, const HttpTimeouts& timeouts) {
  if (exchange.cancelled || ec == asio::error::operation_aborted) {
    return http_error(HttpFailure::cancelled, "request cancelled");
  }
  if (ec == beast::error::timeout) {
    switch (phase) {
      case Phase::connect:
        return http_error(HttpFailure::connect_timeout,
                          fmt::format("connect timed out after {} ms", timeouts.connect.count()));
      case Phase::first_byte:
        return http_error(HttpFailure::first_byte_timeout,
                          fmt::format("no response within {} ms", timeouts.first_byte.count()));
      case Phase::body:
        return http_error(HttpFailure::idle_timeout,
                          fmt::format("response stalled: no bytes for {} ms", timeouts.idle.count()));
    }
  }
  if (phase == Phase::connect) return http_error(HttpFailure::connect, "connect failed: " + ec.message());
  if (ec.category() == http::make_error_code(http::error::end_of_stream).category() && !is_connection_drop(ec)) {
    return http_error(HttpFailure::protocol, "malformed HTTP response: " + ec.message());
  }
  return http_error(HttpFailure::closed, "connection closed: " + ec.message());
}

std::string pool_key(const Url& target, const Url* proxy) {
  if (proxy == nullptr) return fmt::format("{}://{}", target.scheme, target.authority());
  if (!target.https()) return fmt::format("http-proxy://{}", proxy->authority());
  return fmt::format("https://{} via {}", target.authority(), proxy->authority());
}

}  // namespace

// ---- URLs and proxies ----

const std::string* find_header(const HttpHeaders& headers, std::string_view name) noexcept {
  for (const HttpHeader& header : headers) {
    if (iequals(header.name, name)) return &header.value;
  }
  return nullptr;
}

std::string Url::authority() const {
  const bool v6 = host.find(':') != std::string::npos;
  return fmt::format("{}{}{}:{}", v6 ? "[" : "", host, v6 ? "]" : "", port);
}

Result<Url> parse_url(std::string_view text) {
  text = support::trim(text, " \t");
  const std::size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) return support::make_error(Errc::invalid_argument, "no scheme in URL");
  Url url;
  url.scheme = lower(text.substr(0, scheme_end));
  if (url.scheme != "http" && url.scheme != "https") {
    return support::make_error(Errc::invalid_argument, "unsupported URL scheme '{}'", url.scheme);
  }
  std::string_view rest = text.substr(scheme_end + 3);
  const std::size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view target = authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (const std::size_t hash = target.find('#'); hash != std::string_view::npos) target = target.substr(0, hash);
  url.target = target.empty() ? "/" : target.front() == '?' ? "/" + std::string(target) : std::string(target);
  if (has_crlf(url.target) || url.target.find(' ') != std::string::npos) {
    return support::make_error(Errc::invalid_argument, "bad characters in URL path");
  }
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    url.userinfo = std::string(authority.substr(0, at));
    authority = authority.substr(at + 1);
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return support::make_error(Errc::invalid_argument, "unclosed '[' in URL");
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return support::make_error(Errc::invalid_argument, "bad URL authority");
      port_text = after.substr(1);
    }
  } else {
    const std::size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      if (authority.find(':', colon + 1) != std::string_view::npos) {
        return support::make_error(Errc::invalid_argument, "IPv6 hosts need brackets in URLs");
      }
      port_text = authority.substr(colon + 1);
      authority = authority.substr(0, colon);
    }
    url.host = lower(authority);
  }
  if (url.host.empty()) return support::make_error(Errc::invalid_argument, "no host in URL");
  if (has_crlf(url.host) || url.host.find_first_of(" /") != std::string::npos) {
    return support::make_error(Errc::invalid_argument, "bad characters in URL host");
  }
  if (port_text.empty()) {
    url.port = url.https() ? 443 : 80;
  } else if (auto port = parse_port(port_text)) {
    url.port = *port;
  } else {
    return support::make_error(Errc::invalid_argument, "bad port '{}' in URL", port_text);
  }
  return url;
}

std::vector<std::string> split_no_proxy(std::string_view value) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    std::size_t end = value.find_first_of(", \t", start);
    if (end == std::string_view::npos) end = value.size();
    if (end > start) out.push_back(lower(value.substr(start, end - start)));
    start = end + 1;
  }
  return out;
}

bool no_proxy_matches(const std::vector<std::string>& entries, std::string_view host_in, std::uint16_t port) {
  const std::string host = lower(host_in);
  for (const std::string& raw : entries) {
    std::string_view entry = support::trim(raw, " \t");
    if (entry.empty()) continue;
    if (entry == "*") return true;
    std::optional<std::uint16_t> entry_port;
    if (entry.front() == '[') {
      const std::size_t close = entry.find(']');
      if (close == std::string_view::npos) continue;
      if (close + 1 < entry.size()) {
        if (entry[close + 1] != ':' || !(entry_port = parse_port(entry.substr(close + 2)))) continue;
      }
      entry = entry.substr(1, close - 1);
    } else if (const std::size_t colon = entry.find(':');
               colon != std::string_view::npos && entry.find(':', colon + 1) == std::string_view::npos) {
      if (!(entry_port = parse_port(entry.substr(colon + 1)))) continue;
      entry = entry.substr(0, colon);
    }
    if (entry_port && *entry_port != port) continue;
    if (entry.starts_with("*.")) {
      entry.remove_prefix(2);
    } else if (entry.starts_with(".")) {
      entry.remove_prefix(1);
    }
    if (entry.empty()) continue;
    const std::string want = lower(entry);
    if (host == want) return true;
    if (host.size() > want.size() && host.ends_with(want) && host[host.size() - want.size() - 1] == '.') return true;
  }
  return false;
}

ProxyConfig ProxyConfig::from_lookup(const std::function<const char*(const char*)>& lookup) {
  // curl's rule: the lower-case name wins when both are set.
  auto get = [&](const char* lower_name, const char* upper_name) -> std::string {
    const char* value = lookup(lower_name);
    if (value == nullptr || *value == '\0') value = lookup(upper_name);
    return value != nullptr ? std::string(support::trim(value, " \t")) : std::string();
  };
  auto proxy_url = [](const std::string& value, const char* name) -> std::optional<Url> {
    if (value.empty()) return std::nullopt;
    auto url = parse_url(value.find("://") == std::string::npos ? "http://" + value : value);
    if (!url || url->https()) {
      // A TLS connection to the proxy itself is not supported; say so rather than silently going direct.
      support::log::warn("ignoring {}={}: {}", name, value,
                         url ? "https:// proxies are not supported" : url.error().message());
      return std::nullopt;
    }
    return std::move(url).value();
  };
  ProxyConfig config;
  config.https_proxy = proxy_url(get("https_proxy", "HTTPS_PROXY"), "HTTPS_PROXY");
  config.http_proxy = proxy_url(get("http_proxy", "HTTP_PROXY"), "HTTP_PROXY");
  config.no_proxy = split_no_proxy(get("no_proxy", "NO_PROXY"));
  return config;
}

ProxyConfig ProxyConfig::from_environment() {
  return from_lookup([](const char* name) { return std::getenv(name); });  // NOLINT(concurrency-mt-unsafe)
}

const Url* ProxyConfig::proxy_for(const Url& target) const {
  const std::optional<Url>& proxy = target.https() ? https_proxy : http_proxy;
  if (!proxy) return nullptr;
  if (no_proxy_matches(no_proxy, target.host, target.port)) return nullptr;
  return &*proxy;
}

constexpr support::EnumName<HttpFailure> kHttpFailureNames[] = {{HttpFailure::none, "none"},
                                                                {HttpFailure::bad_request, "bad_request"},
                                                                {HttpFailure::resolve, "resolve"},
                                                                {HttpFailure::connect, "connect"},
                                                                {HttpFailure::connect_timeout, "connect_timeout"},
                                                                {HttpFailure::proxy, "proxy"},
                                                                {HttpFailure::tls, "tls"},
                                                                {HttpFailure::tls_verify, "tls_verify"},
                                                                {HttpFailure::closed, "closed"},
                                                                {HttpFailure::first_byte_timeout, "first_byte_timeout"},
                                                                {HttpFailure::idle_timeout, "idle_timeout"},
                                                                {HttpFailure::protocol, "protocol"},
                                                                {HttpFailure::cancelled, "cancelled"}};
static_assert(support::names_every_value(kHttpFailureNames, HttpFailure::cancelled));
std::span<const support::EnumName<HttpFailure>> enum_names(HttpFailure) noexcept { return kHttpFailureNames; }

std::string_view http_failure_name(HttpFailure failure) noexcept { return support::enum_name(failure, "unknown"); }

HttpFailure http_failure_of(const support::Error& error) noexcept {
  const int code = error.native_code();
  if (code <= 0 || code > static_cast<int>(HttpFailure::cancelled)) return HttpFailure::none;
  return static_cast<HttpFailure>(code);
}

// ---- the client ----

// The TLS context every https connection uses: system CAs (plus extra ones) and peer verification.
// Errors carry an HttpFailure; a CA store that cannot be loaded means nothing can be verified.
Result<std::unique_ptr<ssl::context>> make_tls_context(const HttpClientOptions& options) {
  std::unique_ptr<ssl::context> context;
  try {
    context = std::make_unique<ssl::context>(ssl::context::tls_client);
  } catch (const std::exception& e) {
    return http_error(HttpFailure::tls, fmt::format("cannot create a TLS context: {}", e.what()));
  }
  error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                           ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                       ec);
  if (ec) return http_error(HttpFailure::tls, fmt::format("TLS context options: {}", ec.message()));
  if (options.use_system_ca) {
    context->set_default_verify_paths(ec);
    if (ec) {
      return http_error(HttpFailure::tls_verify, fmt::format("cannot load the system CA store: {}", ec.message()));
    }
  }
  if (!options.extra_ca_pem.empty()) {
    context->add_certificate_authority(asio::buffer(options.extra_ca_pem), ec);
    if (ec) return http_error(HttpFailure::bad_request, fmt::format("extra CA certificates: {}", ec.message()));
  }
  context->set_verify_mode(ssl::verify_peer, ec);
  if (ec) return http_error(HttpFailure::tls, fmt::format("TLS verify mode: {}", ec.message()));
  return context;
}

struct HttpClient::Impl : std::enable_shared_from_this<HttpClient::Impl> {
  Impl(asio::any_io_executor ex, HttpClientOptions opts)
      : executor(std::move(ex)), options(std::move(opts)), drains(executor) {}

  asio::any_io_executor executor;
  HttpClientOptions options;
  // Made on the first https connection (by create() when there are extra CAs to check): OpenSSL's
  // set-up and the system CA store cost 10 ms or more, which a daemon's start-up should not pay.
  std::unique_ptr<ssl::context> tls_context;
  std::map<std::string, std::vector<std::shared_ptr<Connection>>> idle;
  // Connections whose body is being read in the background after BodyAction::finish.
  std::vector<std::shared_ptr<Connection>> draining;
  // The coroutines reading them (drain()); shutdown() cancels and joins them.
  support::TaskGroup drains;
  // After shutdown(): a connection whose exchange ends is closed, neither pooled nor drained.
  bool shut_down = false;
  // Requests waiting for a drain to end (take_connection); end_drain wakes them all.
  std::vector<asio::steady_timer*> drain_waiters;

  bool draining_to(const std::string& key) const {
    return std::any_of(draining.begin(), draining.end(), [&](const auto& conn) { return conn->key == key; });
  }

  // A pooled connection to `key`; when there is none but one to that host is being drained, waits for
  // the drain (up to options.reuse_wait) and takes what it gave back. Null: connect afresh.
  asio::awaitable<std::shared_ptr<Connection>> take_connection(const std::string& key, Exchange& exchange) {
    std::shared_ptr<Connection> conn = take_idle(key);
    const auto deadline = support::SteadyClock::now() + options.reuse_wait;
    while (!conn && !exchange.cancelled && !shut_down && draining_to(key) && support::SteadyClock::now() < deadline) {
      asio::steady_timer wake(executor, deadline);
      drain_waiters.push_back(&wake);
      exchange.waiting = &wake;
      co_await wake.async_wait(kTuple);
      exchange.waiting = nullptr;
      std::erase(drain_waiters, &wake);
      conn = take_idle(key);
    }
    co_return conn;
  }

  std::shared_ptr<Connection> take_idle(const std::string& key) {
    auto it = idle.find(key);
    if (it == idle.end()) return nullptr;
    auto& list = it->second;
    const auto now = support::SteadyClock::now();
    std::shared_ptr<Connection> found;
    while (!list.empty() && !found) {
      std::shared_ptr<Connection> conn = std::move(list.back());
      list.pop_back();
      if (now - conn->idle_since < options.idle_ttl && conn->looks_alive()) {
        found = std::move(conn);
      } else {
        conn->close();
      }
    }
    if (list.empty()) idle.erase(it);
    return found;
  }

  Result<ssl::context*> tls() {
    if (!tls_context) {
      auto made = make_tls_context(options);
      if (!made) return std::move(made).error();
      tls_context = std::move(made).value();
    }
    return tls_context.get();
  }

  void put_idle(std::shared_ptr<Connection> conn) {
    if (options.max_idle_per_host == 0 || shut_down) {
      conn->close();
      return;
    }
    conn->idle_since = support::SteadyClock::now();
    conn->tcp().expires_never();
    auto& list = idle[conn->key];
    list.push_back(std::move(conn));
    while (list.size() > options.max_idle_per_host) {
      list.front()->close();
      list.erase(list.begin());
    }
  }

  void close_all() {
    for (auto* waiter : drain_waiters) waiter->cancel();
    for (auto& [key, list] : idle) {
      for (auto& conn : list) conn->close();
    }
    idle.clear();
    // A drain in flight then fails at once; it only holds a weak reference to us.
    for (auto& conn : draining) conn->close();
    draining.clear();
  }

  // Reads the rest of a body nobody wants any more, within the drain limits, then pools or closes the
  // connection. Runs in `drains`, in the background: the caller already has its response. It keeps the
  // connection and parser alive itself and reaches the pool only through `owner`; closing the socket
  // (shutdown(), the destructor) ends the read at once.
  static asio::awaitable<void> drain(std::weak_ptr<Impl> owner, std::shared_ptr<Connection> conn,
                                     std::unique_ptr<BodyParser> parser, std::uint64_t dropped, std::uint64_t limit) {
    bool clean = false;
    // (No co_await inside ?: here: GCC 12 miscompiles the temporaries of that form.)
    if (conn->tls) {
      clean = co_await drain_on(*conn->tls, *conn, *parser, dropped, limit);
    } else {
      clean = co_await drain_on(*conn->plain, *conn, *parser, dropped, limit);
    }
    const std::shared_ptr<Impl> impl = owner.lock();
    if (!impl) {
      conn->close();
      co_return;
    }
    impl->end_drain(conn, clean && parser->keep_alive());
  }

  template <class Stream>
  static asio::awaitable<bool> drain_on(Stream& stream, Connection& conn, BodyParser& parser, std::uint64_t dropped,
                                        std::uint64_t limit) {
    std::array<char, kReadChunk> scratch;
    while (!parser.is_done()) {
      parser.get().body().data = scratch.data();
      parser.get().body().size = scratch.size();
      auto [ec, n] = co_await http::async_read_some(stream, conn.buffer, parser, kTuple);
      if (ec == http::error::need_buffer) ec = {};
      dropped += scratch.size() - parser.get().body().size;
      if (ec || dropped > limit) co_return false;
    }
    co_return true;
  }

  std::chrono::milliseconds drain_budget() const { return std::min(options.drain_timeout, options.timeouts.idle); }

  void start_drain(std::shared_ptr<Connection> conn, std::unique_ptr<BodyParser> parser, std::uint64_t dropped) {
    if (shut_down) {
      conn->close();
      return;
    }
    conn->tcp().expires_after(drain_budget());  // when it passes the socket is closed, which ends the read
    draining.push_back(conn);
    // Only bad_alloc could escape drain(); the group logs it, and the connection closes with the frame.
    drains.spawn(drain(weak_from_this(), std::move(conn), std::move(parser), dropped, options.drain_max_bytes),
                 "http drain");
  }

  void end_drain(const std::shared_ptr<Connection>& conn, bool reusable) {
    // Whatever became of it, a request waiting for it (take_connection) looks again.
    for (auto* waiter : drain_waiters) waiter->cancel();
    auto it = std::find(draining.begin(), draining.end(), conn);
    if (it == draining.end()) {  // close_idle_connections() ended it meanwhile
      conn->close();
      return;
    }
    draining.erase(it);
    if (reusable && conn->tcp().socket().is_open()) {
      put_idle(conn);
      return;
    }
    support::log::debug("http: closing a connection to {}: its body did not end cleanly within {} bytes and {} ms",
                        conn->key, options.drain_max_bytes, drain_budget().count());
    conn->close();
  }

  asio::awaitable<Result<std::shared_ptr<Connection>>> connect(const Url& target, const Url* proxy,
                                                               Exchange& exchange) {
    const Url& dial = proxy != nullptr ? *proxy : target;
    const auto deadline = support::SteadyClock::now() + options.timeouts.connect;
    auto conn = std::make_shared<Connection>();
    conn->key = pool_key(target, proxy);
    conn->plain = std::make_unique<beast::tcp_stream>(executor);
    exchange.connection = conn;

    // getaddrinfo runs on Asio's resolver thread; a timer bounds it by the connect deadline.
    auto resolver = std::make_shared<tcp::resolver>(executor);
    exchange.resolver = resolver;
    auto resolve_timed_out = std::make_shared<bool>(false);
    asio::steady_timer timer(executor, deadline);
    timer.async_wait([resolver, resolve_timed_out](error_code ec) {
      if (!ec) {
        *resolve_timed_out = true;
        resolver->cancel();
      }
    });
    auto [resolve_ec, endpoints] = co_await resolver->async_resolve(dial.host, std::to_string(dial.port), kTuple);
    timer.cancel();
    exchange.resolver.reset();
    if (exchange.cancelled) co_return http_error(HttpFailure::cancelled, "request cancelled");
    if (*resolve_timed_out) {
      co_return http_error(HttpFailure::connect_timeout, fmt::format("resolving {} timed out after {} ms", dial.host,
                                                                     options.timeouts.connect.count()));
    }
    if (resolve_ec) {
      co_return http_error(HttpFailure::resolve, fmt::format("cannot resolve {}: {}", dial.host, resolve_ec.message()));
    }

    conn->plain->expires_at(deadline);
    auto [connect_ec, endpoint] = co_await conn->plain->async_connect(endpoints, kTuple);
    if (connect_ec) {
      Error error = transport_error(connect_ec, Phase::connect, exchange, options.timeouts);
      co_return std::move(error).context(fmt::format("{}", dial.authority()));
    }

    if (proxy != nullptr && target.https()) {
      http::request<http::empty_body> connect_request{http::verb::connect, target.authority(), 11};
      connect_request.set(http::field::host, target.authority());
      if (!proxy->userinfo.empty()) {
        connect_request.set(http::field::proxy_authorization,
                            "Basic " + support::base64_encode(support::percent_decode(proxy->userinfo)));
      }
      auto [write_ec, written] = co_await http::async_write(*conn->plain, connect_request, kTuple);
      if (write_ec) co_return transport_error(write_ec, Phase::connect, exchange, options.timeouts);
      http::response_parser<http::empty_body> reply;
      reply.skip(true);  // a 2xx answer to CONNECT has no body; the tunnel starts right after the head
      auto [read_ec, read] = co_await http::async_read_header(*conn->plain, conn->buffer, reply, kTuple);
      if (read_ec) {
        if (exchange.cancelled || read_ec == beast::error::timeout) {
          co_return transport_error(read_ec, Phase::connect, exchange, options.timeouts);
        }
        co_return http_error(HttpFailure::proxy,
                             fmt::format("proxy {} failed the CONNECT: {}", proxy->authority(), read_ec.message()));
      }
      const auto status = static_cast<int>(reply.get().result_int());
      if (status < 200 || status >= 300) {
        co_return http_error(HttpFailure::proxy,
                             fmt::format("proxy {} refused CONNECT {}: {} {}", proxy->authority(), target.authority(),
                                         status, std::string(reply.get().reason())));
      }
      conn->buffer.consume(conn->buffer.size());
    }

    if (target.https()) {
      auto context = tls();
      if (!context) co_return std::move(context).error();
      conn->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(std::move(*conn->plain), **context);
      conn->plain.reset();
      SSL* native = conn->tls->native_handle();
      // SNI carries host names only (RFC 6066); an IP literal is verified against the certificate's IPs.
      if (!is_ip_address(target.host) && SSL_set_tlsext_host_name(native, target.host.c_str()) != 1) {
        co_return http_error(HttpFailure::tls, "cannot set TLS server name");
      }
      conn->tls->set_verify_mode(ssl::verify_peer);
      conn->tls->set_verify_callback([verify = ssl::host_name_verification(target.host),
                                      mismatch = conn->host_mismatch](bool preverified, ssl::verify_context& context) {
        const bool ok = verify(preverified, context);
        if (preverified && !ok) *mismatch = true;
        return ok;
      });
      auto [handshake_ec] = co_await conn->tls->async_handshake(ssl::stream_base::client, kTuple);
      if (handshake_ec) {
        if (exchange.cancelled || handshake_ec == beast::error::timeout) {
          co_return transport_error(handshake_ec, Phase::connect, exchange, options.timeouts);
        }
        const long verify_result = SSL_get_verify_result(native);
        if (*conn->host_mismatch) {
          co_return http_error(HttpFailure::tls_verify,
                               fmt::format("TLS: the certificate of {} does not match the host name", target.host));
        }
        if (verify_result != X509_V_OK) {
          co_return http_error(HttpFailure::tls_verify,
                               fmt::format("TLS: certificate of {} not trusted: {}", target.host,
                                           X509_verify_cert_error_string(verify_result)));
        }
        co_return http_error(HttpFailure::tls,
                             fmt::format("TLS handshake with {} failed: {}", target.host, handshake_ec.message()));
      }
    }
    conn->tcp().expires_never();
    co_return conn;
  }

  // One request/response on `conn`. Sets `dead_before_response` when a reused connection turned out to
  // be closed before any response byte (worth one retry on a fresh connection), and `disposal` to what
  // should happen to the connection; for Disposal::drain, `unfinished` gets the parser of the body left
  // to read and `dropped` the body bytes already dropped.
  template <class Stream>
  asio::awaitable<Result<HttpResponse>> exchange_on(Stream& stream, Connection& conn,
                                                    http::request<http::string_body>& request,
                                                    const HttpBodyCallback& on_body, Exchange& exchange, bool reused,
                                                    bool& dead_before_response, Disposal& disposal,
                                                    std::unique_ptr<BodyParser>& unfinished, std::uint64_t& dropped) {
    const HttpTimeouts& timeouts = options.timeouts;
    conn.tcp().expires_after(timeouts.first_byte);
    auto [write_ec, written] = co_await http::async_write(stream, request, kTuple);
    if (write_ec) {
      dead_before_response = reused && !exchange.cancelled && is_connection_drop(write_ec);
      co_return transport_error(write_ec, Phase::first_byte, exchange, timeouts);
    }
    // On the heap: a drain after BodyAction::finish takes it over (Beast parsers cannot move).
    auto owned_parser = std::make_unique<BodyParser>();
    BodyParser& parser = *owned_parser;
    parser.body_limit(boost::none);  // model streams are long; Beast's default would cut them at 8 MB
    parser.header_limit(kHeaderLimit);
    auto [head_ec, head_bytes] = co_await http::async_read_header(stream, conn.buffer, parser, kTuple);
    if (head_ec) {
      dead_before_response = reused && !exchange.cancelled && !parser.got_some() && is_connection_drop(head_ec);
      co_return transport_error(head_ec, Phase::first_byte, exchange, timeouts);
    }

    HttpResponse response;
    response.reused_connection = reused;
    response.status = static_cast<int>(parser.get().result_int());
    for (const auto& field : parser.get()) {
      response.headers.push_back({std::string(field.name_string()), std::string(field.value())});
    }
    if (exchange.on_head) exchange.on_head(response.status, response.headers);
    const bool deliver = response.ok_status();
    BodyAction action = BodyAction::more;
    std::array<char, kReadChunk> chunk;
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      conn.tcp().expires_after(timeouts.idle);
      auto [ec, n] = co_await http::async_read_some(stream, conn.buffer, parser, kTuple);
      if (ec == http::error::need_buffer) ec = {};
      const std::size_t got = chunk.size() - parser.get().body().size;
      if (got > 0) {
        response.body_bytes += got;
        const std::string_view piece(chunk.data(), got);
        if (deliver) {
          action = on_body(piece);
        } else {
          const std::size_t room =
              options.max_error_body - std::min(options.max_error_body, response.error_body.size());
          response.error_body.append(piece.substr(0, room));
          if (piece.size() > room) {
            // An error body longer than the cap is not worth draining: drop the connection instead.
            response.error_body_truncated = true;
            action = BodyAction::abort;
          }
        }
      }
      if (exchange.cancelled) {
        response.body_error = http_error(HttpFailure::cancelled, "request cancelled");
        break;
      }
      if (ec) {
        response.body_error = transport_error(ec, Phase::body, exchange, timeouts);
        break;
      }
      if (action != BodyAction::more) break;
    }
    response.complete = parser.is_done() && !response.body_error;
    response.stopped = action != BodyAction::more && !response.complete;
    disposal = Disposal::close;
    if (response.body_error || exchange.cancelled || action == BodyAction::abort || !parser.keep_alive() ||
        options.max_idle_per_host == 0) {
      co_return response;
    }
    if (parser.is_done()) {
      disposal = Disposal::pool;
      co_return response;
    }
    // BodyAction::finish mid-body. Often the rest is already buffered (a last chunk right behind the
    // final event): then the connection is ready now. A length that is known to be too long is not read.
    const std::uint64_t limit = options.drain_max_bytes;
    if (!drop_buffered_body(parser, conn.buffer, dropped, limit)) co_return response;
    if (parser.is_done()) {
      disposal = Disposal::pool;
      co_return response;
    }
    if (const auto remaining = parser.content_length_remaining(); remaining && dropped + *remaining > limit) {
      co_return response;
    }
    disposal = Disposal::drain;
    unfinished = std::move(owned_parser);
    co_return response;
  }

  asio::awaitable<Result<HttpResponse>> send(HttpRequest request, const HttpBodyCallback& on_body,
                                             const support::CancelToken& cancel) {
    auto url = parse_url(request.url);
    if (!url) co_return http_error(HttpFailure::bad_request, url.error().message());
    if (cancel.cancelled()) co_return http_error(HttpFailure::cancelled, "request cancelled");
    const Url* proxy = options.proxy.proxy_for(*url);
    const bool absolute_form = proxy != nullptr && !url->https();

    http::request<http::string_body> message;
    message.version(11);
    if (const http::verb verb = http::string_to_verb(request.method); verb != http::verb::unknown) {
      message.method(verb);
    } else {
      message.method_string(request.method);
    }
    message.target(absolute_form ? fmt::format("http://{}{}", url->authority(), url->target) : url->target);
    message.set(http::field::host, host_header(*url));
    bool has_user_agent = false;
    for (const HttpHeader& header : request.headers) {
      if (header.name.empty() || has_crlf(header.name) || has_crlf(header.value) ||
          header.name.find_first_of(" :") != std::string::npos) {
        co_return http_error(HttpFailure::bad_request, fmt::format("bad request header '{}'", header.name));
      }
      if (iequals(header.name, "host") || iequals(header.name, "content-length")) continue;
      if (iequals(header.name, "user-agent")) has_user_agent = true;
      message.insert(header.name, header.value);
    }
    if (!has_user_agent && !options.user_agent.empty()) message.set(http::field::user_agent, options.user_agent);
    if (absolute_form && !proxy->userinfo.empty()) {
      message.set(http::field::proxy_authorization,
                  "Basic " + support::base64_encode(support::percent_decode(proxy->userinfo)));
    }
    message.body() = std::move(request.body);
    message.prepare_payload();

    // The token may fire on any thread; the abort runs on our executor, where the socket lives.
    auto exchange = std::make_shared<Exchange>();
    exchange->on_head = std::move(request.on_head);
    auto here = co_await asio::this_coro::executor;
    auto registration = cancel.on_cancel([weak = std::weak_ptr<Exchange>(exchange), here] {
      asio::post(here, [weak] {
        if (auto live = weak.lock(); live && !live->finished) live->abort();
      });
    });

    const std::string key = pool_key(*url, proxy);
    for (int attempt = 0;; ++attempt) {
      std::shared_ptr<Connection> conn;
      if (attempt == 0) conn = co_await take_connection(key, *exchange);
      if (exchange->cancelled) {
        exchange->finished = true;
        if (conn) put_idle(std::move(conn));
        co_return http_error(HttpFailure::cancelled, "request cancelled");
      }
      const bool reused = conn != nullptr;
      if (!conn) {
        auto fresh = co_await connect(*url, proxy, *exchange);
        if (!fresh) {
          exchange->finished = true;
          exchange->connection.reset();
          co_return std::move(fresh).error();
        }
        conn = std::move(fresh).value();
      }
      exchange->connection = conn;
      bool dead_before_response = false;
      Disposal disposal = Disposal::close;
      std::unique_ptr<BodyParser> unfinished;
      std::uint64_t dropped = 0;
      // (No co_await inside ?: here: GCC 12 miscompiles the temporaries of that form.)
      std::optional<Result<HttpResponse>> result;
      if (conn->tls) {
        result.emplace(co_await exchange_on(*conn->tls, *conn, message, on_body, *exchange, reused,
                                            dead_before_response, disposal, unfinished, dropped));
      } else {
        result.emplace(co_await exchange_on(*conn->plain, *conn, message, on_body, *exchange, reused,
                                            dead_before_response, disposal, unfinished, dropped));
      }
      exchange->connection.reset();
      if (!*result && dead_before_response && attempt == 0) {
        support::log::debug("http: pooled connection to {} was closed; retrying on a fresh one", key);
        conn->close();
        continue;
      }
      exchange->finished = true;
      // A cancellation that raced the end of the body still closes the connection at once.
      if (cancel.cancelled() || exchange->cancelled) disposal = Disposal::close;
      switch (disposal) {
        case Disposal::pool: put_idle(std::move(conn)); break;
        case Disposal::drain: start_drain(std::move(conn), std::move(unfinished), dropped); break;
        case Disposal::close: conn->close(); break;
      }
      co_return std::move(*result);
    }
  }
};

HttpClient::HttpClient(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpClient::~HttpClient() {
  impl_->shut_down = true;
  impl_->close_all();
  if (impl_->drains.size() == 0) return;
  // Destroyed without shutdown() while drains run (a caller that could not wait). Their sockets are
  // closed now, so they end on the next turns of the loop; until then their group, and so the Impl it
  // lives in, must stay: the join's completion holds it. (The one coroutine outside a group here: it is
  // the group's own keeper.)
  support::TaskGroup& drains = impl_->drains;
  asio::co_spawn(impl_->executor, drains.join(), [keep = impl_](const std::exception_ptr&) {});
}

asio::awaitable<void> HttpClient::shutdown() {
  impl_->shut_down = true;
  impl_->close_all();
  impl_->drains.cancel_all();
  co_await impl_->drains.join();
}

Result<std::unique_ptr<HttpClient>> HttpClient::create(asio::any_io_executor executor, HttpClientOptions options) {
  auto impl = std::make_shared<Impl>(std::move(executor), std::move(options));
  // Extra CAs are checked now, so a bad one fails here rather than on the first model call.
  if (!impl->options.extra_ca_pem.empty()) {
    auto context = impl->tls();
    if (!context) return std::move(context).error();
  }
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

asio::awaitable<Result<HttpResponse>> HttpClient::send(HttpRequest request, HttpBodyCallback on_body,
                                                       support::CancelToken cancel) {
  if (!on_body) on_body = [](std::string_view) { return BodyAction::more; };
  try {
    Result<HttpResponse> result = co_await impl_->send(std::move(request), on_body, cancel);
    co_return result;
  } catch (const std::exception& e) {
    // Asio/Beast throw only for resource exhaustion here; report it rather than tear down the caller.
    co_return support::make_error(Errc::internal, "http client: {}", e.what());
  }
}

std::size_t HttpClient::idle_connections() const noexcept {
  std::size_t n = 0;
  for (const auto& [key, list] : impl_->idle) n += list.size();
  return n;
}

std::size_t HttpClient::draining_connections() const noexcept { return impl_->draining.size(); }

std::size_t HttpClient::background_tasks() const noexcept { return impl_->drains.size(); }

void HttpClient::close_idle_connections() { impl_->close_all(); }

}  // namespace agentd::net
