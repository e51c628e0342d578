// The search core behind the grep tool (and the search benchmark): a compiled pattern (RE2, so a
// model-written regex runs in linear time, or a plain literal found with memchr), searched over whole
// file buffers so only lines that hold a match are ever looked at, in parallel over files, with results
// in path order whichever thread found them.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/result.h"
#include "core/support/run_off_loop.h"
#include "tools/walk.h"

namespace agentd::tools {

struct SearchPattern {
  std::string pattern;
  bool literal = false;  // the pattern is plain text, not a regex
  bool case_insensitive = false;
};

// A compiled pattern; cheap to copy, and safe to use from many threads at once. Matches never span a
// line: a regex cannot match '\n' (so `a\s+b` does not join two lines), and `^`/`$` match at line ends.
class Matcher {
 public:
  // Errc::invalid_argument with RE2's own words ("missing ): foo(") when the regex does not parse.
  static support::Result<Matcher> compile(const SearchPattern& pattern);

  // The offset of some byte of the first matching line in text[from, end), or npos when no line
  // there matches. `from` must be the start of a line.
  std::size_t find(std::string_view text, std::size_t from) const;

  // How the pattern is searched: "literal", "regex" or "regex+literal" (a regex whose matches all
  // hold a literal, found first with memchr); for tests and the benchmark.
  std::string_view strategy() const noexcept;

  struct Impl;
  const Impl& impl() const noexcept { return *impl_; }

 private:
  explicit Matcher(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

struct SearchOptions {
  std::size_t context_before = 0;  // lines shown before each match
  std::size_t context_after = 0;   // and after it
  // A longer line is kept cut to this many bytes (a minified file would otherwise fill the output).
  std::size_t max_line_bytes = 500;
  // The matches kept, in path order, measured as the bytes of `path:line:text` output; past this only
  // counts are kept. Bounds memory whatever the pattern: `e` over a kernel tree matches millions of lines.
  std::size_t max_kept_bytes = std::size_t{128} << 10;
  // Worker threads; 0 means one per hardware thread.
  std::size_t threads = 0;
};

struct SearchLine {
  std::size_t number = 0;     // 1-based
  bool is_match = false;      // else a context line
  std::string text;           // without its '\n', cut to max_line_bytes
  std::size_t cut_bytes = 0;  // how many bytes of the line the cut left out
};

struct FileMatches {
  std::string path;               // as the caller named it (display form)
  std::vector<SearchLine> lines;  // in line order; a gap in the numbers is a gap between groups
  std::size_t matched_lines = 0;  // all of them, even past what `lines` kept
  bool complete = true;           // false when lines stopped at max_kept_bytes
  std::size_t bytes = 0;          // the file's size as searched
};

struct SearchReport {
  std::vector<FileMatches> files;  // files with matches that were kept, in path order
  std::size_t matched_lines = 0;   // over every file searched, kept or not
  std::size_t matched_files = 0;
  std::size_t omitted_lines = 0;  // matching lines of files not kept (past max_kept_bytes)
  std::size_t omitted_files = 0;
  std::size_t searched_files = 0;
  std::size_t searched_bytes = 0;    // of the text files searched (binary ones left out)
  std::size_t binary_files = 0;      // skipped: a NUL byte in the first kBinarySniffBytes
  std::size_t unreadable_files = 0;  // could not be opened or read (and directories the walker skipped)
};

// The order results come in: byte order, but component by component (`a/b` before `a-c`), which is
// the order of a depth-first walk and of `rg --sort path`.
bool path_less(std::string_view a, std::string_view b) noexcept;

// One buffer: the matching lines of `text` with their context.
FileMatches search_text(const Matcher& matcher, std::string_view text, const SearchOptions& options);

// A file given by the caller (a path outside any walk): absolute path, and how to show it.
struct SearchTarget {
  std::string path;
  std::string display;
};

// Searches the given files in parallel. Errc::cancelled when `cancel` fires (checked between files and
// every few MiB inside one).
support::Result<SearchReport> search_files(const Matcher& matcher, const std::vector<SearchTarget>& files,
                                           const SearchOptions& options, const support::CancelToken& cancel);

// Searches the regular files under `root` (absolute) that the shared walker visits (ignore rules,
// hidden files and the deny list as `walk_options` say; symlinks are not followed, as rg does not) and
// `include` accepts (by their '/'-separated path relative to root; empty accepts all). Each is shown
// as `display_prefix` + its relative path. The walk runs on the calling thread while workers search.
support::Result<SearchReport> search_tree(const Matcher& matcher, const std::string& root,
                                          const std::string& display_prefix, const WalkOptions& walk_options,
                                          const std::function<bool(std::string_view)>& include,
                                          const SearchOptions& options, const support::CancelToken& cancel);

using support::run_off_loop;

}  // namespace agentd::tools
