#include "daemon/trust.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/support/clock.h"
#include "core/support/json.h"
#include "core/support/json_writer.h"
#include "daemon/config.h"
#include "tools/atomic_write.h"
#include "tools/hooks.h"
#include "tools/sha256.h"
#include "tools/shell_command.h"

namespace agentd::daemon {

using support::Errc;
using support::Error;
using support::Json;
using support::Result;

namespace {

// How much each choice lets through, least first.
int mode_rank(core::PermissionMode mode) {
  switch (mode) {
    case core::PermissionMode::plan: return 0;
    case core::PermissionMode::default_mode: return 1;
    case core::PermissionMode::accept_edits: return 2;
    case core::PermissionMode::bypass: return 3;
  }
  return 3;
}
int sandbox_rank(std::string_view sandbox) { return sandbox == "require" ? 0 : sandbox == "fallback" ? 1 : 2; }

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::string quoted_words(const std::string& command, const std::vector<std::string>& args) {
  std::string out = tools::shell_quote(command);
  for (const auto& a : args) out += " " + tools::shell_quote(a);
  return out;
}

std::string describe_server(const tools::mcp::ServerConfig& s) {
  if (s.http()) {
    std::string out = s.url;
    for (const auto& [name, value] : s.headers) out += fmt::format(" [header {}: {}]", name, value);
    return out;
  }
  std::string out = quoted_words(s.command, s.args);
  for (const auto& [name, value] : s.env) out += fmt::format(" [env {}={}]", name, value);
  if (!s.cwd.empty()) out += fmt::format(" [cwd {}]", s.cwd);
  return out;
}

// "./check.sh (matcher shell, timeout 60 s, from /p/.claude/settings.json)"
std::string describe_hook(const tools::HookCommand& hook) {
  return fmt::format("{} (matcher {}, timeout {} s, from {})", hook.command, hook.matcher.empty() ? "*" : hook.matcher,
                     std::chrono::duration<double>(hook.timeout).count(), hook.source);
}

bool same_server(const tools::mcp::ServerConfig& a, const tools::mcp::ServerConfig& b) {
  return a.command == b.command && a.args == b.args && a.env == b.env && a.cwd == b.cwd && a.url == b.url &&
         a.headers == b.headers;
}

// Where a model's requests go and which key they carry: what a project must not choose by itself.
std::string model_endpoint(const core::model::ModelConfig& m) {
  return fmt::format("{}:{} at {} with the key in ${}", core::model::provider_name(m.provider), m.model, m.base_url,
                     m.api_key_env.empty() ? "(none)" : m.api_key_env);
}

// A model the project defines that sends requests somewhere, or with a key, the layers below would not.
bool model_loosens(const Config& below, const std::string& name, const core::model::ModelConfig& model) {
  if (auto it = below.models.find(name); it != below.models.end()) {
    return it->second.base_url != model.base_url || it->second.api_key_env != model.api_key_env ||
           it->second.extra_headers != model.extra_headers;
  }
  const core::model::ModelConfig defaults = core::model::default_model_config(model.provider, model.model);
  return model.base_url != defaults.base_url || model.api_key_env != defaults.api_key_env ||
         !model.extra_headers.empty();
}

bool is_project_rule(const core::PermissionRule& rule, std::string_view project_file) {
  return rule.source == project_file;
}

Result<Json> read_store(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return Json::object();
    return Error(Errc::io, fmt::format("{}: cannot read the trusted projects file: {}", path, std::strerror(errno)));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto parsed = support::parse_json(buffer.str());
  if (!parsed || !parsed->is_object()) {
    return Error(Errc::invalid_argument,
                 fmt::format("{}: not a trusted projects file (expected a JSON object with \"projects\"); fix or "
                             "delete it, then trust the project again",
                             path));
  }
  return std::move(*parsed);
}

}  // namespace

std::vector<Loosening> find_loosenings(const Config& below, const Config& with_project, std::string_view project_file) {
  std::vector<Loosening> out;
  if (mode_rank(with_project.mode) > mode_rank(below.mode)) {
    out.push_back({"mode", std::string(core::permission_mode_id(with_project.mode))});
  }
  if (with_project.headless == core::Verdict::allow && below.headless != core::Verdict::allow) {
    out.push_back({"permissions.headless", "allow"});
  }
  for (const auto& rule : with_project.permission_rules) {
    if (rule.verdict == core::Verdict::allow && is_project_rule(rule, project_file)) {
      out.push_back({"permissions.allow", rule.text()});
    }
  }
  if (sandbox_rank(with_project.shell.sandbox) > sandbox_rank(below.shell.sandbox)) {
    out.push_back({"shell.sandbox", with_project.shell.sandbox});
  }
  if (with_project.shell.network && !below.shell.network) out.push_back({"shell.network", "allow"});
  for (const auto& name : with_project.shell.env_allow) {
    if (!contains(below.shell.env_allow, name)) out.push_back({"shell.envAllow", name});
  }
  for (const auto& dir : with_project.shell.writable_dirs) {
    if (!contains(below.shell.writable_dirs, dir)) out.push_back({"shell.writableDirs", dir});
  }
  for (const auto& server : with_project.mcp_servers) {
    const auto it = std::find_if(below.mcp_servers.begin(), below.mcp_servers.end(),
                                 [&](const auto& s) { return s.name == server.name; });
    if (it == below.mcp_servers.end() || !same_server(*it, server)) {
      out.push_back({"mcpServers." + server.name, describe_server(server)});
    }
  }
  for (const auto& [name, model] : with_project.models) {
    if (model_loosens(below, name, model)) out.push_back({"models." + name, model_endpoint(model)});
  }
  for (const auto& hook : with_project.hooks) {
    if (std::find(below.hooks.begin(), below.hooks.end(), hook) != below.hooks.end()) continue;
    out.push_back({fmt::format("hooks.{}", tools::hook_event_name(hook.event)), describe_hook(hook)});
  }
  return out;
}

void revert_loosenings(const Config& below, Config& with_project, std::string_view project_file) {
  if (mode_rank(with_project.mode) > mode_rank(below.mode)) with_project.mode = below.mode;
  if (with_project.headless == core::Verdict::allow) with_project.headless = below.headless;
  std::erase_if(with_project.permission_rules, [&](const core::PermissionRule& rule) {
    return rule.verdict == core::Verdict::allow && is_project_rule(rule, project_file);
  });
  if (sandbox_rank(with_project.shell.sandbox) > sandbox_rank(below.shell.sandbox)) {
    with_project.shell.sandbox = below.shell.sandbox;
  }
  if (with_project.shell.network && !below.shell.network) with_project.shell.network = false;
  with_project.shell.env_allow = below.shell.env_allow;
  with_project.shell.writable_dirs = below.shell.writable_dirs;
  with_project.mcp_servers = below.mcp_servers;
  with_project.hooks = below.hooks;
  std::vector<std::string> dropped;
  for (auto it = with_project.models.begin(); it != with_project.models.end();) {
    if (!model_loosens(below, it->first, it->second)) {
      ++it;
      continue;
    }
    dropped.push_back(it->first);
    if (auto b = below.models.find(it->first); b != below.models.end()) {
      it->second = b->second;
      ++it;
    } else {
      it = with_project.models.erase(it);
    }
  }
  // A default model the project named among those it may not define falls back to the user's choice.
  if (contains(dropped, with_project.model) && !below.models.contains(with_project.model)) {
    with_project.model = below.model;
  }
}

std::string loosening_digest(const std::vector<Loosening>& loosenings) {
  std::vector<std::string> lines;
  lines.reserve(loosenings.size());
  for (const auto& l : loosenings) lines.push_back(fmt::format("{}\t{}\n", l.setting, l.value));
  std::sort(lines.begin(), lines.end());
  std::string text;
  for (const auto& line : lines) text += line;
  return tools::sha256_hex(text);
}

Result<std::optional<std::string>> TrustStore::digest_for(std::string_view project) const {
  auto store = read_store(path_);
  if (!store) return std::move(store).error();
  const Json* projects = store->find("projects");
  if (projects == nullptr || !projects->is_object()) return std::optional<std::string>();
  const Json* entry = projects->find(project);
  if (entry == nullptr || !entry->is_object()) return std::optional<std::string>();
  const Json* digest = entry->find("digest");
  if (digest == nullptr || !digest->is_string()) return std::optional<std::string>();
  return std::optional<std::string>(digest->as_string());
}

Result<void> TrustStore::set(std::string_view project, const ProjectTrustState& state, bool trusted) {
  auto store = read_store(path_);
  if (!store) return std::move(store).error();
  // Rewritten whole, projects in name order.
  std::map<std::string, Json> projects;
  if (const Json* p = store->find("projects"); p != nullptr && p->is_object()) {
    for (const auto& [name, entry] : p->as_object()) projects[name] = entry;
  }
  if (trusted) {
    Json entry = Json::object();
    entry["digest"] = state.digest;
    entry["trustedAtMs"] = support::unix_millis_now();
    Json settings = Json::array();
    for (const auto& l : state.loosenings) settings.push_back(Json(l.text()));
    entry["settings"] = std::move(settings);
    projects[std::string(project)] = std::move(entry);
  } else {
    projects.erase(std::string(project));
  }
  std::string text;
  support::JsonWriter w(text);
  w.begin_object().member("version", 1).key("projects").begin_object();
  for (const auto& [name, entry] : projects) w.key(name).value(entry);
  w.end_object().end_object();
  text += '\n';
  const std::filesystem::path path(path_);
  std::error_code ec;
  if (!std::filesystem::exists(path.parent_path(), ec)) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec)
      return Error(Errc::io,
                   fmt::format("{}: cannot create the directory: {}", path.parent_path().string(), ec.message()));
    ::chmod(path.parent_path().c_str(), 0700);
  }
  return tools::write_file_atomically(path, text, 0600);
}

