// The permission policy: given a session's mode, the rules in force and a call, allow, deny, or ask the user.
// Modes (DESIGN.md section 5): default (reads free, edits and shell ask), acceptEdits, plan (read-only),
// bypass. Rules (`shell(git status*)`, `edit(src/**)`, `read(secrets/**)`, `write_file`) come from the
// config files and from "always" answers, which are persisted per project; deny wins.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/enum_names.h"
#include "core/support/json.h"
#include "core/support/result.h"
#include "tools/shell_command.h"
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
  // Only a person may say yes (a protected path): with no client to ask, the call is denied whatever
  // the headless policy says.
  bool needs_person = false;
};

// A rule: `tool` or `tool(pattern)`. `tool` is a tool name (`shell`, `write_file`, `mcp__fs__read`) or a
// category every tool of a kind belongs to: `read` (reading and searching tools), `edit` (tools that change
// files), `shell` (tools that execute). For `shell` the pattern is matched against each simple command of
// the line (tools/shell_command.h; `*` matches anything, spaces and slashes included): an allow rule must
// cover every one, a deny or ask rule any one; a pattern without wildcards also matches the whole line as
// typed. For the others it is matched against the path relative to the session's cwd (git's wildmatch:
// `*` within a component, `**` across them). No pattern: every call.
// `risk(name)` matches every call of that risk, whatever the tool (tools/tool.h risk_names: `network`,
// `outside_workspace`, `recursive_delete`, `remote_code`, `permissions`, `execute`, `write`...):
// `deny: ["risk(network)"]` refuses any command that reaches the network.
struct PermissionRule {
  Verdict verdict = Verdict::ask;
  std::string tool;
  std::optional<std::string> pattern;
  std::string source;                       // where it comes from: "config.json", "approved in session s-..."
  std::optional<std::int64_t> approval_id;  // a persisted approval (revocable), else a config rule

  std::string text() const;  // "shell(git status*)"
};
// Parses `tool` or `tool(pattern)`; the error says what is wrong with the text.
support::Result<PermissionRule> parse_permission_rule(std::string_view text, Verdict verdict, std::string source);
std::string_view verdict_name(Verdict verdict) noexcept;  // "allow", "deny", "ask"
std::span<const support::EnumName<Verdict>> enum_names(Verdict) noexcept;
std::optional<Verdict> parse_verdict(std::string_view name) noexcept;

// What a rule is matched against: one call, reduced to its tool, category and argument.
struct CallSubject {
  std::string tool;
  std::string category;  // "read", "edit", "shell", or "" for tools of no category
  std::string argument;  // the command line, or the path relative to the cwd (absolute outside it); may be ""
  // For tools that execute: `argument` parsed into simple commands. decide() parses it when this is unset.
  std::optional<tools::ShellCommandLine> command = std::nullopt;
};
std::string_view tool_category(tools::ToolKind kind) noexcept;
// The subject of a call: the `command` field for tools that execute, else the `path` field shown relative
// to `cwd` (or the cwd itself, ".", when the tool takes no path).
CallSubject call_subject(const tools::ToolSpec& spec, const support::Json& input, std::string_view cwd);

// The user's answer to a permission prompt.
enum class PermissionAnswer { allow_once, allow_always, reject_once, reject_always, cancelled };

class PermissionPolicy {
 public:
  PermissionMode mode() const noexcept { return mode_; }
  void set_mode(PermissionMode mode) noexcept { mode_ = mode; }

  // Rules from the configuration and the project's persisted approvals; replaces the previous set.
  void set_rules(std::vector<PermissionRule> rules) { rules_ = std::move(rules); }
  void add_rule(PermissionRule rule) { rules_.push_back(std::move(rule)); }
  void remove_approval(std::int64_t approval_id);
  // Gives the session-made rules with this text the id they were stored under.
  void set_approval_id(std::string_view rule_text, std::int64_t approval_id);
  const std::vector<PermissionRule>& rules() const noexcept { return rules_; }

  // In order: a matching deny rule denies; bypass allows (but asks about a shell line a deny rule cannot be
  // ruled out for, see shell_deny_doubt); plan denies what would change anything; a
  // matching ask rule asks; a matching allow rule allows; a call outside the workspace asks; reading
  // is allowed; acceptEdits allows edits; everything else asks. `rule` names the deciding rule, if any.
  //
  // A call that reaches outside the workspace or runs downloaded code (tools/command_risk.h) is covered
  // only by an allow rule without wildcards (an exact command, as "always" answers are) or a `risk(...)`
  // allow rule for each of those risks: `shell(cat *)` does not allow `cat ~/.ssh/id_rsa`. The reasons of
  // `risk` are said in the decision's reason.
  PermissionDecision decide(const CallSubject& call, const tools::RiskAssessment& risk) const;
  PermissionDecision decide(const CallSubject& call, tools::Risk risk) const { return decide(call, {risk, {}}); }
  // The patterns of the deny rules with a pattern for `tool` of `category` (`read(secrets/**)`,
  // `grep(vendor/**)`): a tool that reads many files skips what they cover (ToolContext::denied_reads).
  std::vector<std::string> denied_patterns(std::string_view tool, std::string_view category) const;
  // The rule an "always" answer stands for, to be persisted for the project and added here: the exact
  // command for tools that execute, the whole tool otherwise. nullopt for once/cancelled answers.
  static std::optional<PermissionRule> rule_for_answer(const CallSubject& call, PermissionAnswer answer);

 private:
  const PermissionRule* first_match(const CallSubject& call, tools::Risk risk, Verdict verdict) const;
  // Why `rule`, which allows the call, does not cover its elevated risks ("" when it does).
  std::string uncovered_risk(const CallSubject& call, const PermissionRule& rule,
                             const tools::RiskAssessment& risk) const;

  // Shell rules, matched per simple command (see PermissionRule). `why_not` says why no allow rule applies
  // when that is worth telling: the line is uncertain, a deny rule cannot be ruled out, or a redirection
  // writes to a file.
  struct ShellAllow {
    const PermissionRule* rule = nullptr;
    std::string why_not;
  };
  ShellAllow shell_allow(const CallSubject& call, const tools::ShellCommandLine& line) const;
  const PermissionRule* shell_match_any(const CallSubject& call, const tools::ShellCommandLine& line,
                                        Verdict verdict) const;
  // Why a shell deny rule cannot be ruled out for this line ("" when it can): the parser could not see
  // through it, or a word that may expand (`git $x`) could make it match. Such a line asks even in bypass.
  std::string shell_deny_doubt(const CallSubject& call, const tools::ShellCommandLine& line) const;

  PermissionMode mode_ = PermissionMode::default_mode;
  std::vector<PermissionRule> rules_;
};

}  // namespace agentd::core
