// The one directory traversal behind list_dir, glob and grep: depth-first in byte order, honouring
// .gitignore files the way git does, never entering .git, never following symlinks, and skipping
// deny-listed paths. Synchronous and blocking: callers run it off the event loop (core/support/run_off_loop.h).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/result.h"

namespace agentd::tools {

struct WalkOptions {
  bool hidden = false;         // include dot-files and dot-dirs (.git/ itself is never entered)
  bool respect_ignore = true;  // nested .gitignore files and .git/info/exclude
  std::size_t max_depth = static_cast<std::size_t>(-1);  // 1 = only the root's direct children
  // Deny patterns from the configuration (tools::denied_path's `configured`), skipped like the built-in
  // ones. They are matched against `deny_base` + '/' + the entry's relative path, deny_base being the walk
  // root relative to its workspace root (PathGuard::relative_to_root), so `config/secrets` is found from
  // inside `config/` too.
  std::vector<std::string> denied;
  std::string deny_base;
  // Patterns of the permission rules that deny reading (`read(secrets/**)`, ToolContext::denied_reads),
  // matched with git's wildmatch against the entry's path as rules see it: relative to `rules_cwd` (the
  // session's cwd) when under it, else absolute. A directory they match is skipped with all it holds.
  std::vector<std::string> denied_rules;
  std::string rules_cwd;
};

struct WalkEntry {
  std::string path;      // absolute
  std::string relative;  // relative to the walk root, '/'-separated, no leading "./"
  bool is_dir = false;
  bool is_symlink = false;
};

struct WalkStats {
  std::size_t skipped_unreadable = 0;  // subdirectories that could not be opened or read
  std::size_t ignored = 0;             // entries left out by ignore rules (an ignored directory counts once)
};

// Walks everything below `root` (an absolute directory; the root itself is not visited). Depth-first,
// entries of each directory in byte order of their names, a directory before its contents. The visitor
// returns false to stop the walk early (still a success). Deny-listed paths (tools::denied_path for reads)
// are skipped silently. Symlinks are reported but never followed into directories (no loops).
//
// Ignore rules, as in git: each directory's .gitignore applies to what is below it, deeper files taking
// precedence; then .git/info/exclude. The .gitignore files of the root's ancestors apply too, up to the
// repository root (the nearest ancestor holding `.git`). As with ripgrep, .gitignore files count only inside
// a git repository (at or above the root, or nested below it): a tree unpacked from a tarball may carry
// .gitignore files meant for its packagers (Debian's kernel source ignores `/*`). An ignored directory is
// not entered, so nothing below it can be re-included. The root itself is walked even if it is ignored: the
// caller named it.
//
// Errc::not_found when the root is missing or not a directory, Errc::io when it cannot be read,
// Errc::cancelled when `cancel` fires; unreadable subdirectories are skipped (counted in the result).
support::Result<WalkStats> walk(const std::string& root, const WalkOptions& options,
                                const std::function<bool(const WalkEntry&)>& visit, const support::CancelToken& cancel);

}  // namespace agentd::tools
