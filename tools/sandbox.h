// The Linux sandbox for commands the shell tool runs: Landlock lets them read everywhere but write only
// inside the workspace roots, a private temp dir and a few /dev files; network can be cut off with a new
// network namespace (through an unprivileged user namespace) or, failing that, Landlock TCP rules. A
// private mount namespace makes agentd's and git's control files read-only (.agentd/, .git/config,
// hooks, info) and hides the user's secrets and the workspace's deny-listed files.
// Everything is prepared in the parent; the forked child only applies it (async-signal-safe).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/support/result.h"

namespace agentd::tools {

// What this kernel offers, probed once (the first call blocks for a fork and a wait; later calls are
// free). For startup logging and for the tool result when a command runs without a sandbox.
struct SandboxStatus {
  int landlock_abi = 0;        // 0: no Landlock
  std::string landlock_error;  // why not, when landlock_abi is 0
  // unshare(CLONE_NEWUSER | CLONE_NEWNET) works for this user: network can be cut off completely.
  bool network_namespaces = false;
  std::string network_namespaces_error;
  // A private mount namespace with read-only binds and tmpfs masks works for this user: unshare(CLONE_NEWNS),
  // inside a new user namespace unless agentd runs as root.
  bool mount_namespaces = false;
  std::string mount_namespaces_error;

  bool landlock() const noexcept { return landlock_abi > 0; }
  // Landlock ABI 4 (Linux 6.7) adds TCP bind/connect rules.
  bool landlock_tcp() const noexcept { return landlock_abi >= 4; }
  // One line: "Landlock ABI 7; network isolation: network namespace; file protection: mount namespace".
  std::string summary() const;
};
const SandboxStatus& sandbox_status();

// What the configuration says about sandboxing (the lead wires it from the config file).
struct SandboxPolicy {
  // Sandbox every command. False: the user turned the sandbox off; results say so.
  bool require = true;
  // When `require` and the kernel lacks what the policy needs: run unsandboxed, with a note in the
  // result (the user consented in the config), instead of refusing.
  bool allow_unsandboxed = false;
  bool deny_network = false;
  // Writable beyond the workspace roots and the private temp dir (a build cache, say).
  std::vector<std::string> writable_dirs;
};

// What one command may touch.
struct SandboxRequest {
  std::vector<std::filesystem::path> writable;  // existing directories: workspace roots, temp dir, extras
  bool deny_network = false;

  // The mount namespace, asked for by the tools that run the model's commands (shell, verify), not by
  // agentd's own git. Asked for when `protected_roots` is not empty or `hide_user_secrets` is set.
  //
  // Workspace roots whose control files become read-only (.agentd/, .git/config, .git/hooks/,
  // .git/info/, the same in .git/modules/* and in nested repositories) and whose files matching the
  // deny-paths (kDeniedPaths for reads, plus `denied_paths`) are hidden.
  std::vector<std::filesystem::path> protected_roots;
  std::vector<std::string> denied_paths;  // the configuration's permissions.denyPaths
  // Hide ~/.ssh, ~/.gnupg, cloud credentials, agentd's own config and data, $XDG_RUNTIME_DIR; make
  // ~/.gitconfig and the shell's startup files read-only when a writable root holds them.
  bool hide_user_secrets = false;
  // HOME, XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_RUNTIME_DIR, SSH_AUTH_SOCK; null: agentd's environment.
  std::function<const char*(const char*)> env;
  // When the kernel gives no mount namespace: false, Errc::unsupported; true, a plan with Landlock
  // alone whose mount_namespace_error() says what is missing (the caller tells the user).
  bool mounts_optional = false;
};

// A prepared sandbox: a Landlock ruleset fd and the user-namespace maps, ready for a forked child.
class SandboxPlan {
 public:
  // Errc::unsupported when the kernel lacks Landlock, or network isolation or the mount namespace when
  // they are asked for; Errc::io when a writable directory cannot be opened. Blocking: it scans the
  // protected roots, so run it off the event loop.
  static support::Result<SandboxPlan> prepare(const SandboxRequest& request);
  // The same against a given kernel status (tests simulate a kernel without user namespaces).
  static support::Result<SandboxPlan> prepare(const SandboxRequest& request, const SandboxStatus& status);

