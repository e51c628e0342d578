// The mock model server's sockets: Beast reads requests; responses are written by hand so a script can
// control every byte (chunk sizes, delays, cutting a body mid-chunk, stalling with the socket open).
#include "test/mock_model/mock_model_server.h"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/system_error.hpp>
#include <fmt/format.h>

#include "core/support/json_writer.h"
#include "core/support/log.h"
#include "core/support/task_group.h"

namespace agentd::mock_model {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using support::Json;

namespace {

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
// Real requests carry whole conversations; Beast's 1 MB default would refuse long ones.
constexpr std::uint64_t kMaxRequestBody = std::uint64_t{256} << 20;
constexpr auto kStopGrace = std::chrono::seconds(5);

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_credential_header(std::string_view name) {
  for (const auto secret : {"x-api-key", "authorization", "proxy-authorization", "api-key", "cookie"}) {
    if (iequals(name, secret)) return true;
  }
  return false;
}

std::string reason_phrase(int status) {
  if (status == 529) return "Overloaded";  // Anthropic's; not in the IANA registry
  const auto reason = http::obsolete_reason(static_cast<http::status>(status));
  return reason.empty() || reason == "<unknown-status>" ? "Unknown" : std::string(reason);
}

// The error body shape both providers' clients understand: Anthropic's envelope, whose `error.type` and
// `error.message` are also where OpenAI clients look.
std::string error_body(std::string_view type, std::string_view message, const Json& details) {
  std::string out;
  support::JsonWriter w(out);
  w.begin_object().member("type", "error").key("error").begin_object().member("type", type);
  w.member("message", message).end_object();
  if (!details.is_null()) w.member("mock", details);
  w.end_object();
  return out;
}

// True when a raw HTTP response frames its own body, so the connection can carry another request.
bool raw_response_is_framed(std::string_view raw) {
  const std::size_t end = raw.find("\r\n\r\n");
  const std::string head = lower(raw.substr(0, end));
  if (head.find("\r\nconnection: close") != std::string::npos) return false;
  return head.find("\r\ncontent-length:") != std::string::npos ||
         head.find("\r\ntransfer-encoding: chunked") != std::string::npos;
}

}  // namespace

struct MockModelServer::Impl {
  explicit Impl(Script initial, ServerOptions opts)
      : options(std::move(opts)), script(std::make_shared<const Script>(std::move(initial))) {}
  ~Impl() {
    if (record_file != nullptr) std::fclose(record_file);
  }

  asio::awaitable<void> accept_loop();
  // `connection`: its number, counted from 1 in accept order (recorded with each request it carries).
  asio::awaitable<void> serve(tcp::socket socket, std::uint64_t connection);
  asio::awaitable<void> serve_requests(tcp::socket& socket, std::uint64_t connection);
  // Answers one request; false when the connection must close afterwards.
  asio::awaitable<bool> handle(tcp::socket& socket, http::request<http::string_body>& request,
                               std::uint64_t connection);
  asio::awaitable<bool> handle_control(tcp::socket& socket, const http::request<http::string_body>& request,
                                       std::string_view path, bool keep_alive);
  asio::awaitable<bool> play(tcp::socket& socket, const Response& response, const PreparedBody& body,
                             std::size_t exchange_number, bool keep_alive);
  asio::awaitable<bool> write_simple(tcp::socket& socket, int status, std::string_view body, bool keep_alive,
                                     std::string_view extra_headers = {});
  asio::awaitable<void> wait_ms(std::uint64_t ms);
  asio::awaitable<void> stall(tcp::socket& socket);
  void record(Json entry);

  ServerOptions options;
  std::uint16_t port = 0;
  std::FILE* record_file = nullptr;

  mutable std::mutex mutex;
  mutable std::condition_variable recorded;
  std::shared_ptr<const Script> script;  // shared so a response in flight keeps its exchange alive
  std::size_t next_exchange = 0;
  std::size_t used = 0;
  std::uint64_t sequence = 0;
  std::uint64_t connections = 0;  // accepted so far (the accept loop's only)
  std::vector<Json> requests;

  std::thread thread;
  std::future<void> thread_done;
  bool stopped = false;

