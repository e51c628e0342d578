// Where a tool may touch the disk. Every path the model gives is resolved against the session's cwd,
// symlinks are followed the way the kernel would follow them, and the result must stay under the cwd or
// one of the additional directories; deny-listed paths (secrets, git internals) are refused for every tool.
#pragma once

#include <array>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/result.h"

namespace agentd::tools {

struct ToolContext;

enum class PathAccess { read, write };

// Paths no tool may touch, whatever the permission mode: a model that reads a key or a .env file has
// leaked it into a transcript and a provider's logs, and no approval prompt undoes that. Patterns are
// matched against the path's components below the root it lives in (so a workspace that itself sits in
// a folder called `.ssh` still works): a pattern of n components matches any n consecutive components,
// `*` matches any run of characters inside one component, and a trailing `/` only says "a directory,
// and everything under it". Both the path as given and the path after symlinks are checked, so a link
// cannot launder a secret's name.
struct DeniedPath {
  std::string_view pattern;
  bool writes_only;         // reads are fine (the model may look at .git/HEAD), writes are not
  std::string_view reason;  // finishes "... is refused: <reason>"
};
inline constexpr std::array<DeniedPath, 10> kDeniedPaths = {{
    {".env", false, "environment files hold secrets"},
    {".env.*", false, "environment files hold secrets"},
    {"*.pem", false, "key and certificate files hold secrets"},
    {"*.key", false, "key files hold secrets"},
    {"id_rsa*", false, "SSH keys are secrets"},
    {"id_ed25519*", false, "SSH keys are secrets"},
    {".ssh/", false, "SSH keys and configuration are secrets"},
    {".aws/credentials", false, "cloud credentials are secrets"},
    {".netrc", false, "login credentials are secrets"},
    {".git/", true, "git's internals are changed with git commands (shell), never edited directly"},
}};

// A path the guard let through.
struct ResolvedPath {
  std::filesystem::path absolute;  // symlinks resolved where the path exists; no `.`, `..` or trailing `/`
  std::string display;             // relative to the cwd when under it ("src/main.cpp", "."), else absolute
  bool trailing_slash = false;     // the model wrote "dir/": it meant a directory
};

class PathGuard {
 public:
  // `cwd` first, then the additional directories; each is canonicalized here (a root that is itself
  // reached through a symlink is allowed, and compared in its resolved form).
  PathGuard(std::string_view cwd, const std::vector<std::string>& additional_dirs,
            std::vector<std::string> denied = {});
  // The context's cwd, additional directories and configured deny-paths.
  explicit PathGuard(const ToolContext& context);

  // Resolves `path` (relative to the cwd, or absolute): lexical normalization, then symlinks followed
  // component by component, including a dangling one at the end (std::filesystem::weakly_canonical
  // stops at a dangling link and would let `link -> /elsewhere/new` through), the missing rest appended
  // lexically. Errc::invalid_argument, with a message that names the root escaped and what is allowed,
  // when the result is outside every root or deny-listed; Errc::io when a component cannot be inspected.
  //
  // The check and the later open() are separate system calls, so a process racing to swap in a symlink
  // could win; the shell tool's Landlock sandbox is the boundary against that, this guard keeps an
  // honest model inside its workspace.
  support::Result<ResolvedPath> resolve(std::string_view path, PathAccess access) const;

  // Relative to the cwd when under it, else absolute. Expects a resolved path.
  std::string display(const std::filesystem::path& absolute) const;

  const std::vector<std::filesystem::path>& roots() const noexcept { return roots_; }
  // The configured deny patterns this guard applies beyond the built-in list.
  const std::vector<std::string>& denied() const noexcept { return denied_; }
  // `absolute` (resolved) relative to the root it lives in, '/'-separated ("" for a root itself), for
  // matching deny patterns below a directory being walked.
  std::string relative_to_root(const std::filesystem::path& absolute) const;

 private:
  std::string describe_roots() const;

  std::vector<std::filesystem::path> roots_;  // [0] is the cwd
  std::vector<std::string> denied_;           // configured deny patterns
};

// Follows symlinks in an absolute path the way path resolution in the kernel does, for as long as the
// components exist; the first missing component and everything after it are appended lexically.
support::Result<std::filesystem::path> resolve_symlinks(const std::filesystem::path& absolute);

// For titles, which must not touch the disk: the path as the model gave it, normalized, and relative to
// `cwd` when it is an absolute path under it.
std::string lexical_display(std::string_view path, const std::filesystem::path& cwd);

// True when `path` is `root` or below it, component-wise (`/ab` is not under `/a`).
bool is_under(const std::filesystem::path& path, const std::filesystem::path& root);

// The deny-list entry `relative` (a path below its root) matches for `access`, if any: the built-in
// kDeniedPaths, then `configured` (the configuration's `permissions.denyPaths`, same syntax, for reads and
// writes). A configured match points into `configured`, which must outlive the result.
std::optional<DeniedPath> denied_path(const std::filesystem::path& relative, PathAccess access,
                                      std::span<const std::string> configured = {});
// Paths whose change could loosen agentd's rules or make git run code, wherever they are: a `.agentd`
// directory (a project's agentd settings), agentd's own configuration and data directories (the user's
// config, trusted projects, the database with persisted approvals), git's executable configuration
// (`.git/config`, `.git/hooks/`, `.git/info/`, and the user's ~/.gitconfig and ~/.config/git/). A tool
// may write them only after a person said yes, in every mode (DESIGN.md section 5). `absolute` is a
// resolved path; `env` looks up HOME, XDG_CONFIG_HOME and XDG_DATA_HOME (null: the process environment).
// Returns why the path is protected, or nullopt.
std::optional<std::string> protected_path(const std::filesystem::path& absolute,
                                          const std::function<const char*(const char*)>& env = nullptr);

inline constexpr std::string_view kConfiguredDenyReason = "the configuration denies it (permissions.denyPaths)";

}  // namespace agentd::tools
