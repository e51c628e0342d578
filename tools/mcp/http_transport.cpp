#include "tools/mcp/http_transport.h"

#include <algorithm>
#include <cstdlib>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/net/sse_parser.h"
#include "core/support/json.h"
#include "core/support/log.h"
#include "core/support/text.h"
#include "tools/mcp/mcp_content.h"

namespace agentd::tools::mcp {

namespace asio = boost::asio;
namespace log = support::log;
using support::Errc;
using support::Error;
using support::Json;
using Clock = std::chrono::steady_clock;

namespace {

// A JSON body larger than this is not a message we take (an SSE event has the parser's own bound).
constexpr std::size_t kMaxJsonBody = std::size_t{64} << 20;
// How long close() waits for the server to take the DELETE of its session.
constexpr auto kDeleteTimeout = std::chrono::seconds(3);
constexpr std::size_t kErrorExcerpt = 300;
// GETs that try to resume a POST's stream before its request is failed.
constexpr int kMaxResumes = 3;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The id of a request (its JSON text), or nullopt for a notification or a response.
std::optional<std::string> request_id(std::string_view message) {
  auto parsed = support::parse_json(message);
  if (!parsed || !parsed->is_object() || !parsed->contains("method")) return std::nullopt;
  const Json* id = parsed->find("id");
  if (id == nullptr || id->is_null()) return std::nullopt;
  return id->dump();
}

// The id a response answers (its JSON text), or nullopt when `message` is not a response.
std::optional<std::string> answered_id(std::string_view message) {
  auto parsed = support::parse_json(message);
  if (!parsed || !parsed->is_object() || parsed->contains("method")) return std::nullopt;
  if (!parsed->contains("result") && !parsed->contains("error")) return std::nullopt;
  const Json* id = parsed->find("id");
  if (id == nullptr) return std::nullopt;
  return id->dump();
}

// The request a notifications/cancelled is about (its JSON text).
std::optional<std::string> cancelled_id(std::string_view message) {
  if (message.find("notifications/cancelled") == std::string_view::npos) return std::nullopt;
  auto parsed = support::parse_json(message);
  if (!parsed || (*parsed)["method"] != Json("notifications/cancelled")) return std::nullopt;
  const Json& id = (*parsed)["params"]["requestId"];
  if (id.is_null()) return std::nullopt;
  return id.dump();
}

std::string excerpt(std::string_view body) {
  std::string out(support::utf8_prefix(body, kErrorExcerpt));
  std::replace(out.begin(), out.end(), '\n', ' ');
  if (out.size() < body.size()) out += "...";
  return out;
}

}  // namespace

support::Result<std::string> expand_header_value(std::string_view value,
                                                 const std::function<const char*(const char*)>& lookup) {
  std::string out;
  std::size_t at = 0;
  while (at < value.size()) {
    const std::size_t open = value.find("${", at);
    if (open == std::string_view::npos) {
      out.append(value.substr(at));
      break;
    }
    const std::size_t close = value.find('}', open + 2);
    if (close == std::string_view::npos) {
      out.append(value.substr(at));
      break;
    }
    out.append(value.substr(at, open - at));
    const std::string name(value.substr(open + 2, close - open - 2));
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read-only use of the environment
    const char* found = lookup ? lookup(name.c_str()) : std::getenv(name.c_str());
    if (found == nullptr || *found == '\0') {
      return Error(Errc::not_found, fmt::format("the header value names ${{{}}}, which is not set in agentd's "
                                                "environment",
                                                name));
    }
    out.append(found);
    at = close + 1;
  }
  return out;
}

struct HttpTransport::Post {
  std::string message;
  std::optional<std::string> id;  // a request's
  support::CancelSource cancel;
  std::shared_ptr<asio::steady_timer> accepted;  // cancelled once the head arrived or the POST ended
  bool answered = false;
  void accept() {
    if (accepted) accepted->cancel();
  }
};

HttpTransport::HttpTransport(asio::any_io_executor executor, HttpTransportOptions options, MessageHandler on_message,
                             EndHandler on_end, Spawner spawn)
    : executor_(std::move(executor)),
      options_(std::move(options)),
      on_message_(std::move(on_message)),
      on_end_(std::move(on_end)),
      spawn_(std::move(spawn)) {}

HttpTransport::~HttpTransport() = default;

support::Result<std::shared_ptr<HttpTransport>> HttpTransport::create(asio::any_io_executor executor,
                                                                      HttpTransportOptions options,
                                                                      MessageHandler on_message, EndHandler on_end,
                                                                      Spawner spawn) {
  auto url = net::parse_url(options.url);
  if (!url) return Error(Errc::invalid_argument, fmt::format("{}: {}", options.url, url.error().message()));
  net::HttpClientOptions client;
  client.proxy = options.proxy;
  client.timeouts.first_byte = options.idle_timeout;
  client.timeouts.idle = options.idle_timeout;
  client.user_agent = "agentd-mcp";
  auto http = net::HttpClient::create(executor, std::move(client));
  if (!http) return std::move(http).error();
  std::shared_ptr<HttpTransport> transport(new HttpTransport(
      std::move(executor), std::move(options), std::move(on_message), std::move(on_end), std::move(spawn)));
  transport->http_ = std::move(*http);
  return transport;
}

net::HttpHeaders HttpTransport::request_headers(std::string_view accept) const {
  net::HttpHeaders headers = options_.headers;
  headers.push_back({"Accept", std::string(accept)});
  if (!session_id_.empty()) headers.push_back({"Mcp-Session-Id", session_id_});
  if (!protocol_version_.empty()) headers.push_back({"MCP-Protocol-Version", protocol_version_});
  return headers;
}

net::HttpRequest HttpTransport::stream_request(const std::string& last_event_id, bool& event_stream) const {
  net::HttpRequest request;
  request.method = "GET";
  request.url = options_.url;
  request.headers = request_headers("text/event-stream");
  if (!last_event_id.empty()) request.headers.push_back({"Last-Event-ID", last_event_id});
  request.on_head = [&event_stream](int /*status*/, const net::HttpHeaders& headers) {
    const std::string* type = net::find_header(headers, "content-type");
    event_stream = type != nullptr && lower(*type).starts_with("text/event-stream");
  };
  return request;
}

void HttpTransport::send(std::string message) {
  if (closed_ || ended_) return;
  // A cancelled request: its POST (and the stream it may still be reading) ends too.
  if (auto id = cancelled_id(message)) {
    if (auto it = in_flight_.find(*id); it != in_flight_.end()) it->second->cancel.cancel();
  }
  auto post = std::make_shared<Post>();
  post->id = request_id(message);
  post->message = std::move(message);
  queue_.push_back(std::move(post));
  if (!pumping_) {
    pumping_ = true;
    spawn_(pump(), "MCP HTTP sender");
  }
}

asio::awaitable<void> HttpTransport::pump() {
  auto self = shared_from_this();
  while (!queue_.empty() && !closed_ && !ended_) {
    std::shared_ptr<Post> next = std::move(queue_.front());
    queue_.pop_front();
    next->accepted = std::make_shared<asio::steady_timer>(executor_, Clock::time_point::max());
    if (next->id) in_flight_[*next->id] = next;
    spawn_(post(next), "MCP HTTP POST");
    boost::system::error_code ignored;
    co_await next->accepted->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  pumping_ = false;
}

asio::awaitable<void> HttpTransport::post(std::shared_ptr<Post> post) {
  auto self = shared_from_this();
  net::HttpRequest request;
  request.method = "POST";
  request.url = options_.url;
  request.headers = request_headers("application/json, text/event-stream");
  request.headers.push_back({"Content-Type", "application/json"});
  if (protocol_version_ == kStatelessProtocolVersion) {
    // The stateless revision's routing headers: what a load balancer may route on without the body.
    if (auto parsed = support::parse_json(post->message); parsed && (*parsed)["method"].is_string()) {
      request.headers.push_back({"Mcp-Method", (*parsed)["method"].as_string()});
      if (const Json& name = (*parsed)["params"]["name"]; name.is_string()) {
        request.headers.push_back({"Mcp-Name", name.as_string()});
      }
    }
  }
  request.body = post->message;
  const bool had_session = !session_id_.empty();
  bool event_stream = false;
  request.on_head = [this, post, &event_stream](int status, const net::HttpHeaders& headers) {
    if (const std::string* type = net::find_header(headers, "content-type")) {
      event_stream = lower(*type).starts_with("text/event-stream");
    }
    if (status >= 200 && status < 300 && session_id_.empty()) {
      if (const std::string* id = net::find_header(headers, "mcp-session-id"); id != nullptr && !id->empty()) {
        session_id_ = *id;
      }
    }
    post->accept();
  };
  std::string body;
  net::SseParser sse;
  std::string stream_event_id;  // the last event id of this POST's stream: where a resumption starts
  bool too_large = false;
  const auto deliver = [&](std::string message) {
    if (closed_ || ended_) return;
    if (post->id && answered_id(message) == post->id) post->answered = true;
    on_message_(std::move(message));
  };
  const net::HttpBodyCallback on_body = [&](std::string_view chunk) {
    if (!event_stream) {
      if (body.size() + chunk.size() > kMaxJsonBody) {
        too_large = true;
        return net::BodyAction::abort;
      }
      body.append(chunk);
      return net::BodyAction::more;
    }
    sse.feed(chunk);
    while (auto event = sse.next()) {
      if (!event->last_event_id.empty()) stream_event_id = std::string(event->last_event_id);
      if ((event->type == "message" || event->type.empty()) && !event->data.empty()) {
        deliver(std::string(event->data));
      }
    }
    if (sse.overflowed()) {
      too_large = true;
      return net::BodyAction::abort;
    }
    // The answer ends what this POST is for; the server should close the stream after it.
    return post->answered ? net::BodyAction::finish : net::BodyAction::more;
  };
  // The request stays cancellable (send() to it) until its answer came, also while its stream resumes.
  struct Forget {
    HttpTransport* transport;
    std::shared_ptr<Post> post;
    ~Forget() {
      if (post->id) transport->in_flight_.erase(*post->id);
    }
  } forget{this, post};
  auto sent = co_await http_->send(std::move(request), on_body, post->cancel.token());
  post->accept();
  if (closed_ || ended_) co_return;
  if (!sent) {
    if (post->cancel.cancelled()) co_return;  // the call above was cancelled; it has its answer
    log::warn("MCP server '{}': POST failed: {}", options_.server, sent.error().message());
    fail_request(post->id, fmt::format("the server could not be reached: {}", sent.error().message()));
    co_return;
  }
  const net::HttpResponse& response = *sent;
  if (response.status == 404 && had_session) {
    end(fmt::format("the server ended the session (HTTP 404 for session {})", session_id_));
    co_return;
  }
  if (!response.ok_status()) {
    const std::string why = fmt::format("HTTP {}{}{}", response.status, response.error_body.empty() ? "" : ": ",
                                        excerpt(response.error_body));
    if (!post->id) log::warn("MCP server '{}': a message was refused: {}", options_.server, why);
    fail_request(post->id, why);
    co_return;
  }
  if (too_large) {
    fail_request(post->id, "the server's answer was larger than agentd takes");
    co_return;
  }
  if (!event_stream) {
    std::string_view text = body;
    while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\r')) {
      text.remove_prefix(1);
    }
    if (!text.empty()) deliver(std::string(text));
  } else if (response.body_error == std::nullopt) {
    sse.finish();
    while (auto event = sse.next()) {
      if (!event->last_event_id.empty()) stream_event_id = std::string(event->last_event_id);
      if (!event->data.empty()) deliver(std::string(event->data));
    }
  }
  // A stream with event ids that ended before the answer can be resumed (SEP-1699): a GET with
  // Last-Event-ID, after the server's `retry:`, carries on where it stopped.
  if (event_stream && post->id && !post->answered && !post->cancel.cancelled() && !stream_event_id.empty()) {
    const auto wait = sse.retry_ms() ? std::chrono::milliseconds(*sse.retry_ms()) : options_.reconnect_min;
    co_await resume(post, std::move(stream_event_id), wait);
    if (closed_ || ended_) co_return;
  }
  if (post->id && !post->answered && !post->cancel.cancelled()) {
    fail_request(post->id,
                 response.body_error
                     ? fmt::format("the server's stream broke before it answered: {}", response.body_error->message())
                     : std::string("the server's answer ended without a response to the request"));
  }
}

asio::awaitable<void> HttpTransport::resume(std::shared_ptr<Post> post, std::string event_id,
                                            std::chrono::milliseconds wait) {
  auto self = shared_from_this();
  asio::steady_timer timer(executor_);
  for (int attempt = 0; attempt < kMaxResumes && !post->answered && !post->cancel.cancelled(); ++attempt) {
    timer.expires_after(wait);
    boost::system::error_code ignored;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    if (closed_ || ended_ || post->cancel.cancelled()) co_return;
    bool event_stream = false;
    net::HttpRequest request = stream_request(event_id, event_stream);
    net::SseParser sse;
    const net::HttpBodyCallback on_body = [&](std::string_view chunk) {
      if (!event_stream) return net::BodyAction::abort;
      sse.feed(chunk);
      while (auto event = sse.next()) {
        if (!event->last_event_id.empty()) event_id = std::string(event->last_event_id);
        if (event->data.empty() || closed_ || ended_) continue;
        std::string message(event->data);
        if (answered_id(message) == post->id) post->answered = true;
        on_message_(std::move(message));
      }
      return post->answered || sse.overflowed() ? net::BodyAction::finish : net::BodyAction::more;
    };
    auto sent = co_await http_->send(std::move(request), on_body, post->cancel.token());
    if (closed_ || ended_) co_return;
    if (sent && (sent->status == 405 || (sent->ok_status() && !event_stream))) co_return;  // nothing to resume
    if (auto retry = sse.retry_ms()) wait = std::chrono::milliseconds(*retry);
    log::debug("MCP server '{}': resumed stream ended ({}) {}", options_.server,
               sent ? fmt::format("HTTP {}", sent->status) : sent.error().message(),
               post->answered ? "with the answer" : "without the answer");
  }
}

void HttpTransport::fail_request(const std::optional<std::string>& id, std::string_view why) {
  if (!id || closed_ || ended_) return;
  // The call above waits on the Peer: it gets a JSON-RPC error as if the server had sent it.
  Json error = Json::object();
  error.set("code", -32000);
  error.set("message", std::string(why));
  const std::string message = fmt::format(R"({{"jsonrpc":"2.0","id":{},"error":{}}})", *id, error.dump());
  on_message_(message);
}

void HttpTransport::initialized(std::string protocol_version) {
  protocol_version_ = std::move(protocol_version);
  if (listening_ || closed_ || ended_) return;
  listening_ = true;
  spawn_(listen(), "MCP HTTP listener");
}

// The GET stream: what the server sends unprompted (list_changed, its own requests). 405 means it
// offers none. A stream that ends or breaks is reopened after a backoff that doubles up to the most.
asio::awaitable<void> HttpTransport::listen() {
  auto self = shared_from_this();
  auto backoff = options_.reconnect_min;
  asio::steady_timer timer(executor_);
  auto stop = std::make_shared<support::CancelSource>();
  cancels_.push_back(stop);
  while (!closed_ && !ended_) {
    bool event_stream = false;
    bool got_event = false;
    net::HttpRequest request = stream_request(last_event_id_, event_stream);
    net::SseParser sse;
    const net::HttpBodyCallback on_body = [&](std::string_view chunk) {
      if (!event_stream) return net::BodyAction::abort;
      sse.feed(chunk);
      while (auto event = sse.next()) {
        got_event = true;
        if (!event->last_event_id.empty()) last_event_id_ = std::string(event->last_event_id);
        if (!event->data.empty() && !closed_ && !ended_) on_message_(std::string(event->data));
      }
      return sse.overflowed() ? net::BodyAction::abort : net::BodyAction::more;
    };
    auto sent = co_await http_->send(std::move(request), on_body, stop->token());
    if (closed_ || ended_) break;
    if (sent && (sent->status == 405 || (sent->ok_status() && !event_stream))) {
      log::debug("MCP server '{}' offers no event stream of its own (GET answered {})", options_.server, sent->status);
      break;
    }
    if (sent && sent->status == 404 && !session_id_.empty()) {
      end(fmt::format("the server ended the session (HTTP 404 for session {})", session_id_));
      break;
    }
    if (got_event) backoff = options_.reconnect_min;
    if (auto retry = sse.retry_ms()) backoff = std::chrono::milliseconds(*retry);
    log::debug("MCP server '{}': event stream ended ({}); reopening in {} ms", options_.server,
               sent ? fmt::format("HTTP {}", sent->status) : sent.error().message(), backoff.count());
    timer.expires_after(backoff);
    boost::system::error_code ignored;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    backoff = std::min(backoff * 2, options_.reconnect_max);
  }
}

void HttpTransport::end(std::string reason) {
  if (ended_ || closed_) return;
  ended_ = true;
  for (auto& [id, post] : in_flight_) post->cancel.cancel();
  for (auto& cancel : cancels_) cancel->cancel();
  log::warn("MCP server '{}': {}", options_.server, reason);
  if (on_end_) on_end_(std::move(reason));
}

asio::awaitable<void> HttpTransport::close() {
  auto self = shared_from_this();
  if (closed_) co_return;
  closed_ = true;
  queue_.clear();
  for (auto& [id, post] : in_flight_) post->cancel.cancel();
  for (auto& cancel : cancels_) cancel->cancel();
  if (session_id_.empty() || ended_) {
    co_await http_->shutdown();
    co_return;
  }
  // The session is over: the server may free it now rather than at its own timeout.
  net::HttpRequest request;
  request.method = "DELETE";
  request.url = options_.url;
  request.headers = options_.headers;
  request.headers.push_back({"Mcp-Session-Id", session_id_});
  if (!protocol_version_.empty()) request.headers.push_back({"MCP-Protocol-Version", protocol_version_});
  // The timer's handler may run after this frame is gone: it holds what it cancels.
  auto bound = std::make_shared<support::CancelSource>();
  asio::steady_timer timer(executor_, kDeleteTimeout);
  timer.async_wait([bound](const boost::system::error_code& ec) {
    if (!ec) bound->cancel();
  });
  auto deleted = co_await http_->send(std::move(request), {}, bound->token());
  timer.cancel();
  if (deleted && deleted->status != 405 && !deleted->ok_status()) {
    log::debug("MCP server '{}': DELETE of the session answered HTTP {}", options_.server, deleted->status);
  }
  co_await http_->shutdown();
}

}  // namespace agentd::tools::mcp
