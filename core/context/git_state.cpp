#include "core/context/git_state.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "core/support/unique_fd.h"
#include "tools/process.h"
#include "tools/sandbox.h"

namespace agentd::core::context {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using support::Errc;
using support::Error;
using namespace std::chrono_literals;

// Transports git knows by name. Each gets a `never` of its own: protocol.<name>.allow outranks
// protocol.allow (transport.c, get_protocol_config), and a repository may set protocol.ext.allow.
constexpr std::array<std::string_view, 8> kTransports = {"ext", "file", "git", "ssh", "http", "https", "ftp", "ftps"};

// How much of git's stderr is kept: its first line makes the note.
constexpr std::size_t kStderrBytes = std::size_t{64} << 10;

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

// One git run to its end.
struct GitRun {
  int exit_code = -1;  // -1 when killed by a signal
  bool timed_out = false;
  std::string out;
  std::string err;  // the start of it
  bool out_truncated = false;
};

// The sandbox every git run of one call shares: nothing writable (a status takes no lock, see
// GIT_OPTIONAL_LOCKS) and no network. Without network isolation on this kernel, writes are still
// denied; without Landlock, the command-line hardening stands alone.
std::optional<tools::SandboxPlan> prepare_sandbox() {
  tools::SandboxRequest request;
  request.deny_network = true;
  auto plan = tools::SandboxPlan::prepare(request);
  if (!plan && plan.error().code() == Errc::unsupported) {
    request.deny_network = false;
    plan = tools::SandboxPlan::prepare(request);
  }
  if (!plan) return std::nullopt;
  return std::move(*plan);
}

// Runs hardened git commands for one read_git_state or read_changed_lines call.
class Git {
 public:
  Git(const GitOptions& options, const support::CancelToken& cancel)
      : options_(options), cancel_(cancel), env_(git_environment()) {
    if (options.sandbox) sandbox_ = prepare_sandbox();
  }

  // `git --no-pager -C dir -c <override>... args...`. Errc::cancelled when `cancel` fires,
  // Errc::not_found when git is missing, other errors when it cannot be started.
  support::Result<GitRun> run(const std::string& dir, const std::vector<std::string>& overrides,
                              const std::vector<std::string>& args) const {
    tools::ProcessOptions process;
    process.argv = {options_.git, "--no-pager", "-C", dir};
    for (const auto& o : overrides) {
      process.argv.emplace_back("-c");
      process.argv.push_back(o);
    }
    process.argv.insert(process.argv.end(), args.begin(), args.end());
    process.env = env_;
    process.timeout = options_.timeout;
    process.kill_grace = 200ms;
    process.capture_head_bytes = options_.max_output_bytes;
    process.capture_tail_bytes = 0;
    process.sandbox = sandbox_ ? &*sandbox_ : nullptr;
    // stderr apart from stdout, or a warning could land inside the porcelain records.
    const support::UniqueFd err(::memfd_create("agentd-git-stderr", MFD_CLOEXEC));
    if (err.get() < 0) return support::make_error(Errc::io, "memfd_create: {}", std::strerror(errno));
    process.stderr_fd = err.get();

    // A root, not in a TaskGroup: this private loop runs the one coroutine to its end right here.
    asio::io_context io;
    std::optional<support::Result<tools::ProcessResult>> ran;
    const tools::OutputCallback no_live_output;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> { ran.emplace(co_await tools::run_process(process, no_live_output, cancel_)); },
        [](const std::exception_ptr& error) {
          if (error) std::rethrow_exception(error);
        });
    io.run();
    if (!*ran) return std::move(*ran).error();
    tools::ProcessResult& result = ran->value();
    if (result.ended_by == tools::EndedBy::cancelled) return support::make_error(Errc::cancelled, "git cancelled");

    GitRun out;
    out.timed_out = result.ended_by == tools::EndedBy::timeout;
    out.exit_code = result.ended_by == tools::EndedBy::exit ? result.exit_code : -1;
    // With no tail kept, the capture is the head plus a note of what was dropped: keep the head only.
    out.out_truncated = result.truncated_bytes > 0;
    out.out = std::move(result.output);
    if (out.out_truncated) out.out.resize(result.output_bytes - result.truncated_bytes);
    out.err.resize(kStderrBytes);
    const ssize_t n = ::pread(err.get(), out.err.data(), out.err.size(), 0);
    out.err.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return out;
  }

