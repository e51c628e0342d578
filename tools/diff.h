// Unified diffs of two texts (Myers' O(ND) algorithm over lines), in the format `diff -u` writes and
// `patch` reads: edit_file reports one per edit, and clients and people read it. The applier is strict (it
// takes only what unified_diff writes, context and all) and exists to check the generator.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/support/result.h"

namespace agentd::tools {

struct DiffOptions {
  std::size_t context = 3;  // unchanged lines around each change, as `diff -u`
  std::string old_label;    // the `---` line's name; `patch -p0` finds the file by it
  std::string new_label;    // the `+++` line's name
  // Past this many differing lines (after the common head and tail are set aside) the diff stops looking
  // for the shortest edit and replaces the differing middle whole: still a correct diff, bounded time.
  std::size_t max_edit_distance = 2000;
};

struct DiffStats {
  std::size_t added = 0;    // `+` lines
  std::size_t removed = 0;  // `-` lines
  std::size_t hunks = 0;
};

struct UnifiedDiff {
  std::string text;  // empty when the texts are equal
  DiffStats stats;
};

// Lines end at '\n' and keep everything before it, '\r' included, so a CRLF file diffs as CRLF. A last line
// without '\n' is followed by "\ No newline at end of file", and differs from the same text with one.
UnifiedDiff unified_diff(std::string_view before, std::string_view after, const DiffOptions& options);

// What two texts share, for diffs that set it aside before looking at lines: the number of leading bytes
// `a` and `b` have in common, and of trailing ones (at most `limit`). Compared a block at a time, with
// preemption points between slices (core/support/preempt.h): a 16 MiB file costs a memcmp.
std::size_t common_prefix_bytes(std::string_view a, std::string_view b);
std::size_t common_suffix_bytes(std::string_view a, std::string_view b, std::size_t limit);
// The offset of the start of the line holding `at`, moved back `lines` more lines.
std::size_t line_start_before(std::string_view text, std::size_t at, std::size_t lines);
// The offset just past the end of the line holding `at` (or `at` itself at a line start), moved on
// `lines` more lines.
std::size_t line_end_after(std::string_view text, std::size_t at, std::size_t lines);

// Applies a diff that unified_diff wrote to `before`: every hunk at its stated line, context and removed
// lines matching exactly. Errc::parse_error for text that is not such a diff, Errc::conflict when a hunk
// does not match `before`.
support::Result<std::string> apply_unified_diff(std::string_view before, std::string_view diff);

}  // namespace agentd::tools
