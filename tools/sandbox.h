// The Linux sandbox for commands the shell tool runs: Landlock lets them read everywhere but write only
// inside the workspace roots, a private temp dir and a few /dev files; network can be cut off with a new
// network namespace (through an unprivileged user namespace) or, failing that, Landlock TCP rules.
// Everything is prepared in the parent; the forked child only applies it (async-signal-safe).
#pragma once

#include <filesystem>
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

  bool landlock() const noexcept { return landlock_abi > 0; }
  // Landlock ABI 4 (Linux 6.7) adds TCP bind/connect rules.
  bool landlock_tcp() const noexcept { return landlock_abi >= 4; }
  // One line: "Landlock ABI 7; network isolation: network namespace".
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
};

// A prepared sandbox: a Landlock ruleset fd and the user-namespace maps, ready for a forked child.
class SandboxPlan {
 public:
  // Errc::unsupported when the kernel lacks Landlock, or network isolation when it is asked for;
  // Errc::io when a writable directory cannot be opened.
  static support::Result<SandboxPlan> prepare(const SandboxRequest& request);

  SandboxPlan(SandboxPlan&& other) noexcept;
  SandboxPlan& operator=(SandboxPlan&& other) noexcept;
  SandboxPlan(const SandboxPlan&) = delete;
  SandboxPlan& operator=(const SandboxPlan&) = delete;
  ~SandboxPlan();

  // In the child between fork and exec, so only async-signal-safe calls: enters the network namespace
  // when asked, sets no_new_privs and restricts itself with the ruleset. 0 on success, else an errno
  // with `*step` naming the call that failed.
  int apply_in_child(const char** step) const noexcept;

  // "Landlock ABI 7, writes only in 2 directories and /dev; network allowed"
  std::string describe() const;
  int landlock_abi() const noexcept { return abi_; }
  bool denies_network() const noexcept { return network_namespace_ || tcp_rule_; }
  // The process runner keeps it open in the child until apply_in_child().
  int ruleset_fd() const noexcept { return ruleset_fd_; }

 private:
  SandboxPlan() = default;

  int ruleset_fd_ = -1;
  int abi_ = 0;
  std::size_t writable_count_ = 0;
  bool network_namespace_ = false;
  bool tcp_rule_ = false;
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
