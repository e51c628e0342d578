#include "daemon/config.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/support/json.h"
#include "core/support/json_reader.h"
#include "core/support/log.h"

namespace agentd::daemon {

namespace model = core::model;
using support::Errc;
using support::Error;
using support::Json;
using support::JsonIn;
using support::Result;

namespace {

const char* lookup(const model::EnvLookup& env, const char* name) {
  return env ? env(name) : std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before threads start
}

// simdjson reports what is wrong, not where. Config files are small and hand-written, so find the line
// ourselves: a strict scan that stops at the first byte that cannot continue a JSON text.
class SyntaxLocator {
 public:
  explicit SyntaxLocator(std::string_view text) : text_(text) {}
  std::size_t first_error() {
    ws();
    if (!value()) return pos_;
    ws();
    return pos_ == text_.size() ? std::string_view::npos : pos_;
  }

 private:
  bool value() {  // NOLINT(misc-no-recursion)
    if (pos_ >= text_.size() || ++depth_ > 256) return false;
    const char c = text_[pos_];
    bool ok = false;
    if (c == '{') {
      ok = object();
    } else if (c == '[') {
      ok = array();
    } else if (c == '"') {
      ok = string();
    } else if (c == 't') {
      ok = literal("true");
    } else if (c == 'f') {
      ok = literal("false");
    } else if (c == 'n') {
      ok = literal("null");
    } else {
      ok = number();
    }
    --depth_;
    return ok;
  }
  bool object() {  // NOLINT(misc-no-recursion)
    ++pos_;
    ws();
    if (peek('}')) return ++pos_, true;
    for (;;) {
      ws();
      if (!peek('"') || !string()) return false;
      ws();
      if (!peek(':')) return false;
      ++pos_;
      ws();
      if (!value()) return false;
      ws();
      if (peek(',')) {
        ++pos_;
        continue;
      }
      if (peek('}')) return ++pos_, true;
      return false;
    }
  }
  bool array() {  // NOLINT(misc-no-recursion)
    ++pos_;
    ws();
    if (peek(']')) return ++pos_, true;
    for (;;) {
      ws();
      if (!value()) return false;
      ws();
      if (peek(',')) {
        ++pos_;
        continue;
      }
      if (peek(']')) return ++pos_, true;
      return false;
    }
  }
  bool string() {
    ++pos_;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') return ++pos_, true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      pos_ += c == '\\' ? 2 : 1;
    }
    return false;
  }
  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  bool number() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && std::string_view("+-0123456789.eE").find(text_[pos_]) != std::string_view::npos) {
      ++pos_;
    }
    return pos_ > start;
  }
  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  void ws() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

std::pair<std::size_t, std::size_t> line_col(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

// The line of the member a JsonIn error path names ("config.models.fast.context_window"): the first
// occurrence of its last key after the occurrences of the keys before it. Good enough for config files.
std::size_t line_of_path(std::string_view text, std::string_view path) {
  constexpr auto kNpos = std::string_view::npos;
  std::size_t from = 0;
  std::size_t found = kNpos;
  for (std::size_t i = path.find('.'); i != kNpos;) {
    const std::size_t j = path.find('.', i + 1);
    std::string_view part = path.substr(i + 1, j == kNpos ? kNpos : j - i - 1);
    if (const auto bracket = part.find('['); bracket != kNpos) part = part.substr(0, bracket);
    if (!part.empty()) {
      const std::size_t at = text.find(fmt::format("\"{}\"", part), from);
      if (at == kNpos) break;
      found = from = at;
    }
    i = j;
  }
  return found == kNpos ? 1 : line_col(text, found).first;
}

bool read_models(const JsonIn& in, std::map<std::string, model::ModelConfig>& out) {
  if (!in.require_object()) return false;
  for (const auto& [name, value] : in.json().as_object()) {
    (void)value;
    model::ModelConfig config;
    if (!from_json(in[name], config)) return false;
    model::apply_defaults(config);
    out[name] = std::move(config);
  }
  return true;
}

}  // namespace

