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
// `risk(network)`: a rule about a call's risk rather than its tool.
constexpr std::string_view kRiskRule = "risk";
// The risks that a wildcard allow rule does not cover (see PermissionPolicy::decide).
constexpr tools::Risk kElevatedRisks = tools::Risk::outside_workspace | tools::Risk::remote_code;

std::string known_risk_names() {
  return tools::risk_names(tools::Risk::read | tools::Risk::write | tools::Risk::execute | tools::Risk::network |
                           tools::Risk::outside_workspace | tools::Risk::protected_path |
                           tools::Risk::recursive_delete | tools::Risk::remote_code | tools::Risk::permissions);
}

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

constexpr support::EnumName<Verdict> kVerdictNames[] = {
    {Verdict::allow, "allow"},
    {Verdict::deny, "deny"},
    {Verdict::ask, "ask"},
};
static_assert(support::names_every_value(kVerdictNames, Verdict::ask));

std::span<const support::EnumName<Verdict>> enum_names(Verdict) noexcept { return kVerdictNames; }

std::string_view verdict_name(Verdict verdict) noexcept { return support::enum_name(verdict, "ask"); }

std::optional<Verdict> parse_verdict(std::string_view name) noexcept { return support::enum_from_name<Verdict>(name); }

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
  if (rule.tool == kRiskRule && (!rule.pattern || !tools::parse_risk_name(*rule.pattern))) {
    return support::make_error(support::Errc::invalid_argument,
                               "\"{}\" is not a permission rule: risk(...) takes one risk name: {}", text,
                               known_risk_names());
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
    subject.command = tools::parse_shell_command(subject.argument);
  } else {
    const std::string path = field("path");
    subject.argument = tools::lexical_display(path.empty() ? "." : path, std::filesystem::path(cwd));
  }
  return subject;
}

namespace {

bool applies_to(const PermissionRule& rule, const CallSubject& call) {
  return rule.tool == call.tool || (!call.category.empty() && rule.tool == call.category);
}

// ---- Shell rules: matched per simple command of the parsed line (tools/shell_command.h) ----

bool is_shell(const CallSubject& call) { return call.category == "shell"; }

// The call's parsed command line: the one call_subject made, else parsed here into `scratch`.
const tools::ShellCommandLine& parsed_command(const CallSubject& call,
                                              std::optional<tools::ShellCommandLine>& scratch) {
  if (call.command) return *call.command;
  if (!scratch) scratch = tools::parse_shell_command(call.argument);
  return *scratch;
}

// A pattern without wildcards matches one text only. "Always" answers are such patterns (rule_for_answer
// escapes the line), and they match the whole line as typed, whatever it holds.
bool is_literal(std::string_view pattern) {
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;
    } else if (pattern[i] == '*' || pattern[i] == '?' || pattern[i] == '[') {
      return false;
    }
  }
  return true;
}
bool matches_line(std::string_view pattern, const CallSubject& call) {
  return is_literal(pattern) && tools::wildmatch(pattern, call.argument, false);
}

std::string join_plain(std::span<const std::string> words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += ' ';
    out += words[i];
  }
  return out;
}

// The texts a deny or ask rule is tried on, for the command's first `count` words: with the program's name
// (`git push`) and as written (`/usr/bin/git push`), each quoted as allow rules see it and unquoted, so that
// neither a directory nor a word holding a space hides a match.
// git's options that come before its subcommand and change nothing of what a deny rule is about:
// `git -C . push` and `git -c x=y --no-pager push` push like `git push`. Those taking a value as the next
// word are listed with a trailing space.
constexpr std::array<std::string_view, 14> kGitGlobalOptions = {"-C ",
                                                                "-c ",
                                                                "--git-dir ",
                                                                "--work-tree ",
                                                                "--namespace ",
                                                                "--exec-path ",
                                                                "--no-pager",
                                                                "-P",
                                                                "--paginate",
                                                                "-p",
                                                                "--bare",
                                                                "--no-replace-objects",
                                                                "--literal-pathspecs",
                                                                "--noglob-pathspecs"};

