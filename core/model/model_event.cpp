#include "core/model/model_event.h"

namespace agentd::core::model {

std::string_view stop_reason_name(StopReason reason) noexcept {
  switch (reason) {
    case StopReason::end_turn: return "end_turn";
    case StopReason::tool_use: return "tool_use";
    case StopReason::max_tokens: return "max_tokens";
    case StopReason::stop_sequence: return "stop_sequence";
    case StopReason::refusal: return "refusal";
    case StopReason::pause_turn: return "pause_turn";
  }
  return "end_turn";
}

std::string_view error_kind_name(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::rate_limited: return "rate_limited";
    case ErrorKind::overloaded: return "overloaded";
    case ErrorKind::auth: return "auth";
    case ErrorKind::invalid_request: return "invalid_request";
    case ErrorKind::context_too_long: return "context_too_long";
    case ErrorKind::network: return "network";
    case ErrorKind::stream_truncated: return "stream_truncated";
    case ErrorKind::server: return "server";
  }
  return "server";
}

std::string_view error_source_name(ErrorSource source) noexcept {
  switch (source) {
    case ErrorSource::in_stream: return "in_stream";
    case ErrorSource::http: return "http";
    case ErrorSource::transport: return "transport";
  }
  return "in_stream";
}

}  // namespace agentd::core::model
