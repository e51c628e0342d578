// JSON-RPC 2.0 envelopes: decoding one frame into a request, notification or response (with the
// error to answer when it is none of those), encoding replies, and the one mapping from engine errors
// (support::Error) to JSON-RPC error codes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/support/json.h"
#include "core/support/result.h"

namespace agentd::protocol {

using support::Json;

// JSON-RPC ids are numbers or strings. (A null id is only ever sent back, in errors about
// messages whose id could not be read; we never accept it on a request.)
using RequestId = std::variant<std::int64_t, std::string>;
Json id_to_json(const RequestId& id);
std::string id_to_string(const RequestId& id);

namespace error_code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kRequestCancelled = -32800;  // LSP's and ACP's code for a cancelled request
// Server-defined range (-32000..-32099), ours:
inline constexpr int kResourceNotFound = -32002;  // ACP: the session (or other resource) does not exist
inline constexpr int kServerError = -32000;       // a dependency failed (storage, disk, network), or ACP's
                                                  // auth_required (data.kind says which)
}  // namespace error_code

struct RpcError {
  int code = error_code::kInternalError;
  std::string message;
  std::optional<Json> data;
};

// The one place engine errors become JSON-RPC errors.
RpcError rpc_error_from(const support::Error& error);
// And back, for errors the other side sends us (the native code keeps the JSON-RPC code).
support::Error error_from_rpc(const RpcError& error, std::string_view method);

struct Request {
  RequestId id;
  std::string method;
  Json params;  // null when absent
};
struct Notification {
  std::string method;
  Json params;
};
struct Response {
  RequestId id;
  std::optional<Json> result;
  std::optional<RpcError> error;
};
// A message we cannot process. `reply` says whether to answer it (we never answer a response,
// even a malformed one: two peers that answer each other's bad responses can loop forever).
struct Malformed {
  RpcError error;
  std::optional<RequestId> id;  // null in the reply when absent
  bool reply = true;
};

using Incoming = std::variant<Request, Notification, Response, Malformed>;

// Decodes one framed message. Never throws.
Incoming decode_message(std::string_view frame);

// Encoders produce one compact message (no framing). `result_json` must be valid JSON.
std::string encode_result(const RequestId& id, std::string_view result_json);
std::string encode_error(const std::optional<RequestId>& id, const RpcError& error);
std::string encode_request(const RequestId& id, std::string_view method, std::string_view params_json);
std::string encode_notification(std::string_view method, std::string_view params_json);

}  // namespace agentd::protocol