ProjectTrustState vet_project(const ProjectLayers& layers) {
  ProjectTrustState state;
  state.project = layers.project_dir;
  state.file = layers.project_file;
  state.trust_file = layers.trust_file;
  state.loosenings = find_loosenings(layers.user, layers.with_project, layers.project_file);
  state.digest = loosening_digest(state.loosenings);
  return state;
}

std::string trust_file_beside(std::string_view user_config_file) {
  return (std::filesystem::path(user_config_file).parent_path() / "trusted-projects.json").string();
}

Result<ProjectTrustState> trust_project(const std::string& project_dir, bool trusted,
                                        const std::optional<std::string>& user_file) {
  ConfigInputs inputs;
  inputs.user_file = user_file;
  inputs.project_dir = project_dir;
  auto layers = read_project_layers(inputs);
  if (!layers) return std::move(layers).error();
  if (!layers->project_file_read && layers->claude_files_read.empty()) {
    return support::make_error(Errc::not_found,
                               "{} has no {} and no hooks in .claude/settings.json: there is nothing "
                               "to trust",
                               layers->project_dir, ".agentd/config.json");
  }
  ProjectTrustState state = vet_project(*layers);
  state.trusted = trusted;
  if (state.trust_file.empty()) {
    return Error(Errc::invalid_argument, "no user config directory (neither XDG_CONFIG_HOME nor HOME is set)");
  }
  AGENTD_TRY_VOID(TrustStore(state.trust_file).set(state.project, state, trusted));
  return state;
}

