// The workspace's git state for retrieval: branch, files changed in the working tree and in the index
// (one `git status --porcelain=v2` run, after a `git config` listing of the filter drivers to switch
// off, see below), and the changed line ranges (`git diff -U0 HEAD`, likewise). Runs the git
// CLI directly (no shell) through tools/process.h, with a timeout and cancellation; a directory outside
// any repository costs no process at all, and a missing git binary or a broken repository is a note.
//
// The repository is not trusted (DESIGN.md section 5): a sandboxed command can write `.git/config` and
// `.gitattributes`, and git runs what they name (core.fsmonitor, filter drivers, diff.external,
// textconv, hooks, pagers, transports). So every git run here switches those off on its command line,
// including each filter driver any config git reads names, gets a minimal environment (no API keys, no
// agent sockets), and, where the kernel has Landlock, may write nothing and reach no network.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/result.h"

namespace agentd::core::context {

struct GitChange {
  std::string path;       // relative to the repository's top level, '/'-separated
  std::string orig_path;  // the path before a rename; empty otherwise
  std::string status;     // "modified", "added", "deleted", "renamed", "type changed", "conflicted", "untracked"
  bool staged = false;
  bool unstaged = false;
};

struct GitState {
  bool repository = false;  // the directory is inside a work tree git could read
  std::string top_level;    // absolute; empty outside a repository
  std::optional<std::string> branch;
  bool has_head = false;  // false in a repository without commits
  std::vector<GitChange> changes;
  std::string note;  // why the state is missing or partial ("git not found", "git status timed out")
};

struct GitOptions {
  std::string git = "git";  // looked up in the absolute entries of PATH
  std::chrono::milliseconds timeout{3000};
  std::size_t max_output_bytes = std::size_t{8} << 20;
  std::size_t max_changes = 2000;  // untracked files of a big build directory can be many
  // Run git under Landlock with nothing writable and the network cut off, when the kernel allows; the
  // command-line hardening applies either way. Tests turn it off to see the hardening alone.
  bool sandbox = true;
};

// The state of the repository holding `cwd`. Errc::cancelled when `cancel` fires; every other problem
// (not a repository, git missing, a timeout) is a GitState with `note` saying so.
support::Result<GitState> read_git_state(const std::string& cwd, const GitOptions& options,
                                         const support::CancelToken& cancel);

struct LineRange {
  std::size_t start = 0;  // 1-based
  std::size_t count = 0;  // 0: a pure deletion just after `start`
};

// The working tree's changed line ranges against HEAD for `paths` (top-level relative), by path. Empty
// when there is no HEAD or git fails. Errc::cancelled when `cancel` fires.
support::Result<std::map<std::string, std::vector<LineRange>>> read_changed_lines(const GitState& state,
                                                                                  const std::vector<std::string>& paths,
                                                                                  const GitOptions& options,
                                                                                  const support::CancelToken& cancel);

// The nearest directory at or above `dir` that holds `.git` (a directory or a worktree's file), or empty.
std::string find_repository_root(const std::string& dir);

// The whole environment git runs with: PATH (its absolute entries only, so a relative entry cannot
// pick a `git` from the workspace), HOME (the user's own config is trusted), C messages, no optional
// locks (a status must not take index.lock while the user commits) and no prompts. Nothing else of
// agentd's: no API keys, no SSH or GPG agent, no GIT_* variable pointing at another repository.
std::vector<std::string> git_environment();

// The `-c name=value` pairs (without the "-c") every git run gets, given the filter drivers and the
// protocols that the config git reads names: hooks, fsmonitor, pager, external diff, credential
// helpers, ssh and every transport off; each named filter driver's clean, smudge and process commands
// emptied (git runs no filter with an empty command: convert.c apply_filter) and not required.
std::vector<std::string> git_config_overrides(const std::vector<std::string>& filters,
                                              const std::vector<std::string>& protocols);

}  // namespace agentd::core::context