  // The -c overrides for the repository at `dir`: the fixed ones, plus an emptied set for each filter
  // driver and a `never` for each transport that any config git reads there names (system, global,
  // local, worktree and whatever they include). Listing them runs `git config`, which executes nothing.
  // When the config cannot be read or names a driver no -c can reach, `problem` says so (and git must
  // not run).
  support::Result<std::vector<std::string>> overrides(const std::string& dir, std::string& problem) const {
    const std::vector<std::string> fixed = git_config_overrides({}, {});
    auto listed = run(dir, fixed, {"config", "-z", "--name-only", "--get-regexp", R"(^(filter|protocol)\.)"});
    if (!listed) {
      if (listed.error().code() == Errc::cancelled) return std::move(listed).error();
      problem = describe(listed.error());
      return std::vector<std::string>();
    }
    if (listed->timed_out) {
      problem = fmt::format("git config took longer than {} ms", options_.timeout.count());
      return std::vector<std::string>();
    }
    // 1: nothing matched.
    if (listed->exit_code != 0 && listed->exit_code != 1) {
      problem = failure("git config", *listed);
      return std::vector<std::string>();
    }
    if (listed->out_truncated) {
      problem = "git config listed more than agentd reads";
      return std::vector<std::string>();
    }
    std::vector<std::string> filters;
    std::vector<std::string> protocols;
    for (std::size_t at = 0; at < listed->out.size();) {
      std::size_t end = listed->out.find('\0', at);
      if (end == std::string::npos) end = listed->out.size();
      const std::string_view name = std::string_view(listed->out).substr(at, end - at);
      at = end + 1;
      // section.subsection.key; the subsection may hold dots, the section and the key may not.
      const std::size_t first = name.find('.');
      const std::size_t last = name.rfind('.');
      if (first == std::string_view::npos || last == first) continue;
      const std::string_view section = name.substr(0, first);
      const std::string subsection(name.substr(first + 1, last - first - 1));
      if (subsection.find('=') != std::string::npos || subsection.find('\n') != std::string::npos) {
        // `-c a.b=c.d=e` is split at the first '=' (config.c, git_config_push_parameter).
        problem = fmt::format("the git config names {} \"{}\", which agentd cannot switch off", section, subsection);
        return std::vector<std::string>();
      }
      auto& into = section == "filter" ? filters : protocols;
      if (std::find(into.begin(), into.end(), subsection) == into.end()) into.push_back(subsection);
    }
    return git_config_overrides(filters, protocols);
  }

  static std::string describe(const Error& error) {
    return error.code() == Errc::not_found ? "git not found" : fmt::format("git could not run: {}", error.message());
  }

  static std::string failure(std::string_view what, const GitRun& run) {
    const std::string why = first_line(run.err);
    return fmt::format("{} failed: {}", what, why.empty() ? fmt::format("exit code {}", run.exit_code) : why);
  }

 private:
  const GitOptions& options_;
  const support::CancelToken& cancel_;
  std::vector<std::string> env_;
  std::optional<tools::SandboxPlan> sandbox_;
};

}  // namespace

std::vector<std::string> git_environment() {
  std::string path;
  const char* inherited = std::getenv("PATH");
  std::string_view rest = inherited != nullptr ? inherited : "";
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (!dir.starts_with('/')) continue;  // "", ".", "bin": relative to git's cwd, the workspace
    if (!path.empty()) path += ':';
    path += dir;
  }
  if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
  std::vector<std::string> env = {"PATH=" + path};
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') env.push_back(std::string("HOME=") + home);
  env.emplace_back("LANG=C");
  env.emplace_back("LC_ALL=C");
  env.emplace_back("GIT_OPTIONAL_LOCKS=0");
  env.emplace_back("GIT_TERMINAL_PROMPT=0");
  return env;
}