Result<void> apply_config_text(Config& config, std::string_view text, std::string_view file) {
  auto parsed = support::parse_json(text);
  if (!parsed) {
    const std::size_t at = SyntaxLocator(text).first_error();
    const auto [line, col] = line_col(text, at == std::string_view::npos ? 0 : at);
    return Error(Errc::invalid_argument,
                 fmt::format("{}:{}:{}: not valid JSON ({})", file, line, col, parsed.error().message()));
  }
  JsonIn in(*parsed, "config");
  auto fail = [&](std::string_view field, std::string_view message) -> Result<void> {
    const std::string path = fmt::format("config.{}", field);
    return Error(Errc::invalid_argument, fmt::format("{}:{}: {}: {}", file, line_of_path(text, path), path, message));
  };
  if (!parsed->is_object()) return fail("", "a config file holds one JSON object");
  for (const auto& [key, value] : parsed->as_object()) {
    if (key == "model") {
      if (!value.is_string()) return fail(key, "expected a string such as \"anthropic:claude-sonnet-4-5\"");
      config.model = value.as_string();
    } else if (key == "models") {
      if (!read_models(in["models"], config.models)) {
        const Error e = in.error();
        const std::string_view message = e.message();
        const auto colon = message.find(": ");
        const std::string path(message.substr(0, colon));
        return Error(Errc::invalid_argument, fmt::format("{}:{}: {}", file, line_of_path(text, path), message));
      }
    } else if (key == "mode") {
      auto mode = value.is_string() ? core::parse_permission_mode(value.as_string()) : std::nullopt;
      if (!mode) return fail(key, "expected one of \"default\", \"acceptEdits\", \"plan\", \"bypass\"");
      config.mode = *mode;
    } else if (key == "maxTurnRequests") {
      if (!value.is_integer() || value.as_int64() < 1 || value.as_int64() > 10000) {
        return fail(key, "expected a whole number from 1 to 10000");
      }
      config.max_turn_requests = static_cast<std::uint32_t>(value.as_int64());
    } else if (key == "permissions") {
      if (!value.is_object())
        return fail(key, "expected an object with allow, deny, ask (lists of rules) and headless");
      for (const auto& [list, rules] : value.as_object()) {
        const std::string field = fmt::format("permissions.{}", list);
        if (list == "headless") {
          if (!rules.is_string() || (rules.as_string() != "allow" && rules.as_string() != "deny")) {
            return fail(field, "expected \"deny\" (the default) or \"allow\"");
          }
          config.headless = rules.as_string() == "allow" ? core::Verdict::allow : core::Verdict::deny;
          continue;
        }
        if (list == "denyPaths") {
          if (!rules.is_array())
            return fail(field, "expected a list of path patterns such as \"secrets/\" or \"*.p12\"");
          for (const auto& pattern : rules.as_array()) {
            if (!pattern.is_string()) return fail(field, "expected a list of strings");
            const std::string& text = pattern.as_string();
            if (text.empty() || text == "/" || text.starts_with('/') || text.find("..") != std::string::npos ||
                text.find('\0') != std::string::npos) {
              return fail(field, fmt::format("\"{}\" is not a path pattern: give a path below the workspace (no "
                                             "leading /, no ..), with * inside a name and a trailing / for a directory",
                                             text));
            }
            config.deny_paths.push_back(text);
          }
          continue;
        }
        const auto verdict = core::parse_verdict(list);
        if (!verdict) return fail(field, "unknown list (known: allow, deny, ask, headless, denyPaths)");
        if (!rules.is_array()) return fail(field, "expected a list of rules such as \"shell(git status*)\"");
        for (const auto& rule_text : rules.as_array()) {
          if (!rule_text.is_string()) return fail(field, "expected a list of strings");
          auto rule = core::parse_permission_rule(rule_text.as_string(), *verdict, std::string(file));
          if (!rule) return fail(field, rule.error().message());
          config.permission_rules.push_back(std::move(*rule));
        }
      }
    } else if (key == "shell") {
      if (!value.is_object()) return fail(key, "expected an object (timeoutMs, maxTimeoutMs, sandbox, network, ...)");
      for (const auto& [name, setting] : value.as_object()) {
        const std::string field = fmt::format("shell.{}", name);
        const auto string_list = [](const support::Json& list, std::vector<std::string>& out) -> bool {
          if (!list.is_array()) return false;
          for (const auto& item : list.as_array()) {
            if (!item.is_string()) return false;
            out.push_back(item.as_string());
          }
          return true;
        };
        if (name == "timeoutMs" || name == "maxTimeoutMs") {
          if (!setting.is_integer() || setting.as_int64() < 1000 || setting.as_int64() > 86'400'000) {
            return fail(field, "expected milliseconds from 1000 to 86400000");
          }
          (name == "timeoutMs" ? config.shell.timeout_ms : config.shell.max_timeout_ms) =
              static_cast<std::uint32_t>(setting.as_int64());
        } else if (name == "sandbox") {
          if (!setting.is_string() ||
              (setting.as_string() != "require" && setting.as_string() != "fallback" && setting.as_string() != "off")) {
            return fail(field, "expected \"require\" (the default), \"fallback\" or \"off\"");
          }
          config.shell.sandbox = setting.as_string();
        } else if (name == "network") {
          if (!setting.is_string() || (setting.as_string() != "allow" && setting.as_string() != "deny")) {
            return fail(field, "expected \"allow\" (the default) or \"deny\"");
          }
          config.shell.network = setting.as_string() == "allow";
        } else if (name == "envAllow") {
          if (!string_list(setting, config.shell.env_allow)) return fail(field, "expected a list of variable names");
        } else if (name == "writableDirs") {
          if (!string_list(setting, config.shell.writable_dirs))
            return fail(field, "expected a list of absolute directories");
        } else {
          return fail(field,
                      "unknown setting (known: timeoutMs, maxTimeoutMs, sandbox, network, envAllow, "
                      "writableDirs)");
        }
      }
    } else if (key == "budgets") {
      if (!value.is_object()) return fail(key, "expected an object (sessionUsd, turnUsd, turnOutputTokens)");
      const auto tighter = [](auto& slot, auto limit) { slot = slot ? std::min(*slot, limit) : limit; };
      for (const auto& [name, setting] : value.as_object()) {
        const std::string field = fmt::format("budgets.{}", name);
        if (name == "sessionUsd" || name == "turnUsd") {
          if (!setting.is_number() || !(setting.as_double() > 0) || setting.as_double() > 1e6) {
            return fail(field, "expected a number of dollars above 0 (at most 1000000)");
          }
          tighter(name == "sessionUsd" ? config.budgets.session_usd : config.budgets.turn_usd, setting.as_double());
        } else if (name == "turnOutputTokens") {
          if (!setting.is_integer() || setting.as_int64() < 1 || setting.as_int64() > 1'000'000'000) {
            return fail(field, "expected a whole number of tokens from 1 to 1000000000");
          }
          tighter(config.budgets.turn_output_tokens, static_cast<std::uint64_t>(setting.as_int64()));
        } else {
          return fail(field, "unknown budget (known: sessionUsd, turnUsd, turnOutputTokens)");
        }
      }
    } else if (key == "verify") {
      if (!value.is_object()) return fail(key, "expected an object (auto, rounds)");
      for (const auto& [name, setting] : value.as_object()) {
        const std::string field = fmt::format("verify.{}", name);
        if (name == "auto") {
          auto mode = setting.is_string() ? core::parse_auto_verify(setting.as_string()) : std::nullopt;
          if (!mode) return fail(field, "expected \"off\", \"suggest\" (the default) or \"run\"");
          config.verify.mode = *mode;
        } else if (name == "rounds") {
          if (!setting.is_integer() || setting.as_int64() < 0 || setting.as_int64() > 10) {
            return fail(field, "expected a whole number of fix rounds from 0 to 10");
          }
          config.verify.rounds = static_cast<std::uint32_t>(setting.as_int64());
        } else {
          return fail(field, "unknown setting (known: auto, rounds)");
        }
      }
    } else if (key == "mcpServers") {
      if (!value.is_object())
        return fail(key, "expected an object of servers: {\"name\": {\"command\": ..., \"args\": [...]}}");
      for (const auto& [name, server] : value.as_object()) {
        const std::string field = fmt::format("mcpServers.{}", name);
        if (name.empty() ||
            name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
                std::string::npos) {
          return fail(field, "a server name is letters, digits, _ and - (it becomes part of tool names)");
        }
        if (!server.is_object()) {
          return fail(field,
                      "expected an object: {\"command\", \"args\", \"env\", \"cwd\"} or {\"type\": \"http\", "
                      "\"url\", \"headers\"}");
        }
        tools::mcp::ServerConfig config_server;
        config_server.name = name;
        std::string type = "stdio";
        for (const auto& [setting, v] : server.as_object()) {
          const std::string sub = fmt::format("{}.{}", field, setting);
          if (setting == "command") {
            if (!v.is_string() || v.as_string().empty()) return fail(sub, "expected the program to run");
            config_server.command = v.as_string();
          } else if (setting == "args") {
            if (!v.is_array()) return fail(sub, "expected a list of strings");
            for (const auto& a : v.as_array()) {
              if (!a.is_string()) return fail(sub, "expected a list of strings");
              config_server.args.push_back(a.as_string());
            }
          } else if (setting == "env") {
            if (!v.is_object()) return fail(sub, "expected an object of variables: {\"NAME\": \"value\"}");
            for (const auto& [var, val] : v.as_object()) {
              if (!val.is_string()) return fail(fmt::format("{}.{}", sub, var), "expected a string");
              config_server.env.emplace_back(var, val.as_string());
            }
          } else if (setting == "cwd") {
            if (!v.is_string()) return fail(sub, "expected a directory");
            config_server.cwd = v.as_string();
          } else if (setting == "type") {
            if (!v.is_string() || (v.as_string() != "stdio" && v.as_string() != "http")) {
              return fail(
                  sub, "expected \"stdio\" or \"http\" (Streamable HTTP; the old \"sse\" transport is not supported)");
            }
            type = v.as_string();
          } else if (setting == "url") {
            if (!v.is_string() || !net::parse_url(v.as_string())) {
              return fail(sub, "expected the server's http(s) endpoint, such as \"https://mcp.example.com/mcp\"");
            }
            config_server.url = v.as_string();
          } else if (setting == "headers") {
            if (!v.is_object())
              return fail(sub, "expected an object of headers: {\"Authorization\": \"Bearer ${TOKEN}\"}");
            for (const auto& [header, val] : v.as_object()) {
              if (!val.is_string() || !core::telemetry::valid_header(header, val.as_string())) {
                return fail(fmt::format("{}.{}", sub, header), "expected a valid HTTP header value");
              }
              config_server.headers.emplace_back(header, val.as_string());
            }
          } else {
            return fail(sub, "unknown setting (known: command, args, env, cwd for stdio; type, url, headers for http)");
          }
        }
        if (type == "http" || !config_server.url.empty()) {
          if (config_server.url.empty()) return fail(field, "an http server needs a url");
          if (!config_server.command.empty() || !config_server.args.empty() || !config_server.env.empty()) {
            return fail(field, "an http server has a url and headers, not a command, args or env");
          }
        } else {
          if (config_server.command.empty())
            return fail(field, "a server needs a command (or \"type\": \"http\" and a url)");
          if (!config_server.headers.empty()) return fail(field, "headers are for http servers");
        }
        // A later file's server of the same name replaces the earlier one.
        std::erase_if(config.mcp_servers, [&config_server](const auto& s) { return s.name == config_server.name; });
        config.mcp_servers.push_back(std::move(config_server));
      }
    } else if (key == "hooks") {
      auto hooks = tools::parse_hooks(value, file, false, true);
      if (!hooks) {
        const std::string& message = hooks.error().message();
        const std::size_t colon = message.find(": ");
        return fail(message.substr(0, colon), message.substr(colon + 2));
      }
      config.hooks.insert(config.hooks.end(), hooks->begin(), hooks->end());
    } else if (key == "claudeSettings") {
      if (!value.is_bool()) return fail(key, "expected true (read hooks from .claude/settings.json files) or false");
      config.claude_settings = value.as_bool();
    } else if (key == "telemetry") {
      if (!value.is_object()) return fail(key, "expected an object (endpoint, headers, captureContent, serviceName)");
      for (const auto& [name, setting] : value.as_object()) {
        const std::string field = fmt::format("telemetry.{}", name);
        if (name == "endpoint") {
          if (!setting.is_string() || !net::parse_url(setting.as_string())) {
            return fail(field, "expected the collector's traces URL, such as \"http://localhost:4318/v1/traces\"");
          }
          config.telemetry.endpoint = setting.as_string();
        } else if (name == "headers") {
          if (!setting.is_object()) return fail(field, "expected an object of headers: {\"name\": \"value\"}");
          config.telemetry.headers.clear();
          for (const auto& [header, v] : setting.as_object()) {
            if (!v.is_string() || !core::telemetry::valid_header(header, v.as_string())) {
              return fail(fmt::format("{}.{}", field, header), "expected a valid HTTP header value");
            }
            config.telemetry.headers.push_back(net::HttpHeader{header, v.as_string()});
          }
        } else if (name == "captureContent") {
          if (!setting.is_bool()) return fail(field, "expected true or false");
          config.telemetry.capture_content = setting.as_bool();
        } else if (name == "serviceName") {
          if (!setting.is_string() || setting.as_string().empty()) return fail(field, "expected a name");
          config.telemetry.service_name = setting.as_string();
        } else {
          return fail(field, "unknown setting (known: endpoint, headers, captureContent, serviceName)");
        }
      }
    } else if (key == "$schema" || key.starts_with("_")) {
      // comments and editor hints
    } else {
      return fail(key,
                  "unknown setting (known: model, models, mode, maxTurnRequests, budgets, permissions, shell, verify, "
                  "mcpServers, hooks, claudeSettings, telemetry)");
    }
  }
  config.sources.emplace_back(file);
  return {};
}

