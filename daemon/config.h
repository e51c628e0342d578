// Configuration: layered, later layers win. (1) the user's ~/.config/agentd/config.json (XDG_CONFIG_HOME
// honoured), (2) the project's <project>/.agentd/config.json, (3) the environment (AGENTD_MODEL,
// ANTHROPIC_BASE_URL, OPENAI_BASE_URL; the API keys are read at call time, never stored), (4) flags
// (--config FILE, applied as a layer after the project's; --model). Errors name the file, the line and
// the field. The engine receives plain values from here, never JSON.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/permissions.h"
#include "core/engine/project_settings.h"
#include "core/model/model_config.h"
#include "core/support/result.h"
#include "core/telemetry/otlp_exporter.h"
#include "daemon/trust.h"
#include "tools/builtin/shell.h"
#include "tools/hooks.h"

namespace agentd::daemon {

// The shell tool's settings ("shell" in a config file). Plain values; shell_config() turns them into the
// tool's ShellConfig.
struct ShellSettings {
  std::optional<std::uint32_t> timeout_ms;      // default per call (the tool's default: 2 minutes)
  std::optional<std::uint32_t> max_timeout_ms;  // the most a call may ask for (default: 10 minutes)
  // "require": refuse to run commands where the kernel cannot sandbox them (the default); "fallback":
  // run them unsandboxed there, with a note in every result; "off": never sandbox.
  std::string sandbox = "require";
  bool network = true;                     // false: commands run with the network cut off
  std::vector<std::string> env_allow;      // variables passed on although their names look secret
  std::vector<std::string> writable_dirs;  // writable in the sandbox beyond the workspace and temp
};

struct Config {
  std::string model;  // the default model spec, "<provider>:<model>" or a name from `models`
  std::map<std::string, core::model::ModelConfig> models;  // named model configs from the files
  core::PermissionMode mode = core::PermissionMode::default_mode;
  std::uint32_t max_turn_requests = 25;
  // Permission rules from every file, in the order read (deny wins whatever the order), and what to do
  // with a call that would ask when no client can be asked.
  std::vector<core::PermissionRule> permission_rules;
  core::Verdict headless = core::Verdict::deny;
  // permissions.denyPaths from every file: refused for every tool, beyond the built-in secrets list.
  std::vector<std::string> deny_paths;
  ShellSettings shell;
  core::VerifySettings verify;  // "verify": {"auto": "off"|"suggest"|"run", "rounds": N}
  // "budgets": {"sessionUsd": 5, "turnUsd": 1, "turnOutputTokens": 20000}. Layers only tighten them: a
  // budget set by two files is the smaller (a cloned project cannot raise the user's).
  core::Budgets budgets;
  // "mcpServers": {"<name>": {"command", "args", "env": {..}, "cwd"}}; a later file's server replaces
  // an earlier one of the same name.
  std::vector<tools::mcp::ServerConfig> mcp_servers;
  // "hooks": Claude Code's format, every file's added in the order read; also the `hooks` of the
  // user's ~/.claude/settings.json and of the project's .claude/settings.json and settings.local.json.
  std::vector<tools::HookCommand> hooks;
  // "claudeSettings": false in the user's own file: read no hooks from .claude/ settings files.
  bool claude_settings = true;
  // "telemetry": {"endpoint", "headers", "captureContent", "serviceName"}: OpenTelemetry export. Read from
  // the user's own file and --config only (load_user_config); the OTEL_* variables win over it.
  core::telemetry::OtlpSettings telemetry;
  std::vector<std::string> sources;  // the files that were read, in order
  // Set when the project's file asks for settings that loosen the user's (daemon/trust.h): whether they
  // apply (the project is trusted with this digest) or were put back to the user's.
  std::optional<ProjectTrustState> project_trust;
};

struct ConfigInputs {
  std::optional<std::string> user_file;    // default: $XDG_CONFIG_HOME/agentd/config.json or ~/.config/...
  std::optional<std::string> project_dir;  // default: the working directory
  std::optional<std::string> extra_file;   // --config
  std::optional<std::string> model_flag;   // --model
  core::model::EnvLookup env;              // null: the process environment
};

// Layers (1) and (2) as written, before trust is applied: the user's file alone, and the project's file
// over it. For load_config and for recording trust (daemon/trust.h).
struct ProjectLayers {
  Config user;
  Config with_project;
  std::string project_dir;   // canonical
  std::string project_file;  // <project_dir>/.agentd/config.json
  bool project_file_read = false;
  std::vector<std::string> claude_files_read;  // the project's .claude/settings*.json that had hooks
  std::string trust_file;  // trusted-projects.json beside the user's file; empty without a config dir
};
support::Result<ProjectLayers> read_project_layers(const ConfigInputs& inputs);

// All layers. The project's loosening settings apply only if the user trusted the project with exactly
// them (TrustStore); otherwise they are put back to the user's and Config::project_trust says which.
support::Result<Config> load_config(const ConfigInputs& inputs);
// The user's own layers only: their config file and --config, no project's (what is process-wide, such
// as where telemetry goes, is never a project's to say).
support::Result<Config> load_user_config(const ConfigInputs& inputs);

// Parses one config file's text into `config` (a layer over what is there). `file` names it in errors.
support::Result<void> apply_config_text(Config& config, std::string_view text, std::string_view file);

// "<provider>:<model>" or a name from config.models, to a complete ModelConfig (defaults and
// environment overrides applied).
support::Result<core::model::ModelConfig> resolve_model(const Config& config, std::string_view spec,
                                                        const core::model::EnvLookup& env);

// What a session takes from `config` (its project's layers): the model, the choices offered, the limits,
// the permission rules and deny-paths. The resolver keeps the config alive. `override_model`, when set,
// is what every model name resolves to (--demo's scripted server).
// The shell and verify tools' ShellConfig from the config's `shell` settings.
tools::ShellConfig shell_config(const ShellSettings& settings);

core::ProjectSettings project_settings(Config config,
                                       std::optional<core::model::ModelConfig> override_model = std::nullopt);

// The model to use when nothing names one: Anthropic's when ANTHROPIC_API_KEY is set, else OpenAI's when
// OPENAI_API_KEY is, else Anthropic's (whose calls then fail with a clear "key not set" error).
std::string default_model_spec(const core::model::EnvLookup& env);

}  // namespace agentd::daemon
