// Test servers for the HTTP client: RawHttpServer plays scripted bytes on 127.0.0.1 (pauses, gates the
// test opens, closes at a chosen byte, stalls) and counts connections opened and ended; TunnelProxy is a minimal
// CONNECT proxy; make_self_signed() builds a certificate with the OpenSSL API. Everything runs on the test's
// io_context, so tests drive it with bounded run loops and never sleep.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace agentd::net::testing {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct RawStep {
  enum class Kind { read_request, write, pause, gate, close, hold };
  Kind kind = Kind::hold;
  std::string bytes;
  std::chrono::milliseconds delay{0};
  int gate_id = 0;

  // Reads one request (head + content-length body) and records it.
  static RawStep read_request() { return {Kind::read_request, {}, {}, 0}; }
  static RawStep write(std::string bytes) { return {Kind::write, std::move(bytes), {}, 0}; }
  static RawStep pause(std::chrono::milliseconds delay) { return {Kind::pause, {}, delay, 0}; }
  // Waits until the test calls open_gate(id): lets a test prove the client saw earlier bytes first.
  static RawStep gate(int id) { return {Kind::gate, {}, {}, id}; }
  // Closes the connection now (a reset if unread bytes remain).
  static RawStep close() { return {Kind::close, {}, {}, 0}; }
  // Keeps the connection open and silent until the server stops.
  static RawStep hold() { return {Kind::hold, {}, {}, 0}; }
};
using RawScript = std::vector<RawStep>;

// A complete HTTP/1.1 response with a content-length.
inline std::string http_response(int status, std::string_view body, std::string_view extra_headers = "",
                                 std::string_view reason = "OK") {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += extra_headers;
  out += "\r\n";
  out += body;
  return out;
}

inline std::string chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return std::string(size) + std::string(data) + "\r\n";
}

constexpr std::string_view kChunkedHead =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

class RawHttpServer {
 public:
  // Connection i plays scripts[i], and the last script once they run out. `tls`: serve TLS with it.
  RawHttpServer(asio::io_context& io, std::vector<RawScript> scripts, asio::ssl::context* tls = nullptr)
      : state_(std::make_shared<State>(io)) {
    state_->scripts = std::move(scripts);
    state_->tls = tls;
    tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
    state_->acceptor.open(endpoint.protocol());
    state_->acceptor.bind(endpoint);
    state_->acceptor.listen();
    asio::co_spawn(io, accept_loop(state_), asio::detached);
  }
  ~RawHttpServer() { stop(); }
  RawHttpServer(const RawHttpServer&) = delete;
  RawHttpServer& operator=(const RawHttpServer&) = delete;

  std::uint16_t port() const { return state_->acceptor.local_endpoint().port(); }
  std::string url(std::string_view path = "/") const {
    return std::string(state_->tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port()) + std::string(path);
  }
  int accepted() const { return state_->accepted; }
  // Connections that are over on our side: the script closed them, or the client left (seen by a read or
  // a write failing). A `hold` or a closed gate does not notice the client leaving.
  int ended() const { return state_->ended; }
  // Every request read, head and body, in arrival order.
  const std::vector<std::string>& requests() const { return state_->requests; }
  // Bytes written by `write` steps that reached the socket, over all connections.
  std::uint64_t bytes_written() const { return state_->bytes_written; }

  void open_gate(int id) {
    state_->open_gates[id] = true;
    for (auto& timer : state_->gate_waiters[id]) timer->cancel();
    state_->gate_waiters[id].clear();
  }

  void stop() {
    if (state_->stopped) return;
    state_->stopped = true;
    boost::system::error_code ignored;
    state_->acceptor.close(ignored);
    for (auto& weak : state_->sockets) {
      if (auto socket = weak.lock()) socket->close(ignored);
    }
    for (auto& weak : state_->holds) {
      if (auto timer = weak.lock()) timer->cancel();
    }
  }

 private:
  struct State {
    explicit State(asio::io_context& io) : io(io), acceptor(io) {}
    asio::io_context& io;
    tcp::acceptor acceptor;
    asio::ssl::context* tls = nullptr;
    std::vector<RawScript> scripts;
    int accepted = 0;
    int ended = 0;
    bool stopped = false;
    std::uint64_t bytes_written = 0;
    std::vector<std::string> requests;
    std::vector<std::weak_ptr<tcp::socket>> sockets;
    std::vector<std::weak_ptr<asio::steady_timer>> holds;
    std::map<int, bool> open_gates;
    std::map<int, std::vector<std::shared_ptr<asio::steady_timer>>> gate_waiters;
  };

