#include "core/context/git_state.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char** environ;  // NOLINT(readability-identifier-naming): POSIX's name

namespace agentd::core::context {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Error;
using Clock = std::chrono::steady_clock;

// A pipe's two ends, closed when it goes away.
struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() = default;
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    close_read();
    close_write();
  }
  bool open() { return ::pipe2(fds, O_CLOEXEC) == 0; }
  void close_read() {
    if (fds[0] >= 0) ::close(fds[0]);
    fds[0] = -1;
  }
  void close_write() {
    if (fds[1] >= 0) ::close(fds[1]);
    fds[1] = -1;
  }
};

// The environment git runs with: ours, minus GIT_* variables that would point it at another repository
// (agentd started from a git hook has GIT_DIR set), plus no optional locks (a status must not take
// index.lock while the user commits), C messages and no credential prompts.
std::vector<std::string> git_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry = *e;
    if (entry.starts_with("GIT_") || entry.starts_with("LC_ALL=") || entry.starts_with("LANGUAGE=")) continue;
    env.emplace_back(entry);
  }
  env.emplace_back("GIT_OPTIONAL_LOCKS=0");
  env.emplace_back("GIT_TERMINAL_PROMPT=0");
  env.emplace_back("LC_ALL=C");
  return env;
}

std::string first_line(std::string_view text) {
  const std::size_t nl = text.find('\n');
  std::string line(text.substr(0, nl));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string_view status_word(char x, char y) {
  const auto either = [&](char c) { return x == c || y == c; };
  if (either('U')) return "conflicted";
  if (either('D')) return "deleted";
  if (either('R')) return "renamed";
  if (either('A') || either('C')) return "added";
  if (either('T')) return "type changed";
  return "modified";
}

// The n-th space-separated field of a porcelain v2 record (0-based); the path is everything after the
// last fixed field, since paths may hold spaces.
std::string_view after_fields(std::string_view record, std::size_t fields) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < fields; ++i) {
    at = record.find(' ', at);
    if (at == std::string_view::npos) return {};
    ++at;
  }
  return record.substr(at);
}

void parse_status(std::string_view out, GitState& state, std::size_t max_changes) {
  std::size_t total = 0;
  std::size_t at = 0;
  const auto next = [&]() -> std::string_view {
    if (at >= out.size()) return {};
    std::size_t end = out.find('\0', at);
    if (end == std::string_view::npos) end = out.size();
    const std::string_view record = out.substr(at, end - at);
    at = end + 1;
    return record;
  };
  while (at < out.size()) {
    const std::string_view record = next();
    if (record.size() < 2) continue;
    if (record.starts_with("# branch.head ")) {
      const std::string_view head = record.substr(14);
      if (head != "(detached)") state.branch = std::string(head);
      continue;
    }
    if (record.starts_with("# branch.oid ")) {
      const std::string_view oid = record.substr(13);
      state.has_head = oid != "(initial)";
      if (!state.branch && state.has_head) state.branch = fmt::format("(detached at {})", oid.substr(0, 7));
      continue;
    }
    if (record[0] == '#') continue;
    GitChange change;
    const char kind = record[0];
    if (kind == '1' || kind == '2' || kind == 'u') {
      if (record.size() < 4) continue;
      const char x = record[2];
      const char y = record[3];
      change.staged = x != '.';
      change.unstaged = y != '.';
      change.status = kind == 'u' ? "conflicted" : std::string(status_word(x, y));
      change.path = std::string(after_fields(record, kind == '1' ? 8 : kind == '2' ? 9 : 10));
      if (kind == '2') change.orig_path = std::string(next());
    } else if (kind == '?') {
      change.status = "untracked";
      change.unstaged = true;
      change.path = std::string(record.substr(2));
    } else {
      continue;  // '!' ignored files: not asked for
    }
    if (change.path.empty()) continue;
    ++total;
    if (state.changes.size() < max_changes) state.changes.push_back(std::move(change));
  }
  if (total > state.changes.size()) {
    state.note = fmt::format("{} changed files; the first {} are listed", total, state.changes.size());
  }
}

std::size_t to_size(std::string_view digits) {
  std::size_t value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return value;
}

}  // namespace

std::string find_repository_root(const std::string& dir) {
  for (fs::path d = fs::path(dir).lexically_normal();; d = d.parent_path()) {
    struct stat st {};
    if (::lstat((d / ".git").c_str(), &st) == 0) return d.string();
    if (d == d.parent_path() || d.empty()) return {};
  }
}