  SandboxPlan(SandboxPlan&& other) noexcept;
  SandboxPlan& operator=(SandboxPlan&& other) noexcept;
  SandboxPlan(const SandboxPlan&) = delete;
  SandboxPlan& operator=(const SandboxPlan&) = delete;
  ~SandboxPlan();

  // In the child between fork and exec, so only async-signal-safe calls: enters the namespaces asked
  // for and mounts the binds and masks, sets no_new_privs and restricts itself with the ruleset. 0 on
  // success, else an errno with `*step` naming the call that failed.
  int apply_in_child(const char** step) const noexcept;

  // "Landlock ABI 7, writes only in 2 directories and /dev; network allowed; mount namespace: 3 paths
  // read-only, 9 hidden"
  std::string describe() const;
  int landlock_abi() const noexcept { return abi_; }
  bool denies_network() const noexcept { return network_namespace_ || tcp_rule_; }
  // The process runner keeps it open in the child until apply_in_child().
  int ruleset_fd() const noexcept { return ruleset_fd_; }

  // Whether the command gets the mount namespace; when it was asked for but the kernel cannot give it
  // (SandboxRequest::mounts_optional), why not.
  bool mount_namespace() const noexcept { return mount_namespace_; }
  const std::string& mount_namespace_error() const noexcept { return mount_namespace_error_; }

  // A mount needs an existing mount point, so a protected path that did not exist when the plan was
  // made (.agentd/ in most projects, ~/.config/agentd/ when the workspace is $HOME) cannot be covered;
  // the command could create it. Call this after the command ended (its whole tree is dead then): it
  // removes every such path that exists now (or the link the command put in its way) and returns what
  // it removed. None of it existed before the command, so this only undoes what the command did.
  std::vector<std::filesystem::path> remove_created_protected_paths() const;

  // One bind or mask the child makes, in order.
  struct Mount {
    // pin: a directory bound onto itself, still writable, so that it cannot be renamed away from the
    // protected path inside it; read_only: a protected path; hide_*: an empty tmpfs, /dev/null.
    enum class Kind { pin, read_only, hide_dir, hide_file };
    Kind kind = Kind::read_only;
    std::string target;  // absolute, symlinks resolved
  };
  const std::vector<Mount>& mounts() const noexcept { return mounts_; }

  // A protected path that did not exist when the plan was made, and the topmost of its components that
  // did not exist either (the path itself, or a parent the command would have to make first).
  struct AbsentPath {
    std::filesystem::path path;
    std::filesystem::path first_missing;
  };

 private:
  SandboxPlan() = default;

  int ruleset_fd_ = -1;
  int abi_ = 0;
  std::size_t writable_count_ = 0;
  bool network_namespace_ = false;
  bool tcp_rule_ = false;
  bool mount_namespace_ = false;
  bool user_namespace_ = false;  // around the mount namespace: agentd is not root
  std::string mount_namespace_error_;
  std::vector<Mount> mounts_;
  std::vector<AbsentPath> absent_protected_;
  bool scan_truncated_ = false;
  std::size_t not_hidden_ = 0;  // deny-listed files past the mount limit
  // "<id> <id> 1\n" for uid_map and gid_map, formatted before the fork.
  char uid_map_[32] = {};
  char gid_map_[32] = {};
};

// A directory of its own under the system temp dir for one command (its TMPDIR, writable in the
// sandbox), removed with its contents when this goes.
class PrivateTempDir {
 public:
  static support::Result<PrivateTempDir> create();
  PrivateTempDir(PrivateTempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  PrivateTempDir& operator=(PrivateTempDir&&) = delete;
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  ~PrivateTempDir();

  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  explicit PrivateTempDir(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace agentd::tools