  // Last, so it goes first: destroying the io_context destroys suspended coroutines, which must still
  // find the members above alive.
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  support::TaskGroup tasks{io.get_executor()};
};

asio::awaitable<void> MockModelServer::Impl::accept_loop() {
  while (acceptor.is_open()) {
    auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      support::log::warn("mock-model: accept failed: {}", ec.message());
      continue;
    }
    // Stream pieces must leave at once, as a real server's do, or delay and latency tests mean nothing.
    socket.set_option(tcp::no_delay(true), ec);
    tasks.spawn(serve(std::move(socket), ++connections), "mock-model connection");
  }
}

asio::awaitable<void> MockModelServer::Impl::serve(tcp::socket socket, std::uint64_t connection) {
  try {
    co_await serve_requests(socket, connection);
  } catch (const boost::system::system_error& e) {
    // stop() cancels every connection; Asio then throws at the coroutine's next co_await. Expected.
    if (e.code() != asio::error::operation_aborted) support::log::warn("mock-model: connection failed: {}", e.what());
  }
  beast::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

asio::awaitable<void> MockModelServer::Impl::serve_requests(tcp::socket& socket, std::uint64_t connection) {
  beast::flat_buffer buffer;
  while (true) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxRequestBody);
    auto [ec, bytes] = co_await http::async_read_header(socket, buffer, parser, kNoThrow);
    if (!ec && iequals(parser.get()[http::field::expect], "100-continue")) {
      // curl asks before sending bodies over 1 kB and would otherwise wait a second for this.
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      std::tie(ec, bytes) = co_await asio::async_write(socket, asio::buffer(kContinue), kNoThrow);
    }
    if (!ec) std::tie(ec, bytes) = co_await http::async_read(socket, buffer, parser, kNoThrow);
    if (ec) {
      if (ec != http::error::end_of_stream && ec != asio::error::eof && ec != asio::error::operation_aborted &&
          ec != asio::error::connection_reset) {
        support::log::warn("mock-model: bad request: {}", ec.message());
      }
      break;
    }
    auto request = parser.release();
    if (!co_await handle(socket, request, connection)) break;
  }
}

void MockModelServer::Impl::record(Json entry) {
  std::lock_guard lock(mutex);
  if (record_file != nullptr) {
    const std::string line = entry.dump() + "\n";
    std::fwrite(line.data(), 1, line.size(), record_file);
    std::fflush(record_file);
  }
  requests.push_back(std::move(entry));
  recorded.notify_all();
}

