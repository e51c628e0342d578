// The Streamable HTTP transport of MCP (spec 2025-11-25, "Transports"): the client POSTs each JSON-RPC
// message to the server's one endpoint; a request is answered with a JSON body or with a server-sent
// event stream on that POST (progress and the server's own requests may come first); notifications and
// responses get 202. The server's session id (Mcp-Session-Id, given with the initialize answer) goes
// with every later request, and a 404 for it ends the session. Once initialized, a GET stream carries
// what the server sends unprompted; it is reopened with backoff (and Last-Event-ID) when it drops. A
// POST's stream that ends before its answer is resumed by a GET with its Last-Event-ID (SEP-1699).
// protocol::Peer sits above it as over a pipe: messages in, messages out.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include "core/net/http_client.h"
#include "core/support/cancel.h"
#include "core/support/result.h"

namespace agentd::tools::mcp {

// "${NAME}" in a header value replaced by agentd's variable NAME (a bearer token kept out of config
// files). Errc::not_found naming the variable when it is unset or empty; `lookup` null: the process's.
support::Result<std::string> expand_header_value(std::string_view value,
                                                 const std::function<const char*(const char*)>& lookup = {});

struct HttpTransportOptions {
  std::string server;  // for the log and errors
  std::string url;
  net::HttpHeaders headers;  // expanded already
  net::ProxyConfig proxy;
  // From a dropped GET stream to the next attempt: doubled each time, up to the most.
  std::chrono::milliseconds reconnect_min{500};
  std::chrono::milliseconds reconnect_max{30000};
  // A body that does not move for this long is dropped (a POST's request is then failed).
  std::chrono::milliseconds idle_timeout{300000};
};

class HttpTransport : public std::enable_shared_from_this<HttpTransport> {
 public:
  using MessageHandler = std::function<void(std::string message)>;
  using EndHandler = std::function<void(std::string reason)>;
  // Runs a coroutine of the transport in the owner's task group.
  using Spawner = std::function<void(boost::asio::awaitable<void> task, std::string name)>;

  static support::Result<std::shared_ptr<HttpTransport>> create(boost::asio::any_io_executor executor,
                                                                HttpTransportOptions options, MessageHandler on_message,
                                                                EndHandler on_end, Spawner spawn);
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;
  ~HttpTransport();

  // POSTs `message` (one JSON-RPC message). POSTs start in the order given, each once the one before
  // was accepted (its response head arrived), so the server sees initialize, then initialized, then the
  // rest. A request whose POST fails is answered here with a JSON-RPC error, so the call above ends.
  void send(std::string message);
  // The version sent as MCP-Protocol-Version from now on (empty: none). With the stateless revision's
  // version, each POST also names its method (Mcp-Method) and, for tools/call, the tool (Mcp-Name).
  void set_protocol_version(std::string protocol_version) { protocol_version_ = std::move(protocol_version); }
  // After a legacy handshake: the negotiated version, and the GET stream is opened.
  void initialized(std::string protocol_version);
  // Ends everything in flight (their requests fail with "closed"), and tells the server the session is
  // over (DELETE, bounded by a few seconds). on_end is not called for it. Idempotent.
  boost::asio::awaitable<void> close();

  const std::string& session_id() const noexcept { return session_id_; }
  bool closed() const noexcept { return closed_; }

 private:
  HttpTransport(boost::asio::any_io_executor executor, HttpTransportOptions options, MessageHandler on_message,
                EndHandler on_end, Spawner spawn);
  struct Post;
  boost::asio::awaitable<void> pump();
  boost::asio::awaitable<void> post(std::shared_ptr<Post> post);
  boost::asio::awaitable<void> listen();
  // Resumes a POST's event stream that ended before the answer: GET with Last-Event-ID after `wait`.
  boost::asio::awaitable<void> resume(std::shared_ptr<Post> post, std::string event_id, std::chrono::milliseconds wait);
  net::HttpHeaders request_headers(std::string_view accept) const;
  // A GET for an event stream (the listener's, or a resumption from `last_event_id`); `event_stream`,
  // which must outlive the request, is set at the head when the answer is one.
  net::HttpRequest stream_request(const std::string& last_event_id, bool& event_stream) const;
  void fail_request(const std::optional<std::string>& id, std::string_view why);
  void end(std::string reason);

  boost::asio::any_io_executor executor_;
  HttpTransportOptions options_;
  MessageHandler on_message_;
  EndHandler on_end_;
  Spawner spawn_;
  std::unique_ptr<net::HttpClient> http_;
  std::deque<std::shared_ptr<Post>> queue_;
  bool pumping_ = false;
  std::map<std::string, std::shared_ptr<Post>> in_flight_;  // by request id (JSON text), to cancel them
  std::vector<std::shared_ptr<support::CancelSource>> cancels_;
  std::string session_id_;
  std::string protocol_version_;
  std::string last_event_id_;
  bool listening_ = false;
  bool closed_ = false;
  bool ended_ = false;
};

}  // namespace agentd::tools::mcp
