#include "core/support/result.h"

namespace agentd::support {

constexpr support::EnumName<Errc> kErrcNames[] = {
    {Errc::invalid_argument, "invalid_argument"},
    {Errc::not_found, "not_found"},
    {Errc::already_exists, "already_exists"},
    {Errc::unsupported, "unsupported"},
    {Errc::cancelled, "cancelled"},
    {Errc::timeout, "timeout"},
    {Errc::unavailable, "unavailable"},
    {Errc::parse_error, "parse_error"},
    {Errc::io, "io"},
    {Errc::storage, "storage"},
    {Errc::conflict, "conflict"},
    {Errc::limit_exceeded, "limit_exceeded"},
    {Errc::auth_required, "auth_required"},
    {Errc::internal, "internal"},
};
static_assert(support::names_every_value(kErrcNames, Errc::internal));

std::span<const support::EnumName<Errc>> enum_names(Errc) noexcept { return kErrcNames; }

std::string_view errc_name(Errc code) noexcept { return support::enum_name(code, "unknown"); }

}  // namespace agentd::support