asio::awaitable<bool> MockModelServer::Impl::handle(tcp::socket& socket, http::request<http::string_body>& request,
                                                    std::uint64_t connection) {
  const std::string target(request.target());
  const std::string path = target.substr(0, target.find('?'));
  const bool keep_alive = request.keep_alive();
  if (path.starts_with("/_mock/")) co_return co_await handle_control(socket, request, path, keep_alive);

  ReceivedRequest received{std::string(request.method_string()), path, std::move(request.body()), std::nullopt};
  if (auto parsed = support::parse_json(received.body); parsed) received.body_json = std::move(parsed).value();

  // Take the next exchange; every request uses one, so a run that went astray fails fast.
  std::shared_ptr<const Script> current;
  std::optional<std::size_t> index;
  std::uint64_t seq = 0;
  {
    std::lock_guard lock(mutex);
    current = script;
    seq = ++sequence;
    if (current->loop && next_exchange == current->exchanges.size()) next_exchange = 0;
    if (next_exchange < current->exchanges.size()) {
      index = next_exchange++;
      ++used;
    }
  }
  const Exchange* exchange = index ? &current->exchanges[*index] : nullptr;
  const std::vector<std::string> failures =
      exchange && exchange->expect ? check_expectation(*exchange->expect, received) : std::vector<std::string>{};

  Json entry = Json::object();
  entry.set("seq", seq);
  entry.set("exchange", index ? Json(*index + 1) : Json());
  entry.set("connection", connection);
  if (exchange) entry.set("name", exchange->name);
  entry.set("method", received.method);
  entry.set("path", path);
  entry.set("target", target);
  Json headers = Json::object();
  for (const auto& field : request.base()) {
    const std::string name = lower(field.name_string());
    headers.set(name, is_credential_header(name) ? Json("[redacted]") : Json(std::string_view(field.value())));
  }
  entry.set("headers", std::move(headers));
  if (received.body_json) {
    entry.set("body", *received.body_json);
  } else {
    entry.set("body", Json());
    if (!received.body.empty()) entry.set("body_text", received.body);
  }
  if (!failures.empty()) {
    Json list = Json::array();
    for (const auto& failure : failures) list.push_back(failure);
    entry.set("expectation_failures", std::move(list));
  }
  record(std::move(entry));

  if (exchange == nullptr) {
    const std::size_t total = current->exchanges.size();
    const std::string message = fmt::format(
        "the mock model script is exhausted: it has {} exchange{} and all were used; request {} ({} {}) has no answer",
        total, total == 1 ? "" : "s", seq, received.method, path);
    support::log::warn("mock-model: {}", message);
    Json details = Json::object();
    details.set("exchanges", total);
    details.set("request", seq);
    co_return co_await write_simple(socket, 500, error_body("mock_script_exhausted", message, details), keep_alive,
                                    "x-mock-error: script_exhausted\r\n");
  }
  if (!failures.empty()) {
    std::string message = fmt::format("request {} did not match {} of the mock script:", seq, exchange->name);
    for (const auto& failure : failures) message += "\n  " + failure;
    support::log::warn("mock-model: {}", message);
    Json details = Json::object();
    details.set("exchange", *index + 1);
    details.set("name", exchange->name);
    details.set("expected", exchange->expect->source);
    Json got = Json::object();
    got.set("method", received.method);
    got.set("path", path);
    const Json* model = received.body_json ? received.body_json->find("model") : nullptr;
    got.set("model", model != nullptr ? *model : Json());
    details.set("received", std::move(got));
    Json list = Json::array();
    for (const auto& failure : failures) list.push_back(failure);
    details.set("failures", std::move(list));
    co_return co_await write_simple(socket, 400, error_body("mock_expectation_failed", message, details), keep_alive,
                                    "x-mock-error: expectation_failed\r\n");
  }

  const PreparedBody body = prepare_body(exchange->response, received, *index + 1);
  support::log::info("mock-model: request {} {} {} -> {}: status {}", seq, received.method, path, exchange->name,
                     exchange->response.status);
  co_return co_await play(socket, exchange->response, body, *index + 1, keep_alive);
}

asio::awaitable<bool> MockModelServer::Impl::handle_control(tcp::socket& socket,
                                                            const http::request<http::string_body>& request,
                                                            std::string_view path, bool keep_alive) {
  const auto method = request.method();
  if (path == "/_mock/health" && method == http::verb::get) {
    std::string out;
    {
      std::lock_guard lock(mutex);
      support::JsonWriter w(out);
      w.begin_object().member("ok", true).member("exchanges", script->exchanges.size()).member("used", used);
      w.member("requests", requests.size()).end_object();
    }
    co_return co_await write_simple(socket, 200, out, keep_alive);
  }
  if (path == "/_mock/requests" && method == http::verb::get) {
    std::string out;
    {
      std::lock_guard lock(mutex);
      support::JsonWriter w(out);
      w.value(requests);
    }
    co_return co_await write_simple(socket, 200, out, keep_alive);
  }
  if (path == "/_mock/requests" && method == http::verb::delete_) {
    std::size_t cleared = 0;
    {
      std::lock_guard lock(mutex);
      cleared = requests.size();
      requests.clear();
    }
    co_return co_await write_simple(socket, 200, fmt::format(R"({{"cleared":{}}})", cleared), keep_alive);
  }
  if (path == "/_mock/script" && method == http::verb::post) {
    auto json = support::parse_json(request.body());
    Result<Script> loaded = json ? parse_script(*json, options.script_dir) : Result<Script>(std::move(json).error());
    if (!loaded) {
      co_return co_await write_simple(socket, 400, error_body("mock_bad_script", loaded.error().message(), Json()),
                                      keep_alive);
    }
    const std::size_t count = loaded->exchanges.size();
    {
      std::lock_guard lock(mutex);
      script = std::make_shared<const Script>(std::move(loaded).value());
      next_exchange = 0;
      used = 0;
    }
    support::log::info("mock-model: loaded a script of {} exchanges", count);
    co_return co_await write_simple(socket, 200, fmt::format(R"({{"ok":true,"exchanges":{}}})", count), keep_alive);
  }
  co_return co_await write_simple(
      socket, 404,
      error_body("not_found_error",
                 "unknown mock endpoint; known: GET /_mock/health, GET|DELETE /_mock/requests, POST /_mock/script",
                 Json()),
      keep_alive);
}

