#include "protocol/peer.h"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/support/log.h"

namespace agentd::protocol {

namespace asio = boost::asio;
using support::Errc;
using support::Error;
using support::Json;
namespace log = support::log;

using CallHandler = asio::any_completion_handler<void(Result<Json>)>;

namespace detail {

struct PeerCore {
  Peer::Sender sender;
  PeerOptions options;
  asio::any_io_executor executor;
  bool shut_down = false;

  struct InFlight {
    std::uint64_t serial;
    std::string method;
    support::CancelSource cancel;
  };
  std::map<RequestId, InFlight> inflight;
  std::uint64_t next_serial = 1;

  struct Pending {
    std::string method;
    CallHandler handler;
    asio::cancellation_slot slot;
  };
  std::map<std::int64_t, Pending> pending;
  std::int64_t next_id = 0;

  void send(std::string message) { sender(std::move(message)); }

  // Completes an outgoing call later (never inside the caller's stack), on the handler's executor.
  void complete(CallHandler handler, Result<Json> result) {
    asio::post(executor, [h = std::move(handler), r = std::move(result), ex = executor]() mutable {
      auto target = asio::get_associated_executor(h, ex);
      asio::dispatch(target, [h = std::move(h), r = std::move(r)]() mutable { std::move(h)(std::move(r)); });
    });
  }

