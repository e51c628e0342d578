// Slash commands: what a session answers without calling the model (/help, /cost, /model, /mode,
// /clear, /undo, ...). The table here is the one list: each row holds its handler (a Session member),
// /help prints it, and the client is told about it with available_commands_update.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "core/engine/permissions.h"
#include "core/support/cancel.h"
#include "core/support/trace.h"

namespace agentd::core {

struct CostLedger;
class Session;

// What a handler is given: the command's argument text (trimmed) and the turn it runs in.
struct CommandCall {
  std::string_view args;
  const std::string& turn_id;
  support::CancelToken cancel;
  support::Span& span;
};
using CommandHandler = boost::asio::awaitable<std::string> (Session::*)(const CommandCall&);

struct SlashCommandInfo {
  std::string_view name;
  std::string_view description;
  std::string_view hint;  // what the argument is, empty when it takes none
  CommandHandler run = nullptr;
  // The command's work (a model call, gathering context) ends with session/cancel, and the turn then
  // stops as cancelled without a reply; the others finish what they started and reply.
  bool cancellable = false;
};
std::span<const SlashCommandInfo> slash_commands() noexcept;
const SlashCommandInfo* find_slash_command(std::string_view name) noexcept;

struct SlashCommand {
  std::string name;  // without the slash
  std::string args;  // trimmed
};

// "/cost", "  /model openai:gpt-4.1 " are commands; "/ x", "//", "/usr/bin is a path" are not: a
// command is a slash, then a known command's name, then the end or whitespace.
bool is_slash_command(std::string_view text) noexcept;
SlashCommand parse_slash_command(std::string_view text);

std::string help_text();
// Tokens and USD for the session and for the last turn; "unpriced" where the price is unknown.
std::string cost_text(const CostLedger& session, const CostLedger& last_turn, std::string_view model_spec);
std::string format_usd(double usd);
// The reply to /permissions: mode, headless policy, then every rule with its source; approvals with ids.
std::string permissions_text(const PermissionPolicy& policy, Verdict headless, std::string_view project);

}  // namespace agentd::core
