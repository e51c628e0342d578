// The built-in system rules the model is given first in every request: core/engine/system_rules.md,
// compiled in at build time (a file under review, not strings scattered in code).
#pragma once

#include <string_view>

namespace agentd::core {

std::string_view system_rules() noexcept;

}  // namespace agentd::core