namespace {

Result<bool> apply_file(Config& config, const std::string& path, bool must_exist) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!must_exist) return false;
    return Error(Errc::invalid_argument, fmt::format("{}: cannot open the config file", path));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto r = apply_config_text(config, buffer.str(), path);
  if (!r) return std::move(r).error();
  return true;
}

}  // namespace

namespace {

// The user's file (inputs.user_file, or the XDG / HOME default) into `user`; returns its path ("" when
// there is no config directory).
Result<std::string> read_user_file(const ConfigInputs& inputs, Config& user) {
  std::string user_file;
  if (inputs.user_file) {
    user_file = *inputs.user_file;
  } else if (const char* xdg = lookup(inputs.env, "XDG_CONFIG_HOME"); xdg != nullptr && *xdg == '/') {
    user_file = fmt::format("{}/agentd/config.json", xdg);
  } else if (const char* home = lookup(inputs.env, "HOME"); home != nullptr && *home != '\0') {
    user_file = fmt::format("{}/.config/agentd/config.json", home);
  }
  if (!user_file.empty()) {
    if (auto r = apply_file(user, user_file, false); !r) return std::move(r).error();
  }
  return user_file;
}

}  // namespace

namespace {

// The `hooks` of a Claude Code settings file, added to `config`; whether it had any. The file is
// another program's: its other settings are not agentd's business, and hooks agentd cannot run (a type
// it does not know) leave that file's hooks out, with a warning, rather than failing the session.
bool read_claude_hooks(Config& config, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto parsed = support::parse_json(buffer.str());
  if (!parsed || !parsed->is_object()) {
    support::log::warn("{}: not a JSON object; its hooks are not used", path);
    return false;
  }
  const Json* hooks = parsed->find("hooks");
  if (hooks == nullptr) return false;
  auto read = tools::parse_hooks(*hooks, path, true, false);
  if (!read) {
    support::log::warn("{}: its hooks are not used: {}", path, read.error().message());
    return false;
  }
  if (read->empty()) return false;
  config.hooks.insert(config.hooks.end(), read->begin(), read->end());
  return true;
}

// ~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json as Claude Code has it.
std::string claude_user_settings(const ConfigInputs& inputs) {
  if (const char* dir = lookup(inputs.env, "CLAUDE_CONFIG_DIR"); dir != nullptr && *dir == '/') {
    return fmt::format("{}/settings.json", dir);
  }
  if (const char* home = lookup(inputs.env, "HOME"); home != nullptr && *home != '\0') {
    return fmt::format("{}/.claude/settings.json", home);
  }
  return {};
}

}  // namespace