asio::awaitable<void> MockModelServer::Impl::wait_ms(std::uint64_t ms) {
  if (ms == 0) co_return;
  asio::steady_timer timer(io, std::chrono::milliseconds(ms));
  co_await timer.async_wait(kNoThrow);
}

asio::awaitable<void> MockModelServer::Impl::stall(tcp::socket& socket) {
  // Hold the connection open, reading and discarding, until the client gives up or we are stopped.
  std::array<char, 512> sink{};
  while (true) {
    auto [ec, n] = co_await socket.async_read_some(asio::buffer(sink), kNoThrow);
    if (ec) break;
  }
}

asio::awaitable<bool> MockModelServer::Impl::write_simple(tcp::socket& socket, int status, std::string_view body,
                                                          bool keep_alive, std::string_view extra_headers) {
  std::string head =
      fmt::format("HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{}{}\r\n", status,
                  reason_phrase(status), body.size(), extra_headers, keep_alive ? "" : "connection: close\r\n");
  const std::array<asio::const_buffer, 2> buffers{asio::buffer(head), asio::buffer(body)};
  auto [ec, n] = co_await asio::async_write(socket, buffers, kNoThrow);
  co_return !ec && keep_alive;
}

asio::awaitable<bool> MockModelServer::Impl::play(tcp::socket& socket, const Response& response,
                                                  const PreparedBody& body, std::size_t exchange_number,
                                                  bool keep_alive) {
  co_await wait_ms(response.headers_delay_ms);
  if (response.disconnect_before_headers) {
    support::log::info("mock-model: exchange {}: disconnecting before the headers", exchange_number);
    co_return false;
  }

  const bool raw = response.kind == Response::BodyKind::http_file;
  const bool chunked = !raw && response.chunked.value_or(body.stream);
  if (!raw) {
    // Defaults first, unless the script names the same header.
    const auto user_has = [&](std::string_view name) {
      return std::any_of(response.headers.begin(), response.headers.end(),
                         [&](const auto& header) { return iequals(header.first, name); });
    };
    std::string head = fmt::format("HTTP/1.1 {} {}\r\n", response.status, reason_phrase(response.status));
    if (!body.content_type.empty() && !user_has("content-type")) {
      head += fmt::format("content-type: {}\r\n", body.content_type);
    }
    if (body.stream && !user_has("cache-control")) head += "cache-control: no-cache\r\n";
    if (!user_has("transfer-encoding") && !user_has("content-length")) {
      std::size_t length = 0;
      for (const auto& piece : body.pieces) length += piece.size();
      head += chunked ? std::string("transfer-encoding: chunked\r\n") : fmt::format("content-length: {}\r\n", length);
    }
    head += fmt::format("x-mock-exchange: {}\r\n", exchange_number);
    if (!keep_alive) head += "connection: close\r\n";
    for (const auto& [name, value] : response.headers) head += fmt::format("{}: {}\r\n", name, value);
    head += "\r\n";
    auto [ec, n] = co_await asio::async_write(socket, asio::buffer(head), kNoThrow);
    if (ec) co_return false;
  }

  // The first of the two cut points that applies; both count body bytes (the whole response when raw).
  std::optional<std::uint64_t> cut;
  bool stall_at_cut = false;
  if (response.disconnect_after_bytes) cut = response.disconnect_after_bytes;
  if (response.stall_after_bytes && (!cut || *response.stall_after_bytes < *cut)) {
    cut = response.stall_after_bytes;
    stall_at_cut = true;
  }

  std::uint64_t sent = 0;
  bool cut_reached = false;
  for (std::size_t i = 0; i < body.pieces.size(); ++i) {
    const std::string& piece = body.pieces[i];
    if (piece.empty()) continue;  // an empty chunk would end a chunked body early
    if (cut && sent >= *cut) {
      cut_reached = true;
      break;
    }
    if (i > 0) co_await wait_ms(response.chunk_delay_ms);
    std::string_view data = piece;
    if (cut && sent + data.size() > *cut) data = data.substr(0, static_cast<std::size_t>(*cut - sent));
    // A cut chunk still announces its full size, as a dropped connection would leave it.
    const std::string size_line = chunked ? fmt::format("{:x}\r\n", piece.size()) : std::string();
    const std::string_view chunk_end = chunked && data.size() == piece.size() ? "\r\n" : "";
    const std::array<asio::const_buffer, 3> buffers{asio::buffer(size_line), asio::buffer(data),
                                                    asio::buffer(chunk_end.data(), chunk_end.size())};
    if (options.on_body_write) options.on_body_write(data);
    auto [ec, n] = co_await asio::async_write(socket, buffers, kNoThrow);
    if (ec) co_return false;
    sent += data.size();
  }
  if (cut && sent >= *cut) cut_reached = true;  // also a cut at exactly the end of the body

  if (cut_reached) {
    if (stall_at_cut) {
      support::log::info("mock-model: exchange {}: stalling after {} body bytes", exchange_number, sent);
      co_await stall(socket);
    } else {
      support::log::info("mock-model: exchange {}: disconnecting after {} body bytes", exchange_number, sent);
    }
    co_return false;
  }
  co_await wait_ms(response.end_delay_ms);
  if (chunked) {
    auto [ec, n] = co_await asio::async_write(socket, asio::buffer("0\r\n\r\n", 5), kNoThrow);
    if (ec) co_return false;
  }
  if (raw) {
    std::string all;
    for (const auto& piece : body.pieces) all += piece;
    co_return keep_alive&& raw_response_is_framed(all);
  }
  co_return keep_alive;
}

