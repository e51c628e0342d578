#include "core/engine/permissions.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "tools/ignore.h"
#include "tools/path_guard.h"

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

std::string PermissionRule::text() const { return pattern ? fmt::format("{}({})", tool, *pattern) : tool; }

std::string_view verdict_name(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::allow: return "allow";
    case Verdict::deny: return "deny";
    case Verdict::ask: return "ask";
  }
  return "ask";
}

std::optional<Verdict> parse_verdict(std::string_view name) noexcept {
  for (const Verdict v : {Verdict::allow, Verdict::deny, Verdict::ask}) {
    if (verdict_name(v) == name) return v;
  }
  return std::nullopt;
}

support::Result<PermissionRule> parse_permission_rule(std::string_view text, Verdict verdict, std::string source) {
  PermissionRule rule;
  rule.verdict = verdict;
  rule.source = std::move(source);
  const auto open = text.find('(');
  const std::string_view tool = open == std::string_view::npos ? text : text.substr(0, open);
  const auto valid_name = [](std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
    });
  };
  if (!valid_name(tool)) {
    return support::make_error(support::Errc::invalid_argument,
                               "\"{}\" is not a permission rule: expected a tool name or read, edit, shell, "
                               "optionally followed by (pattern), like \"shell(git status*)\"",
                               text);
  }
  rule.tool = std::string(tool);
  if (open != std::string_view::npos) {
    if (text.back() != ')' || text.size() < open + 2) {
      return support::make_error(support::Errc::invalid_argument,
                                 "\"{}\" is not a permission rule: the pattern must end with ')'", text);
    }
    rule.pattern = std::string(text.substr(open + 1, text.size() - open - 2));
  }
  return rule;
}

std::string_view tool_category(tools::ToolKind kind) noexcept {
  switch (kind) {
    case tools::ToolKind::read:
    case tools::ToolKind::search: return "read";
    case tools::ToolKind::edit:
    case tools::ToolKind::remove:
    case tools::ToolKind::move: return "edit";
    case tools::ToolKind::execute: return "shell";
    case tools::ToolKind::fetch:
    case tools::ToolKind::think:
    case tools::ToolKind::other: return "";
  }
  return "";
}

CallSubject call_subject(const tools::ToolSpec& spec, const support::Json& input, std::string_view cwd) {
  CallSubject subject{spec.name, std::string(tool_category(spec.kind)), {}};
  const auto field = [&](std::string_view key) -> std::string {
    const support::Json* value = input.is_object() ? input.find(key) : nullptr;
    return value != nullptr && value->is_string() ? value->as_string() : std::string();
  };
  if (spec.kind == tools::ToolKind::execute) {
    subject.argument = field("command");
  } else {
    const std::string path = field("path");
    subject.argument = tools::lexical_display(path.empty() ? "." : path, std::filesystem::path(cwd));
  }
  return subject;
}

const PermissionRule* PermissionPolicy::first_match(const CallSubject& call, Verdict verdict) const {
  for (const auto& rule : rules_) {
    if (rule.verdict != verdict) continue;
    if (rule.tool != call.tool && (call.category.empty() || rule.tool != call.category)) continue;
    if (rule.pattern) {
      // Commands are text: `*` crosses spaces and slashes. Paths match component-wise, as in .gitignore.
      const bool command = call.category == "shell";
      if (!tools::wildmatch(*rule.pattern, call.argument, !command)) continue;
    }
    return &rule;
  }
  return nullptr;
}

void PermissionPolicy::remove_approval(std::int64_t approval_id) {
  std::erase_if(rules_, [&](const PermissionRule& r) { return r.approval_id == approval_id; });
}

void PermissionPolicy::set_approval_id(std::string_view rule_text, std::int64_t approval_id) {
  for (auto& rule : rules_) {
    if (!rule.approval_id && rule.text() == rule_text && rule.source.starts_with("approved"))
      rule.approval_id = approval_id;
  }
}

std::optional<PermissionRule> PermissionPolicy::rule_for_answer(const CallSubject& call, PermissionAnswer answer) {
  if (answer != PermissionAnswer::allow_always && answer != PermissionAnswer::reject_always) return std::nullopt;
  PermissionRule rule;
  rule.verdict = answer == PermissionAnswer::allow_always ? Verdict::allow : Verdict::deny;
  rule.tool = call.tool;
  // A command is approved as typed (approving `npm test` must not approve `npm test; rm -rf ~`); a
  // command containing wildmatch's special characters is escaped so it matches only itself.
  if (call.category == "shell") {
    std::string escaped;
    for (const char c : call.argument) {
      if (c == '*' || c == '?' || c == '[' || c == '\\') escaped += '\\';
      escaped += c;
    }
    rule.pattern = std::move(escaped);
  }
  return rule;
}

PermissionDecision PermissionPolicy::decide(const CallSubject& call, tools::Risk risk) const {
  using tools::has_risk;
  using tools::Risk;
  const auto by_rule = [](const PermissionRule& rule, std::string_view what) {
    return fmt::format("{} by the rule {} \"{}\" ({})", what, verdict_name(rule.verdict), rule.text(), rule.source);
  };
  if (const auto* rule = first_match(call, Verdict::deny)) return {Verdict::deny, by_rule(*rule, "denied")};
  if (mode_ == PermissionMode::bypass) return {Verdict::allow, "bypass mode"};
  const bool mutating = tools::is_mutating(risk);
  if (mode_ == PermissionMode::plan && mutating) {
    return {Verdict::deny,
            fmt::format("{} would change the workspace ({}), and the session is in plan mode (read-only); "
                        "describe the change instead, or ask the user to switch modes",
                        call.tool, tools::risk_names(risk))};
  }
  if (const auto* rule = first_match(call, Verdict::ask)) return {Verdict::ask, by_rule(*rule, "asked for")};
  if (const auto* rule = first_match(call, Verdict::allow)) return {Verdict::allow, by_rule(*rule, "allowed")};
  if (has_risk(risk, Risk::outside_workspace)) {
    return {Verdict::ask, "the call reaches outside the workspace"};
  }
  if (!mutating) return {Verdict::allow, "reading inside the workspace"};
  if (mode_ == PermissionMode::accept_edits && !has_risk(risk, Risk::execute) && !has_risk(risk, Risk::network)) {
    return {Verdict::allow, "acceptEdits mode"};
  }
  return {Verdict::ask, fmt::format("{} needs approval ({})", call.tool, tools::risk_names(risk))};
}

}  // namespace agentd::core