Result<ProjectLayers> read_project_layers(const ConfigInputs& inputs) {
  ProjectLayers layers;
  auto user_file = read_user_file(inputs, layers.user);
  if (!user_file) return std::move(user_file).error();
  const bool claude = layers.user.claude_settings;
  if (const std::string file = claude ? claude_user_settings(inputs) : std::string(); !file.empty()) {
    read_claude_hooks(layers.user, file);
  }
  if (!user_file->empty()) layers.trust_file = trust_file_beside(*user_file);
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::canonical(inputs.project_dir.value_or("."), ec);
  layers.project_dir = ec ? inputs.project_dir.value_or(".") : dir.string();
  layers.project_file = layers.project_dir + "/.agentd/config.json";
  layers.with_project = layers.user;
  auto read = apply_file(layers.with_project, layers.project_file, false);
  if (!read) return std::move(read).error();
  layers.project_file_read = *read;
  for (const auto& hook : layers.with_project.hooks) {
    if (hook.source == layers.project_file && !hook.sandbox) {
      return support::make_error(Errc::invalid_argument,
                                 "{}: hooks: only your own config (not a project's) can run a hook outside the sandbox",
                                 layers.project_file);
    }
  }
  layers.with_project.claude_settings = claude;  // the user's word, whatever the project says
  if (claude) {
    for (const char* name : {"/.claude/settings.json", "/.claude/settings.local.json"}) {
      std::string file = layers.project_dir + name;
      if (read_claude_hooks(layers.with_project, file)) layers.claude_files_read.push_back(std::move(file));
    }
  }
  return layers;
}