support::Result<CommandOutput> run_command(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                           std::chrono::milliseconds timeout, std::size_t max_output_bytes,
                                           const support::CancelToken& cancel) {
  if (argv.empty()) return Error(Errc::invalid_argument, "no program to run");
  if (cancel.cancelled()) return Error(Errc::cancelled, "cancelled before running " + argv[0]);
  Pipe out, err, wake;
  if (!out.open() || !err.open() || !wake.open()) {
    return Error(Errc::io, fmt::format("pipe: {}", std::strerror(errno)), errno);
  }
  // Cancellation wakes the poll below through a pipe; the callback only writes one byte.
  const int wake_fd = wake.fds[1];
  auto registration = cancel.on_cancel([wake_fd] {
    const char byte = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd, &byte, 1);
  });

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fds[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so a timeout kills whatever it started too; default signal handling.
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t all;
  sigemptyset(&all);
  posix_spawnattr_setsigmask(&attr, &all);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // NOLINT: posix_spawn's signature
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));  // NOLINT
  envp.push_back(nullptr);

  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) {
    if (spawned == ENOENT) return support::make_error(Errc::not_found, "{} not found", argv[0]);
    return Error(Errc::io, fmt::format("cannot run {}: {}", argv[0], std::strerror(spawned)), spawned);
  }
  out.close_write();
  err.close_write();

  CommandOutput result;
  const auto deadline = Clock::now() + timeout;
  bool cancelled = false;
  bool out_open = true;
  bool err_open = true;
  char buffer[1 << 16];
  while (out_open || err_open) {
    if (cancel.cancelled()) {
      cancelled = true;
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (timeout.count() > 0 && left <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[3] = {
        {out_open ? out.fds[0] : -1, POLLIN, 0}, {err_open ? err.fds[0] : -1, POLLIN, 0}, {wake.fds[0], POLLIN, 0}};
    const int ready = ::poll(fds, 3, timeout.count() > 0 ? static_cast<int>(left) : -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].revents != 0) {
      cancelled = true;
      break;
    }
    const auto drain = [&](pollfd& p, Pipe& pipe, std::string& into, bool& open, bool capped) {
      if (p.revents == 0) return;
      const ssize_t n = ::read(pipe.fds[0], buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) return;
      if (n <= 0) {
        open = false;
        return;
      }
      const std::size_t room = max_output_bytes > into.size() ? max_output_bytes - into.size() : 0;
      const auto take = std::min(room, static_cast<std::size_t>(n));
      into.append(buffer, take);
      if (capped && take < static_cast<std::size_t>(n)) result.out_truncated = true;
    };
    drain(fds[0], out, result.out, out_open, true);
    drain(fds[1], err, result.err, err_open, false);
  }
  if (cancelled || result.timed_out) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (cancelled) return support::make_error(Errc::cancelled, "{} cancelled", argv[0]);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

support::Result<GitState> read_git_state(const std::string& cwd, const GitOptions& options,
                                         const support::CancelToken& cancel) {
  GitState state;
  const std::string root = find_repository_root(cwd);
  if (root.empty()) {
    state.note = "not a git repository";
    return state;
  }
  auto ran =
      run_command({options.git, "-C", cwd, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all"},
                  git_environment(), options.timeout, options.max_output_bytes, cancel);
  if (!ran) {
    if (ran.error().code() == Errc::cancelled) return std::move(ran).error();
    state.note = ran.error().code() == Errc::not_found ? "git not found: no branch or changed files"
                                                       : fmt::format("git could not run: {}", ran.error().message());
    return state;
  }
  if (ran->timed_out) {
    state.note = fmt::format("git status took longer than {} ms; changed files unknown", options.timeout.count());
    return state;
  }
  if (ran->exit_code != 0) {
    const std::string why = first_line(ran->err);
    state.note = why.find("not a git repository") != std::string::npos
                     ? "not a git repository"
                     : fmt::format("git status failed: {}", why.empty() ? "no message" : why);
    return state;
  }
  state.repository = true;
  // Porcelain paths are relative to the top of the work tree, which is where `.git` was found.
  state.top_level = root;
  parse_status(ran->out, state, options.max_changes);
  if (ran->out_truncated && state.note.empty()) state.note = "git status output was cut; some changes are missing";
  return state;
}

support::Result<std::map<std::string, std::vector<LineRange>>> read_changed_lines(const GitState& state,
                                                                                  const std::vector<std::string>& paths,
                                                                                  const GitOptions& options,
                                                                                  const support::CancelToken& cancel) {
  std::map<std::string, std::vector<LineRange>> out;
  if (!state.repository || !state.has_head || paths.empty()) return out;
  std::vector<std::string> argv = {options.git,          "-C",           state.top_level, "-c",
                                   "core.quotepath=off", "diff",         "-U0",           "--no-color",
                                   "--no-ext-diff",      "--no-renames", "HEAD",          "--"};
  for (const auto& p : paths) argv.push_back(":(literal)" + p);
  auto ran = run_command(argv, git_environment(), options.timeout, options.max_output_bytes, cancel);
  if (!ran) {
    if (ran.error().code() == Errc::cancelled) return std::move(ran).error();
    return out;
  }
  if (ran->timed_out || ran->exit_code != 0) return out;
  const std::string_view text = ran->out;
  std::string current;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.starts_with("+++ ")) {
      const std::string_view target = line.substr(4);
      current = target.starts_with("b/") ? std::string(target.substr(2)) : std::string();
      continue;
    }
    if (!line.starts_with("@@ ") || current.empty()) continue;
    // @@ -a[,b] +c[,d] @@
    const std::size_t plus = line.find(" +");
    if (plus == std::string_view::npos) continue;
    const std::size_t stop = line.find(' ', plus + 2);
    const std::string_view range = line.substr(plus + 2, stop - plus - 2);
    const std::size_t comma = range.find(',');
    LineRange r;
    r.start = to_size(range.substr(0, comma));
    r.count = comma == std::string_view::npos ? 1 : to_size(range.substr(comma + 1));
    out[current].push_back(r);
  }
  return out;
}

}  // namespace agentd::core::context
