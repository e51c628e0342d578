#include "protocol/jsonrpc.h"

#include "core/support/json_writer.h"

namespace agentd::protocol {

using support::Errc;
using support::Error;
using support::JsonWriter;

Json id_to_json(const RequestId& id) {
  if (const auto* i = std::get_if<std::int64_t>(&id)) return Json(*i);
  return Json(std::get<std::string>(id));
}

std::string id_to_string(const RequestId& id) { return id_to_json(id).dump(); }

RpcError rpc_error_from(const Error& error) {
  switch (error.code()) {
    case Errc::invalid_argument:
    case Errc::parse_error: return {error_code::kInvalidParams, error.message(), std::nullopt};
    case Errc::not_found: return {error_code::kResourceNotFound, error.message(), std::nullopt};
    case Errc::unsupported: return {error_code::kMethodNotFound, error.message(), std::nullopt};
    case Errc::cancelled: return {error_code::kRequestCancelled, error.message(), std::nullopt};
    case Errc::internal: return {error_code::kInternalError, error.message(), std::nullopt};
    case Errc::already_exists:
    case Errc::timeout:
    case Errc::unavailable:
    case Errc::io:
    case Errc::storage:
    case Errc::conflict:
    case Errc::limit_exceeded:
    case Errc::auth_required: {
      Json data;
      data["kind"] = support::errc_name(error.code());
      return {error_code::kServerError, error.message(), std::move(data)};
    }
  }
  return {error_code::kInternalError, error.message(), std::nullopt};
}

Error error_from_rpc(const RpcError& error, std::string_view method) {
  Errc code = Errc::unavailable;
  switch (error.code) {
    case error_code::kMethodNotFound: code = Errc::unsupported; break;
    case error_code::kInvalidParams: code = Errc::invalid_argument; break;
    case error_code::kRequestCancelled: code = Errc::cancelled; break;
    case error_code::kResourceNotFound: code = Errc::not_found; break;
    default: break;
  }
  return Error(code, fmt::format("{} failed with error {}: {}", method, error.code, error.message), error.code);
}

namespace {

Malformed invalid(std::string message, std::optional<RequestId> id = std::nullopt) {
  return Malformed{RpcError{error_code::kInvalidRequest, std::move(message), std::nullopt}, std::move(id), true};
}

// Reads a request/response id: an integer or a string. Anything else is refused.
std::optional<RequestId> read_id(const Json& id) {
  if (id.is_string()) return RequestId(id.as_string());
  if (const auto* i = id.if_int64()) return RequestId(*i);
  return std::nullopt;
}

}  // namespace

Incoming decode_message(std::string_view frame) {
  auto parsed = support::parse_json(frame);
  if (!parsed) {
    return Malformed{RpcError{error_code::kParseError, "Parse error: " + parsed.error().message(), std::nullopt},
                     std::nullopt, true};
  }
  Json& msg = *parsed;
  if (msg.is_array()) return invalid("Invalid request: batch requests are not supported");
  if (!msg.is_object()) return invalid("Invalid request: a message must be a JSON object");

  const Json* id_json = msg.find("id");
  std::optional<RequestId> id;
  if (id_json != nullptr) id = read_id(*id_json);

  const Json* version = msg.find("jsonrpc");
  const Json* method = msg.find("method");
  const bool is_response = method == nullptr && (msg.contains("result") || msg.contains("error"));

  if (version == nullptr || !version->is_string() || version->as_string() != "2.0") {
    if (is_response) return Malformed{invalid("response without \"jsonrpc\": \"2.0\"").error, id, false};
    return invalid("Invalid request: \"jsonrpc\" must be \"2.0\"", id);
  }

  if (is_response) {
    if (!id) return Malformed{invalid("response with a missing or invalid id").error, std::nullopt, false};
    Json* result = msg.find("result");
    const Json* error = msg.find("error");
    if ((result != nullptr) == (error != nullptr)) {
      return Malformed{invalid("response must have exactly one of result and error").error, id, false};
    }
    Response response{std::move(*id), std::nullopt, std::nullopt};
    if (result != nullptr) {
      response.result = std::move(*result);
    } else {
      RpcError e;
      const Json* code = error->find("code");
      const Json* message = error->find("message");
      if (!error->is_object() || code == nullptr || code->if_int64() == nullptr || message == nullptr ||
          !message->is_string()) {
        e.code = error_code::kInternalError;
        e.message = "malformed error object: " + error->dump().substr(0, 200);
      } else {
        e.code = static_cast<int>(*code->if_int64());
        e.message = message->as_string();
        if (const Json* data = error->find("data")) e.data = *data;
      }
      response.error = std::move(e);
    }
    return response;
  }

  if (method == nullptr) return invalid("Invalid request: missing \"method\"", id);
  if (!method->is_string()) return invalid("Invalid request: \"method\" must be a string", id);
  if (id_json != nullptr && !id) {
    return invalid(id_json->is_null() ? "Invalid request: \"id\" must be a number or a string, not null"
                                      : "Invalid request: \"id\" must be an integer or a string");
  }
  Json params;
  if (Json* p = msg.find("params")) {
    if (!p->is_object() && !p->is_array() && !p->is_null()) {
      return invalid("Invalid request: \"params\" must be an object or an array", id);
    }
    params = std::move(*p);
  }
  if (id) return Request{std::move(*id), method->as_string(), std::move(params)};
  return Notification{method->as_string(), std::move(params)};
}

std::string encode_result(const RequestId& id, std::string_view result_json) {
  std::string out;
  out.reserve(result_json.size() + 40);
  JsonWriter w(out);
  w.begin_object().member("jsonrpc", "2.0").key("id").value(id_to_json(id)).key("result").raw(result_json).end_object();
  return out;
}

std::string encode_error(const std::optional<RequestId>& id, const RpcError& error) {
  std::string out;
  JsonWriter w(out);
  w.begin_object().member("jsonrpc", "2.0").key("id");
  if (id) {
    w.value(id_to_json(*id));
  } else {
    w.null();
  }
  w.key("error").begin_object().member("code", error.code).member("message", error.message);
  if (error.data) w.member("data", *error.data);
  w.end_object().end_object();
  return out;
}

std::string encode_request(const RequestId& id, std::string_view method, std::string_view params_json) {
  std::string out;
  out.reserve(params_json.size() + method.size() + 40);
  JsonWriter w(out);
  w.begin_object().member("jsonrpc", "2.0").key("id").value(id_to_json(id)).member("method", method);
  w.key("params").raw(params_json).end_object();
  return out;
}

std::string encode_notification(std::string_view method, std::string_view params_json) {
  std::string out;
  out.reserve(params_json.size() + method.size() + 32);
  JsonWriter w(out);
  w.begin_object().member("jsonrpc", "2.0").member("method", method).key("params").raw(params_json).end_object();
  return out;
}

}  // namespace agentd::protocol
