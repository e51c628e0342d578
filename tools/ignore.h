// Gitignore rules with git's own semantics: gitignore(5), and git's dir.c and wildmatch.c where the manual is
// silent (trailing-space trimming, `\r\n` line ends, how a directory's exclusion hides what is under it).
// Pure text in, answers out: no file system, no Asio. tools/walk.cpp reads the files and applies them while
// it walks; IgnoreRules answers for single paths the way `git check-ignore` does (tests, fuzzing).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace agentd::tools {

// git's wildmatch(): `?`, `*` and `[...]` (ranges, `!`/`^` negation, `[:alpha:]`-style classes, `\` escapes).
// With `pathname`, wildcards never match '/', and `**` as a whole component matches any number of
// directories: leading `**/`, trailing `/**`, middle `/**/`; without it, `*` matches '/' too. Bounded
// backtracking (git's abort rules), so a hostile pattern costs polynomial, not exponential, time.
bool wildmatch(std::string_view pattern, std::string_view text, bool pathname);

// One line of an ignore file, compiled.
struct IgnorePattern {
  std::string text;                // the line as git reports it (`check-ignore -v`): after trimming, with `!` and `/`
  std::string pattern;             // what is matched: without the leading `!` and the trailing `/`
  std::size_t line = 0;            // 1-based line number in its file
  std::size_t literal_prefix = 0;  // bytes before the first wildcard or backslash
  bool negative = false;           // `!pattern`: a match re-includes
  bool directory_only = false;     // `pattern/`: matches directories only
  bool basename_only = false;      // no '/' except a trailing one: matched against the last component
  bool ends_with = false;          // `*literal`: a suffix test instead of wildmatch
};

// The patterns of one file (.gitignore, .git/info/exclude), in file order.
class IgnoreFile {
 public:
  IgnoreFile() = default;
  explicit IgnoreFile(std::string_view text);

  // The last pattern matching `path`, or nullptr: the last match decides, and it may be a negation.
  // `path` is relative to the file's directory, '/'-separated, without leading or trailing '/'.
  const IgnorePattern* match(std::string_view path, bool is_dir) const;

  bool empty() const noexcept { return patterns_.empty(); }
  const std::vector<IgnorePattern>& patterns() const noexcept { return patterns_; }

 private:
  // A pattern without wildcards, by the text it must equal.
  struct Literal {
    std::string key;
    std::size_t index;  // into patterns_
  };
  // The last of `literals` equal to `key` that applies (directory-only ones to directories only).
  std::ptrdiff_t find_literal(const std::vector<Literal>& literals, std::string_view key, bool is_dir) const;

  std::vector<IgnorePattern> patterns_;
  // Most lines are plain names ("vmlinux", "tags") or plain anchored paths ("/System.map"): those are looked up
  // (sorted, binary search) instead of tried one by one; only the rest are matched in turn.
  std::vector<Literal> names_;
  std::vector<Literal> paths_;
  std::vector<std::size_t> others_;  // indexes of the remaining patterns, in file order
};

// Every ignore file of one work tree, keyed by directory, answering for one path at a time as
// `git check-ignore --no-index` does: .gitignore files of deeper directories take precedence over shallower
// ones, .git/info/exclude comes last; and a path whose parent directory is excluded is excluded, whatever
// its own rules say ("it is not possible to re-include a file if a parent directory of that file is
// excluded"). The walker applies the same rules incrementally instead.
class IgnoreRules {
 public:
  // `directory`: "" for the top of the work tree, else "a/b" (no leading or trailing '/').
  void add_gitignore(std::string directory, std::string_view text);
  void set_exclude(std::string_view text);  // .git/info/exclude

  struct Verdict {
    bool ignored = false;
    const IgnorePattern* pattern = nullptr;  // the deciding pattern (negative: re-included), or nullptr
    std::string source;                      // "a/.gitignore", ".git/info/exclude"; empty without a pattern
  };
  // `path` is relative to the top of the work tree; `is_dir` says whether it names a directory.
  Verdict check(std::string_view path, bool is_dir) const;

 private:
  // The deciding pattern for `path` from the files of `path`'s ancestor directories, without looking at
  // whether those directories are themselves excluded.
  Verdict decide(std::string_view path, bool is_dir) const;

  std::map<std::string, IgnoreFile, std::less<>> gitignores_;
  IgnoreFile exclude_;
};

}  // namespace agentd::tools