Result<Config> load_user_config(const ConfigInputs& inputs) {
  Config config;
  if (auto read = read_user_file(inputs, config); !read) return std::move(read).error();
  if (inputs.extra_file) {
    if (auto r = apply_file(config, *inputs.extra_file, true); !r) return std::move(r).error();
  }
  return config;
}

Result<Config> load_config(const ConfigInputs& inputs) {
  auto layers = read_project_layers(inputs);
  if (!layers) return std::move(layers).error();
  ProjectTrustState state = vet_project(*layers);
  Config config = std::move(layers->with_project);
  if (!state.loosenings.empty()) {
    if (!state.trust_file.empty()) {
      auto trusted = TrustStore(state.trust_file).digest_for(state.project);
      if (!trusted) return std::move(trusted).error();
      state.trusted = *trusted == state.digest;
    }
    if (!state.trusted) revert_loosenings(layers->user, config, layers->project_file);
    config.project_trust = std::move(state);
  }
  // --config is the user's own choice, as trusted as their config file; it comes after the project's.
  if (inputs.extra_file) {
    if (auto r = apply_file(config, *inputs.extra_file, true); !r) return std::move(r).error();
  }
  if (const char* env_model = lookup(inputs.env, "AGENTD_MODEL"); env_model != nullptr && *env_model != '\0') {
    config.model = env_model;
  }
  if (inputs.model_flag) config.model = *inputs.model_flag;
  if (config.model.empty()) config.model = default_model_spec(inputs.env);
  // Fail now, not at the first prompt.
  if (auto m = resolve_model(config, config.model, inputs.env); !m) {
    return std::move(m).error().context(fmt::format("the model \"{}\"", config.model));
  }
  return config;
}

