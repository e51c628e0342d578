#include "core/engine/slash_commands.h"

#include <array>
#include <cctype>

#include <fmt/format.h>

#include "core/engine/session.h"
#include "core/support/text.h"

namespace agentd::core {

namespace {

std::string tokens_line(const CostLedger& ledger) {
  const auto& u = ledger.usage;
  return fmt::format("{} input ({} uncached, {} cache write, {} cache read), {} output, {} model call{}",
                     u.total_input_tokens(), u.input_tokens, u.cache_write_tokens, u.cache_read_tokens, u.output_tokens,
                     ledger.calls, ledger.calls == 1 ? "" : "s");
}

std::string usd_line(const CostLedger& ledger) {
  if (ledger.calls == 0) return "$0.00 (no model calls)";
  if (auto total = ledger.total_usd()) return format_usd(*total);
  if (ledger.unpriced_calls == ledger.calls) return "unpriced (the model is not in the price table)";
  return fmt::format("at least {} ({} of {} calls unpriced)", format_usd(ledger.priced_usd), ledger.unpriced_calls,
                     ledger.calls);
}

}  // namespace

// A friend of Session: the rows name its private handlers.
std::span<const SlashCommandInfo> slash_commands() noexcept {
  static const std::array<SlashCommandInfo, 13> kCommands = {{
      {"help", "List the commands", "", &Session::cmd_help},
      {"cost", "Tokens and USD for this session and the last turn", "", &Session::cmd_cost},
      {"model", "Show the model, or switch to another", "provider:model", &Session::cmd_model},
      {"mode", "Show the permission mode, or switch to another", "default | acceptEdits | plan | bypass",
       &Session::cmd_mode},
      {"clear", "Start a fresh context; the history stays stored", "", &Session::cmd_clear},
      {"permissions", "List the permission rules in force, or revoke an approval", "revoke ID",
       &Session::cmd_permissions},
      {"undo", "Put back the files the last turn changed", "", &Session::cmd_undo},
      {"compact", "Summarize the older turns now, to free context", "", &Session::cmd_compact, true},
      {"memory", "Show the pinned instructions and remembered facts, and why each was used", "", &Session::cmd_memory,
       true},
      {"remember", "Remember a fact for this project", "text", &Session::cmd_remember, true},
      {"forget", "Forget a remembered fact", "ID", &Session::cmd_forget, true},
      {"skills", "List the skills, and why each was or was not selected last turn", "", &Session::cmd_skills, true},
      {"mcp", "List the MCP servers, their state and their tools", "", &Session::cmd_mcp},
  }};
  return kCommands;
}

const SlashCommandInfo* find_slash_command(std::string_view name) noexcept {
  for (const auto& c : slash_commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

bool is_slash_command(std::string_view text) noexcept {
  text = support::trim(text);
  if (text.size() < 2 || text.front() != '/') return false;
  text.remove_prefix(1);
  for (const auto& c : slash_commands()) {
    if (text.starts_with(c.name) &&
        (text.size() == c.name.size() || std::isspace(static_cast<unsigned char>(text[c.name.size()])) != 0)) {
      return true;
    }
  }
  return false;
}

SlashCommand parse_slash_command(std::string_view text) {
  text = support::trim(text);
  if (!text.empty() && text.front() == '/') text.remove_prefix(1);
  std::size_t end = 0;
  while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end])) == 0) ++end;
  return SlashCommand{std::string(text.substr(0, end)), std::string(support::trim(text.substr(end)))};
}

std::string help_text() {
  std::string out = "Commands (answered by agentd, without the model):";
  for (const auto& c : slash_commands()) {
    out += fmt::format("\n  /{}{}{} - {}", c.name, c.hint.empty() ? "" : " ", c.hint, c.description);
  }
  return out;
}

std::string format_usd(double usd) {
  if (usd >= 0.01 || usd == 0) return fmt::format("${:.2f}", usd);
  return fmt::format("${:.4f}", usd);
}

std::string cost_text(const CostLedger& session, const CostLedger& last_turn, std::string_view model_spec) {
  return fmt::format("Model: {}\nSession: {}; {}\nLast turn: {}; {}", model_spec, usd_line(session),
                     tokens_line(session), usd_line(last_turn), tokens_line(last_turn));
}

std::string permissions_text(const PermissionPolicy& policy, Verdict headless, std::string_view project) {
  std::string out =
      fmt::format("Mode: {}. With no client to ask: {}.", permission_mode_id(policy.mode()), verdict_name(headless));
  if (policy.rules().empty()) {
    return out +
           "\nNo rules: the mode decides. Add allow/deny/ask lists under \"permissions\" in a config file, "
           "or answer a prompt with \"always\".";
  }
  out += fmt::format("\nRules (deny wins, then ask, then allow); approvals are for {}:", project);
  for (const auto& rule : policy.rules()) {
    out += fmt::format("\n  {} {}  ({}{})", verdict_name(rule.verdict), rule.text(), rule.source,
                       rule.approval_id ? fmt::format("; /permissions revoke {}", *rule.approval_id) : "");
  }
  return out;
}

}  // namespace agentd::core