namespace {

// The project's files the loosenings come from: its .agentd/config.json, its .claude/settings*.json.
std::string project_files(const ProjectTrustState& state) {
  std::vector<std::string> files;
  for (const auto& l : state.loosenings) {
    std::string file = state.file;
    if (l.setting.starts_with("hooks.")) {
      const std::size_t from = l.value.rfind(", from ");
      if (from != std::string::npos) file = l.value.substr(from + 7, l.value.size() - from - 8);
    }
    if (!contains(files, file)) files.push_back(std::move(file));
  }
  if (files.empty()) return state.file;
  std::string out = files.front();
  for (std::size_t i = 1; i < files.size(); ++i) out += (i + 1 == files.size() ? " and " : ", ") + files[i];
  return out;
}

}  // namespace

std::string untrusted_message(const ProjectTrustState& state) {
  std::string settings;
  for (const auto& l : state.loosenings) {
    if (!settings.empty()) settings += "; ";
    settings += l.text();
  }
  return fmt::format(
      "{} asks for settings that loosen yours, and the project is not trusted{}, so they are ignored: {}. If you "
      "trust this repository's config, run `agent trust {}` (or send _agentd/project/trust) and start a new session.",
      project_files(state), state.digest.empty() ? "" : " with this file's current contents", settings, state.project);
}

}  // namespace agentd::daemon
