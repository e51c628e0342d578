#include "daemon/acp_frontend.h"

#include <variant>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/support/cancel_asio.h"
#include "daemon/acp_updates.h"
#include "protocol/acp/client_methods.h"
#include "protocol/acp/ext.h"
#include "protocol/acp/methods.h"

namespace agentd::daemon {

namespace acp = protocol::acp;
namespace ext = protocol::acp::ext;
namespace asio = boost::asio;
using support::CancelToken;
using support::Errc;
using support::Error;
using support::Json;
using support::Result;

namespace {

// Written once, sent as the params of our request (never parsed back).
template <class T>
std::string to_json_text(const T& value) {
  std::string json;
  support::JsonWriter w(json);
  w.value(value);
  return json;
}

}  // namespace

void AcpFrontend::send_update(const std::string& session_id, std::int64_t seq, acp::SessionUpdate update) {
  peer_->notify_raw(acp::method::kSessionUpdate, to_json_text(notification(session_id, seq, std::move(update))));
}

void AcpFrontend::deliver(const std::string& session_id, const core::SequencedEvent& event) {
  if (peer_ == nullptr) return;
  auto session = sessions_.find(session_id);
  auto update = to_update(event.event, session.get(), false);
  if (!update) return;
  send_update(session_id, event.seq, std::move(*update));
}

void AcpFrontend::replay(const std::string& session_id, const std::vector<core::SequencedEvent>& events) {
  if (peer_ == nullptr) return;
  auto session = sessions_.find(session_id);
  for (const auto& event : events) {
    // Commands advertised in the past are stale state, not history: the session announces its current
    // ones once it is loaded.
    if (std::holds_alternative<core::CommandsEvent>(event.event)) continue;
    auto update = to_update(event.event, session.get(), true);
    if (!update) continue;
    send_update(session_id, event.seq, std::move(*update));
  }
}

asio::awaitable<Result<core::PermissionAnswer>> AcpFrontend::ask_permission(core::PermissionPrompt prompt,
                                                                            CancelToken cancel) {
  if (peer_ == nullptr) co_return Error(Errc::unavailable, "the client is gone");
  acp::RequestPermissionRequest request;
  request.session_id = prompt.session_id;
  request.tool_call.tool_call_id = prompt.tool_call_id;
  request.tool_call.title = prompt.title;
  request.tool_call.kind = acp_kind(prompt.kind);
  request.tool_call.status = acp::ToolCallStatus::pending;
  request.tool_call.raw_input = prompt.raw_input;
  auto content = tool_content(prompt.text, prompt.diffs);
  if (!content.empty()) request.tool_call.content = std::move(content);
  if (!prompt.locations.empty()) request.tool_call.locations = tool_locations(prompt.locations);
  request.options = {
      acp::PermissionOption{"allow_once", "Allow", acp::PermissionOptionKind::allow_once, {}},
      acp::PermissionOption{
          "allow_always", "Always allow (remembered for this project)", acp::PermissionOptionKind::allow_always, {}},
      acp::PermissionOption{"reject_once", "Reject", acp::PermissionOptionKind::reject_once, {}},
      acp::PermissionOption{
          "reject_always", "Always reject (remembered for this project)", acp::PermissionOptionKind::reject_always, {}},
  };
  request.meta = ext::to_meta(ext::PermissionRequestMeta{prompt.input_digest, prompt.reason, prompt.risk});

  support::CancelBridge bridge(cancel, peer_->executor());
  auto answer =
      co_await peer_->async_call_raw(std::string(acp::method::kSessionRequestPermission), to_json_text(request),
                                     asio::bind_cancellation_slot(bridge.slot(), asio::use_awaitable));
  if (cancel.cancelled()) co_return core::PermissionAnswer::cancelled;
  if (!answer) co_return std::move(answer).error();
  auto response = support::read_json<acp::RequestPermissionResponse>(*answer, "result");
  if (!response) co_return std::move(response).error();
  if (std::holds_alternative<acp::CancelledPermissionOutcome>(response->outcome)) {
    co_return core::PermissionAnswer::cancelled;
  }
  const std::string& option = std::get<acp::SelectedPermissionOutcome>(response->outcome).option_id;
  if (option == "allow_once") co_return core::PermissionAnswer::allow_once;
  if (option == "allow_always") co_return core::PermissionAnswer::allow_always;
  if (option == "reject_once") co_return core::PermissionAnswer::reject_once;
  if (option == "reject_always") co_return core::PermissionAnswer::reject_always;
  co_return Error(Errc::invalid_argument, fmt::format("the client chose an option we did not offer: \"{}\"", option));
}

asio::awaitable<Result<std::string>> AcpFrontend::read_text_file(std::string session_id, std::string path,
                                                                 CancelToken cancel) {
  if (peer_ == nullptr) co_return Error(Errc::unavailable, "the client is gone");
  acp::ReadTextFileRequest request;
  request.session_id = std::move(session_id);
  request.path = std::move(path);
  support::CancelBridge bridge(cancel, peer_->executor());
  auto answer = co_await peer_->async_call_raw(std::string(acp::method::kFsReadTextFile), to_json_text(request),
                                               asio::bind_cancellation_slot(bridge.slot(), asio::use_awaitable));
  if (!answer) co_return std::move(answer).error();
  auto response = support::read_json<acp::ReadTextFileResponse>(*answer, "result");
  if (!response) co_return std::move(response).error();
  co_return std::move(response->content);
}

asio::awaitable<Result<void>> AcpFrontend::write_text_file(std::string session_id, std::string path,
                                                           std::string content, CancelToken cancel) {
  if (peer_ == nullptr) co_return Error(Errc::unavailable, "the client is gone");
  acp::WriteTextFileRequest request;
  request.session_id = std::move(session_id);
  request.path = std::move(path);
  request.content = std::move(content);
  support::CancelBridge bridge(cancel, peer_->executor());
  auto answer = co_await peer_->async_call_raw(std::string(acp::method::kFsWriteTextFile), to_json_text(request),
                                               asio::bind_cancellation_slot(bridge.slot(), asio::use_awaitable));
  // The result carries nothing but `_meta` (some clients answer null): success is the absence of an error.
  if (!answer) co_return std::move(answer).error();
  co_return support::ok();
}

asio::awaitable<Result<Json>> AcpFrontend::terminal_call(std::string_view method, Json params, CancelToken cancel) {
  if (peer_ == nullptr) co_return Error(Errc::unavailable, "the client is gone");
  support::CancelBridge bridge(cancel, peer_->executor());
  auto answer = co_await peer_->async_call_raw(std::string(method), params.dump(),
                                               asio::bind_cancellation_slot(bridge.slot(), asio::use_awaitable));
  if (!answer) co_return std::move(answer).error().context(std::string(method));
  co_return std::move(*answer);
}

namespace {

Json terminal_params(const std::string& session_id, const std::string& terminal_id) {
  Json params = Json::object();
  params.set("sessionId", session_id);
  params.set("terminalId", terminal_id);
  return params;
}

core::Frontend::TerminalExit exit_status(const Json& status) {
  core::Frontend::TerminalExit exit;
  if (status["exitCode"].is_integer()) exit.exit_code = static_cast<int>(status["exitCode"].as_int64());
  if (status["signal"].is_string()) exit.signal = status["signal"].as_string();
  return exit;
}

}  // namespace

asio::awaitable<Result<std::string>> AcpFrontend::create_terminal(std::string session_id,
                                                                  tools::TerminalCommand command, CancelToken cancel) {
  Json params = Json::object();
  params.set("sessionId", session_id);
  params.set("command", command.program);
  Json args = Json::array();
  for (auto& a : command.args) args.push_back(std::move(a));
  params.set("args", std::move(args));
  params.set("env", Json::array());
  params.set("cwd", command.cwd);
  if (command.output_byte_limit > 0) params.set("outputByteLimit", command.output_byte_limit);
  auto answer = co_await terminal_call(acp::method::kTerminalCreate, std::move(params), cancel);
  if (!answer) co_return std::move(answer).error();
  const Json& id = (*answer)["terminalId"];
  if (!id.is_string() || id.as_string().empty()) {
    co_return Error(Errc::invalid_argument, "terminal/create: the client's answer has no terminalId");
  }
  co_return id.as_string();
}

asio::awaitable<Result<core::Frontend::TerminalExit>> AcpFrontend::wait_for_terminal_exit(std::string session_id,
                                                                                          std::string terminal_id,
                                                                                          CancelToken cancel) {
  auto answer =
      co_await terminal_call(acp::method::kTerminalWaitForExit, terminal_params(session_id, terminal_id), cancel);
  if (!answer) co_return std::move(answer).error();
  co_return exit_status(*answer);
}

asio::awaitable<Result<core::Frontend::TerminalOutput>> AcpFrontend::terminal_output(std::string session_id,
                                                                                     std::string terminal_id) {
  auto answer = co_await terminal_call(acp::method::kTerminalOutput, terminal_params(session_id, terminal_id), {});
  if (!answer) co_return std::move(answer).error();
  TerminalOutput out;
  if ((*answer)["output"].is_string()) out.output = (*answer)["output"].as_string();
  out.truncated = (*answer)["truncated"].is_bool() && (*answer)["truncated"].as_bool();
  if ((*answer)["exitStatus"].is_object()) out.exit = exit_status((*answer)["exitStatus"]);
  co_return out;
}

asio::awaitable<Result<void>> AcpFrontend::kill_terminal(std::string session_id, std::string terminal_id) {
  auto answer = co_await terminal_call(acp::method::kTerminalKill, terminal_params(session_id, terminal_id), {});
  if (!answer) co_return std::move(answer).error();
  co_return support::ok();
}

asio::awaitable<Result<void>> AcpFrontend::release_terminal(std::string session_id, std::string terminal_id) {
  auto answer = co_await terminal_call(acp::method::kTerminalRelease, terminal_params(session_id, terminal_id), {});
  if (!answer) co_return std::move(answer).error();
  co_return support::ok();
}

}  // namespace agentd::daemon