Result<model::ModelConfig> resolve_model(const Config& config, std::string_view spec, const model::EnvLookup& env) {
  model::ModelConfig resolved;
  if (auto it = config.models.find(std::string(spec)); it != config.models.end()) {
    resolved = it->second;
  } else {
    auto parsed = model::parse_model_spec(spec);
    if (!parsed) return std::move(parsed).error();
    resolved = std::move(*parsed);
  }
  model::apply_defaults(resolved);
  model::apply_env_overrides(resolved, env ? env : model::process_env());
  return resolved;
}

std::string default_model_spec(const model::EnvLookup& env) {
  if (const char* k = lookup(env, "ANTHROPIC_API_KEY"); k != nullptr && *k != '\0') {
    return "anthropic:claude-sonnet-4-5";
  }
  if (const char* k = lookup(env, "OPENAI_API_KEY"); k != nullptr && *k != '\0') return "openai:gpt-4.1";
  return "anthropic:claude-sonnet-4-5";
}

namespace {

// The agentd binary, for `agentd sandbox-exec` in the client's terminal: $AGENTD_SANDBOX_EXEC (tests
// that run the engine inside another program), else this executable when it is agentd.
std::string agentd_program() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read before threads start
  if (const char* set = std::getenv("AGENTD_SANDBOX_EXEC"); set != nullptr && *set == '/') return set;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || !self.filename().string().starts_with("agentd")) return {};
  return self.string();
}

}  // namespace

