// The workspace's git state for retrieval: branch, files changed in the working tree and in the index
// (one `git status --porcelain=v2` run), and the changed line ranges (`git diff -U0 HEAD`). Runs the git
// CLI directly (no shell) with a timeout and cancellation; a directory outside any repository costs no
// process at all, and a missing git binary or a broken repository is a note, not a failure.
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
  std::string git = "git";  // looked up in PATH
  std::chrono::milliseconds timeout{3000};
  std::size_t max_output_bytes = std::size_t{8} << 20;
  std::size_t max_changes = 2000;  // untracked files of a big build directory can be many
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

// One program run to its end, without a shell: its stdout and stderr, each capped.
struct CommandOutput {
  int exit_code = -1;  // -1 when killed by a signal
  bool timed_out = false;
  std::string out;
  std::string err;
  bool out_truncated = false;
};

// Runs `argv` (argv[0] looked up in PATH) with `env` as the whole environment, in its own process group,
// which is killed on timeout or cancellation. Errc::not_found when the program is missing, Errc::io when
// it cannot be started, Errc::cancelled when `cancel` fires.
support::Result<CommandOutput> run_command(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                           std::chrono::milliseconds timeout, std::size_t max_output_bytes,
                                           const support::CancelToken& cancel);

}  // namespace agentd::core::context
