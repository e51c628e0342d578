#include "core/engine/permissions.h"

#include <array>

#include <fmt/format.h>

namespace agentd::core {

namespace {
constexpr std::array<ModeInfo, 4> kModes = {{
    {PermissionMode::default_mode, "default", "Default", "Reads are free; edits and shell commands ask"},
    {PermissionMode::accept_edits, "acceptEdits", "Accept edits", "Edits in the workspace are allowed; shell asks"},
    {PermissionMode::plan, "plan", "Plan (read-only)", "Only reading tools run; nothing is changed"},
    {PermissionMode::bypass, "bypass", "Bypass permissions", "Every tool call runs without asking"},
}};
}  // namespace

std::string_view permission_mode_id(PermissionMode mode) noexcept { return kModes[static_cast<std::size_t>(mode)].id; }

std::optional<PermissionMode> parse_permission_mode(std::string_view id) noexcept {
  for (const auto& m : kModes) {
    if (m.id == id) return m.mode;
  }
  return std::nullopt;
}

std::span<const ModeInfo> permission_modes() noexcept { return kModes; }

PermissionDecision PermissionPolicy::decide(std::string_view tool, tools::Risk risk) const {
  using tools::has_risk;
  using tools::Risk;
  if (always_denied_.contains(tool)) {
    return {Verdict::deny, fmt::format("the user denied {} for this session", tool)};
  }
  if (mode_ == PermissionMode::bypass) return {Verdict::allow, "bypass mode"};
  const bool mutating = tools::is_mutating(risk);
  if (mode_ == PermissionMode::plan && mutating) {
    return {Verdict::deny,
            fmt::format("{} would change the workspace ({}), and the session is in plan mode (read-only); "
                        "describe the change instead, or ask the user to switch modes",
                        tool, tools::risk_names(risk))};
  }
  if (has_risk(risk, Risk::outside_workspace)) {
    return {Verdict::ask, "the call reaches outside the workspace"};
  }
  if (!mutating) return {Verdict::allow, "reading inside the workspace"};
  if (always_allowed_.contains(tool)) return {Verdict::allow, fmt::format("the user always allows {}", tool)};
  if (mode_ == PermissionMode::accept_edits && !has_risk(risk, Risk::execute) && !has_risk(risk, Risk::network)) {
    return {Verdict::allow, "acceptEdits mode"};
  }
  return {Verdict::ask, fmt::format("{} needs approval ({})", tool, tools::risk_names(risk))};
}

void PermissionPolicy::remember(std::string_view tool, PermissionAnswer answer) {
  if (answer == PermissionAnswer::allow_always) always_allowed_.emplace(tool);
  if (answer == PermissionAnswer::reject_always) always_denied_.emplace(tool);
}

}  // namespace agentd::core