tools::ShellConfig shell_config(const ShellSettings& settings) {
  tools::ShellConfig shell;
  shell.sandbox_exec = agentd_program();
  if (settings.timeout_ms) shell.default_timeout = std::chrono::milliseconds(*settings.timeout_ms);
  if (settings.max_timeout_ms) shell.max_timeout = std::chrono::milliseconds(*settings.max_timeout_ms);
  // A default above the ceiling would make every call without a timeout fail; the ceiling gives way.
  shell.max_timeout = std::max(shell.max_timeout, shell.default_timeout);
  shell.sandbox.require = settings.sandbox != "off";
  shell.sandbox.allow_unsandboxed = settings.sandbox == "fallback";
  shell.sandbox.deny_network = !settings.network;
  shell.sandbox.writable_dirs = settings.writable_dirs;
  shell.env_allow = settings.env_allow;
  return shell;
}

core::ProjectSettings project_settings(Config config, std::optional<model::ModelConfig> override_model) {
  core::ProjectSettings settings;
  settings.model_spec = config.model;
  settings.model_choices.push_back(config.model);
  for (const auto& [name, model] : config.models) {
    (void)model;
    if (name != config.model) settings.model_choices.push_back(name);
  }
  settings.limits.max_turn_requests = config.max_turn_requests;
  settings.limits.budgets = config.budgets;
  settings.default_mode = config.mode;
  settings.permission_rules = config.permission_rules;
  settings.headless = config.headless;
  settings.denied_paths = config.deny_paths;
  settings.shell = shell_config(config.shell);
  // A model's key may live in a variable of any name ("api_key_env": "MY_LLM_KEY"): commands never see it.
  for (const auto& [name, model] : config.models) {
    (void)name;
    if (!model.api_key_env.empty()) settings.shell.secret_env_names.push_back(model.api_key_env);
  }
  if (auto chosen = resolve_model(config, config.model, {}); chosen && !chosen->api_key_env.empty()) {
    settings.shell.secret_env_names.push_back(chosen->api_key_env);
  }
  settings.verify = config.verify;
  settings.mcp_servers = config.mcp_servers;
  settings.hooks = config.hooks;
  settings.sources = config.sources;
  if (config.project_trust && !config.project_trust->trusted) {
    const ProjectTrustState& trust = *config.project_trust;
    core::UntrustedProject untrusted{trust.project, trust.file, trust.digest, {}, untrusted_message(trust)};
    for (const auto& l : trust.loosenings) untrusted.ignored.push_back(l.text());
    settings.untrusted = std::move(untrusted);
  }
  auto shared = std::make_shared<const Config>(std::move(config));
  settings.resolve_model =
      [shared, override_model = std::move(override_model)](std::string_view spec) -> Result<model::ModelConfig> {
    if (override_model) return *override_model;
    return resolve_model(*shared, spec, {});
  };
  return settings;
}

}  // namespace agentd::daemon
