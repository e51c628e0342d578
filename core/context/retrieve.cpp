// One file for the retrieval pipeline (retrieve.h): its stages (candidates, scores, slices, merge, budget)
// share the candidate table and the scoring weights, and reading it top to bottom is how a ranking is
// explained. Task classification, input terms and the stack parser are files of their own.
#include "core/context/retrieve.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <future>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/context/code_tokens.h"
#include "core/context/definitions.h"
#include "core/context/input_terms.h"
#include "core/context/stack_parser.h"
#include "core/context/task_classifier.h"
#include "core/support/text.h"
#include "tools/ignore.h"
#include "tools/path_guard.h"
#include "tools/search.h"

namespace agentd::core::context {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Error;
using Clock = std::chrono::steady_clock;

// Scores. A stack frame always outranks a keyword hit: the lowest frame score (kStackBase) is above the
// highest a keyword hit can reach with every bonus (kDefinition + kChangedBonus + kNameBonusMax +
// kRecentBonus + kMultiHitMax + kWordsMax = 45 + 20 + 12 + 5 + 15 + 40 = 137).
constexpr double kStackBase = 150;
constexpr double kStackTop = 30;  // added at the crash site, 6 less per frame further out
constexpr double kStackStep = 6;
constexpr double kMentionLine = 90;
constexpr double kMention = 70;
constexpr double kTestDefinition = 60;
constexpr double kTestFile = 55;
constexpr double kDefinition = 45;
constexpr double kGlob = 40;
constexpr double kQuoted = 35;
constexpr double kConfigFile = 35;
constexpr double kOccurrence = 15;
constexpr double kChangedReview = 60;
constexpr double kChangedBugfix = 30;
constexpr double kChangedOther = 15;
constexpr double kChangedBonus = 20;
constexpr double kNameBonus = 4;
constexpr double kNameBonusMax = 12;
constexpr double kRecentBonus = 5;
// The report's words: the file whose words match best (BM25 over the files searched) gets kWordsMax, the others their
// share of it; only the kWordFiles best become candidates.
constexpr double kWordsMax = 40;
constexpr double kWordsK1 = 1.2;
constexpr double kWordsB = 0.5;  // half the usual: a big central file is often the one
constexpr std::size_t kWordFiles = 40;
constexpr double kTestFilePenalty = -12;  // a test file, for a bug report or a request not about tests
constexpr double kDocFilePenalty = -40;   // docs, changelogs, generated bundles, unless asked about
// One hop: the best kHopAnchors definitions of the report's names are read for what they call; a file
// defining one of at most kHopNames such names (in at most kHopMaxDefinitions files) gets kHopShare of
// the caller's score.
constexpr std::size_t kIndexPicks = 150;  // files asked of a content index (focused_index_bytes decides)
constexpr std::size_t kHopAnchors = 4;
constexpr std::size_t kHopNames = 32;
constexpr std::size_t kHopMaxDefinitions = 2;
constexpr std::size_t kHopBodyLines = 80;
constexpr double kHopShare = 0.8;
constexpr double kMultiHitShare = 0.2;
constexpr double kMultiHitMax = 15;
static_assert(kDefinition + kChangedBonus + kNameBonusMax + kRecentBonus + kMultiHitMax + kWordsMax < kStackBase);
constexpr std::int64_t kRecentSeconds = std::int64_t{24} * 3600;
constexpr std::size_t kMaxHitsPerFileFromSearch = 4;
constexpr std::size_t kMaxOpenQuestions = 4;
constexpr std::size_t kBinarySniffBytes = std::size_t{8} << 10;  // as tools/builtin: NUL in the first 8 KiB
constexpr std::size_t kMergeGap = 2;                             // slices this close become one

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Hit {
  Hit() = default;
  Hit(std::size_t line_, std::size_t end_line_, double score_, Source source_, std::string why_,
      std::string defines_ = {})
      : line(line_),
        end_line(end_line_),
        score(score_),
        source(source_),
        why(std::move(why_)),
        defines(std::move(defines_)) {}

  std::size_t line = 0;      // 0: the file as a whole (its head)
  std::size_t end_line = 0;  // a range hit (a named range, a changed hunk); else 0
  double score = 0;
  Source source = Source::identifier;
  std::string why;
  std::string defines;  // the identifier defined at `line`, for a definition hit; else empty
};

struct FileCandidate {
  std::size_t root = 0;  // index into the roots
  std::string relative;  // to its root
  std::string absolute;
  std::string display;  // relative to the cwd when under it
  std::vector<Hit> hits;
  std::vector<ScoreTerm> terms;  // apply to every slice of the file
  bool changed = false;
};

struct Root {
  std::string path;
  std::shared_ptr<const FileList> files;
  std::shared_ptr<ContentIndexer> content;  // null for a tree too small to need one
};

struct Slice {
  FileCandidate* file = nullptr;
  std::size_t start = 0;  // 1-based, inclusive; 0 = not yet known (head of file)
  std::size_t end = 0;
  std::vector<const Hit*> hits;  // best first
  double score = 0;
  std::vector<ScoreTerm> terms;
};

// What a file looks like for slicing: its lines, or why it cannot be shown.
struct FileText {
  std::string text;
  std::vector<std::size_t> line_starts;  // offsets of each line's first byte
  std::string problem;                   // non-empty: not shown, and why
  std::int64_t mtime = 0;
};

// The number of trailing components two paths share.
std::size_t shared_tail(std::string_view a, std::string_view b) {
  std::size_t count = 0;
  while (!a.empty() && !b.empty()) {
    const std::size_t sa = a.rfind('/');
    const std::size_t sb = b.rfind('/');
    const std::string_view ca = sa == std::string_view::npos ? a : a.substr(sa + 1);
    const std::string_view cb = sb == std::string_view::npos ? b : b.substr(sb + 1);
    if (ca != cb) break;
    ++count;
    a = sa == std::string_view::npos ? std::string_view() : a.substr(0, sa);
    b = sb == std::string_view::npos ? std::string_view() : b.substr(0, sb);
  }
  return count;
}

// Paths of libraries and toolchains: a frame there is not the workspace's code, whatever its name.
// Whether one of the directories `path` is under is named as one of `dirs` ("/tests/").
bool under_directory(std::string_view path, std::initializer_list<std::string_view> dirs) {
  const std::size_t slash = path.rfind('/');
  const std::string dir = "/" + std::string(slash == std::string_view::npos ? "" : path.substr(0, slash)) + "/";
  return std::any_of(dirs.begin(), dirs.end(), [&](std::string_view d) { return dir.find(d) != std::string::npos; });
}

std::string_view file_name(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// A test by its path: a tests/test/spec/__tests__ directory, or a name like test_x.py, x_test.go,
// x.test.ts, x.spec.js, XTest.java, XTests.kt.
bool is_test_path(std::string_view path) {
  if (under_directory(path, {"/test/", "/tests/", "/testing/", "/spec/", "/__tests__/", "/testdata/"})) return true;
  const std::string_view name = file_name(path);
  const std::string_view stem = name.substr(0, name.find('.'));
  return stem.starts_with("test_") || stem.ends_with("_test") || stem.ends_with("Test") || stem.ends_with("Tests") ||
         stem.ends_with("_spec") || name.find(".test.") != std::string_view::npos ||
         name.find(".spec.") != std::string_view::npos;
}

// Documentation, changelogs, manuals and generated bundles: prose about the code, or a copy of it, never
// where a bug is fixed. By directory (docs/, man/, dist/, vendor/...), by a project document's name
// (README, CHANGELOG, HISTORY.md: not history.go), or by a documentation extension.
bool is_doc_or_generated_path(std::string_view path) {
  if (under_directory(path, {"/doc/", "/docs/", "/documentation/", "/man/", "/dist/", "/vendor/", "/third_party/",
                             "/single_include/"})) {
    return true;
  }
  std::string name(file_name(path));
  support::ascii_lower_in_place(name);
  const std::size_t dot = name.find('.');
  const std::string_view stem = std::string_view(name).substr(0, dot);
  const std::string_view ext = dot == std::string::npos ? std::string_view() : std::string_view(name).substr(dot);
  const bool prose_ext = ext.empty() || ext == ".md" || ext == ".rst" || ext == ".txt" || ext == ".adoc";
  for (std::string_view doc :
       {"readme", "changelog", "changes", "history", "news", "contributing", "license", "authors"}) {
    if (stem == doc && prose_ext) return true;
  }
  if (name == "cmakelists.txt" || name.starts_with("requirements")) return false;  // build inputs, not prose
  // A manual page, or its template: fd.1, bat.1.in, jq.1.prebuilt.
  for (std::size_t at = name.find('.'); at != std::string::npos; at = name.find('.', at + 1)) {
    if (at + 1 < name.size() && name[at + 1] >= '1' && name[at + 1] <= '9' &&
        (at + 2 == name.size() || name[at + 2] == '.')) {
      return true;
    }
  }
  for (std::string_view e : {".md", ".rst", ".txt", ".adoc", ".yml", ".yaml", ".1", ".min.js", ".map"}) {
    if (name.ends_with(e)) return true;
  }
  return false;
}

// Whether `input` says one of `words` (lower case) as a word of its prose: not inside a longer word, nor
// as part of a path, a file name or an identifier (`changelog.md`, `docs/x`, `test_parse`, `--docs`).
bool says_any(std::string_view input, std::initializer_list<std::string_view> words) {
  std::string lower(input.substr(0, std::size_t{64} << 10));
  support::ascii_lower_in_place(lower);
  const auto prose_edge = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) == 0 &&
           std::string_view("/._-~$@").find(c) == std::string_view::npos;
  };
  for (std::string_view word : words) {
    for (std::size_t at = lower.find(word); at != std::string::npos; at = lower.find(word, at + 1)) {
      const bool left = at == 0 || prose_edge(lower[at - 1]);
      const std::size_t end = at + word.size();
      // A sentence's full stop ends a word; a '.' followed by more of a name does not.
      const bool full_stop = end < lower.size() && lower[end] == '.' &&
                             (end + 1 >= lower.size() || std::isspace(static_cast<unsigned char>(lower[end + 1])) != 0);
      const bool right = end >= lower.size() || prose_edge(lower[end]) || full_stop;
      if (left && right) return true;
    }
  }
  return false;
}

