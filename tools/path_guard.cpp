#include "tools/path_guard.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <sys/stat.h>

#include "tools/tool.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Error;

// Linux's own limit (MAXSYMLINKS); beyond it the kernel answers ELOOP too.
constexpr int kMaxSymlinks = 40;

// Pushes the components of `path` onto `pending`, which is consumed from the back.
void push_components(std::vector<std::string>& pending, const fs::path& path) {
  std::vector<std::string> parts;
  for (const auto& part : path.relative_path()) parts.push_back(part.string());
  pending.insert(pending.end(), std::make_move_iterator(parts.rbegin()), std::make_move_iterator(parts.rend()));
}

support::Result<std::string> read_link(const fs::path& link) {
  std::string target(256, '\0');
  for (;;) {
    const ssize_t n = ::readlink(link.c_str(), target.data(), target.size());
    if (n < 0) {
      const int err = errno;
      return Error(Errc::io, fmt::format("cannot read symlink {}: {}", link.string(), std::strerror(err)), err);
    }
    if (static_cast<std::size_t>(n) < target.size()) {
      target.resize(static_cast<std::size_t>(n));
      return target;
    }
    target.resize(target.size() * 2);  // possibly truncated: try again with more room
  }
}

// `*` matches any run of characters (possibly empty) within one component; everything else literally.
bool glob_matches(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::vector<std::string_view> split_pattern(std::string_view pattern) {
  std::vector<std::string_view> parts;
  while (!pattern.empty()) {
    const std::size_t slash = pattern.find('/');
    parts.push_back(pattern.substr(0, slash));
    if (slash == std::string_view::npos) break;
    pattern.remove_prefix(slash + 1);
  }
  return parts;
}

const fs::path* root_containing(const std::vector<fs::path>& roots, const fs::path& path) {
  const auto it = std::find_if(roots.begin(), roots.end(), [&](const fs::path& root) { return is_under(path, root); });
  return it == roots.end() ? nullptr : &*it;
}

Error refused(std::string_view given, const DeniedPath& rule) {
  return support::make_error(Errc::invalid_argument, "path \"{}\" is refused: {} (deny-listed pattern \"{}\")", given,
                             rule.reason, rule.pattern);
}

}  // namespace

support::Result<fs::path> resolve_symlinks(const fs::path& absolute) {
  std::vector<std::string> pending;
  push_components(pending, absolute);
  fs::path result = "/";
  int links = 0;
  bool missing = false;
  while (!pending.empty()) {
    const std::string part = std::move(pending.back());
    pending.pop_back();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      result = result.parent_path();  // the parent of "/" is "/"
      continue;
    }
    fs::path next = result / part;
    if (missing) {
      result = std::move(next);
      continue;
    }
    struct stat st {};
    if (::lstat(next.c_str(), &st) != 0) {
      const int err = errno;
      if (err != ENOENT && err != ENOTDIR) {
        return Error(Errc::io, fmt::format("cannot inspect {}: {}", next.string(), std::strerror(err)), err);
      }
      missing = true;  // the rest does not exist (yet): nothing more to follow
      result = std::move(next);
      continue;
    }
    if (!S_ISLNK(st.st_mode)) {
      result = std::move(next);
      continue;
    }
    if (++links > kMaxSymlinks) {
      return Error(Errc::io, fmt::format("too many levels of symbolic links at {}", next.string()), ELOOP);
    }
    auto target = read_link(next);
    if (!target) return std::move(target).error();
    const fs::path target_path(*target);
    if (target_path.is_absolute()) result = "/";  // a relative target resolves from the link's directory
    push_components(pending, target_path);
  }
  return result;
}

bool is_under(const fs::path& path, const fs::path& root) {
  auto root_end = root.end();
  // "/a/" iterates as "/", "a", "": the empty last element is not a component.
  if (root_end != root.begin() && std::prev(root_end)->empty()) --root_end;
  const auto [root_it, path_it] = std::mismatch(root.begin(), root_end, path.begin(), path.end());
  return root_it == root_end;
}