// `words` with git's global options dropped (git only; otherwise empty).
std::vector<std::string> without_git_options(const std::vector<std::string>& words) {
  if (words.empty() || words[0] != "git") return {};
  std::vector<std::string> out = {words[0]};
  std::size_t i = 1;
  for (; i < words.size(); ++i) {
    const std::string& w = words[i];
    const auto known = std::find_if(kGitGlobalOptions.begin(), kGitGlobalOptions.end(), [&](std::string_view o) {
      const bool takes_value = o.ends_with(' ');
      const std::string_view name = takes_value ? o.substr(0, o.size() - 1) : o;
      return w == name || (takes_value && name.starts_with("--") && w.starts_with(std::string(name) + "="));
    });
    if (known == kGitGlobalOptions.end()) break;
    if (known->ends_with(' ') && w.find('=') == std::string::npos) ++i;  // its value is the next word
  }
  if (i == 1) return {};
  out.insert(out.end(), words.begin() + static_cast<std::ptrdiff_t>(std::min(i, words.size())), words.end());
  return out;
}

std::vector<std::string> deny_texts(const tools::ShellSimpleCommand& cmd, std::size_t count) {
  std::vector<std::string> named(cmd.words.begin(), cmd.words.begin() + static_cast<std::ptrdiff_t>(count));
  std::vector<std::string> written = named;
  if (!written.empty()) written[0] = cmd.program;
  std::vector<std::string> texts = {tools::shell_words_text(named), join_plain(named), tools::shell_words_text(written),
                                    join_plain(written)};
  // `git -C . push` is denied like `git push`.
  if (auto plain = without_git_options(named); !plain.empty()) {
    texts.push_back(tools::shell_words_text(plain));
    texts.push_back(join_plain(plain));
  }
  return texts;
}

// An allow rule must match the command as written: `./git status` is not `git status`.
bool allow_matches(std::string_view pattern, const tools::ShellSimpleCommand& cmd) {
  std::vector<std::string> written = cmd.words;
  if (!written.empty()) written[0] = cmd.program;
  return tools::wildmatch(pattern, tools::shell_words_text(written), false);
}

// Whether some text starting with `prefix`, then unknown words, could match `pattern`: the pattern's start
// up to its first wildcard and the prefix agree as far as both go. Never wrongly no; sometimes wrongly yes.
bool may_match_after(std::string_view pattern, std::string_view prefix) {
  std::string literal;
  for (std::size_t i = 0; i < pattern.size() && literal.size() < prefix.size(); ++i) {
    char c = pattern[i];
    if (c == '*' || c == '?' || c == '[') break;
    if (c == '\\' && i + 1 < pattern.size()) c = pattern[++i];
    literal += c;
  }
  return prefix.starts_with(literal) || std::string_view(literal).starts_with(prefix);
}

std::string uncertain_reason(const tools::ShellCommandLine& line) {
  return fmt::format("the command uses {}, which rules cannot see into", line.uncertain);
}

}  // namespace

const PermissionRule* PermissionPolicy::first_match(const CallSubject& call, tools::Risk risk, Verdict verdict) const {
  for (const auto& rule : rules_) {
    if (rule.verdict != verdict || rule.tool != kRiskRule || !rule.pattern) continue;
    const auto flag = tools::parse_risk_name(*rule.pattern);
    if (flag && tools::has_risk(risk, *flag)) return &rule;
  }
  if (is_shell(call)) {
    std::optional<tools::ShellCommandLine> scratch;
    const tools::ShellCommandLine& line = parsed_command(call, scratch);
    return verdict == Verdict::allow ? shell_allow(call, line).rule : shell_match_any(call, line, verdict);
  }
  for (const auto& rule : rules_) {
    if (rule.verdict != verdict || !applies_to(rule, call)) continue;
    // Paths match component-wise, as in .gitignore.
    if (rule.pattern && !tools::wildmatch(*rule.pattern, call.argument, true)) continue;
    return &rule;
  }
  return nullptr;
}

// A deny or ask rule matches a line when it matches any of its simple commands, or the whole line.
const PermissionRule* PermissionPolicy::shell_match_any(const CallSubject& call, const tools::ShellCommandLine& line,
                                                        Verdict verdict) const {
  for (const auto& rule : rules_) {
    if (rule.verdict != verdict || !applies_to(rule, call)) continue;
    if (!rule.pattern || matches_line(*rule.pattern, call)) return &rule;
    for (const auto& cmd : line.commands) {
      for (const auto& text : deny_texts(cmd, cmd.words.size())) {
        if (tools::wildmatch(*rule.pattern, text, false)) return &rule;
      }
    }
  }
  return nullptr;
}