// Type stubs and declaration files: Python's `.pyi`, TypeScript's `.d.ts` (`.d.cts`, `.d.mts`).
bool is_declaration_path(std::string_view path) {
  const std::string_view name = file_name(path);
  return name.ends_with(".pyi") || name.ends_with(".d.ts") || name.ends_with(".d.cts") || name.ends_with(".d.mts");
}

// Whether a request is about documentation: it says docs, README, changelog, manual, typo.
bool about_docs(std::string_view input) {
  return says_any(input, {"doc", "docs", "documentation", "documented", "docstring", "readme", "changelog", "manual",
                          "man page", "manpage", "typo", "typos", "spelling", "wording"});
}

// Whether a request is about tests: it says test, tests, testing, spec, coverage.
bool about_tests(std::string_view input) {
  return says_any(input, {"test", "tests", "testing", "unittest", "spec", "specs", "coverage", "fixture", "fixtures"});
}

bool is_library_path(std::string_view path) {
  for (std::string_view marker :
       {"site-packages/", "dist-packages/", "node_modules/", "/usr/lib/", "/usr/include/", "/usr/local/lib/", "/rustc/",
        "/.cargo/registry/", "/go/pkg/mod/", "/usr/local/go/", "/usr/share/", "<frozen ", "/lib/python"}) {
    if (path.find(marker) != std::string_view::npos) return true;
  }
  return path.starts_with("node:");
}

struct Resolved {
  std::size_t root = 0;
  std::string relative;
  std::string how;  // "", "by its path's end", "by file name"
};

class Retrieval {
 public:
  Retrieval(const ContextRequest& request, WorkspaceIndex& index, support::CancelToken cancel)
      : request_(request),
        limits_(request.limits),
        index_(index),
        cancel_(std::move(cancel)),
        guard_(request.cwd, request.additional_dirs) {}

  support::Result<ContextPackage> run() {
    const auto start = Clock::now();
    if (cancel_.cancelled()) return cancelled();
    package_.budget_tokens = request_.token_budget;
    package_.workspace.cwd = request_.cwd;
    package_.workspace.additional_dirs = request_.additional_dirs;

    frames_ = parse_stack_frames(request_.input);
    std::vector<std::size_t> frame_lines;
    for (const auto& f : frames_) frame_lines.push_back(f.input_line);
    std::sort(frame_lines.begin(), frame_lines.end());
    frame_lines.erase(std::unique(frame_lines.begin(), frame_lines.end()), frame_lines.end());
    terms_ = extract_terms(request_.input, frame_lines);

    // git runs while the index refreshes: both wait on the disk and on other processes, not on each other
    // (on Linux 6.1 inside a repository, 12 and 22 ms that no longer add up).
    auto git = std::async(std::launch::async, [this] {
      support::Span span = step("context.git");
      const auto started = Clock::now();
      auto state = read_git_state(request_.cwd, limits_.git, cancel_);
      if (!state) span.set_status(support::SpanStatus::error, state.error().message());
      return std::make_pair(std::move(state), ms_since(started));
    });
    auto t = Clock::now();
    support::Span index_span = step("context.index");
    auto refreshed = refresh_index();
    package_.stats.index_ms = ms_since(t);
    index_span.set_attribute("files", static_cast<std::uint64_t>(package_.stats.indexed_files));
    index_span.set_attribute("refreshed", package_.stats.index_refreshed);
    index_span.end();
    auto [git_state, git_ms] = git.get();
    if (!refreshed) return std::move(refreshed).error();
    if (cancel_.cancelled()) return cancelled();

    InputSignals signals;
    signals.stack_frames = frames_.size();
    signals.failing_tests = terms_.tests.size();
    for (const auto& p : terms_.paths) signals.config_paths += is_config_path(p.path) ? 1 : 0;
    package_.task = classify_task(request_.input, signals);

    AGENTD_TRY_VOID(read_git(std::move(git_state)));
    package_.stats.git_ms = git_ms;
    if (cancel_.cancelled()) return cancelled();

    add_stack_frames();
    add_mentioned_paths();
    add_globs();
    add_tests();
    add_config_files();
    t = Clock::now();
    {
      support::Span search = step("context.search");
      AGENTD_TRY_VOID(search_terms());
      search.set_attribute("files", static_cast<std::uint64_t>(package_.stats.searched_files));
      search.set_attribute("bytes", static_cast<std::uint64_t>(package_.stats.searched_bytes));
      search.set_attribute("exhaustive", package_.stats.search_exhaustive);
      if (!package_.stats.content_index.empty()) search.set_attribute("contentIndex", package_.stats.content_index);
    }
    package_.stats.search_ms = ms_since(t);
    if (cancel_.cancelled()) return cancelled();
    t = Clock::now();
    {
      support::Span references = step("context.references");
      AGENTD_TRY_VOID(follow_references());
    }
    package_.stats.search_ms += ms_since(t);
    if (cancel_.cancelled()) return cancelled();
    apply_file_terms();

    t = Clock::now();
    AGENTD_TRY_VOID(assemble());
    package_.stats.read_ms = ms_since(t);
    package_.stats.total_ms = ms_since(start);
    return std::move(package_);
  }

 private:
  static Error cancelled() { return Error(Errc::cancelled, "context retrieval cancelled"); }

  // A step's span under the request's trace, or an inert one.
  support::Span step(std::string name) const {
    return request_.trace != nullptr ? request_.trace->child(std::move(name)) : support::Span();
  }

  support::Result<void> refresh_index() {
    std::vector<std::string> roots = {request_.cwd};
    roots.insert(roots.end(), request_.additional_dirs.begin(), request_.additional_dirs.end());
    for (std::size_t i = 0; i < roots.size(); ++i) {
      auto refreshed = index_.refresh(roots[i], cancel_, request_.deny_paths);
      if (!refreshed) {
        if (refreshed.error().code() == Errc::cancelled || i == 0) return std::move(refreshed).error();
        continue;  // an additional directory that went away: the rest still works
      }
      package_.stats.index_refreshed = package_.stats.index_refreshed || refreshed->changed;
      package_.stats.indexed_files += refreshed->files->files().size();
      roots_.push_back({roots[i], refreshed->files, refreshed->content});
    }
    return support::ok();
  }

  support::Result<void> read_git(support::Result<GitState> state) {
    if (!state) return std::move(state).error();
    git_ = std::move(state).value();
    auto& ws = package_.workspace;
    ws.git_repository = git_.repository;
    ws.branch = git_.branch;
    ws.git_note = git_.note;
    if (!git_.repository) return support::ok();
    std::vector<std::string> diff_paths;
    std::size_t outside = 0;
    for (const auto& change : git_.changes) {
      const std::string absolute = (fs::path(git_.top_level) / change.path).lexically_normal().string();
      // A change elsewhere in the repository (above the cwd) is not the workspace's: counted, not shown.
      if (!under_root(absolute)) {
        ++outside;
        continue;
      }
      ChangedFile file;
      file.path = guard_.display(absolute);
      file.status = change.status;
      file.staged = change.staged;
      file.unstaged = change.unstaged;
      ws.changed_files.push_back(file);
      if (change.status != "deleted" && change.status != "untracked") diff_paths.push_back(change.path);
    }
    ws.changed_files_total = ws.changed_files.size();
    if (outside > 0 && ws.git_note.empty()) {
      ws.git_note = fmt::format("{} more changed file{} of the repository outside the workspace", outside,
                                outside == 1 ? "" : "s");
    }
    // Which lines changed matters when reviewing, and when hunting a bug (recent changes are suspects).
    const TaskKind kind = package_.task.kind;
    if ((kind == TaskKind::review || kind == TaskKind::bugfix) && !diff_paths.empty() && diff_paths.size() <= 200) {
      auto lines = read_changed_lines(git_, diff_paths, limits_.git, cancel_);
      if (!lines) return std::move(lines).error();
      hunks_ = std::move(lines).value();
    }
    for (const auto& change : git_.changes) add_changed_file(change);
    return support::ok();
  }

  // The candidate for an absolute path inside a root, created on first use.
  FileCandidate& candidate(std::size_t root, const std::string& relative) {
    const std::string absolute = relative.empty() ? roots_[root].path : roots_[root].path + "/" + relative;
    auto [it, inserted] = candidates_.try_emplace(absolute);
    if (inserted) {
      it->second.root = root;
      it->second.relative = relative;
      it->second.absolute = absolute;
      it->second.display = guard_.display(absolute);
      order_.push_back(&it->second);
    }
    return it->second;
  }

