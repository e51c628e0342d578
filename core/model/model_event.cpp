#include "core/model/model_event.h"

namespace agentd::core::model {

constexpr support::EnumName<StopReason> kStopReasonNames[] = {
    {StopReason::end_turn, "end_turn"},     {StopReason::tool_use, "tool_use"},
    {StopReason::max_tokens, "max_tokens"}, {StopReason::stop_sequence, "stop_sequence"},
    {StopReason::refusal, "refusal"},       {StopReason::pause_turn, "pause_turn"},
};
static_assert(support::names_every_value(kStopReasonNames, StopReason::pause_turn));

std::span<const support::EnumName<StopReason>> enum_names(StopReason) noexcept { return kStopReasonNames; }

std::string_view stop_reason_name(StopReason reason) noexcept { return support::enum_name(reason, "end_turn"); }

constexpr support::EnumName<ErrorKind> kErrorKindNames[] = {
    {ErrorKind::rate_limited, "rate_limited"},
    {ErrorKind::overloaded, "overloaded"},
    {ErrorKind::auth, "auth"},
    {ErrorKind::invalid_request, "invalid_request"},
    {ErrorKind::context_too_long, "context_too_long"},
    {ErrorKind::network, "network"},
    {ErrorKind::stream_truncated, "stream_truncated"},
    {ErrorKind::server, "server"},
};
static_assert(support::names_every_value(kErrorKindNames, ErrorKind::server));

std::span<const support::EnumName<ErrorKind>> enum_names(ErrorKind) noexcept { return kErrorKindNames; }

std::string_view error_kind_name(ErrorKind kind) noexcept { return support::enum_name(kind, "server"); }

constexpr support::EnumName<ErrorSource> kErrorSourceNames[] = {
    {ErrorSource::in_stream, "in_stream"},
    {ErrorSource::http, "http"},
    {ErrorSource::transport, "transport"},
};
static_assert(support::names_every_value(kErrorSourceNames, ErrorSource::transport));

std::span<const support::EnumName<ErrorSource>> enum_names(ErrorSource) noexcept { return kErrorSourceNames; }

std::string_view error_source_name(ErrorSource source) noexcept { return support::enum_name(source, "in_stream"); }

}  // namespace agentd::core::model
