// The settings a session takes from its project's configuration: the user's file, then
// <cwd>/.agentd/config.json, then --config, the environment and the flags. They are read when a session is
// created or loaded, so sessions in two projects served by one agentd each get their own rules and model.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/engine/budget.h"
#include "core/engine/permissions.h"
#include "core/model/model_config.h"
#include "core/support/enum_names.h"
#include "core/support/result.h"
#include "tools/builtin/shell.h"
#include "tools/hooks.h"
#include "tools/mcp/mcp_manager.h"

namespace agentd::core {

// Resolves "<provider>:<model>" to a complete config (defaults, config files, environment).
using ModelResolver = std::function<support::Result<model::ModelConfig>(std::string_view spec)>;

struct EngineLimits {
  std::uint32_t max_turn_requests = 25;  // model requests per turn
  Budgets budgets;                       // config `budgets`; a session may set its own
};

// What the engine does when a turn edited files and ended without verifying them (config `verify.auto`).
enum class AutoVerify {
  off,      // nothing
  suggest,  // the turn ends with a note naming the suggested command (for the user; no model call)
  run,      // the engine runs the suggested verification; a failure in the changed code goes back to the
            // model for at most `rounds` more rounds
};
std::string_view auto_verify_name(AutoVerify mode) noexcept;
std::optional<AutoVerify> parse_auto_verify(std::string_view name) noexcept;
std::span<const support::EnumName<AutoVerify>> enum_names(AutoVerify) noexcept;

struct VerifySettings {
  AutoVerify mode = AutoVerify::suggest;
  std::uint32_t rounds = 1;
};

// A project whose config file asks for settings that loosen the user's, and which the user has not
// trusted with them: those settings were ignored (daemon/trust.h). The client is told when a session
// starts (`_meta.agentd.projectTrust` of session/new, load and resume).
struct UntrustedProject {
  std::string project;               // the directory
  std::string file;                  // its .agentd/config.json
  std::string digest;                // what trusting it now would bind to
  std::vector<std::string> ignored;  // "mode = bypass", "mcpServers.build = sh -c ..."
  std::string message;               // one line: what was ignored, and how to trust the project
};

struct ProjectSettings {
  std::string model_spec;                  // the model new sessions start with
  std::vector<std::string> model_choices;  // specs offered for selection, the default first
  ModelResolver resolve_model;
  EngineLimits limits;
  PermissionMode default_mode = PermissionMode::default_mode;
  std::vector<PermissionRule> permission_rules;       // from the configuration files, in the order read
  Verdict headless = Verdict::deny;                   // a call that would ask, when no client can be asked
  std::vector<std::string> denied_paths;              // permissions.denyPaths: refused for every tool
  tools::ShellConfig shell;                           // the shell and verify tools' settings (config `shell`)
  VerifySettings verify;                              // config `verify`
  std::vector<tools::mcp::ServerConfig> mcp_servers;  // config `mcpServers`, started for every session
  std::vector<tools::HookCommand> hooks;              // config `hooks` and .claude/settings*.json
  std::vector<std::string> sources;                   // the files that were read, in order
  std::optional<UntrustedProject> untrusted;          // set when the project's loosening settings were ignored
};

// Reads the settings for a session whose cwd is `cwd` (absolute, canonical). An error (a bad project
// file) is the session's: session/new or session/load fails with it, naming the file, line and field.
using ProjectSettingsLoader = std::function<support::Result<ProjectSettings>(const std::string& cwd)>;

}  // namespace agentd::core