std::string PermissionPolicy::shell_deny_doubt(const CallSubject& call, const tools::ShellCommandLine& line) const {
  for (const auto& rule : rules_) {
    if (rule.verdict != Verdict::deny || !applies_to(rule, call)) continue;
    if (!line.certain()) {
      return fmt::format("{}, so the rule deny \"{}\" ({}) cannot be ruled out", uncertain_reason(line), rule.text(),
                         rule.source);
    }
    if (!rule.pattern) continue;
    for (const auto& cmd : line.commands) {
      if (cmd.literal_words >= cmd.words.size()) continue;
      for (const auto& text : deny_texts(cmd, cmd.literal_words)) {
        if (!may_match_after(*rule.pattern, text)) continue;
        return fmt::format("`{}` in the command may expand into something the rule deny \"{}\" ({}) matches",
                           cmd.words[cmd.literal_words], rule.text(), rule.source);
      }
    }
  }
  return {};
}

// An allow rule allows a line when every simple command in it is matched by an allow rule, writes to no
// file through a redirection and sets no variables (`PATH=.`, `LD_PRELOAD=` change what runs), and the
// line is certain and no deny rule can be in doubt. A rule matching the whole line as typed allows it.
PermissionPolicy::ShellAllow PermissionPolicy::shell_allow(const CallSubject& call,
                                                           const tools::ShellCommandLine& line) const {
  const auto allow_rules = [&](const auto& fn) -> const PermissionRule* {
    for (const auto& rule : rules_) {
      if (rule.verdict == Verdict::allow && applies_to(rule, call) && fn(rule)) return &rule;
    }
    return nullptr;
  };
  const auto* whole_line =
      allow_rules([&](const PermissionRule& r) { return r.pattern && matches_line(*r.pattern, call); });
  if (whole_line != nullptr) return {whole_line, {}};
  if (std::string doubt = shell_deny_doubt(call, line); !doubt.empty()) return {nullptr, std::move(doubt)};
  if (const auto* rule = allow_rules([](const PermissionRule& r) { return !r.pattern; })) return {rule, {}};
  if (!line.certain()) return {nullptr, uncertain_reason(line)};
  if (line.commands.empty()) return {};
  const PermissionRule* first = nullptr;
  std::string why_not;
  for (const auto& cmd : line.commands) {
    const auto* rule =
        allow_rules([&](const PermissionRule& r) { return r.pattern && allow_matches(*r.pattern, cmd); });
    if (rule == nullptr) return {};
    if (first == nullptr) first = rule;
    const auto writing = std::find_if(cmd.redirections.begin(), cmd.redirections.end(),
                                      [](const tools::ShellRedirection& r) { return r.writes; });
    if (writing != cmd.redirections.end() && why_not.empty()) {
      why_not = fmt::format("the command writes to {} with `{}`, and allow rules do not cover writing redirections",
                            writing->target, writing->op);
    } else if (!cmd.assignments.empty() && why_not.empty()) {
      why_not = fmt::format("the command sets {} for {}, which can change what it runs; allow rules do not cover that",
                            cmd.assignments.front(), cmd.words.empty() ? "the shell" : cmd.words.front());
    }
  }
  if (!why_not.empty()) return {nullptr, std::move(why_not)};
  return {first, {}};
}

