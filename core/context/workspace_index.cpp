#include "core/context/workspace_index.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include <sys/stat.h>

#include "core/support/text.h"
#include "tools/walk.h"

namespace agentd::core::context {
namespace {

namespace fs = std::filesystem;
using support::Errc;

// A path word held by more files than this says nothing about which file is meant ("c", "src").
constexpr std::size_t kMaxWordFiles = 20000;

const std::vector<std::uint32_t>& no_files() {
  static const std::vector<std::uint32_t> kEmpty;
  return kEmpty;
}

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

std::int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// What we know of a file's identity for change detection: mtime, size and inode; -1 when it is missing.
struct Stamp {
  std::int64_t mtime = -1;
  std::int64_t size = -1;
  std::uint64_t inode = 0;
  bool operator==(const Stamp&) const = default;
};

Stamp stamp_of(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  return {mtime_ns(st), static_cast<std::int64_t>(st.st_size), static_cast<std::uint64_t>(st.st_ino)};
}

std::string join(const std::string& root, std::string_view relative) {
  if (relative.empty()) return root;
  std::string out = root;
  out += '/';
  out += relative;
  return out;
}

std::string child_of(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  std::string out(dir);
  out += '/';
  out += name;
  return out;
}

// Splits a path into lower-case words at punctuation and camel humps.
template <class Visit>
void path_words(std::string_view path, Visit&& visit) {
  std::string word;
  const auto flush = [&] {
    if (!word.empty()) visit(word);
    word.clear();
  };
  for (std::size_t i = 0; i < path.size(); ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    if (std::isalnum(c) == 0) {
      flush();
      continue;
    }
    if (std::isupper(c) != 0 && i > 0 && std::islower(static_cast<unsigned char>(path[i - 1])) != 0) flush();
    word += support::ascii_lower(static_cast<char>(c));
  }
  flush();
}

}  // namespace

FileList::FileList(std::string root, std::vector<std::string> files, bool truncated, std::uint64_t generation)
    : root_(std::move(root)), files_(std::move(files)), truncated_(truncated), generation_(generation) {
  by_name_.reserve(files_.size());
  std::vector<std::string> words;
  for (std::uint32_t i = 0; i < files_.size(); ++i) {
    const std::string_view path = files_[i];
    const std::size_t slash = path.rfind('/');
    by_name_[slash == std::string_view::npos ? path : path.substr(slash + 1)].push_back(i);
    words.clear();
    path_words(path, [&](const std::string& w) {
      if (std::find(words.begin(), words.end(), w) == words.end()) words.push_back(w);
    });
    for (const auto& w : words) by_word_[w].push_back(i);
  }
  for (auto it = by_word_.begin(); it != by_word_.end();) {
    if (it->second.size() > kMaxWordFiles) {
      it = by_word_.erase(it);
    } else {
      ++it;
    }
  }
  words_.reserve(by_word_.size());
  for (const auto& [word, files] : by_word_) words_.emplace_back(word);
  std::sort(words_.begin(), words_.end());
}

std::vector<std::string_view> FileList::words_with_prefix(std::string_view prefix, std::size_t max) const {
  std::vector<std::string_view> out;
  for (auto it = std::lower_bound(words_.begin(), words_.end(), prefix);
       it != words_.end() && it->starts_with(prefix) && out.size() < max; ++it) {
    out.push_back(*it);
  }
  return out;
}

const std::vector<std::uint32_t>& FileList::with_name(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? no_files() : it->second;
}

const std::vector<std::uint32_t>& FileList::with_word(std::string_view word) const {
  const auto it = by_word_.find(std::string(word));
  return it == by_word_.end() ? no_files() : it->second;
}

// One directory as last listed.
struct DirRecord {
  std::int64_t mtime = -1;
  Stamp gitignore;  // its .gitignore, which can change without the directory's mtime changing
  bool racy = false;
  std::vector<std::string> files;    // names, byte order
  std::vector<std::string> subdirs;  // names, byte order
};

struct WorkspaceIndex::RootState {
  std::string root;
  // By relative path ("" is the root); ordered, so a subtree is a contiguous range.
  std::map<std::string, DirRecord, std::less<>> dirs;
  std::set<std::string, std::less<>> dirty;  // relative directories to re-list regardless of mtime
  // Rules from above the root that the walker applies: the repository's presence and info/exclude,
  // and the ancestors' .gitignore files. Any change means a whole new walk.
  std::vector<std::pair<std::string, Stamp>> outer_rules;
  std::size_t file_count = 0;
  bool truncated = false;
  std::shared_ptr<const FileList> list;
  std::shared_ptr<ContentIndexer> content;
  bool content_stale = true;  // a file changed since the content index last looked
  std::int64_t content_checked_ns = 0;
};

namespace {

using RootState = WorkspaceIndex::RootState;

// The files outside the tree whose change alters what the walker ignores: `.git` in each ancestor (a
// repository appearing or going away), the repository's info/exclude, the ancestors' .gitignore files.
std::vector<std::pair<std::string, Stamp>> outer_rules_of(const std::string& root) {
  // `.git` counts by presence only: its mtime moves with every commit, which changes no ignore rule.
  const auto presence = [](const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 ? Stamp{0, 0, 0} : Stamp{};
  };
  std::vector<std::pair<std::string, Stamp>> out;
  const std::string own = root + "/.git";
  out.emplace_back(own, presence(own));
  out.emplace_back(own + "/info/exclude", stamp_of(own + "/info/exclude"));
  if (out.front().second.mtime >= 0) return out;
  for (fs::path dir = fs::path(root).parent_path();; dir = dir.parent_path()) {
    const std::string git = (dir / ".git").string();
    const Stamp git_stamp = presence(git);
    out.emplace_back(git, git_stamp);
    out.emplace_back((dir / ".gitignore").string(), stamp_of((dir / ".gitignore").string()));
    if (git_stamp.mtime >= 0) {
      out.emplace_back(git + "/info/exclude", stamp_of(git + "/info/exclude"));
      break;
    }
    if (dir == dir.parent_path()) break;
  }
  return out;
}

class Lister {
 public:
  Lister(RootState& state, const IndexOptions& options, const support::CancelToken& cancel)
      : state_(state), options_(options), cancel_(cancel), listed_at_(now_ns()) {}

