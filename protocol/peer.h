// Peer: one JSON-RPC 2.0 endpoint that serves requests and makes its own over the same stream.
// Incoming requests go through one table of typed handlers; our outgoing requests wait in a bounded
// pending map. Ids are per direction, so incoming messages are routed by shape (request vs response),
// never by id. The Peer knows nothing of bytes: the transport feeds it frames and gets back messages.
// All calls must happen on the Peer's executor (one strand or a one-thread io_context).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_type.hpp>

#include "core/support/cancel.h"
#include "core/support/json.h"
#include "core/support/json_reader.h"
#include "core/support/json_writer.h"
#include "core/support/result.h"
#include "core/support/task_group.h"
#include "protocol/framing.h"
#include "protocol/jsonrpc.h"

namespace agentd::protocol {

using support::CancelToken;
using support::Result;

namespace detail {
struct PeerCore;
}

// The right and the duty to answer one incoming request. Answering twice is ignored; dropping it
// unanswered answers with an internal error, so a buggy handler can never leave the client hanging.
class Responder {
 public:
  Responder(Responder&&) noexcept;
  Responder& operator=(Responder&&) noexcept;
  Responder(const Responder&) = delete;
  Responder& operator=(const Responder&) = delete;
  ~Responder();

  // `result_json` must be valid JSON (use support::JsonWriter to build it).
  void reply_raw(std::string_view result_json);
  void reply(const support::Json& result) { reply_raw(result.dump()); }
  void fail(const RpcError& error);
  void fail(const support::Error& error) { fail(rpc_error_from(error)); }

  // Typed answer: to_json(JsonWriter&, const R&) by ADL, or an error.
  template <class R>
  void answer(const Result<R>& result) {
    if (!result) {
      fail(result.error());
      return;
    }
    std::string json;
    support::JsonWriter writer(json);
    writer.value(*result);
    reply_raw(json);
  }

  // Cancelled when the client sends $/cancel_request for this id, or the peer shuts down.
  CancelToken cancel_token() const { return token_; }
  const RequestId& id() const noexcept { return id_; }
  const std::string& method() const noexcept { return method_; }

 private:
  friend class Peer;
  Responder(std::weak_ptr<detail::PeerCore> core, RequestId id, std::string method, std::uint64_t serial,
            CancelToken token);
  void finish(std::string message);

  std::weak_ptr<detail::PeerCore> core_;
  RequestId id_;
  std::string method_;
  std::uint64_t serial_ = 0;  // 0 once answered or moved from
  CancelToken token_;
};

struct PeerOptions {
  std::size_t max_pending_outgoing = 1024;   // our requests awaiting an answer
  std::size_t max_inflight_incoming = 4096;  // their requests we are still working on
};

class Peer {
 public:
  // Receives each outgoing message (compact JSON, no framing); the transport frames and writes it.
  using Sender = std::function<void(std::string message)>;
  using RawRequestHandler = std::function<void(support::Json params, Responder responder)>;
  using RawNotificationHandler = std::function<void(support::Json params)>;

  Peer(boost::asio::any_io_executor executor, Sender sender, PeerOptions options = {});
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;
  ~Peer();

  boost::asio::any_io_executor executor() const { return executor_; }

  // --- The method table -------------------------------------------------------------------------
  void on_request_raw(std::string method, RawRequestHandler handler);
  // Consulted before a request with a registered method is dispatched: an error it returns is the
  // answer instead (e.g. "initialize first"). One gate; setting another replaces it.
  using RequestGate = std::function<std::optional<RpcError>(std::string_view method)>;
  void set_request_gate(RequestGate gate) { request_gate_ = std::move(gate); }
  void on_notification_raw(std::string method, RawNotificationHandler handler);

  // A synchronous handler: `Result<R> handler(const P&)`.
  template <class P, class R>
  void on_request(std::string method, std::function<Result<R>(const P&)> handler) {
    on_request_raw(std::move(method), [h = std::move(handler)](support::Json params, Responder responder) {
      auto typed = read_params<P>(params);
      if (!typed) {
        responder.fail(RpcError{error_code::kInvalidParams, typed.error().message(), std::nullopt});
        return;
      }
      responder.answer(h(*typed));
    });
  }

