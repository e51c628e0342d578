#include "core/support/result.h"

namespace agentd::support {

std::string_view errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::not_found: return "not_found";
    case Errc::already_exists: return "already_exists";
    case Errc::unsupported: return "unsupported";
    case Errc::cancelled: return "cancelled";
    case Errc::timeout: return "timeout";
    case Errc::unavailable: return "unavailable";
    case Errc::parse_error: return "parse_error";
    case Errc::io: return "io";
    case Errc::storage: return "storage";
    case Errc::conflict: return "conflict";
    case Errc::limit_exceeded: return "limit_exceeded";
    case Errc::internal: return "internal";
  }
  return "unknown";
}

}  // namespace agentd::support