std::vector<std::string> PermissionPolicy::denied_patterns(std::string_view tool, std::string_view category) const {
  std::vector<std::string> out;
  for (const auto& rule : rules_) {
    if (rule.verdict != Verdict::deny || !rule.pattern) continue;
    if (rule.tool == tool || (!category.empty() && rule.tool == category)) out.push_back(*rule.pattern);
  }
  return out;
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
  // A command is approved as typed (approving `npm test` must not approve `npm test; rm -rf ~`): the
  // pattern is the line with wildmatch's special characters escaped, so it has no wildcard and matches the
  // whole line (see shell_allow); per simple command it matches only a command with exactly these words.
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

std::string PermissionPolicy::uncovered_risk(const CallSubject& call, const PermissionRule& rule,
                                             const tools::RiskAssessment& risk) const {
  using tools::has_risk;
  const tools::Risk elevated =
      static_cast<tools::Risk>(static_cast<std::uint32_t>(risk.risk) & static_cast<std::uint32_t>(kElevatedRisks));
  if (elevated == tools::Risk::none) return {};
  // An exact approval of this very line (or path): the person saw what it does.
  if (rule.tool != kRiskRule && rule.pattern && is_literal(*rule.pattern) &&
      (!is_shell(call) || matches_line(*rule.pattern, call))) {
    return {};
  }
  for (const std::uint32_t bit : {static_cast<std::uint32_t>(tools::Risk::outside_workspace),
                                  static_cast<std::uint32_t>(tools::Risk::remote_code)}) {
    const auto flag = static_cast<tools::Risk>(bit);
    if (!has_risk(elevated, flag)) continue;
    const bool covered = std::any_of(rules_.begin(), rules_.end(), [&](const PermissionRule& r) {
      return r.verdict == Verdict::allow && r.tool == kRiskRule && r.pattern && *r.pattern == tools::risk_names(flag);
    });
    if (!covered) {
      return fmt::format(
          "the rule allow \"{}\" ({}) does not cover a call that {}; approve this exact call, or "
          "allow \"risk({})\" in the configuration",
          rule.text(), rule.source, fmt::join(risk.reasons, ", and "), tools::risk_names(flag));
    }
  }
  return {};
}

PermissionDecision PermissionPolicy::decide(const CallSubject& call, const tools::RiskAssessment& assessment) const {
  using tools::has_risk;
  using tools::Risk;
  const Risk risk = assessment.risk;
  const auto by_rule = [](const PermissionRule& rule, std::string_view what) {
    return fmt::format("{} by the rule {} \"{}\" ({})", what, verdict_name(rule.verdict), rule.text(), rule.source);
  };
  // What the call does beyond its kind, for the reasons below: "; it reaches the network (`curl x`)".
  const std::string risks =
      assessment.reasons.empty() ? std::string() : fmt::format("; it {}", fmt::join(assessment.reasons, ", and "));
  if (const auto* rule = first_match(call, risk, Verdict::deny))
    return {Verdict::deny, by_rule(*rule, "denied") + risks};
  // agentd's own settings and git's executable configuration: a person decides, in every mode, whatever
  // the allow rules say (DESIGN.md section 5: nothing the model writes may loosen agentd's rules).
  if (has_risk(risk, Risk::protected_path)) {
    return {Verdict::ask,
            fmt::format("{} would change {}, a protected path (agentd's own settings or git's executable "
                        "configuration, which could loosen agentd's rules or make git run commands); only a person "
                        "can allow that",
                        call.tool, call.argument.empty() ? std::string("a file") : call.argument),
            true};
  }
  // Shell: a line a deny rule cannot be ruled out for (uncertain, or `git $x`) asks, even in bypass mode.
  std::optional<tools::ShellCommandLine> shell_scratch;
  if (is_shell(call) && mode_ == PermissionMode::bypass) {
    if (std::string doubt = shell_deny_doubt(call, parsed_command(call, shell_scratch)); !doubt.empty()) {
      return {Verdict::ask, std::move(doubt)};
    }
  }
  if (mode_ == PermissionMode::bypass) return {Verdict::allow, "bypass mode"};
  const bool mutating = tools::is_mutating(risk);
  if (mode_ == PermissionMode::plan && mutating) {
    return {Verdict::deny,
            fmt::format("{} would change the workspace ({}), and the session is in plan mode (read-only); "
                        "describe the change instead, or ask the user to switch modes",
                        call.tool, tools::risk_names(risk))};
  }
  if (const auto* rule = first_match(call, risk, Verdict::ask)) {
    return {Verdict::ask, by_rule(*rule, "asked for") + risks};
  }
  if (const auto* rule = first_match(call, risk, Verdict::allow)) {
    std::string uncovered = uncovered_risk(call, *rule, assessment);
    if (uncovered.empty()) return {Verdict::allow, by_rule(*rule, "allowed")};
    return {Verdict::ask, std::move(uncovered)};
  }
  if (has_risk(risk, Risk::outside_workspace)) {
    return {Verdict::ask, "the call reaches outside the workspace" + risks};
  }
  if (!mutating) return {Verdict::allow, "reading inside the workspace"};
  if (mode_ == PermissionMode::accept_edits && !has_risk(risk, Risk::execute) && !has_risk(risk, Risk::network)) {
    return {Verdict::allow, "acceptEdits mode"};
  }
  // Shell: why no allow rule applied, when the line itself is the reason.
  if (is_shell(call)) {
    if (std::string why = shell_allow(call, parsed_command(call, shell_scratch)).why_not; !why.empty()) {
      return {Verdict::ask, std::move(why) + risks};
    }
  }
  return {Verdict::ask, fmt::format("{} needs approval ({}){}", call.tool, tools::risk_names(risk), risks)};
}

}  // namespace agentd::core