  // The root holding `absolute` (lexically), and the path below it.
  std::optional<Resolved> under_root(const fs::path& absolute) const {
    for (std::size_t i = 0; i < roots_.size(); ++i) {
      const fs::path root(roots_[i].path);
      if (tools::is_under(absolute, root) && absolute != root) {
        return Resolved{i, absolute.lexically_relative(root).generic_string(), ""};
      }
    }
    return std::nullopt;
  }

  static bool is_regular_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  }

  // A path as written in the input (or a frame) to a file of the workspace: the path itself (absolute, or
  // relative to a root), else the indexed file sharing the longest tail of components with it. A bare
  // file name matches only when written bare (a Java frame, "parser.py").
  std::optional<Resolved> resolve(std::string_view written, std::string_view package_path = {}) const {
    std::string text(written);
    if (text.starts_with("file://")) text.erase(0, 7);
    while (text.starts_with("./")) text.erase(0, 2);
    if (text.empty()) return std::nullopt;
    std::replace(text.begin(), text.end(), '\\', '/');
    const fs::path given = fs::path(text).lexically_normal();
    if (given.is_absolute()) {
      if (auto r = under_root(given); r && is_regular_file(given.string())) return r;
    } else {
      for (std::size_t i = 0; i < roots_.size(); ++i) {
        const fs::path full = (fs::path(roots_[i].path) / given).lexically_normal();
        if (!tools::is_under(full, roots_[i].path)) continue;
        if (is_regular_file(full.string()))
          return Resolved{i, full.lexically_relative(roots_[i].path).generic_string(), ""};
      }
    }
    if (is_library_path(text)) return std::nullopt;
    const std::string normal = given.generic_string();
    const std::size_t components = static_cast<std::size_t>(std::count(normal.begin(), normal.end(), '/')) + 1;
    // Which tail length is enough: a bare name only when written bare; an absolute path from another
    // machine needs its last two components to match.
    const std::size_t needed = components == 1 ? 1 : 2;
    std::optional<Resolved> best;
    std::size_t best_tail = 0;
    std::size_t ties = 0;
    const auto consider = [&](std::string_view want, std::size_t need) {
      const std::size_t slash = want.rfind('/');
      const std::string_view name = slash == std::string_view::npos ? want : want.substr(slash + 1);
      for (std::size_t r = 0; r < roots_.size(); ++r) {
        const auto& files = roots_[r].files->files();
        for (const std::uint32_t i : roots_[r].files->with_name(name)) {
          const std::size_t tail = shared_tail(files[i], want);
          if (tail < need) continue;
          if (tail > best_tail) {
            best_tail = tail;
            ties = 1;
            best = Resolved{r, files[i], tail == 1 ? "by file name" : "by its path's end"};
          } else if (tail == best_tail) {
            ++ties;
          }
        }
      }
    };
    if (!package_path.empty()) consider(package_path, 1);
    if (!best) consider(normal, needed);
    if (best && ties > 1) best->how += fmt::format(" ({} files match; the first is shown)", ties);
    return best;
  }

  void omit(std::string path, std::string reason, double score, Source source, std::size_t line = 0) {
    for (const auto& o : unresolved_) {
      if (o.path == path && o.line == line) return;
    }
    unresolved_.push_back({std::move(path), std::move(reason), score, source, line});
  }

  void add_stack_frames() {
    std::set<std::pair<std::string, std::size_t>> seen;
    for (const auto& frame : frames_) {
      const double score = kStackBase + std::max(0.0, kStackTop - kStackStep * static_cast<double>(frame.depth));
      auto resolved = resolve(frame.path, frame.package_path);
      if (!resolved) {
        ++unresolved_frames_;
        if (unresolved_frame_example_.empty()) unresolved_frame_example_ = frame.path;
        omit(frame.path, "named by the stack trace but not in the workspace (a library, or another checkout)", score,
             Source::stack_trace, frame.line);
        continue;
      }
      ++resolved_frames_;
      if (!seen.insert({resolved->relative, frame.line}).second) continue;
      std::string why =
          fmt::format("stack frame #{} ({}{}{}) at line {}", frame.depth + 1, stack_format_name(frame.format),
                      frame.depth == 0 ? ", where the error happened" : "",
                      frame.function.empty() ? "" : ", in " + frame.function, frame.line);
      if (!resolved->how.empty()) why += fmt::format(", found {}", resolved->how);
      candidate(resolved->root, resolved->relative).hits.push_back({frame.line, 0, score, Source::stack_trace, why});
    }
  }

  void add_mentioned_paths() {
    for (const auto& m : terms_.paths) {
      auto resolved = resolve(m.path);
      if (!resolved) {
        unresolved_paths_.push_back(m.path);
        omit(m.path, "named in the request but not found in the workspace", m.line > 0 ? kMentionLine : kMention,
             Source::mentioned_path, m.line);
        continue;
      }
      std::string why = m.line == 0      ? "named in the request"
                        : m.end_line > 0 ? fmt::format("lines {}-{} named in the request", m.line, m.end_line)
                                         : fmt::format("line {} named in the request", m.line);
      if (!resolved->how.empty()) why += fmt::format(", found {}", resolved->how);
      candidate(resolved->root, resolved->relative)
          .hits.push_back({m.line, m.end_line, m.line > 0 ? kMentionLine : kMention, Source::mentioned_path, why});
    }
  }

  void add_globs() {
    for (const auto& glob : terms_.globs) {
      // A glob without '/' means any depth, as people write "*.yaml".
      const bool by_name = glob.find('/') == std::string::npos;
      std::size_t matched = 0;
      for (std::size_t r = 0; r < roots_.size(); ++r) {
        for (const auto& file : roots_[r].files->files()) {
          const std::size_t slash = file.rfind('/');
          const std::string_view subject =
              by_name && slash != std::string::npos ? std::string_view(file).substr(slash + 1) : std::string_view(file);
          if (!tools::wildmatch(glob, subject, true)) continue;
          if (++matched > limits_.max_glob_matches) continue;
          candidate(r, file).hits.push_back({0, 0, kGlob, Source::glob, fmt::format("matches `{}`", glob)});
        }
      }
      if (matched > limits_.max_glob_matches) {
        omit(glob,
             fmt::format("{} more files match this glob than the {} taken", matched - limits_.max_glob_matches,
                         limits_.max_glob_matches),
             kGlob, Source::glob);
      } else if (matched == 0) {
        unresolved_paths_.push_back(glob);
      }
    }
  }

  void add_tests() {
    for (const auto& test : terms_.tests) {
      if (!test.path.empty()) {
        if (auto resolved = resolve(test.path)) {
          candidate(resolved->root, resolved->relative)
              .hits.push_back({0, 0, kTestFile, Source::test_name,
                               fmt::format("holds the test `{}` ({} output)", test.name, test.origin)});
        }
      }
      search_.push_back({test.name, Source::test_name, test.origin == "jest"});
    }
  }

  void add_config_files() {
    if (package_.task.kind != TaskKind::config) return;
    std::size_t taken = 0;
    for (std::size_t r = 0; r < roots_.size() && taken < 10; ++r) {
      for (const auto& file : roots_[r].files->files()) {
        // The top two levels: where a project's build and CI configuration lives.
        if (std::count(file.begin(), file.end(), '/') > 2 || !is_config_path(file)) continue;
        candidate(r, file).hits.push_back({0, 0, kConfigFile, Source::config_file, "a configuration file"});
        if (++taken == 10) break;
      }
    }
  }

  void add_changed_file(const GitChange& change) {
    if (change.status == "deleted") return;
    const fs::path absolute = (fs::path(git_.top_level) / change.path).lexically_normal();
    auto where = under_root(absolute);
    if (!where) return;
    const TaskKind kind = package_.task.kind;
    const double score = kind == TaskKind::review   ? kChangedReview
                         : kind == TaskKind::bugfix ? kChangedBugfix
                                                    : kChangedOther;
    FileCandidate& c = candidate(where->root, where->relative);
    c.changed = true;
    const std::string state = change.staged && change.unstaged ? "staged and unstaged"
                              : change.staged                  ? "staged"
                                                               : "in the working tree";
    const auto hunks = hunks_.find(change.path);
    if (hunks != hunks_.end() && !hunks->second.empty()) {
      for (const auto& h : hunks->second) {
        const std::size_t first = std::max<std::size_t>(h.start, 1);
        const std::size_t last = h.count == 0 ? first : h.start + h.count - 1;
        c.hits.push_back({first, last, score, Source::git_changed,
                          h.count == 0 ? fmt::format("lines removed after line {} ({})", first, state)
                                       : fmt::format("lines {}-{} changed ({})", first, last, state)});
      }
    } else {
      c.hits.push_back({0, 0, score, Source::git_changed, fmt::format("{} ({})", change.status, state)});
    }
  }

  struct SearchTerm {
    std::string text;
    Source source;
    bool spaced = false;  // a phrase (test title, message): no word boundaries
  };

  // The prompt's identifiers, quoted strings and test names, and the report's words, found with the grep
  // engine in one pass: one case-insensitive alternation of them all, its lines then checked term by term
  // (identifiers as whole words and strings as written, case and all; words case-insensitively).
  support::Result<void> search_terms() {
    for (const auto& ident : terms_.identifiers) search_.push_back({ident, Source::identifier, false});
    for (const auto& quoted : terms_.quoted) search_.push_back({quoted, Source::quoted_string, true});
    if ((search_.empty() && terms_.word_keys.empty()) || roots_.empty()) return support::ok();
    std::string pattern;
    for (const auto& term : search_) {
      if (!pattern.empty()) pattern += '|';
      const std::string quoted = quote_regex(term.text);
      pattern += term.spaced || !is_word(term.text.front()) || !is_word(term.text.back())
                     ? quoted
                     : fmt::format("\\b{}\\b", quoted);
    }
    for (const auto& w : terms_.word_keys) pattern += (pattern.empty() ? "" : "|") + quote_regex(w);
    auto matcher = tools::Matcher::compile(tools::SearchPattern{pattern, false, true});
    if (!matcher) return std::move(matcher).error().context("compiling the search of the prompt's terms");

    targets_ = search_targets();
    const std::vector<tools::SearchTarget>& targets = targets_;
    package_.stats.searched_files = targets.size();
    tools::SearchOptions options;
    options.max_line_bytes = limits_.max_line_bytes;
    options.max_kept_bytes = std::size_t{8} << 20;
    auto report = tools::search_files(*matcher, targets, options, cancel_);
    if (!report) return std::move(report).error();
    package_.stats.searched_bytes = report->searched_bytes;

    // First where each term is, then what each hit is worth: a term found in many files says little about
    // any of them, and a name defined in many files (`cli`, `Default`) is no pointer to one of them.
    struct RawHit {
      std::size_t line = 0;
      std::size_t term = 0;
      bool definition = false;  // of an identifier or test; for a spaced test name, its title
    };
    struct FileHits {
      std::size_t root = 0;
      std::string relative;
      std::vector<RawHit> hits;
    };
    std::vector<FileHits> located;
    std::vector<std::size_t> found(search_.size(), 0);     // lines
    std::vector<std::size_t> in_files(search_.size(), 0);  // files
    std::vector<std::size_t> defined_in(search_.size(), 0);
    for (const auto& file : report->files) {
      auto [root, relative] = target_of(file);
      FileHits f{root, std::move(relative), {}};
      // Prose and generated copies mention names; they define none. Type stubs and declaration files
      // (`.pyi`, `.d.ts`) declare them: the definition is the implementation's.
      const bool code = !is_doc_or_generated_path(f.relative) && !is_declaration_path(f.relative);
      std::vector<std::uint8_t> seen(search_.size(), 0);  // 1: found here, 2: defined here too
      for (const auto& line : file.lines) {
        if (!line.is_match) continue;
        for (std::size_t t = 0; t < search_.size(); ++t) {
          const auto& term = search_[t];
          const bool present = term.spaced ? line.text.find(term.text) != std::string::npos
                                           : find_word(line.text, term.text) != std::string_view::npos;
          if (!present) continue;
          ++found[t];
          const bool definition =
              term.spaced ? term.source == Source::test_name : code && is_definition(line.text, term.text);
          f.hits.push_back({line.number, t, definition});
          if (seen[t] == 0) ++in_files[t];
          if (definition && seen[t] != 2) ++defined_in[t];
          seen[t] = definition ? std::uint8_t{2} : std::max(seen[t], std::uint8_t{1});
        }
      }
      if (!f.hits.empty()) located.push_back(std::move(f));
    }
    // How rare a term is among the files searched: 1 when one file holds it, falling towards 0.
    const double searched = static_cast<double>(std::max<std::size_t>(targets.size(), 2));
    const auto rarity = [&](std::size_t files) {
      return std::log(1.0 + searched / static_cast<double>(std::max<std::size_t>(files, 1))) / std::log(1.0 + searched);
    };
    for (auto& f : located) {
      std::vector<Hit> hits;
      for (const RawHit& raw : f.hits) {
        const auto& term = search_[raw.term];
        const std::size_t n = in_files[raw.term];
        double score = 0;
        std::string what;
        if (term.source == Source::test_name) {
          score = raw.definition ? kTestDefinition : kOccurrence * rarity(n);
          what = fmt::format("test `{}` {} at line {}", term.text, raw.definition ? "defined" : "used", raw.line);
        } else if (term.source == Source::quoted_string) {
          score = kQuoted * rarity(n);
          what = fmt::format("string `{}` at line {} (in {} file{})", term.text, raw.line, n, n == 1 ? "" : "s");
        } else if (raw.definition) {
          const std::size_t d = defined_in[raw.term];
          score = std::max(kOccurrence * rarity(n), kDefinition / std::sqrt(static_cast<double>(d)));
          what = fmt::format("identifier `{}` defined at line {}{}", term.text, raw.line,
                             d == 1 ? "" : fmt::format(" (defined in {} files)", d));
        } else {
          score = kOccurrence * rarity(n);
          what =
              fmt::format("identifier `{}` used at line {} (in {} file{})", term.text, raw.line, n, n == 1 ? "" : "s");
        }
        hits.push_back({raw.line, 0, score, term.source, std::move(what),
                        raw.definition && term.source == Source::identifier ? term.text : std::string()});
      }
      // The best few per file: definitions first, then the earliest uses.
      std::stable_sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.score > b.score; });
      if (hits.size() > kMaxHitsPerFileFromSearch) hits.resize(kMaxHitsPerFileFromSearch);
      FileCandidate& c = candidate(f.root, f.relative);
      for (auto& h : hits) c.hits.push_back(std::move(h));
    }
    for (std::size_t t = 0; t < search_.size(); ++t) {
      if (found[t] == 0 && search_[t].source != Source::test_name) not_found_terms_.push_back(search_[t].text);
    }
    score_words(*report, targets.size());  // after the terms' hits: words add to a file already found
    return support::ok();
  }

  // The report's words (by their keys, InputTerms::word_keys: "routing" as `rout`) in the search's lines,
  // case-insensitively and inside identifiers too ("timeout" in "timeoutErrorMessage"): each file's lines holding each
  // word give it a BM25 score, where a word in few of the `searched` files weighs most. The best files become
  // candidates at their rarest word's first line; files already found get the score as a file term.
  void score_words(const tools::SearchReport& report, std::size_t searched) {
    const std::vector<std::string>& words = terms_.word_keys;
    if (words.empty()) return;

    struct FileWords {
      std::size_t root = 0;
      std::string relative;
      std::vector<std::size_t> tf;          // lines holding each word
      std::vector<std::size_t> first_line;  // the first of them
      std::size_t bytes = 0;
    };
    std::vector<FileWords> files;
    std::vector<std::size_t> df(words.size(), 0);
    // One pass over each line finds every word: the words (at most 32, each of 4 letters or more) by
    // their first two letters, a bit each. Searching each word in turn cost 24 scans of every matching
    // line, 15-20 ms of a kernel turn.
    const std::size_t scanned = std::min<std::size_t>(words.size(), 32);
    std::vector<std::uint32_t> starts(std::size_t{1} << 16, 0);
    const auto pair_at = [](std::string_view text, std::size_t i) {
      return static_cast<std::size_t>(static_cast<unsigned char>(text[i])) |
             static_cast<std::size_t>(static_cast<unsigned char>(text[i + 1])) << 8;
    };
    for (std::size_t w = 0; w < scanned; ++w) {
      if (words[w].size() >= 2) starts[pair_at(words[w], 0)] |= std::uint32_t{1} << w;
    }
    std::string lower;
    for (const auto& file : report.files) {
      auto [root, relative] = target_of(file);
      FileWords f{root, std::move(relative), std::vector<std::size_t>(words.size(), 0),
                  std::vector<std::size_t>(words.size(), 0), file.bytes};
      for (const auto& line : file.lines) {
        if (!line.is_match) continue;
        lower = line.text;
        support::ascii_lower_in_place(lower);
        const std::string_view text = lower;
        std::uint32_t held = 0;
        for (std::size_t i = 0; i + 1 < text.size(); ++i) {
          for (std::uint32_t m = starts[pair_at(text, i)] & ~held; m != 0; m &= m - 1) {
            const auto w = static_cast<std::size_t>(std::countr_zero(m));
            if (text.substr(i).starts_with(words[w])) held |= std::uint32_t{1} << w;
          }
        }
        for (std::uint32_t m = held; m != 0; m &= m - 1) {
          const auto w = static_cast<std::size_t>(std::countr_zero(m));
          if (f.tf[w]++ == 0) f.first_line[w] = line.number;
        }
      }
      for (std::size_t w = 0; w < words.size(); ++w) df[w] += f.tf[w] > 0 ? 1 : 0;
      files.push_back(std::move(f));
    }
    if (files.empty()) return;
    const double n = static_cast<double>(std::max(searched, files.size()));
    std::vector<double> idf(words.size(), 0);
    for (std::size_t w = 0; w < words.size(); ++w) {
      const double d = static_cast<double>(df[w]);
      idf[w] = std::log(1.0 + (n - d + 0.5) / (d + 0.5));
    }
    // A long file (a changelog, a bundle) holds every word somewhere: its counts weigh less, by its size
    // against the mean size of the text files searched.
    const std::size_t text_files = report.searched_files - std::min(report.searched_files, report.binary_files);
    const double mean_bytes =
        text_files == 0 ? 1.0
                        : std::max(1.0, static_cast<double>(report.searched_bytes) / static_cast<double>(text_files));
    std::vector<std::pair<double, std::size_t>> scored;  // (score, index into files)
    for (std::size_t i = 0; i < files.size(); ++i) {
      double score = 0;
      const double norm = kWordsK1 * (1 - kWordsB + kWordsB * static_cast<double>(files[i].bytes) / mean_bytes);
      for (std::size_t w = 0; w < words.size(); ++w) {
        const auto tf = static_cast<double>(files[i].tf[w]);
        if (tf > 0) score += idf[w] * tf * (kWordsK1 + 1) / (tf + norm);
      }
      scored.emplace_back(score, i);
    }
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const double best = scored.front().first;
    if (best <= 0) return;
    for (std::size_t k = 0; k < scored.size() && k < kWordFiles; ++k) {
      // Nothing held: the words matched only past the cut of a long line (or in letters that lower-case
      // differently), so the file has no line to point at.
      if (scored[k].first <= 0) break;
      const FileWords& f = files[scored[k].second];
      const double points = kWordsMax * scored[k].first / best;
      // The words it holds, rarest first, for the reason; the rarest one's first line is where to look.
      std::vector<std::size_t> held;
      for (std::size_t w = 0; w < words.size(); ++w) {
        if (f.tf[w] > 0) held.push_back(w);
      }
      if (held.empty()) continue;
      std::stable_sort(held.begin(), held.end(), [&](std::size_t a, std::size_t b) { return idf[a] > idf[b]; });
      std::string list;
      for (std::size_t j = 0; j < held.size() && j < 5; ++j) {
        // A stem reads as one: `rout*` found route, router or routing.
        const std::string& key = words[held[j]];
        const bool stem = std::find(terms_.words.begin(), terms_.words.end(), key) == terms_.words.end();
        list += fmt::format("{}{}{} (in {} files)", j == 0 ? "" : ", ", key, stem ? "*" : "", df[held[j]]);
      }
      const std::string why = fmt::format("report words {}", list);
      FileCandidate& c = candidate(f.root, f.relative);
      if (c.hits.empty()) {
        c.hits.push_back({f.first_line[held.front()], 0, points, Source::report_words, why});
      } else if (std::none_of(c.hits.begin(), c.hits.end(),
                              [](const Hit& h) { return h.source == Source::stack_trace; })) {
        c.terms.push_back({points, why});  // a stack's frames keep the stack's order
      }
    }
  }

  // One hop through references. The body of each of the best definitions of the report's names is read
  // for the names it calls and imports; a file that alone (or nearly) defines one of them gets a share of
  // the caller's score: the fault behind `echo_via_pager` may well be in the `pager` it calls.
  support::Result<void> follow_references() {
    struct Anchor {
      const FileCandidate* file = nullptr;
      const Hit* hit = nullptr;
    };
    std::vector<Anchor> anchors;
    for (const FileCandidate* c : order_) {
      for (const Hit& h : c->hits) {
        if (!h.defines.empty()) anchors.push_back({c, &h});
      }
    }
    std::stable_sort(anchors.begin(), anchors.end(),
                     [](const Anchor& a, const Anchor& b) { return a.hit->score > b.hit->score; });
    if (anchors.size() > kHopAnchors) anchors.resize(kHopAnchors);

    struct Callee {
      std::string name;
      std::vector<std::size_t> callers;  // indexes into anchors
    };
    std::vector<Callee> callees;
    std::set<std::string, std::less<>> searched;
    for (const auto& term : search_) searched.insert(term.text);
    for (std::size_t a = 0; a < anchors.size(); ++a) {
      const FileText& ft = file_text(*anchors[a].file);
      if (!ft.problem.empty()) continue;
      for (const std::string& name : called_names(definition_body(ft, anchors[a].hit->line), anchors[a].hit->defines)) {
        if (searched.count(name) != 0) continue;
        auto it = std::find_if(callees.begin(), callees.end(), [&](const Callee& c) { return c.name == name; });
        if (it == callees.end()) {
          if (callees.size() >= kHopNames) continue;
          it = callees.insert(callees.end(), {name, {}});
        }
        if (std::find(it->callers.begin(), it->callers.end(), a) == it->callers.end()) it->callers.push_back(a);
      }
    }
    if (callees.empty() || targets_.empty()) return support::ok();

    std::string pattern;
    for (const auto& c : callees) pattern += fmt::format("{}\\b{}\\b", pattern.empty() ? "" : "|", quote_regex(c.name));
    auto matcher = tools::Matcher::compile(tools::SearchPattern{pattern, false, false});
    if (!matcher) return std::move(matcher).error().context("compiling the search of the called names");
    tools::SearchOptions options;
    options.max_line_bytes = limits_.max_line_bytes;
    options.max_kept_bytes = std::size_t{4} << 20;
    auto report = tools::search_files(*matcher, targets_, options, cancel_);
    if (!report) return std::move(report).error();

    // Where each called name is defined: (root, relative, line) per name.
    std::vector<std::vector<std::tuple<std::size_t, std::string, std::size_t>>> defined(callees.size());
    for (const auto& file : report->files) {
      const auto [root, relative] = target_of(file);
      if (is_doc_or_generated_path(relative) || is_test_path(relative)) continue;
      for (const auto& line : file.lines) {
        if (!line.is_match) continue;
        for (std::size_t k = 0; k < callees.size(); ++k) {
          auto& where = defined[k];
          if (!where.empty() && std::get<1>(where.back()) == relative && std::get<0>(where.back()) == root) continue;
          if (is_definition(line.text, callees[k].name)) where.emplace_back(root, relative, line.number);
        }
      }
    }
    for (std::size_t k = 0; k < callees.size(); ++k) {
      // The strongest caller gives the score; a name defined in two other files gives each half. A call
      // within the caller's own file leads nowhere new.
      const Anchor& caller = anchors[callees[k].callers.front()];
      auto& where = defined[k];
      std::erase_if(where, [&](const auto& w) {
        return std::get<0>(w) == caller.file->root && std::get<1>(w) == caller.file->relative;
      });
      if (where.empty() || where.size() > kHopMaxDefinitions) continue;
      const double points = caller.hit->score * kHopShare / static_cast<double>(where.size());
      for (const auto& [root, relative, line] : where) {
        FileCandidate& c = candidate(root, relative);
        c.hits.push_back({line, 0, points, Source::reference,
                          fmt::format("defines `{}` (line {}), called by `{}` in {}:{}", callees[k].name, line,
                                      caller.hit->defines, caller.file->display, caller.hit->line)});
      }
    }
    return support::ok();
  }

  // The lines of the definition starting at `line` (1-based): up to the first later line indented no
  // deeper than it (a closing brace or `end` included; a signature's closing parenthesis is not the
  // end), at most kHopBodyLines.
  static std::string_view definition_body(const FileText& ft, std::size_t line) {
    if (line == 0 || line > ft.line_starts.size()) return {};
    const auto indent_of = [&](std::size_t n) {
      const std::size_t start = ft.line_starts[n - 1];
      std::size_t i = start;
      while (i < ft.text.size() && (ft.text[i] == ' ' || ft.text[i] == '\t')) ++i;
      const bool blank = i >= ft.text.size() || ft.text[i] == '\n' || ft.text[i] == '\r';
      return std::pair<std::size_t, bool>{i - start, blank};
    };
    const std::size_t base = indent_of(line).first;
    std::size_t last = line;
    for (std::size_t n = line + 1; n <= ft.line_starts.size() && n < line + kHopBodyLines; ++n) {
      const auto [indent, blank] = indent_of(n);
      last = n;
      if (blank || indent > base) continue;
      const std::size_t at = ft.line_starts[n - 1] + indent;
      if (at < ft.text.size() && (ft.text[at] == ')' || ft.text[at] == ']')) continue;
      break;
    }
    const std::size_t from = ft.line_starts[line - 1];
    const std::size_t to = last < ft.line_starts.size() ? ft.line_starts[last] : ft.text.size();
    return std::string_view(ft.text).substr(from, to - from);
  }

  // The names a body calls (`name(`, `obj.name(`, `Type::name(`) or imports (`import a, b`), first
  // use first; keywords, very short names and the definition's own name left out.
  static std::vector<std::string> called_names(std::string_view body, std::string_view self) {
    static const std::set<std::string_view> kNotCalls = {
        "if",     "for",    "while", "switch", "return", "sizeof",   "catch",   "elif",       "print",
        "len",    "str",    "int",   "list",   "dict",   "set",      "tuple",   "isinstance", "super",
        "range",  "format", "not",   "and",    "func",   "function", "def",     "fn",         "new",
        "typeof", "assert", "defer", "make",   "append", "panic",    "println", "printf",     "Some",
        "Ok",     "Err",    "Box",   "Vec",    "String", "self",     "this"};
    std::vector<std::string> names;
    const auto add = [&](std::string_view name) {
      if (name.size() < 3 || name == self || kNotCalls.count(name) != 0) return;
      if (std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
    };
    for (std::size_t i = 0; i < body.size();) {
      if (!is_word(body[i]) || (i > 0 && is_word(body[i - 1]))) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < body.size() && is_word(body[j])) ++j;
      const std::string_view word = body.substr(i, j - i);
      if (std::isdigit(static_cast<unsigned char>(word[0])) == 0) {
        if (word == "import") {
          // `import a, b` / `from .m import a as b, c`: the imported names, to the end of the line.
          const std::size_t eol = std::min(body.find('\n', j), body.size());
          std::string_view rest = body.substr(j, eol - j);
          for (std::size_t k = 0; k < rest.size();) {
            if (!is_word(rest[k])) {
              ++k;
              continue;
            }
            std::size_t e = k;
            while (e < rest.size() && is_word(rest[e])) ++e;
            const std::string_view name = rest.substr(k, e - k);
            if (name != "as") add(name);
            k = e;
          }
          i = eol;
          continue;
        }
        if (j < body.size() && body[j] == '(') add(word);
      }
      i = j;
    }
    return names;
  }

  // The root index and relative path of a searched file: search_targets() names each
  // "<root index>:<relative>".
  static std::pair<std::size_t, std::string> target_of(const tools::FileMatches& file) {
    const std::size_t colon = file.path.find(':');
    return {std::stoul(file.path.substr(0, colon)), file.path.substr(colon + 1)};
  }

  static std::string quote_regex(std::string_view text) {
    std::string out;
    for (const char c : text) {
      if (!is_word(c) && static_cast<unsigned char>(c) < 0x80) out += '\\';
      out += c;
    }
    return out;
  }

  // The focused search's files from the roots' content indexes, up to `share` in all; then the rest of
  // the search set as without them (neighbours). False, with a note, when a root has no ready index: the
  // caller falls back to path words for every root, so the roots are treated alike.
  template <class Take>
  bool from_content_index(Take& take, std::size_t share) {
    for (const auto& root : roots_) {
      if (!root.content) return false;
      const auto status = root.content->status();
      if (!status.ready) {
        package_.stats.content_index =
            status.error.empty() ? fmt::format("building ({} of {} files); this turn searched by path words",
                                               status.indexed, status.to_index)
                                 : fmt::format("unavailable ({}); this turn searched by path words", status.error);
        return false;
      }
    }
    std::vector<std::string> tokens;
    std::string scratch;
    const auto add = [&](std::string_view token) {
      if (std::find(tokens.begin(), tokens.end(), token) == tokens.end()) tokens.emplace_back(token);
    };
    for (const auto& term : search_) {
      if (term.spaced) {
        TokenSet words;
        words.add_text(term.text);
        std::string_view joined = words.joined();
        while (!joined.empty()) {
          const std::size_t space = joined.find(' ');
          add(joined.substr(0, space));
          joined.remove_prefix(space == std::string_view::npos ? joined.size() : space + 1);
        }
      } else {
        identifier_tokens(term.text, scratch, add);
      }
    }
    for (const auto& word : terms_.words) add(word);
    if (tokens.empty()) return false;
    struct Pick {
      std::size_t root;
      std::string path;
      std::int64_t size;
    };
    std::vector<std::pair<double, Pick>> ranked;
    for (std::size_t r = 0; r < roots_.size(); ++r) {
      auto found = roots_[r].content->search(tokens, share);
      if (!found) {
        package_.stats.content_index =
            fmt::format("failed ({}); this turn searched by path words", found.error().message());
        return false;
      }
      for (auto& match : *found) ranked.push_back({match.score, Pick{r, std::move(match.path), match.size}});
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::size_t taken = 0;
    std::int64_t bytes = 0;
    for (const auto& [score, pick] : ranked) {
      if (taken++ >= share || bytes >= static_cast<std::int64_t>(limits_.focused_index_bytes)) break;
      bytes += pick.size;
      take(pick.root, pick.path);
    }
    package_.stats.content_index = fmt::format("ready ({} tokens searched)", tokens.size());
    return true;
  }

  // Every file when the tree is small; else the files most likely to matter.
  // Files whose path words are the search terms' words, the rarest words weighing most, best first until
  // `full()`. The word itself, or a longer path word it begins ("tokenize" in "tokenizer.rs"), which counts
  // half.
  template <class Take, class Full>
  void take_by_path_words(Take& take, Full full) {
    std::map<std::pair<std::size_t, std::uint32_t>, double> by_words;
    std::set<std::string> words;
    for (const auto& term : search_) {
      for (auto& w : identifier_words(term.text)) {
        if (w.size() >= 3) words.insert(std::move(w));
      }
    }
    for (std::size_t r = 0; r < roots_.size(); ++r) {
      const double n = static_cast<double>(roots_[r].files->files().size());
      for (const auto& w : words) {
        for (const std::string_view pw : roots_[r].files->words_with_prefix(w, 16)) {
          const auto& hits = roots_[r].files->with_word(pw);
          if (hits.empty()) continue;
          const double idf = std::log(1.0 + n / static_cast<double>(hits.size())) * (pw.size() == w.size() ? 1.0 : 0.5);
          for (const std::uint32_t i : hits) by_words[{r, i}] += idf;
        }
      }
    }
    std::vector<std::pair<double, std::pair<std::size_t, std::uint32_t>>> ranked;
    ranked.reserve(by_words.size());
    for (const auto& [key, weight] : by_words) ranked.emplace_back(weight, key);
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [weight, key] : ranked) {
      if (full()) break;
      take(key.first, roots_[key.first].files->files()[key.second]);
    }
  }

  std::vector<tools::SearchTarget> search_targets() {
    std::vector<tools::SearchTarget> targets;
    std::size_t total = 0;
    for (const auto& root : roots_) total += root.files->files().size();
    const auto target = [&](std::size_t r, const std::string& relative) {
      return tools::SearchTarget{roots_[r].path + "/" + relative, fmt::format("{}:{}", r, relative)};
    };
    if (total <= limits_.full_search_max_files) {
      for (std::size_t r = 0; r < roots_.size(); ++r) {
        for (const auto& f : roots_[r].files->files()) targets.push_back(target(r, f));
      }
      return targets;
    }
    package_.stats.search_exhaustive = false;
    std::set<std::pair<std::size_t, std::string>> chosen;
    std::size_t cap = limits_.focused_search_files;
    const auto take = [&](std::size_t r, const std::string& relative) {
      if (chosen.size() >= cap) return false;
      if (chosen.insert({r, relative}).second) targets.push_back(target(r, relative));
      return true;
    };
    // 1. Files already named by a frame, a path, a glob or git.
    for (const FileCandidate* c : order_) take(c->root, c->relative);
    const std::size_t word_share = limits_.focused_search_files * 2 / 3;
    // 2. With a content index: the files it ranks best for the terms and the report's words (BM25F over
    // path words, defined names and every identifier, see storage/content_index.h). The index ranks
    // siblings itself: no neighbours, whose bytes would double the grep.
    if (from_content_index(take, kIndexPicks)) return targets;
    // 2'. Else files whose path words are the terms' words, rarest words weighing most.
    take_by_path_words(take, [&] { return chosen.size() >= word_share; });
    // 3. Neighbours: the other files of the directories chosen so far, nearest first.
    std::vector<std::pair<std::size_t, std::string>> dirs;
    for (const auto& [r, relative] : std::vector<std::pair<std::size_t, std::string>>(chosen.begin(), chosen.end())) {
      const std::size_t slash = relative.rfind('/');
      dirs.emplace_back(r, slash == std::string::npos ? std::string() : relative.substr(0, slash + 1));
    }
    std::sort(dirs.begin(), dirs.end());
    dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
    for (const auto& [r, dir] : dirs) {
      const auto& files = roots_[r].files->files();
      // The list is in path order, so a directory's files are one run starting at its lower bound.
      auto it = std::lower_bound(files.begin(), files.end(), dir);
      for (; it != files.end() && it->starts_with(dir); ++it) {
        if (it->find('/', dir.size()) != std::string::npos) continue;  // deeper: not a sibling
        if (!take(r, *it)) return targets;
      }
    }
    return targets;
  }

  // Bonuses that belong to a file rather than a hit.
  void apply_file_terms() {
    std::set<std::string> words;
    for (const auto& term : search_) {
      for (auto& w : identifier_words(term.text)) {
        if (w.size() >= 3) words.insert(std::move(w));
      }
    }
    const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
    // A bug report that names no test is about the code under test: its tests rank below it. Docs,
    // changelogs and generated bundles rank below the code for a bug report (one citing the docs too),
    // and for any other task not about them; a configuration task keeps its configuration files.
    const TaskKind kind = package_.task.kind;
    // A review with nothing changed is a question about the code.
    const bool review = kind == TaskKind::review && package_.workspace.changed_files_total > 0;
    const bool prefer_source =
        terms_.tests.empty() && (kind == TaskKind::bugfix || (!review && !about_tests(request_.input)));
    const bool prefer_code = kind == TaskKind::bugfix || (!review && !about_docs(request_.input));
    const auto named = [](const FileCandidate* c) {
      return std::any_of(c->hits.begin(), c->hits.end(), [](const Hit& h) {
        return h.source == Source::stack_trace || h.source == Source::mentioned_path;
      });
    };
    for (FileCandidate* c : order_) {
      if (prefer_source && is_test_path(c->relative) && !named(c)) {
        c->terms.push_back({kTestFilePenalty, "a test file, and the request names no test"});
      }
      if (prefer_code && is_doc_or_generated_path(c->relative) && !named(c) &&
          !(kind == TaskKind::config && is_config_path(c->relative))) {
        c->terms.push_back({kDocFilePenalty, "documentation or a generated file, and the request is about code"});
      }
      if (c->changed) {
        const bool only_git =
            std::all_of(c->hits.begin(), c->hits.end(), [](const Hit& h) { return h.source == Source::git_changed; });
        if (!only_git) c->terms.push_back({kChangedBonus, "changed in the working tree or the index"});
      }
      const std::size_t slash = c->relative.rfind('/');
      const std::string name = slash == std::string::npos ? c->relative : c->relative.substr(slash + 1);
      double bonus = 0;
      std::vector<std::string> matched;
      for (const auto& w : identifier_words(name)) {
        if (words.count(w) != 0 && std::find(matched.begin(), matched.end(), w) == matched.end()) {
          matched.push_back(w);
          bonus += kNameBonus;
        }
      }
      if (bonus > 0) {
        std::string list;
        for (const auto& m : matched) list += (list.empty() ? "" : ", ") + m;
        c->terms.push_back({std::min(bonus, kNameBonusMax), fmt::format("file name has the words {}", list)});
      }
      struct stat st {};
      if (::stat(c->absolute.c_str(), &st) == 0 && now - st.st_mtim.tv_sec < kRecentSeconds) {
        c->terms.push_back({kRecentBonus, "modified in the last day"});
      }
    }
  }

  // The slices of each file: a window around each hit, merged where they overlap.
  std::vector<Slice> make_slices() {
    std::vector<Slice> slices;
    for (FileCandidate* c : order_) {
      if (c->hits.empty()) continue;
      std::vector<Slice> mine;
      for (const Hit& h : c->hits) {
        Slice s;
        s.file = c;
        if (h.line == 0) {
          s.start = 1;
          s.end = limits_.head_lines;
        } else if (h.end_line > 0) {
          s.start = h.line > 3 ? h.line - 3 : 1;
          s.end = std::min(h.end_line + 3, s.start + limits_.max_slice_lines - 1);
        } else {
          s.start = h.line > limits_.lines_before ? h.line - limits_.lines_before : 1;
          s.end = h.line + limits_.lines_after;
        }
        s.hits.push_back(&h);
        mine.push_back(std::move(s));
      }
      std::sort(mine.begin(), mine.end(), [](const Slice& a, const Slice& b) { return a.start < b.start; });
      std::vector<Slice> merged;
      for (auto& s : mine) {
        if (!merged.empty() && s.start <= merged.back().end + kMergeGap &&
            std::max(s.end, merged.back().end) - merged.back().start + 1 <= limits_.max_slice_lines) {
          merged.back().end = std::max(merged.back().end, s.end);
          merged.back().hits.insert(merged.back().hits.end(), s.hits.begin(), s.hits.end());
        } else {
          merged.push_back(std::move(s));
        }
      }
      for (auto& s : merged) {
        std::stable_sort(s.hits.begin(), s.hits.end(), [](const Hit* a, const Hit* b) { return a->score > b->score; });
        // Duplicate reasons (one line hit twice by the same term) count once.
        std::vector<const Hit*> unique;
        for (const Hit* h : s.hits) {
          if (std::none_of(unique.begin(), unique.end(), [&](const Hit* u) { return u->why == h->why; }))
            unique.push_back(h);
        }
        s.hits = std::move(unique);
        s.score = s.hits.front()->score;
        s.terms.push_back({s.hits.front()->score, s.hits.front()->why});
        double extra = 0;
        for (std::size_t i = 1; i < s.hits.size(); ++i) extra += s.hits[i]->score * kMultiHitShare;
        if (extra > 0) {
          extra = std::min(extra, kMultiHitMax);
          s.score += extra;
          s.terms.push_back(
              {extra, fmt::format("{} more hit{} in the slice", s.hits.size() - 1, s.hits.size() == 2 ? "" : "s")});
        }
        for (const auto& t : c->terms) {
          s.score += t.points;
          s.terms.push_back(t);
        }
        slices.push_back(std::move(s));
      }
    }
    std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
      if (a.score != b.score) return a.score > b.score;
      if (a.file->display != b.file->display) return a.file->display < b.file->display;
      return a.start < b.start;
    });
    package_.stats.candidates = slices.size();
    return slices;
  }

  // Why a file may not be shown: deny-listed, outside the workspace through a symlink, binary, unreadable.
  const FileText& file_text(const FileCandidate& c) {
    auto [it, inserted] = texts_.try_emplace(c.absolute);
    FileText& ft = it->second;
    if (!inserted) return ft;
    support::Span read = step("context.read");
    read.set_attribute("path", c.display);
    read_file_text(c, ft);
    if (!ft.problem.empty()) {
      read.set_attribute("skipped", ft.problem);
    } else {
      read.set_attribute("bytes", static_cast<std::uint64_t>(ft.text.size()));
    }
    return ft;
  }

  void read_file_text(const FileCandidate& c, FileText& ft) {
    // A pointer or an optional, depending on the tools version: both read the same here.
    if (const auto rule = tools::denied_path(fs::path(c.relative), tools::PathAccess::read)) {
      ft.problem = fmt::format("deny-listed: {}", rule->reason);
      return;
    }
    if (request_.denied && request_.denied(c.absolute)) {
      ft.problem = "deny-listed by the configuration";
      return;
    }
    // Symlinks are followed the way the tools follow them: the result must stay in the workspace.
    auto resolved = guard_.resolve(c.absolute, tools::PathAccess::read);
    if (!resolved) {
      ft.problem = "outside the workspace or deny-listed once symlinks are followed";
      return;
    }
    const int fd = ::open(resolved->absolute.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
      ft.problem = "cannot be read";
      return;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      ft.problem = "not a regular file";
      return;
    }
    ft.mtime = st.st_mtim.tv_sec;
    const std::size_t want = std::min(static_cast<std::size_t>(st.st_size), limits_.max_file_bytes);
    ft.text.resize(want);
    std::size_t filled = 0;
    while (filled < want) {
      const ssize_t n = ::read(fd, ft.text.data() + filled, want - filled);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      filled += static_cast<std::size_t>(n);
    }
    ::close(fd);
    ft.text.resize(filled);
    if (std::string_view(ft.text).substr(0, kBinarySniffBytes).find('\0') != std::string_view::npos) {
      ft.problem = "a binary file";
      ft.text.clear();
      return;
    }
    ft.line_starts.push_back(0);
    for (std::size_t i = 0; i < ft.text.size(); ++i) {
      if (ft.text[i] == '\n' && i + 1 < ft.text.size()) ft.line_starts.push_back(i + 1);
    }
    if (ft.text.empty()) ft.line_starts.clear();
  }

  std::string slice_text(const FileText& ft, std::size_t start, std::size_t end) const {
    std::string out;
    for (std::size_t n = start; n <= end && n <= ft.line_starts.size(); ++n) {
      const std::size_t from = ft.line_starts[n - 1];
      std::size_t to = ft.text.find('\n', from);
      if (to == std::string::npos) to = ft.text.size();
      std::string_view line = std::string_view(ft.text).substr(from, to - from);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      out += fmt::format("{}\t", n);
      if (line.size() > limits_.max_line_bytes) {
        std::size_t cut = limits_.max_line_bytes;
        cut = support::utf8_floor(line, cut);  // whole UTF-8 sequences
        out.append(line.substr(0, cut));
        out += fmt::format(" [line cut: {} more bytes]", line.size() - cut);
      } else {
        out.append(line);
      }
      out += '\n';
    }
    return out;
  }

  std::string reason_of(const Slice& s) const {
    std::string out;
    for (std::size_t i = 0; i < s.hits.size() && i < 3; ++i) {
      if (!out.empty()) out += "; ";
      out += s.hits[i]->why;
    }
    if (s.hits.size() > 3) out += fmt::format("; and {} more", s.hits.size() - 3);
    for (const auto& t : s.file->terms) out += "; " + t.why;
    return out;
  }

  // The evidence for a slice clamped to the file, or nullopt with the reason it cannot be shown.
  Evidence evidence_for(const Slice& s, const FileText& ft, std::size_t start, std::size_t end) const {
    Evidence e;
    e.path = s.file->display;
    e.start_line = start;
    e.end_line = end;
    e.reason = reason_of(s);
    e.score = s.score;
    e.source = s.hits.front()->source;
    e.score_terms = s.terms;
    e.text = slice_text(ft, start, end);
    return e;
  }

  // A narrower window for a tight budget: a few lines around the best hit, or a short head.
  std::pair<std::size_t, std::size_t> narrowed(const Slice& s, std::size_t lines) const {
    const Hit* best = s.hits.front();
    if (best->line == 0) return {1, std::min<std::size_t>(lines, 12)};
    const std::size_t start = best->line > 3 ? best->line - 3 : 1;
    const std::size_t end = best->end_line > 0 ? std::min(best->end_line, start + 15) : best->line + 5;
    return {start, std::min(end, lines)};
  }

  support::Result<void> assemble() {
    std::vector<Slice> slices = make_slices();
    const std::uint64_t budget = request_.token_budget;
    std::size_t changed_shown = limits_.max_changed_shown;
    std::string header = render_header(package_.task, package_.workspace, changed_shown);
    // The header starts with kPackageOpen; pieces are estimated apart, which never underestimates the whole.
    const auto fixed = [&] { return estimate_tokens(header) + estimate_tokens(kPackageClose); };
    if (fixed() > budget) {
      changed_shown = 0;
      header = render_header(package_.task, package_.workspace, 0);
    }
    const bool nothing_fits = fixed() > budget;
    // Room kept for the omitted list and the open questions, so evidence cannot squeeze them out.
    const std::uint64_t reserve = std::min<std::uint64_t>(budget / 6, 400);
    std::uint64_t used = nothing_fits ? 0 : fixed();
    const std::uint64_t evidence_budget = budget > used + reserve ? budget - used - reserve : 0;

    std::vector<OmittedCandidate> omitted;
    std::map<const FileCandidate*, std::size_t> per_file;
    std::vector<Evidence> kept;
    std::uint64_t evidence_used = 0;
    for (const Slice& s : slices) {
      if (cancel_.cancelled()) return cancelled();
      const Hit* best = s.hits.front();
      const auto omit_slice = [&](std::string reason) {
        omitted.push_back({s.file->display, std::move(reason), s.score, best->source, best->line});
      };
      if (kept.size() >= limits_.max_evidence) {
        omit_slice(fmt::format("ranked below the {} evidence blocks kept", limits_.max_evidence));
        continue;
      }
      if (per_file[s.file] >= limits_.max_slices_per_file) {
        omit_slice(fmt::format("{} slices of this file already shown", limits_.max_slices_per_file));
        continue;
      }
      const FileText& ft = file_text(*s.file);
      if (!ft.problem.empty()) {
        omit_slice(ft.problem);
        continue;
      }
      const std::size_t lines = ft.line_starts.size();
      if (lines == 0) {
        omit_slice("an empty file");
        continue;
      }
      if (best->line > lines) {
        omit_slice(
            fmt::format("line {} is past the end of the file ({} lines): the file changed since", best->line, lines));
        continue;
      }
      // Overlap with a block already kept (two slices of one file can meet once clamped): skip.
      const std::size_t start = std::min(s.start, lines);
      const std::size_t end = std::min(s.end, lines);
      const bool covered = std::any_of(kept.begin(), kept.end(), [&](const Evidence& e) {
        return e.path == s.file->display && e.start_line <= start && e.end_line >= end;
      });
      if (covered) continue;
      Evidence e = evidence_for(s, ft, start, end);
      e.id = fmt::format("E{}", kept.size() + 1);
      std::uint64_t cost = estimate_tokens(render_evidence(e));
      if (nothing_fits || evidence_used + cost > evidence_budget) {
        const auto [ns, ne] = narrowed(s, lines);
        if (!nothing_fits && (ns != start || ne != end)) {
          e = evidence_for(s, ft, ns, ne);
          e.id = fmt::format("E{}", kept.size() + 1);
          cost = estimate_tokens(render_evidence(e));
        }
        if (nothing_fits || evidence_used + cost > evidence_budget) {
          omit_slice(fmt::format("over the token budget (needs ~{} tokens, {} left)", cost,
                                 evidence_budget > evidence_used ? evidence_budget - evidence_used : 0));
          continue;
        }
      }
      evidence_used += cost;
      ++per_file[s.file];
      kept.push_back(std::move(e));
    }

    // Now the questions (they depend on what was found) and the omitted list, cut to what fits.
    std::vector<std::string> questions = open_questions(kept);
    std::vector<OmittedCandidate> all_omitted = unresolved_;
    all_omitted.insert(all_omitted.end(), omitted.begin(), omitted.end());
    std::stable_sort(all_omitted.begin(), all_omitted.end(),
                     [](const OmittedCandidate& a, const OmittedCandidate& b) { return a.score > b.score; });
    std::size_t omitted_total = all_omitted.size();

    std::size_t shown = std::min(limits_.max_omitted_shown, omitted_total);
    const auto render_all = [&] {
      if (nothing_fits) return std::string();
      std::string text = header;
      for (const auto& e : kept) text += render_evidence(e);
      text += render_questions(questions);
      text += render_omitted(all_omitted, shown, omitted_total);
      text += kPackageClose;
      return text;
    };
    std::string text = render_all();
    // Fit: fewer omitted lines, then fewer questions, then fewer evidence blocks (last first).
    while (estimate_tokens(text) > budget) {
      if (shown > 0) {
        shown = shown > 4 ? shown / 2 : shown - 1;
      } else if (!questions.empty()) {
        questions.pop_back();
      } else if (!kept.empty()) {
        const Evidence& last = kept.back();
        all_omitted.push_back({last.path, "over the token budget", last.score, last.source, last.start_line});
        ++omitted_total;
        kept.pop_back();
      } else {
        text.clear();  // even the header does not fit
        break;
      }
      text = render_all();
    }
    used = estimate_tokens(text);
    if (all_omitted.size() > limits_.max_omitted_listed) all_omitted.resize(limits_.max_omitted_listed);
    package_.ranked = ranked_files(slices, kept);
    package_.evidence = std::move(kept);
    package_.omitted = std::move(all_omitted);
    package_.omitted_total = omitted_total;
    package_.open_questions = std::move(questions);
    package_.text = std::move(text);
    package_.used_tokens = used;
    return support::ok();
  }

  // Each candidate file once, at its best slice (slices come best first), with the evidence showing it.
  std::vector<RankedFile> ranked_files(const std::vector<Slice>& slices, const std::vector<Evidence>& kept) const {
    std::vector<RankedFile> ranked;
    std::set<const FileCandidate*> seen;
    for (const Slice& s : slices) {
      if (ranked.size() >= limits_.max_ranked) break;
      if (!seen.insert(s.file).second) continue;
      RankedFile r;
      r.path = s.file->display;
      r.score = s.score;
      r.source = s.hits.front()->source;
      r.score_terms = s.terms;
      const auto shown = std::find_if(kept.begin(), kept.end(), [&](const Evidence& e) { return e.path == r.path; });
      if (shown != kept.end()) r.evidence_id = shown->id;
      ranked.push_back(std::move(r));
    }
    return ranked;
  }

  std::vector<std::string> open_questions(const std::vector<Evidence>& kept) const {
    std::vector<std::string> out;
    const TaskKind kind = package_.task.kind;
    if (kept.empty()) {
      out.emplace_back(
          "Nothing in the workspace matched the request: which files, functions or components does it concern?");
    }
    if (!frames_.empty() && resolved_frames_ == 0) {
      out.push_back(
          fmt::format("The stack trace names files that are not in this workspace (such as {}): is this the "
                      "checkout that failed, or is the fault in a dependency?",
                      unresolved_frame_example_));
    }
    if (kind == TaskKind::bugfix && frames_.empty() && terms_.tests.empty()) {
      out.emplace_back("No error output or stack trace was given: what is the exact error, and how is it reproduced?");
    }
    if (kind == TaskKind::review && package_.workspace.changed_files_total == 0) {
      out.emplace_back(package_.workspace.git_repository
                           ? "There are no uncommitted changes: which commit, branch or files should be reviewed?"
                           : "This is not a git repository, so there are no changes to review: which files should be "
                             "reviewed?");
    }
    if (!not_found_terms_.empty()) {
      std::string list;
      for (std::size_t i = 0; i < not_found_terms_.size() && i < 4; ++i) {
        list += fmt::format("{}`{}`", i == 0 ? "" : ", ", not_found_terms_[i]);
      }
      out.push_back(
          package_.stats.search_exhaustive
              ? fmt::format("{} {} not found in the workspace: spelled differently, generated, or in a "
                            "dependency?",
                            list, not_found_terms_.size() == 1 ? "was" : "were")
              : fmt::format("{} {} not found in the {} files searched (of {} indexed; a focused search{}): "
                            "where do they live?",
                            list, not_found_terms_.size() == 1 ? "was" : "were", package_.stats.searched_files,
                            package_.stats.indexed_files,
                            package_.stats.content_index.empty() || package_.stats.content_index.starts_with("ready")
                                ? ""
                                : ", the content index not ready yet"));
    }
    if (!unresolved_paths_.empty() && kind != TaskKind::feature) {
      out.push_back(
          fmt::format("`{}` is named but not in the workspace: was it moved or renamed?", unresolved_paths_.front()));
    }
    if (out.size() > kMaxOpenQuestions) out.resize(kMaxOpenQuestions);
    return out;
  }

  const ContextRequest& request_;
  const ContextLimits& limits_;
  WorkspaceIndex& index_;
  support::CancelToken cancel_;
  tools::PathGuard guard_;

  ContextPackage package_;
  std::vector<StackFrame> frames_;
  InputTerms terms_;
  std::vector<Root> roots_;
  GitState git_;
  std::map<std::string, std::vector<LineRange>> hunks_;
  std::unordered_map<std::string, FileCandidate> candidates_;  // by absolute path; nodes stay where they are
  std::vector<FileCandidate*> order_;                          // in the order they were found
  std::vector<SearchTerm> search_;
  std::vector<OmittedCandidate> unresolved_;
  std::vector<std::string> unresolved_paths_;
  std::vector<std::string> not_found_terms_;
  std::size_t resolved_frames_ = 0;
  std::size_t unresolved_frames_ = 0;
  std::string unresolved_frame_example_;
  std::unordered_map<std::string, FileText> texts_;
  std::vector<tools::SearchTarget> targets_;  // the files the prompt's terms were searched in
};

}  // namespace

std::uint64_t context_token_budget(std::uint64_t context_window_tokens) noexcept {
  return std::clamp<std::uint64_t>(context_window_tokens / 10, 1000, 24000);
}

support::Result<ContextPackage> retrieve_context(const ContextRequest& request, WorkspaceIndex& index,
                                                 support::CancelToken cancel) {
  Retrieval retrieval(request, index, std::move(cancel));
  return retrieval.run();
}

}  // namespace agentd::core::context
