// The permission policy: given a session's mode and a call's risk, allow, deny, or ask the user.
// Modes (DESIGN.md section 5): default (reads free, edits and shell ask), acceptEdits, plan (read-only),
// bypass. An "always" approval covers the same tool for the rest of the session; rules such as
// `shell(git status*)` and approvals persisted per project arrive with the Tools issue.
#pragma once

#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "tools/tool.h"

namespace agentd::core {

enum class PermissionMode { default_mode, accept_edits, plan, bypass };
std::string_view permission_mode_id(PermissionMode mode) noexcept;  // "default", "acceptEdits", "plan", "bypass"
std::optional<PermissionMode> parse_permission_mode(std::string_view id) noexcept;

struct ModeInfo {
  PermissionMode mode;
  std::string_view id;
  std::string_view name;
  std::string_view description;
};
std::span<const ModeInfo> permission_modes() noexcept;

enum class Verdict { allow, deny, ask };

struct PermissionDecision {
  Verdict verdict = Verdict::ask;
  std::string reason;  // why, in words the model and the user can act on
};

// The user's answer to a permission prompt.
enum class PermissionAnswer { allow_once, allow_always, reject_once, reject_always, cancelled };

class PermissionPolicy {
 public:
  PermissionMode mode() const noexcept { return mode_; }
  void set_mode(PermissionMode mode) noexcept { mode_ = mode; }

  PermissionDecision decide(std::string_view tool, tools::Risk risk) const;
  // Remembers an answer that covers later calls ("always" answers).
  void remember(std::string_view tool, PermissionAnswer answer);

 private:
  PermissionMode mode_ = PermissionMode::default_mode;
  std::set<std::string, std::less<>> always_allowed_;
  std::set<std::string, std::less<>> always_denied_;
};

}  // namespace agentd::core