  static asio::awaitable<void> accept_loop(std::shared_ptr<State> state) {
    for (;;) {
      auto socket = std::make_shared<tcp::socket>(state->io);
      auto [ec] = co_await state->acceptor.async_accept(*socket, asio::as_tuple(asio::use_awaitable));
      if (ec || state->stopped) co_return;
      const RawScript& script = state->scripts.empty()
                                    ? RawScript{}
                                    : state->scripts[std::min<std::size_t>(static_cast<std::size_t>(state->accepted),
                                                                           state->scripts.size() - 1)];
      ++state->accepted;
      state->sockets.push_back(socket);
      asio::co_spawn(state->io, serve(state, socket, script), asio::detached);
    }
  }

  static asio::awaitable<void> serve(std::shared_ptr<State> state, std::shared_ptr<tcp::socket> socket,
                                     RawScript script) {
    if (state->tls != nullptr) {
      asio::ssl::stream<tcp::socket&> stream(*socket, *state->tls);
      auto [ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
      // Otherwise the client refused our certificate, or gave up.
      if (!ec) co_await play(state, stream, *socket, script);
    } else {
      co_await play(state, *socket, *socket, script);
    }
    ++state->ended;
  }

  template <class Stream>
  static asio::awaitable<void> play(std::shared_ptr<State> state, Stream& stream, tcp::socket& socket,
                                    const RawScript& script) {
    constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
    std::string pending;
    char buffer[4096];
    for (const RawStep& step : script) {
      if (state->stopped) co_return;
      switch (step.kind) {
        case RawStep::Kind::read_request: {
          std::size_t head_end;
          while ((head_end = pending.find("\r\n\r\n")) == std::string::npos) {
            auto [ec, n] = co_await stream.async_read_some(asio::buffer(buffer), kTuple);
            if (ec) co_return;
            pending.append(buffer, n);
          }
          std::size_t length = 0;
          std::string head = pending.substr(0, head_end);
          for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          if (auto at = head.find("\r\ncontent-length:"); at != std::string::npos) {
            length = std::stoul(head.substr(at + 17));
          }
          while (pending.size() < head_end + 4 + length) {
            auto [ec, n] = co_await stream.async_read_some(asio::buffer(buffer), kTuple);
            if (ec) co_return;
            pending.append(buffer, n);
          }
          state->requests.push_back(pending.substr(0, head_end + 4 + length));
          pending.erase(0, head_end + 4 + length);
          break;
        }
        case RawStep::Kind::write: {
          auto [ec, n] = co_await asio::async_write(stream, asio::buffer(step.bytes), kTuple);
          state->bytes_written += n;
          if (ec) co_return;
          break;
        }
        case RawStep::Kind::pause: {
          asio::steady_timer timer(state->io, step.delay);
          co_await timer.async_wait(kTuple);
          break;
        }
        case RawStep::Kind::gate: {
          if (state->open_gates[step.gate_id]) break;
          auto timer = std::make_shared<asio::steady_timer>(state->io, asio::steady_timer::time_point::max());
          state->gate_waiters[step.gate_id].push_back(timer);
          state->holds.push_back(timer);
          co_await timer->async_wait(kTuple);
          break;
        }
        case RawStep::Kind::close: {
          boost::system::error_code ignored;
          socket.shutdown(tcp::socket::shutdown_both, ignored);
          socket.close(ignored);
          co_return;
        }
        case RawStep::Kind::hold: {
          auto timer = std::make_shared<asio::steady_timer>(state->io, asio::steady_timer::time_point::max());
          state->holds.push_back(timer);
          co_await timer->async_wait(kTuple);
          co_return;
        }
      }
    }
    // Script done: behave like a server waiting for the next request until the client leaves.
    for (;;) {
      auto [ec, n] = co_await stream.async_read_some(asio::buffer(buffer), kTuple);
      if (ec || state->stopped) co_return;
    }
  }

  std::shared_ptr<State> state_;
};

// A minimal HTTP CONNECT proxy: records each CONNECT head, dials `upstream_port` on 127.0.0.1 whatever
// host was asked for (so tests can use names that do not resolve), answers 200 and pipes bytes both ways.
class TunnelProxy {
 public:
  TunnelProxy(asio::io_context& io, std::uint16_t upstream_port) : state_(std::make_shared<State>(io)) {
    state_->upstream_port = upstream_port;
    tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
    state_->acceptor.open(endpoint.protocol());
    state_->acceptor.bind(endpoint);
    state_->acceptor.listen();
    asio::co_spawn(io, accept_loop(state_), asio::detached);
  }
  ~TunnelProxy() {
    boost::system::error_code ignored;
    state_->acceptor.close(ignored);
    for (auto& weak : state_->sockets) {
      if (auto socket = weak.lock()) socket->close(ignored);
    }
  }
  std::uint16_t port() const { return state_->acceptor.local_endpoint().port(); }
  const std::vector<std::string>& connect_heads() const { return state_->heads; }

