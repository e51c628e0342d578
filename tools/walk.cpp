#include "tools/walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>

#include "tools/ignore.h"
#include "tools/path_guard.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;

// How often, in entries, the walk looks at the cancel token (it also looks at every directory it opens).
constexpr std::size_t kCancelCheckEvery = 1024;
// A .gitignore past this size is read only this far: it bounds what a hostile file can cost.
constexpr std::size_t kMaxIgnoreFileBytes = std::size_t{4} << 20;

// `*` matches any run of characters, everything else itself: enough for the deny-list's components.
bool star_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// The last component of a deny pattern: a name matching none of them cannot be denied, so the walk asks
// denied_path() (which builds a path and splits it) only for the rare name that does.
std::string_view last_component(std::string_view pattern) {
  if (pattern.ends_with('/')) pattern.remove_suffix(1);
  const std::size_t slash = pattern.rfind('/');
  return slash == std::string_view::npos ? pattern : pattern.substr(slash + 1);
}

// Those of the built-in read-denied patterns and of `configured` (which must outlive the result).
std::vector<std::string_view> denied_names(const std::vector<std::string>& configured) {
  std::vector<std::string_view> out;
  for (const DeniedPath& rule : kDeniedPaths) {
    if (!rule.writes_only) out.push_back(last_component(rule.pattern));
  }
  for (const std::string& pattern : configured) out.push_back(last_component(pattern));
  return out;
}