  void cancel_outgoing(std::int64_t id) {
    auto it = pending.find(id);
    if (it == pending.end()) return;
    Pending call = std::move(it->second);
    pending.erase(it);
    // Tell the other side we no longer want the answer; a late answer is then dropped as unknown.
    Json params;
    params["requestId"] = id;
    send(encode_notification("$/cancel_request", params.dump()));
    complete(std::move(call.handler), Error(Errc::cancelled, call.method + " was cancelled"));
  }
};

}  // namespace detail

// --- Responder ------------------------------------------------------------------------------------

Responder::Responder(std::weak_ptr<detail::PeerCore> core, RequestId id, std::string method, std::uint64_t serial,
                     CancelToken token)
    : core_(std::move(core)),
      id_(std::move(id)),
      method_(std::move(method)),
      serial_(serial),
      token_(std::move(token)) {}

Responder::Responder(Responder&& other) noexcept
    : core_(std::move(other.core_)),
      id_(std::move(other.id_)),
      method_(std::move(other.method_)),
      serial_(std::exchange(other.serial_, 0)),
      token_(std::move(other.token_)) {}

Responder& Responder::operator=(Responder&& other) noexcept {
  if (this != &other) {
    if (serial_ != 0) fail(RpcError{error_code::kInternalError, "request was abandoned", std::nullopt});
    core_ = std::move(other.core_);
    id_ = std::move(other.id_);
    method_ = std::move(other.method_);
    serial_ = std::exchange(other.serial_, 0);
    token_ = std::move(other.token_);
  }
  return *this;
}

Responder::~Responder() {
  if (serial_ != 0) {
    log::error("handler for '{}' dropped request {} without answering", method_, id_to_string(id_));
    fail(RpcError{error_code::kInternalError,
                  fmt::format("internal error: the handler for '{}' finished without answering", method_),
                  std::nullopt});
  }
}

void Responder::finish(std::string message) {
  const std::uint64_t serial = std::exchange(serial_, 0);
  if (serial == 0) return;  // answered already
  auto core = core_.lock();
  if (!core) return;
  auto it = core->inflight.find(id_);
  if (it == core->inflight.end() || it->second.serial != serial) return;  // answered at shutdown
  core->inflight.erase(it);
  core->send(std::move(message));
}

void Responder::reply_raw(std::string_view result_json) { finish(encode_result(id_, result_json)); }

void Responder::fail(const RpcError& error) { finish(encode_error(id_, error)); }

// --- Peer -----------------------------------------------------------------------------------------

Peer::Peer(asio::any_io_executor executor, Sender sender, PeerOptions options)
    : executor_(executor), core_(std::make_shared<detail::PeerCore>()), tasks_(executor) {
  core_->sender = std::move(sender);
  core_->options = options;
  core_->executor = std::move(executor);
}

Peer::~Peer() { shutdown(); }

void Peer::on_request_raw(std::string method, RawRequestHandler handler) {
  request_handlers_.insert_or_assign(std::move(method), std::move(handler));
}

void Peer::on_notification_raw(std::string method, RawNotificationHandler handler) {
  notification_handlers_.insert_or_assign(std::move(method), std::move(handler));
}

void Peer::log_bad_notification(const std::string& method, const std::string& message) {
  // Notifications get no answer, so the log is the only place this can be seen.
  log::warn("ignoring notification '{}' with invalid params: {}", method, message);
}

void Peer::handle_frame(std::string_view frame) {
  Incoming incoming = decode_message(frame);
  std::visit(
      [this](auto&& message) {
        using T = std::decay_t<decltype(message)>;
        if constexpr (std::is_same_v<T, Request>) {
          on_request(std::forward<decltype(message)>(message));
        } else if constexpr (std::is_same_v<T, Notification>) {
          on_notification(std::forward<decltype(message)>(message));
        } else if constexpr (std::is_same_v<T, Response>) {
          on_response(std::forward<decltype(message)>(message));
        } else {
          if (message.reply) {
            log::debug("malformed message: {}", message.error.message);
            core_->send(encode_error(message.id, message.error));
          } else {
            log::warn("ignoring malformed response: {}", message.error.message);
          }
        }
      },
      std::move(incoming));
}

void Peer::handle_frame_error(const FrameEvent& event) {
  const int code = event.kind == FrameEvent::Kind::oversize ? error_code::kInvalidRequest : error_code::kParseError;
  log::warn("framing: {}", event.payload);
  core_->send(encode_error(std::nullopt, RpcError{code, event.payload, std::nullopt}));
}

void Peer::on_request(Request request) {
  auto& core = *core_;
  if (core.shut_down) {
    core.send(encode_error(request.id, RpcError{error_code::kServerError, "agentd is shutting down", std::nullopt}));
    return;
  }
  if (core.inflight.contains(request.id)) {
    core.send(encode_error(request.id, RpcError{error_code::kInvalidRequest,
                                                fmt::format("Invalid request: id {} is already used by a request "
                                                            "in progress",
                                                            id_to_string(request.id)),
                                                std::nullopt}));
    return;
  }
  auto handler = request_handlers_.find(request.method);
  if (handler == request_handlers_.end()) {
    core.send(encode_error(request.id, RpcError{error_code::kMethodNotFound,
                                                fmt::format("Method not found: {}", request.method), std::nullopt}));
    return;
  }
  if (request_gate_) {
    if (auto refused = request_gate_(request.method)) {
      core.send(encode_error(request.id, *refused));
      return;
    }
  }
  if (core.inflight.size() >= core.options.max_inflight_incoming) {
    core.send(encode_error(request.id, RpcError{error_code::kServerError,
                                                fmt::format("too many requests in progress (limit {})",
                                                            core.options.max_inflight_incoming),
                                                std::nullopt}));
    return;
  }
  const std::uint64_t serial = core.next_serial++;
  auto [it, inserted] = core.inflight.emplace(request.id, detail::PeerCore::InFlight{serial, request.method, {}});
  Responder responder(core_, request.id, request.method, serial, it->second.cancel.token());
  try {
    handler->second(std::move(request.params), std::move(responder));
  } catch (const std::exception& e) {
    // The responder was moved into the handler, which dropped it while unwinding and so answered
    // with an internal error already; this log says why.
    log::error("handler for '{}' threw: {}", request.method, e.what());
  }
}

void Peer::on_notification(Notification notification) {
  if (notification.method == "$/cancel_request") {
    const Json* id_json = notification.params.find("requestId");
    std::optional<RequestId> id;
    if (id_json != nullptr) {
      if (id_json->is_string()) id = RequestId(id_json->as_string());
      if (const auto* i = id_json->if_int64()) id = RequestId(*i);
    }
    if (!id) {
      log::warn("ignoring $/cancel_request without a valid requestId");
      return;
    }
    auto it = core_->inflight.find(*id);
    if (it == core_->inflight.end()) {
      log::debug("$/cancel_request for {}: no such request in progress", id_to_string(*id));
      return;
    }
    it->second.cancel.cancel();
    return;
  }
  auto handler = notification_handlers_.find(notification.method);
  if (handler == notification_handlers_.end()) {
    log::debug("ignoring unknown notification '{}'", notification.method);
    return;
  }
  try {
    handler->second(std::move(notification.params));
  } catch (const std::exception& e) {
    log::error("notification handler for '{}' threw: {}", notification.method, e.what());
  }
}

void Peer::on_response(Response response) {
  const auto* id = std::get_if<std::int64_t>(&response.id);
  auto it = id != nullptr ? core_->pending.find(*id) : core_->pending.end();
  if (it == core_->pending.end()) {
    // Answering a response could start an endless exchange of errors between two peers: log it only.
    log::warn("ignoring response to unknown request id {}", id_to_string(response.id));
    return;
  }
  detail::PeerCore::Pending call = std::move(it->second);
  core_->pending.erase(it);
  call.slot.clear();
  if (response.error) {
    core_->complete(std::move(call.handler), error_from_rpc(*response.error, call.method));
  } else {
    core_->complete(std::move(call.handler), std::move(*response.result));
  }
}

void Peer::start_call(std::string method, const std::string& params_json, CallHandler handler) {
  auto& core = *core_;
  if (core.shut_down) {
    core.complete(std::move(handler), Error(Errc::cancelled, method + ": the connection is shutting down"));
    return;
  }
  if (core.pending.size() >= core.options.max_pending_outgoing) {
    core.complete(std::move(handler),
                  support::make_error(Errc::limit_exceeded, "{}: too many requests awaiting an answer (limit {})",
                                      method, core.options.max_pending_outgoing));
    return;
  }
  const std::int64_t id = core.next_id++;
  auto slot = asio::get_associated_cancellation_slot(handler);
  if (slot.is_connected()) {
    slot.assign([weak = std::weak_ptr(core_), id](asio::cancellation_type) {
      if (auto c = weak.lock()) c->cancel_outgoing(id);
    });
  }
  std::string message = encode_request(id, method, params_json);
  core.pending.emplace(id, detail::PeerCore::Pending{std::move(method), std::move(handler), slot});
  core.send(std::move(message));
}

asio::awaitable<Result<Json>> Peer::call(std::string method, Json params) {
  co_return co_await async_call(std::move(method), params, asio::use_awaitable);
}

void Peer::notify(std::string_view method, const Json& params) {
  notify_raw(method, params.is_null() ? "{}" : params.dump());
}

void Peer::notify_raw(std::string_view method, std::string_view params_json) {
  core_->send(encode_notification(method, params_json));
}

void Peer::spawn_handler(asio::awaitable<void> task, const CancelToken& token) {
  tasks_.spawn(std::move(task), "request handler", token);
}

void Peer::shutdown() {
  auto& core = *core_;
  if (core.shut_down) return;
  core.shut_down = true;
  for (auto& [id, request] : core.inflight) request.cancel.cancel();
  tasks_.cancel_all();
  auto pending = std::move(core.pending);
  core.pending.clear();
  for (auto& [id, call] : pending) {
    call.slot.clear();
    core.complete(std::move(call.handler), Error(Errc::cancelled, call.method + ": the connection is shutting down"));
  }
}

asio::awaitable<void> Peer::join() {
  co_await tasks_.join();
  auto inflight = std::move(core_->inflight);
  core_->inflight.clear();
  for (auto& [id, request] : inflight) {
    log::warn("request {} ('{}') was still unanswered at shutdown", id_to_string(id), request.method);
    core_->send(encode_error(
        id, RpcError{error_code::kInternalError,
                     fmt::format("'{}' was not answered before agentd shut down", request.method), std::nullopt}));
  }
}

std::size_t Peer::pending_outgoing() const { return core_->pending.size(); }
std::size_t Peer::inflight_incoming() const { return core_->inflight.size(); }

}  // namespace agentd::protocol