 private:
  struct State {
    explicit State(asio::io_context& io) : io(io), acceptor(io) {}
    asio::io_context& io;
    tcp::acceptor acceptor;
    std::uint16_t upstream_port = 0;
    std::vector<std::string> heads;
    std::vector<std::weak_ptr<tcp::socket>> sockets;
  };

  static asio::awaitable<void> accept_loop(std::shared_ptr<State> state) {
    for (;;) {
      auto socket = std::make_shared<tcp::socket>(state->io);
      auto [ec] = co_await state->acceptor.async_accept(*socket, asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      state->sockets.push_back(socket);
      asio::co_spawn(state->io, tunnel(state, socket), asio::detached);
    }
  }

  static asio::awaitable<void> pipe(std::shared_ptr<tcp::socket> from, std::shared_ptr<tcp::socket> to) {
    char buffer[16384];
    for (;;) {
      auto [ec, n] = co_await from->async_read_some(asio::buffer(buffer), asio::as_tuple(asio::use_awaitable));
      if (ec) break;
      auto [wec, wn] = co_await asio::async_write(*to, asio::buffer(buffer, n), asio::as_tuple(asio::use_awaitable));
      if (wec) break;
    }
    boost::system::error_code ignored;
    to->shutdown(tcp::socket::shutdown_send, ignored);
  }

  static asio::awaitable<void> tunnel(std::shared_ptr<State> state, std::shared_ptr<tcp::socket> client) {
    constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
    std::string head;
    char buffer[1024];
    while (head.find("\r\n\r\n") == std::string::npos) {
      auto [ec, n] = co_await client->async_read_some(asio::buffer(buffer), kTuple);
      if (ec) co_return;
      head.append(buffer, n);
    }
    state->heads.push_back(head);
    auto upstream = std::make_shared<tcp::socket>(state->io);
    state->sockets.push_back(upstream);
    auto [cec] = co_await upstream->async_connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), state->upstream_port), kTuple);
    if (cec || !head.starts_with("CONNECT ")) {
      co_await asio::async_write(*client, asio::buffer(std::string_view("HTTP/1.1 502 Bad Gateway\r\n\r\n")), kTuple);
      co_return;
    }
    co_await asio::async_write(*client, asio::buffer(std::string_view("HTTP/1.1 200 Connection established\r\n\r\n")),
                               kTuple);
    asio::co_spawn(state->io, pipe(upstream, client), asio::detached);
    co_await pipe(client, upstream);
  }

  std::shared_ptr<State> state_;
};

// A self-signed certificate (its own CA) and its key, both PEM.
struct TestCertificate {
  std::string cert_pem;
  std::string key_pem;
};

// `subject_alt_names` in OpenSSL config syntax: "DNS:localhost,IP:127.0.0.1".
inline TestCertificate make_self_signed(const std::string& common_name, const std::string& subject_alt_names) {
  TestCertificate out;
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                             -1, 0);
  X509_set_issuer_name(cert, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair{NID_basic_constraints, std::string("critical,CA:TRUE")},
                            std::pair{NID_subject_key_identifier, std::string("hash")},
                            std::pair{NID_subject_alt_name, subject_alt_names}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (ext != nullptr) {
      X509_add_ext(cert, ext, -1);
      X509_EXTENSION_free(ext);
    }
  }
  X509_sign(cert, key, EVP_sha256());

  auto to_string = [](BIO* bio) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    std::string s(data, static_cast<std::size_t>(n));
    BIO_free(bio);
    return s;
  };
  BIO* cert_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(cert_bio, cert);
  out.cert_pem = to_string(cert_bio);
  BIO* key_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(key_bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  out.key_pem = to_string(key_bio);
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

inline std::unique_ptr<asio::ssl::context> make_server_tls(const TestCertificate& cert) {
  auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
  context->use_certificate_chain(asio::buffer(cert.cert_pem));
  context->use_private_key(asio::buffer(cert.key_pem), asio::ssl::context::pem);
  return context;
}

}  // namespace agentd::net::testing
