// Project trust (DESIGN.md section 5). A project's .agentd/config.json belongs to the workspace, and the
// workspace is not trusted: a cloned repository, or a model that wrote the file, must not be able to loosen
// agentd's rules. So the project layer may tighten freely, but every setting of it that loosens what the
// layers below say applies only once the user trusted the project, bound to a hash of exactly those
// settings: a changed file needs trust again. Trust is kept in the user's config directory
// (trusted-projects.json beside config.json), which no tool may write without asking.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/result.h"

namespace agentd::daemon {

struct Config;

// One setting by which a project file loosens the layers below it.
struct Loosening {
  std::string setting;  // "mode", "shell.sandbox", "permissions.allow", "mcpServers.build", "models.fast"
  std::string value;    // what the project asks for, whole: "bypass", "shell(npm *)", "sh -c 'make' (cwd ...)"
  bool operator==(const Loosening&) const = default;
  std::string text() const { return setting + " = " + value; }  // "mode = bypass"
};

// What `with_project` (the layers below plus the project file `project_file`) loosens compared with
// `below`, in a stable order: a more permissive mode, sandbox or headless verdict, the network allowed,
// variables allowed through, extra writable directories, allow rules, MCP servers, and models whose base
// URL or key variable differ.
std::vector<Loosening> find_loosenings(const Config& below, const Config& with_project, std::string_view project_file);

// Puts every loosening setting of `with_project` back as `below` has it; tightening ones stay.
void revert_loosenings(const Config& below, Config& with_project, std::string_view project_file);

// Lower-case hex SHA-256 of the loosenings: what a trust is bound to.
std::string loosening_digest(const std::vector<Loosening>& loosenings);

// What became of a project file's loosening settings (Config::project_trust).
struct ProjectTrustState {
  std::string project;  // the project directory, canonical
  std::string file;     // its .agentd/config.json
  std::string digest;   // loosening_digest of `loosenings`
  std::vector<Loosening> loosenings;
  bool trusted = false;    // trusted with this digest: the settings apply
  std::string trust_file;  // where trust is recorded
};

struct ProjectLayers;  // daemon/config.h
// What the project layer of `layers` loosens, its digest and where trust is kept; `trusted` is left false.
ProjectTrustState vet_project(const ProjectLayers& layers);

// The user's trusted-projects.json: {"version": 1, "projects": {"<dir>": {"digest", "trustedAtMs",
// "settings": ["<setting> = <value>", ...]}}}. The settings are kept for the reader; only the digest counts.
class TrustStore {
 public:
  explicit TrustStore(std::string path) : path_(std::move(path)) {}
  const std::string& path() const noexcept { return path_; }

  // The digest `project` was trusted with; nullopt when it was not (or there is no file yet). An
  // unreadable or malformed file is an error naming it.
  support::Result<std::optional<std::string>> digest_for(std::string_view project) const;
  // Records (or with `trusted` false, removes) the trust, atomically; the directory is created 0700 and
  // the file written 0600.
  support::Result<void> set(std::string_view project, const ProjectTrustState& state, bool trusted);

 private:
  std::string path_;
};

// The trust file beside the user's config file.
std::string trust_file_beside(std::string_view user_config_file);

// For `_agentd/project/trust` and `agent trust`: reads the user's layer and `project_dir`'s file, and
// records (or revokes) trust in what the file loosens now. `user_file` empty: the default location.
support::Result<ProjectTrustState> trust_project(const std::string& project_dir, bool trusted,
                                                 const std::optional<std::string>& user_file = std::nullopt);

// One line for the client and the log: which settings were ignored and how to trust the project.
std::string untrusted_message(const ProjectTrustState& state);

}  // namespace agentd::daemon