std::vector<std::string> git_config_overrides(const std::vector<std::string>& filters,
                                              const std::vector<std::string>& protocols) {
  std::vector<std::string> out = {
      "core.fsmonitor=false",      // a command git runs on every status
      "core.hooksPath=/dev/null",  // no hook can be found (status may write the index: post-index-change)
      "core.pager=cat",            // besides --no-pager
      "diff.external=",            // besides --no-ext-diff, which also stops diff.<driver>.command
      // Nothing here fetches, but a partial clone's lazy fetch would: no ssh, askpass, credential
      // helper, and no transport at all (ext:: runs a command).
      "core.sshCommand=false",          // runs `false`, not ssh
      "core.askPass=",                  // none: GIT_TERMINAL_PROMPT=0 then refuses to ask
      "credential.helper=",             // an empty value resets the list of helpers
      "protocol.allow=never",           // and each transport below
      "core.untrackedCache=false",      // no index extension to update
      "status.submoduleSummary=false",  // (porcelain output has none anyway)
      "core.quotePath=off",             // paths as they are, not octal-escaped
  };
  const auto never = [&out](std::string_view transport) {
    out.push_back(fmt::format("protocol.{}.allow=never", transport));
  };
  for (std::string_view transport : kTransports) never(transport);
  for (const auto& p : protocols) {
    if (std::find(kTransports.begin(), kTransports.end(), p) == kTransports.end()) never(p);
  }
  for (const auto& f : filters) {
    out.push_back(fmt::format("filter.{}.clean=", f));
    out.push_back(fmt::format("filter.{}.smudge=", f));
    out.push_back(fmt::format("filter.{}.process=", f));
    // A required driver that does not run is an error (convert.c, convert_to_git).
    out.push_back(fmt::format("filter.{}.required=false", f));
  }
  return out;
}

std::string find_repository_root(const std::string& dir) {
  for (fs::path d = fs::path(dir).lexically_normal();; d = d.parent_path()) {
    struct stat st {};
    if (::lstat((d / ".git").c_str(), &st) == 0) return d.string();
    if (d == d.parent_path() || d.empty()) return {};
  }
}

support::Result<GitState> read_git_state(const std::string& cwd, const GitOptions& options,
                                         const support::CancelToken& cancel) {
  GitState state;
  const std::string root = find_repository_root(cwd);
  if (root.empty()) {
    state.note = "not a git repository";
    return state;
  }
  const Git git(options, cancel);
  std::string problem;
  auto overrides = git.overrides(cwd, problem);
  if (!overrides) return std::move(overrides).error();
  if (!problem.empty()) {
    if (problem.starts_with("git not found")) {
      state.note = "git not found: no branch or changed files";
    } else if (problem.find("not a git repository") != std::string::npos) {
      state.note = "not a git repository";
    } else {
      state.note = fmt::format("git state not read: {}", problem);
    }
    return state;
  }
  // Submodules: only their commits, since a dirty check runs git inside each one, under a config
  // whose filter drivers were not listed here.
  auto ran =
      git.run(cwd, *overrides,
              {"status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignore-submodules=dirty"});
  if (!ran) {
    if (ran.error().code() == Errc::cancelled) return std::move(ran).error();
    state.note = ran.error().code() == Errc::not_found ? "git not found: no branch or changed files"
                                                       : Git::describe(ran.error());
    return state;
  }
  if (ran->timed_out) {
    state.note = fmt::format("git status took longer than {} ms; changed files unknown", options.timeout.count());
    return state;
  }
  if (ran->exit_code != 0) {
    const std::string why = first_line(ran->err);
    state.note = why.find("not a git repository") != std::string::npos ? "not a git repository"
                                                                       : Git::failure("git status", *ran);
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
  const Git git(options, cancel);
  // Listed again rather than kept from read_git_state: the config may have changed in between.
  std::string problem;
  auto overrides = git.overrides(state.top_level, problem);
  if (!overrides) return std::move(overrides).error();
  if (!problem.empty()) return out;
  std::vector<std::string> args = {
      "diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--ignore-submodules=dirty",
      "HEAD", "--"};
  for (const auto& p : paths) args.push_back(":(literal)" + p);
  auto ran = git.run(state.top_level, *overrides, args);
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