std::optional<DeniedPath> denied_path(const fs::path& relative, PathAccess access,
                                      std::span<const std::string> configured) {
  std::vector<std::string> components;
  for (const auto& part : relative) {
    std::string s = part.string();
    if (!s.empty() && s != "." && s != "/") components.push_back(std::move(s));
  }
  const auto matches = [&](std::string_view pattern) {
    if (pattern.ends_with('/')) pattern.remove_suffix(1);
    const auto parts = split_pattern(pattern);
    if (parts.empty() || parts.size() > components.size()) return false;
    for (std::size_t start = 0; start + parts.size() <= components.size(); ++start) {
      bool all = true;
      for (std::size_t i = 0; i < parts.size() && all; ++i) all = glob_matches(parts[i], components[start + i]);
      if (all) return true;
    }
    return false;
  };
  for (const DeniedPath& rule : kDeniedPaths) {
    if (rule.writes_only && access != PathAccess::write) continue;
    if (matches(rule.pattern)) return rule;
  }
  for (const std::string& pattern : configured) {
    if (matches(pattern)) return DeniedPath{pattern, false, kConfiguredDenyReason};
  }
  return std::nullopt;
}

PathGuard::PathGuard(std::string_view cwd, const std::vector<std::string>& additional_dirs,
                     std::vector<std::string> denied)
    : denied_(std::move(denied)) {
  auto canonical_root = [](std::string_view dir) {
    const fs::path lexical = fs::path(dir).lexically_normal();
    auto resolved = resolve_symlinks(lexical);
    // An unreadable root stays lexical: it can only make the guard stricter, never looser.
    return resolved ? std::move(resolved).value() : lexical;
  };
  roots_.push_back(canonical_root(cwd));
  for (const auto& dir : additional_dirs) roots_.push_back(canonical_root(dir));
}

PathGuard::PathGuard(const ToolContext& context)
    : PathGuard(context.cwd, context.additional_dirs,
                context.denied_paths != nullptr ? *context.denied_paths : std::vector<std::string>{}) {}

std::string PathGuard::relative_to_root(const fs::path& absolute) const {
  const fs::path* root = root_containing(roots_, absolute);
  if (root == nullptr) return {};
  const fs::path relative = absolute.lexically_relative(*root);
  return relative == "." ? std::string() : relative.generic_string();
}

std::string PathGuard::describe_roots() const {
  std::string out = fmt::format("{} (the working directory)", roots_[0].string());
  for (std::size_t i = 1; i < roots_.size(); ++i)
    out += fmt::format(", {} (an additional directory)", roots_[i].string());
  return out;
}

support::Result<ResolvedPath> PathGuard::resolve(std::string_view given, PathAccess access) const {
  if (given.empty()) {
    return support::make_error(Errc::invalid_argument,
                               "path is empty: give a path relative to the working directory {}, or an absolute path",
                               roots_[0].string());
  }
  if (given.find('\0') != std::string_view::npos) {
    return Error(Errc::invalid_argument, "path contains a NUL byte; no file can have that name");
  }
  const fs::path input(given);
  const fs::path lexical = (input.is_absolute() ? input : roots_[0] / input).lexically_normal();

  // The path as given may already name a secret, even when a symlink makes it point somewhere harmless.
  const fs::path* lexical_root = root_containing(roots_, lexical);
  if (lexical_root != nullptr) {
    if (auto rule = denied_path(lexical.lexically_relative(*lexical_root), access, denied_)) {
      return refused(given, *rule);
    }
  }

  auto resolved = resolve_symlinks(lexical);
  if (!resolved) return std::move(resolved).error().context(fmt::format("resolving path \"{}\"", given));
  fs::path absolute = std::move(resolved).value();

  const fs::path* root = root_containing(roots_, absolute);
  if (root == nullptr) {
    if (lexical_root != nullptr) {
      return support::make_error(Errc::invalid_argument,
                                 "path \"{}\" leads outside {} through a symlink: it resolves to {}. Allowed: paths "
                                 "under {}",
                                 given, lexical_root->string(), absolute.string(), describe_roots());
    }
    return support::make_error(Errc::invalid_argument,
                               "path \"{}\" is outside the workspace: it resolves to {}. Allowed: paths under {}",
                               given, absolute.string(), describe_roots());
  }
  if (auto rule = denied_path(absolute.lexically_relative(*root), access, denied_)) return refused(given, *rule);

  ResolvedPath out;
  out.display = display(absolute);
  out.absolute = std::move(absolute);
  out.trailing_slash = given.ends_with('/');
  return out;
}