// Reads a whole small file relative to a directory descriptor (or an absolute path with AT_FDCWD); nullopt
// when it is missing, not a regular file, a symlink (git refuses symlinked .gitignore files too) or unreadable.
std::optional<std::string> read_small_file(int dir_fd, const char* name) {
  const int fd = ::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  std::string text(std::min(static_cast<std::size_t>(st.st_size), kMaxIgnoreFileBytes), '\0');
  std::size_t filled = 0;
  while (filled < text.size()) {
    const ssize_t n = ::read(fd, text.data() + filled, text.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    filled += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(filled);
  return text;
}

// One entry of a directory being walked; its name lives in the level's arena.
struct RawEntry {
  std::uint32_t offset = 0;
  std::uint32_t length = 0;
  unsigned char type = DT_UNKNOWN;  // DT_DIR, DT_LNK, DT_REG, ...
};

// A directory on the walk's stack. Levels are reused from one directory to the next at the same depth,
// so their buffers stop allocating once the walk has warmed up.
struct Level {
  std::string names;  // the entries' names, back to back
  std::vector<RawEntry> entries;
  std::size_t next = 0;
  std::optional<IgnoreFile> ignore;  // this directory's .gitignore, when it is inside a repository
  bool in_repository = false;        // this directory or one above it holds `.git`
  std::size_t prefix = 0;            // length of the directory's relative path with its '/' (0: the root)

  std::string_view name(const RawEntry& e) const { return std::string_view(names).substr(e.offset, e.length); }
};

class Walker {
 public:
  Walker(const WalkOptions& options, const std::function<bool(const WalkEntry&)>& visit,
         const support::CancelToken& cancel)
      : options_(options), visit_(visit), cancel_(cancel), denied_names_(denied_names(options_.denied)) {
    if (!options_.deny_base.empty()) deny_prefix_ = options_.deny_base + '/';
  }

  support::Result<WalkStats> run(const std::string& root_given) {
    std::string root = fs::path(root_given).is_absolute() ? root_given : fs::absolute(root_given).string();
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    if (cancel_.cancelled()) return support::Error(Errc::cancelled, "walk cancelled");
    if (options_.respect_ignore) load_repository_rules(root);

    entry_.path = root;
    if (entry_.path.back() != '/') entry_.path += '/';
    root_length_ = entry_.path.size();
    entry_.relative.clear();
    if (!options_.denied_rules.empty()) rules_prefix_ = rules_prefix(root);

    levels_.resize(1);
    if (const int err = read_directory(root.c_str(), levels_[0], in_repository_, true); err != 0) {
      if (err == ENOENT || err == ENOTDIR) return support::make_error(Errc::not_found, "no such directory: {}", root);
      return support::Error(Errc::io, fmt::format("cannot read directory {}: {}", root, std::strerror(err)), err);
    }
    levels_[0].prefix = 0;
    if (options_.max_depth == 0) return stats_;
    depth_ = 1;

    std::size_t seen = 0;
    while (depth_ > 0) {
      Level& level = levels_[depth_ - 1];
      if (level.next == level.entries.size()) {
        --depth_;
        continue;
      }
      const RawEntry raw = level.entries[level.next++];
      if (++seen % kCancelCheckEvery == 0 && cancel_.cancelled()) {
        return support::Error(Errc::cancelled, "walk cancelled");
      }
      const std::string_view name = level.name(raw);
      if (name == ".git") continue;  // git's internals: never shown, never searched
      if (!options_.hidden && name.front() == '.') continue;

      entry_.relative.resize(level.prefix);
      entry_.relative.append(name);
      const bool is_dir = raw.type == DT_DIR;
      if (maybe_denied(name) && denied(entry_.relative)) continue;
      if (!options_.denied_rules.empty() && rule_denied()) continue;
      if (options_.respect_ignore && ignored(is_dir)) {
        ++stats_.ignored;
        continue;
      }
      entry_.path.resize(root_length_ + level.prefix);
      entry_.path.append(name);
      entry_.is_dir = is_dir;
      entry_.is_symlink = raw.type == DT_LNK;
      if (!visit_(entry_)) return stats_;

      if (is_dir && depth_ < options_.max_depth) {
        if (cancel_.cancelled()) return support::Error(Errc::cancelled, "walk cancelled");
        if (levels_.size() == depth_) levels_.emplace_back();  // invalidates `level`, not used below
        Level& child = levels_[depth_];
        if (read_directory(entry_.path.c_str(), child, levels_[depth_ - 1].in_repository, false) != 0) {
          ++stats_.skipped_unreadable;
          continue;
        }
        entry_.relative += '/';
        entry_.path += '/';
        child.prefix = entry_.relative.size();
        ++depth_;
      }
    }
    return stats_;
  }

 private:
  // The root as permission rules see paths (relative to the session's cwd, else absolute), with a '/'.
  std::string rules_prefix(const std::string& root) const {
    const fs::path relative = fs::path(root).lexically_relative(options_.rules_cwd);
    if (options_.rules_cwd.empty() || relative.empty() || *relative.begin() == "..") return root + '/';
    return relative == "." ? std::string() : relative.generic_string() + '/';
  }
  bool rule_denied() {
    rule_path_.assign(rules_prefix_).append(entry_.relative);
    return std::any_of(options_.denied_rules.begin(), options_.denied_rules.end(),
                       [&](const std::string& pattern) { return wildmatch(pattern, rule_path_, true); });
  }

  bool maybe_denied(std::string_view name) const {
    return std::any_of(denied_names_.begin(), denied_names_.end(),
                       [&](std::string_view pattern) { return star_match(pattern, name); });
  }
  bool denied(const std::string& relative) const {
    return denied_path(fs::path(deny_prefix_ + relative), PathAccess::read, options_.denied).has_value();
  }

  // The rules that apply from above the root: the ancestors' .gitignore files up to the repository root,
  // and the repository's info/exclude.
  void load_repository_rules(const std::string& root) {
    fs::path repository;
    for (fs::path dir = root;; dir = dir.parent_path()) {
      struct stat st {};
      if (::lstat((dir / ".git").c_str(), &st) == 0) {
        repository = dir;
        break;
      }
      if (dir == dir.parent_path()) return;  // not in a repository (yet: one may be nested below)
    }
    in_repository_ = true;
    const fs::path inside = fs::path(root).lexically_relative(repository);
    if (!inside.empty() && inside != ".") top_prefix_ = inside.generic_string() + '/';

    // Ancestors, deepest first: the root's parent, then up to the repository root.
    for (fs::path dir = fs::path(root).parent_path(); !top_prefix_.empty() && is_under(dir, repository);
         dir = dir.parent_path()) {
      if (auto text = read_small_file(AT_FDCWD, (dir / ".gitignore").c_str())) {
        const fs::path above = dir.lexically_relative(repository);
        const std::size_t base = above == "." ? 0 : above.generic_string().size() + 1;
        ancestors_.push_back({IgnoreFile(*text), base});
      }
      if (dir == repository) break;
    }
    if (auto text = read_small_file(AT_FDCWD, (repository / ".git" / "info" / "exclude").c_str())) {
      exclude_.emplace(*text);
    }
  }

  // Whether the entry in entry_.relative is ignored: the deepest .gitignore with a matching pattern
  // decides, its last matching pattern wins; then the ancestors' files; then info/exclude.
  bool ignored(bool is_dir) {
    const std::string_view relative = entry_.relative;
    for (std::size_t d = depth_; d-- > 0;) {
      const Level& level = levels_[d];
      if (!level.ignore) continue;
      if (const IgnorePattern* p = level.ignore->match(relative.substr(level.prefix), is_dir)) return !p->negative;
    }
    if (ancestors_.empty() && !exclude_) return false;
    std::string_view full = relative;
    if (!top_prefix_.empty()) {
      full_.assign(top_prefix_);
      full_.append(relative);
      full = full_;
    }
    for (const Ancestor& ancestor : ancestors_) {
      if (const IgnorePattern* p = ancestor.file.match(full.substr(ancestor.base), is_dir)) return !p->negative;
    }
    if (exclude_) {
      if (const IgnorePattern* p = exclude_->match(full, is_dir)) return !p->negative;
    }
    return false;
  }

  // Reads one directory's entries into `level`, sorted, and its .gitignore when the directory is inside a
  // repository (`parent_in_repository`, or a `.git` of its own). Returns 0 or an errno.
  int read_directory(const char* path, Level& level, bool parent_in_repository, bool is_root) {
    level.names.clear();
    level.entries.clear();
    level.next = 0;
    level.ignore.reset();
    level.in_repository = parent_in_repository;
    bool has_gitignore = false;
    // A directory below the root was seen as a directory, not a symlink: O_NOFOLLOW keeps it that way if
    // something swaps in a link meanwhile.
    const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (is_root ? 0 : O_NOFOLLOW);
    const int fd = ::open(path, flags);
    if (fd < 0) return errno;
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
      const int err = errno;
      ::close(fd);
      return err;
    }
    int err = 0;
    for (;;) {
      errno = 0;
      const dirent* d = ::readdir(dir);
      if (d == nullptr) {
        err = errno;
        break;
      }
      const std::string_view name = d->d_name;
      if (name == "." || name == "..") continue;
      unsigned char type = d->d_type;
      if (type == DT_UNKNOWN) {
        // Some file systems do not fill d_type; only then does an entry cost a stat.
        struct stat st {};
        if (::fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
          type = S_ISDIR(st.st_mode)   ? DT_DIR
                 : S_ISLNK(st.st_mode) ? DT_LNK
                 : S_ISREG(st.st_mode) ? DT_REG
                                       : DT_UNKNOWN;
        }
      }
      if (name == ".git") level.in_repository = true;
      if (type == DT_REG && name == ".gitignore") has_gitignore = true;
      level.entries.push_back(
          {static_cast<std::uint32_t>(level.names.size()), static_cast<std::uint32_t>(name.size()), type});
      level.names.append(name);
    }
    if (err == 0 && has_gitignore && level.in_repository && options_.respect_ignore) {
      if (auto text = read_small_file(fd, ".gitignore")) {
        level.ignore.emplace(*text);
        if (level.ignore->empty()) level.ignore.reset();
      }
    }
    ::closedir(dir);
    if (err != 0) return err;
    std::sort(level.entries.begin(), level.entries.end(),
              [&level](const RawEntry& a, const RawEntry& b) { return level.name(a) < level.name(b); });
    return 0;
  }

  struct Ancestor {
    IgnoreFile file;
    std::size_t base;  // bytes of a top-relative path naming the file's directory, with its '/'
  };

  const WalkOptions& options_;
  const std::function<bool(const WalkEntry&)>& visit_;
  const support::CancelToken& cancel_;
  std::vector<std::string_view> denied_names_;  // views into kDeniedPaths and options_.denied
  std::string deny_prefix_;                     // options_.deny_base + '/', or empty
  std::string rules_prefix_;                    // the root as rules see it, '/'-terminated; "" for the cwd
  std::string rule_path_;                       // scratch: an entry's path as rules see it
  WalkStats stats_;
  WalkEntry entry_;
  std::size_t root_length_ = 0;  // entry_.path's length for the root, with its '/'
  std::vector<Level> levels_;    // levels_[d]: the directory at depth d (0: the root)
  std::size_t depth_ = 0;        // levels in use; the entries being visited are at this depth
  std::string top_prefix_;       // the root relative to the repository root, with '/'; empty at the top
  std::string full_;             // scratch: top_prefix_ + entry_.relative
  std::vector<Ancestor> ancestors_;
  std::optional<IgnoreFile> exclude_;
  bool in_repository_ = false;  // the root is inside a repository
};

}  // namespace

support::Result<WalkStats> walk(const std::string& root, const WalkOptions& options,
                                const std::function<bool(const WalkEntry&)>& visit,
                                const support::CancelToken& cancel) {
  Walker walker(options, visit, cancel);
  return walker.run(root);
}

}  // namespace agentd::tools