  // Walks `relative` (a directory of the tree, "" for the root) and everything below it, replacing what
  // was recorded for that subtree.
  support::Result<void> walk_subtree(const std::string& relative) {
    erase_subtree(relative);
    const std::string top = join(state_.root, relative);
    record_directory(relative, top);
    const std::string prefix = relative.empty() ? std::string() : relative + '/';
    bool stopped = false;
    auto walked = tools::walk(
        top, tools::WalkOptions{},
        [&](const tools::WalkEntry& entry) {
          const std::string full = prefix + entry.relative;
          if (entry.is_dir) {
            record_directory(full, entry.path);
            add_child(full, true);
            return true;
          }
          if (entry.is_symlink) return true;  // may lead out of the workspace; never indexed
          if (state_.file_count >= options_.max_files) {
            stopped = true;
            return false;
          }
          add_child(full, false);
          return true;
        },
        cancel_);
    if (!walked) return std::move(walked).error();
    if (stopped) state_.truncated = true;
    return support::ok();
  }

  // Re-lists one recorded directory's direct entries; new subdirectories are walked whole, vanished ones
  // dropped with everything below them. Returns whether anything changed.
  support::Result<bool> relist(const std::string& relative) {
    auto it = state_.dirs.find(relative);
    if (it == state_.dirs.end()) return false;
    const std::string absolute = join(state_.root, relative);
    const Stamp gitignore = stamp_of(absolute + "/.gitignore");
    if (gitignore != it->second.gitignore) {
      // Its rules changed: everything below may be shown or hidden differently.
      AGENTD_TRY_VOID(walk_subtree(relative));
      return true;
    }
    std::vector<std::string> files;
    std::vector<std::string> subdirs;
    tools::WalkOptions options;
    options.max_depth = 1;
    struct stat st {};
    const bool exists = ::lstat(absolute.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    if (exists) {
      it->second.mtime = mtime_ns(st);
      it->second.racy = listed_at_ - it->second.mtime < options_.racy_window_ns;
      auto walked = tools::walk(
          absolute, options,
          [&](const tools::WalkEntry& entry) {
            if (entry.is_dir) {
              subdirs.push_back(entry.relative);
            } else if (!entry.is_symlink) {
              files.push_back(entry.relative);
            }
            return true;
          },
          cancel_);
      if (!walked) {
        if (walked.error().code() == Errc::cancelled) return std::move(walked).error();
        files.clear();  // gone or unreadable between the stat and the read: treated as empty
        subdirs.clear();
      }
    }
    it = state_.dirs.find(relative);
    DirRecord& record = it->second;
    bool changed = false;
    if (files != record.files) {
      const auto before = static_cast<std::ptrdiff_t>(record.files.size());
      state_.file_count = state_.file_count - static_cast<std::size_t>(before) + files.size();
      record.files = std::move(files);
      changed = true;
    }
    if (subdirs != record.subdirs) {
      changed = true;
      std::vector<std::string> old = std::move(record.subdirs);
      record.subdirs = subdirs;
      for (const auto& name : old) {
        if (!std::binary_search(subdirs.begin(), subdirs.end(), name)) erase_subtree(child_of(relative, name));
      }
      for (const auto& name : subdirs) {
        if (!std::binary_search(old.begin(), old.end(), name)) {
          AGENTD_TRY_VOID(walk_subtree(child_of(relative, name)));
        }
      }
    }
    if (!exists && relative.empty()) return support::make_error(Errc::not_found, "no such directory: {}", state_.root);
    return changed;
  }

  void erase_subtree(const std::string& relative) {
    if (relative.empty()) {
      state_.dirs.clear();
      state_.file_count = 0;
      return;
    }
    auto it = state_.dirs.find(relative);
    if (it == state_.dirs.end()) return;
    const std::string prefix = relative + '/';
    auto end = std::next(it);
    while (end != state_.dirs.end() && end->first.starts_with(prefix)) ++end;
    for (auto e = it; e != end; ++e) state_.file_count -= e->second.files.size();
    state_.dirs.erase(it, end);
  }

 private:
  void record_directory(const std::string& relative, const std::string& absolute) {
    DirRecord record;
    struct stat st {};
    // Stamped before the walker reads it: a change made while it is read shows as a newer mtime.
    if (::lstat(absolute.c_str(), &st) == 0) record.mtime = mtime_ns(st);
    record.racy = listed_at_ - record.mtime < options_.racy_window_ns;
    record.gitignore = stamp_of(absolute + "/.gitignore");
    state_.dirs[relative] = std::move(record);
  }

  void add_child(const std::string& full, bool is_dir) {
    const std::size_t slash = full.rfind('/');
    const std::string_view parent =
        slash == std::string::npos ? std::string_view() : std::string_view(full).substr(0, slash);
    const std::string_view name =
        slash == std::string::npos ? std::string_view(full) : std::string_view(full).substr(slash + 1);
    auto it = state_.dirs.find(parent);
    if (it == state_.dirs.end()) return;
    // The walker visits each directory's entries in byte order, so appending keeps the lists sorted.
    (is_dir ? it->second.subdirs : it->second.files).emplace_back(name);
    if (!is_dir) ++state_.file_count;
  }

  RootState& state_;
  const IndexOptions& options_;
  const support::CancelToken& cancel_;
  std::int64_t listed_at_;
};

// The flat list in path order: each directory's files and subdirectories merged by name, a directory's
// contents right after its name, as the walker orders them.
std::vector<std::string> flatten(const RootState& state) {
  std::vector<std::string> out;
  out.reserve(state.file_count);
  struct Frame {
    const std::string* relative;
    const DirRecord* record;
    std::size_t f = 0;
    std::size_t d = 0;
  };
  const auto root = state.dirs.find(std::string_view());
  if (root == state.dirs.end()) return out;
  static const std::string kEmpty;
  std::vector<Frame> frames;
  frames.push_back({&kEmpty, &root->second});
  std::deque<std::string> held;  // the frames' relative names; a deque keeps them where they are
  while (!frames.empty()) {
    Frame& top = frames.back();
    const auto& files = top.record->files;
    const auto& subdirs = top.record->subdirs;
    if (top.f == files.size() && top.d == subdirs.size()) {
      frames.pop_back();
      continue;
    }
    const bool take_file = top.d == subdirs.size() || (top.f < files.size() && files[top.f] < subdirs[top.d]);
    if (take_file) {
      out.push_back(child_of(*top.relative, files[top.f++]));
      continue;
    }
    held.push_back(child_of(*top.relative, subdirs[top.d++]));
    const auto it = state.dirs.find(held.back());
    if (it != state.dirs.end()) frames.push_back({&held.back(), &it->second});
  }
  return out;
}

}  // namespace

WorkspaceIndex::WorkspaceIndex(IndexOptions options) : options_(std::move(options)) {}
WorkspaceIndex::~WorkspaceIndex() = default;

support::Result<RefreshResult> WorkspaceIndex::refresh(const std::string& root_given,
                                                       const support::CancelToken& cancel,
                                                       std::span<const std::string> deny_paths) {
  std::string root = root_given;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  const std::lock_guard lock(mutex_);
  if (cancel.cancelled()) return support::Error(Errc::cancelled, "index refresh cancelled");
  auto& slot = roots_[root];
  RefreshResult result;
  const auto fail = [&](support::Error error) -> support::Result<RefreshResult> {
    slot.reset();  // half-updated: the next refresh starts over
    return error;
  };

  auto outer = outer_rules_of(root);
  if (slot && slot->outer_rules != outer) slot.reset();
  if (!slot) {
    auto state = std::make_unique<RootState>();
    state->root = root;
    state->outer_rules = std::move(outer);
    struct stat st {};
    if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      roots_.erase(root);
      return support::make_error(Errc::not_found, "no such directory: {}", root);
    }
    Lister lister(*state, options_, cancel);
    if (auto walked = lister.walk_subtree(""); !walked) return fail(std::move(walked).error());
    slot = std::move(state);
    result.walked = true;
    result.changed = true;
    result.directories_checked = slot->dirs.size();
    result.directories_relisted = slot->dirs.size();
  } else {
    RootState& state = *slot;
    // Which directories changed: a stat each (and of its .gitignore, when it has one), relative to the
    // root's descriptor so the kernel does not walk the root's own path thousands of times.
    std::vector<std::string> stale;
    const int root_fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root_fd < 0) {
      roots_.erase(root);
      return support::make_error(Errc::not_found, "no such directory: {}", root);
    }
    std::string scratch;
    for (auto& [relative, record] : state.dirs) {
      ++result.directories_checked;
      if (result.directories_checked % 512 == 0 && cancel.cancelled()) {
        ::close(root_fd);
        return support::Error(Errc::cancelled, "index refresh cancelled");
      }
      struct stat st {};
      const char* name = relative.empty() ? "." : relative.c_str();
      const bool gone = ::fstatat(root_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode);
      bool changed = gone || record.racy || mtime_ns(st) != record.mtime || state.dirty.count(relative) != 0;
      if (!changed && record.gitignore.mtime >= 0) {
        scratch.assign(relative.empty() ? "." : relative);
        scratch += "/.gitignore";
        struct stat ignore {};
        const Stamp now = ::fstatat(root_fd, scratch.c_str(), &ignore, AT_SYMLINK_NOFOLLOW) == 0
                              ? Stamp{mtime_ns(ignore), static_cast<std::int64_t>(ignore.st_size),
                                      static_cast<std::uint64_t>(ignore.st_ino)}
                              : Stamp{};
        changed = now != record.gitignore;
      }
      if (changed) stale.push_back(relative);
    }
    ::close(root_fd);
    state.dirty.clear();
    Lister lister(state, options_, cancel);
    for (const auto& relative : stale) {
      if (cancel.cancelled()) return fail(support::Error(Errc::cancelled, "index refresh cancelled"));
      auto changed = lister.relist(relative);
      if (!changed) return fail(std::move(changed).error());
      ++result.directories_relisted;
      result.changed = result.changed || *changed;
    }
  }
  RootState& state = *slot;
  if (result.changed || !state.list) {
    state.list = std::make_shared<const FileList>(root, flatten(state), state.truncated, ++generation_);
    state.content_stale = true;
  }
  result.files = state.list;
  if (!options_.content.cache_directory.empty() && state.list->files().size() > options_.content_min_files) {
    if (!state.content) {
      state.content = std::make_shared<ContentIndexer>(
          root, ContentIndexer::database_path(options_.content.cache_directory, root), options_.content);
    }
    const std::int64_t now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    if (state.content->deny(deny_paths)) state.content_stale = true;
    if (state.content_stale || now - state.content_checked_ns >= options_.content_recheck_ns) {
      state.content->update(state.list);
      state.content_stale = false;
      state.content_checked_ns = now;
    }
    result.content = state.content;
  }
  return result;
}

void WorkspaceIndex::notify_changed(const std::string& absolute_path) {
  const std::lock_guard lock(mutex_);
  for (auto& [root, state] : roots_) {
    if (!state ||
        !(absolute_path.size() > root.size() && absolute_path.starts_with(root) && absolute_path[root.size()] == '/')) {
      continue;
    }
    // The nearest recorded directory at or above the path's parent.
    std::string relative = absolute_path.substr(root.size() + 1);
    for (;;) {
      const std::size_t slash = relative.rfind('/');
      relative = slash == std::string::npos ? std::string() : relative.substr(0, slash);
      if (state->dirs.count(relative) != 0 || relative.empty()) break;
    }
    state->dirty.insert(relative);
    state->content_stale = true;
    // The path may itself be a recorded directory whose contents changed.
    const std::string self = absolute_path.substr(root.size() + 1);
    if (state->dirs.count(self) != 0) state->dirty.insert(self);
  }
}

void WorkspaceIndex::forget(const std::string& root) {
  const std::lock_guard lock(mutex_);
  roots_.erase(root);
}

}  // namespace agentd::core::context