std::string PathGuard::display(const fs::path& absolute) const {
  if (!is_under(absolute, roots_[0])) return absolute.string();
  const fs::path relative = absolute.lexically_relative(roots_[0]);
  return relative.empty() ? "." : relative.string();
}

std::string lexical_display(std::string_view given, const fs::path& cwd) {
  const fs::path normal = fs::path(given).lexically_normal();
  if (!normal.is_absolute() || !is_under(normal, cwd)) return normal.string();
  const fs::path relative = normal.lexically_relative(cwd);
  return relative.empty() ? "." : relative.string();
}

std::optional<std::string> protected_path(const fs::path& absolute,
                                          const std::function<const char*(const char*)>& env) {
  const auto lookup = [&](const char* name) -> std::string {
    const char* value = env ? env(name) : std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use
    return value != nullptr && *value == '/' ? std::string(value) : std::string();
  };
  // Inside a repository or project, wherever it sits.
  bool in_git = false;
  for (const auto& part : absolute) {
    const std::string name = part.string();
    if (name == ".agentd") return std::string("it holds agentd's settings for the project (.agentd/)");
    if (name == ".claude") return std::string("it holds Claude Code's settings, whose hooks agentd runs (.claude/)");
    if (in_git && (name == "config" || name == "config.worktree" || name == "hooks" || name == "info")) {
      return std::string("it is git's configuration, hooks or info, which make git run commands");
    }
    // .git/config, .git/modules/x/config, .git/worktrees/x/config.worktree
    if (name == ".git") in_git = true;
  }
  // The user's own files, found through the environment.
  const std::string home = lookup("HOME");
  std::vector<std::pair<fs::path, std::string_view>> dirs;
  const std::string config_home = lookup("XDG_CONFIG_HOME");
  const std::string data_home = lookup("XDG_DATA_HOME");
  constexpr std::string_view kAgentd =
      "it is agentd's own configuration or data (settings, trusted projects, approvals)";
  constexpr std::string_view kGit = "it is the user's git configuration, which makes git run commands";
  if (!config_home.empty()) {
    dirs.emplace_back(fs::path(config_home) / "agentd", kAgentd);
    dirs.emplace_back(fs::path(config_home) / "git", kGit);
  }
  if (!data_home.empty()) dirs.emplace_back(fs::path(data_home) / "agentd", kAgentd);
  if (!home.empty()) {
    dirs.emplace_back(fs::path(home) / ".config" / "agentd", kAgentd);
    dirs.emplace_back(fs::path(home) / ".local" / "share" / "agentd", kAgentd);
    dirs.emplace_back(fs::path(home) / ".config" / "git", kGit);
    dirs.emplace_back(fs::path(home) / ".gitconfig", kGit);
    dirs.emplace_back(fs::path(home) / ".claude", "it holds Claude Code's settings, whose hooks agentd runs");
  }
  for (const auto& [dir, why] : dirs) {
    if (is_under(absolute, dir.lexically_normal())) return std::string(why);
  }
  return std::nullopt;
}

}  // namespace agentd::tools
