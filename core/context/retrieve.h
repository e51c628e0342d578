// retrieveContext: from a prompt to a ContextPackage. Classifies the task, gathers candidates (stack frames,
// named paths and globs, test names, identifiers and quoted strings found with the grep engine, git's
// changed files), ranks them with explained scores, reads line slices around the hits, merges those that
// overlap, and keeps what fits the token budget; the rest is listed as omitted, with why. Blocking: the
// engine runs it off the event loop. It reads files from disk (not an editor's unsaved buffers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/context/context_package.h"
#include "core/context/git_state.h"
#include "core/context/workspace_index.h"
#include "core/support/cancel.h"
#include "core/support/result.h"
#include "core/support/trace.h"

namespace agentd::core::context {

struct ContextLimits {
  std::size_t lines_before = 8;  // a slice around a hit: this many lines before it
  std::size_t lines_after = 12;  // and after
  std::size_t head_lines = 40;   // a candidate without a line (a named file, a glob match) shows its head
  std::size_t max_slice_lines = 120;
  std::size_t max_slices_per_file = 3;
  std::size_t max_evidence = 12;
  std::size_t max_ranked = 20;         // files in the ranked list, evidence or not
  std::size_t max_omitted_shown = 15;  // in the text; the JSON lists up to max_omitted_listed
  std::size_t max_omitted_listed = 200;
  std::size_t max_changed_shown = 20;
  std::size_t max_line_bytes = 400;  // a longer line is cut in the evidence
  // A tree with at most this many files is searched whole for the prompt's identifiers; a bigger one gets
  // a focused search of the files most likely to matter (named, changed, with matching path words, and
  // their neighbours), so a turn in a kernel-sized tree stays fast.
  std::size_t full_search_max_files = 5000;
  std::size_t focused_search_files = 600;
  // With a ready content index, its best files are searched up to this many bytes in all (grep's cost
  // is bytes; the index ranks well enough that the rest of the 600 would mostly be big files that match
  // common words), and the focused search stops at half of focused_search_files.
  std::size_t focused_index_bytes = std::size_t{6} << 20;
  std::size_t max_file_bytes = std::size_t{4} << 20;  // read at most this much of a file for slices
  std::size_t max_glob_matches = 40;
  GitOptions git;
};

struct ContextRequest {
  std::string cwd;                           // absolute
  std::vector<std::string> additional_dirs;  // absolute
  std::string input;                         // the user's prompt
  std::uint64_t token_budget = 8000;         // for the whole rendered package (context_token_budget)
  // The configured deny-paths (on top of tools::denied_path's built-in list, which always applies):
  // true when the absolute path must never be shown. May be empty.
  std::function<bool(const std::string& absolute)> denied;
  // The same deny-paths as patterns (`permissions.denyPaths`), for the content index, which must never
  // hold a denied file's tokens.
  std::vector<std::string> deny_paths;
  ContextLimits limits;
  // When set, each step of the retrieval is a child span of this one (context.index, context.git,
  // context.search, context.references, context.read per file read). The span's tracer must be safe to
  // use from this thread and from git's (support::SpanBuffer's is).
  const support::Span* trace = nullptr;
};

// The budget for workspace context from a model's context window: a tenth of it, between 1k and 24k
// tokens, so the history and the answer keep most of the window.
std::uint64_t context_token_budget(std::uint64_t context_window_tokens) noexcept;

// The pipeline. Errc::cancelled when `cancel` fires (checked between stages, inside the walk, the git
// run and the search); Errc::not_found when the cwd is not a directory. Everything else (git missing,
// unreadable files, paths outside the workspace) ends up in the package's notes and omitted list.
// estimate_tokens(result.text) <= request.token_budget, always.
support::Result<ContextPackage> retrieve_context(const ContextRequest& request, WorkspaceIndex& index,
                                                 support::CancelToken cancel);

}  // namespace agentd::core::context