  // A coroutine handler: `awaitable<Result<R>> handler(P, CancelToken)`. It runs in the peer's task
  // group; $/cancel_request or shutdown cancels its token and the Asio operation it awaits, and the
  // request is then answered with -32800.
  template <class P, class R>
  void on_request_async(std::string method, std::function<boost::asio::awaitable<Result<R>>(P, CancelToken)> handler) {
    on_request_raw(std::move(method),
                   [this, h = std::move(handler)](support::Json params, Responder responder) mutable {
                     auto typed = read_params<P>(params);
                     if (!typed) {
                       responder.fail(RpcError{error_code::kInvalidParams, typed.error().message(), std::nullopt});
                       return;
                     }
                     CancelToken token = responder.cancel_token();
                     spawn_handler(run_async<R>(h(std::move(*typed), token), std::move(responder)), token);
                   });
  }

  template <class P>
  void on_notification(std::string method, std::function<void(const P&)> handler) {
    std::string name = method;
    on_notification_raw(std::move(method), [h = std::move(handler), m = std::move(name)](support::Json params) {
      auto typed = read_params<P>(params);
      if (!typed) {
        log_bad_notification(m, typed.error().message());
        return;
      }
      h(*typed);
    });
  }

  // --- Input from the transport -----------------------------------------------------------------
  void handle_frame(std::string_view frame);
  // Oversize frames and unusable headers: answered with an error whose id is null.
  void handle_frame_error(const FrameEvent& event);

  // --- Our own requests -------------------------------------------------------------------------
  // Sends a request and completes with the result, or an error (the peer's error, cancellation,
  // shutdown, or too many requests pending). Cancelling the operation (its cancellation slot, e.g.
  // a cancelled coroutine) sends $/cancel_request and completes at once with Errc::cancelled.
  template <class CompletionToken>
  auto async_call(std::string method, const support::Json& params, CompletionToken&& token) {
    return async_call_raw(std::move(method), params.is_null() ? std::string("{}") : params.dump(),
                          std::forward<CompletionToken>(token));
  }
  // The same with params already written: `params_json` must be valid JSON (support::JsonWriter).
  template <class CompletionToken>
  auto async_call_raw(std::string method, std::string params_json, CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, void(Result<support::Json>)>(
        [this](auto handler, std::string m, std::string p) {
          start_call(std::move(m), p,
                     boost::asio::any_completion_handler<void(Result<support::Json>)>(std::move(handler)));
        },
        token, std::move(method), std::move(params_json));
  }
  boost::asio::awaitable<Result<support::Json>> call(std::string method, support::Json params);

  void notify(std::string_view method, const support::Json& params);
  // `params_json` must be valid JSON.
  void notify_raw(std::string_view method, std::string_view params_json);

  // --- Lifetime ---------------------------------------------------------------------------------
  // Cancels every incoming request still running and fails every outgoing one. Idempotent.
  void shutdown();
  // Completes when every handler coroutine has finished; then answers any request a raw handler
  // still holds with an internal error, so no request is left without an answer.
  boost::asio::awaitable<void> join();

  std::size_t pending_outgoing() const;
  std::size_t inflight_incoming() const;

 private:
  template <class P>
  static Result<P> read_params(const support::Json& params) {
    return support::read_json<P>(params, "params");
  }

  template <class R>
  static boost::asio::awaitable<void> run_async(boost::asio::awaitable<Result<R>> work, Responder responder) {
    std::optional<Result<R>> result;
    std::string failure;
    try {
      result.emplace(co_await std::move(work));
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (result) {
      if (!*result && responder.cancel_token().cancelled() && result->error().code() != support::Errc::cancelled) {
        // The work failed because we cancelled it (an aborted read, say): that is a cancellation.
        responder.fail(support::Error(support::Errc::cancelled, "request cancelled"));
      } else {
        responder.answer(*result);
      }
    } else if (responder.cancel_token().cancelled()) {
      responder.fail(support::Error(support::Errc::cancelled, "request cancelled"));
    } else {
      responder.fail(support::Error(support::Errc::internal, "internal error: " + failure));
    }
  }

  void spawn_handler(boost::asio::awaitable<void> task, const CancelToken& token);
  void start_call(std::string method, const std::string& params_json,
                  boost::asio::any_completion_handler<void(Result<support::Json>)> handler);
  static void log_bad_notification(const std::string& method, const std::string& message);

  void on_request(Request request);
  void on_notification(Notification notification);
  void on_response(Response response);

  boost::asio::any_io_executor executor_;
  std::shared_ptr<detail::PeerCore> core_;
  std::unordered_map<std::string, RawRequestHandler> request_handlers_;
  RequestGate request_gate_;
  std::unordered_map<std::string, RawNotificationHandler> notification_handlers_;
  support::TaskGroup tasks_;
};

}  // namespace agentd::protocol