Result<std::unique_ptr<MockModelServer>> MockModelServer::start(Script script, ServerOptions options) {
  auto impl = std::make_unique<Impl>(std::move(script), std::move(options));
  if (!impl->options.record_file.empty()) {
    impl->record_file = std::fopen(impl->options.record_file.c_str(), "a");
    if (impl->record_file == nullptr) {
      return support::make_error(support::Errc::io, "cannot open --record file {}", impl->options.record_file);
    }
  }
  beast::error_code ec;
  const tcp::endpoint endpoint(asio::ip::address_v4::loopback(), impl->options.port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return support::make_error(support::Errc::unavailable, "cannot listen on 127.0.0.1:{}: {}", impl->options.port,
                               ec.message());
  }
  impl->port = impl->acceptor.local_endpoint().port();
  impl->tasks.spawn(impl->accept_loop(), "mock-model accept loop");

  std::promise<void> done;
  impl->thread_done = done.get_future();
  impl->thread = std::thread([raw = impl.get(), done = std::move(done)]() mutable {
    try {
      raw->io.run();
    } catch (const std::exception& e) {
      support::log::error("mock-model: event loop failed: {}", e.what());
    }
    done.set_value();
  });
  return std::unique_ptr<MockModelServer>(new MockModelServer(std::move(impl)));
}

MockModelServer::MockModelServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MockModelServer::~MockModelServer() { stop(); }

void MockModelServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  // Graceful first: close the listener and cancel every connection, so the loop runs out of work...
  asio::post(impl_->io, [impl = impl_.get()] {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
    impl->tasks.cancel_all();
  });
  // ...then forced, should something not answer cancellation.
  if (impl_->thread_done.wait_for(kStopGrace) != std::future_status::ready) impl_->io.stop();
  impl_->thread.join();
  if (impl_->record_file != nullptr) std::fclose(impl_->record_file);
  impl_->record_file = nullptr;
}

std::uint16_t MockModelServer::port() const noexcept { return impl_->port; }

std::string MockModelServer::url() const { return fmt::format("http://127.0.0.1:{}", impl_->port); }

std::vector<Json> MockModelServer::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->requests;
}

bool MockModelServer::wait_for_requests(std::size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(impl_->mutex);
  return impl_->recorded.wait_for(lock, timeout, [&] { return impl_->requests.size() >= count; });
}

void MockModelServer::clear_requests() {
  std::lock_guard lock(impl_->mutex);
  impl_->requests.clear();
}

void MockModelServer::set_script(Script script) {
  std::lock_guard lock(impl_->mutex);
  impl_->script = std::make_shared<const Script>(std::move(script));
  impl_->next_exchange = 0;
  impl_->used = 0;
}

std::size_t MockModelServer::exchanges_used() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->used;
}

}  // namespace agentd::mock_model
