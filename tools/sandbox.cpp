// One file because the sandbox is one sequence: what the parent prepares (rulesets, mount plan, masked
// paths) and what the forked child applies must be read together to see that the child only applies it.
#include "tools/sandbox.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tools/path_guard.h"

namespace agentd::tools {
namespace {

using support::Errc;

// The Landlock ABI grew after the kernel headers this builds against (Debian 12's know ABI 2), so the
// newer bits and the full ruleset attribute are spelled out here, as the kernel defines them.
constexpr std::uint64_t kFsExecute = 1ULL << 0;
constexpr std::uint64_t kFsWriteFile = 1ULL << 1;
constexpr std::uint64_t kFsReadFile = 1ULL << 2;
constexpr std::uint64_t kFsReadDir = 1ULL << 3;
constexpr std::uint64_t kFsAbi1 = (1ULL << 13) - 1;  // EXECUTE .. MAKE_SYM
constexpr std::uint64_t kFsRefer = 1ULL << 13;       // ABI 2: link/rename across directories
constexpr std::uint64_t kFsTruncate = 1ULL << 14;    // ABI 3
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;     // ABI 4
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;  // ABI 4
constexpr std::uint64_t kScopeSignal = 1ULL << 1;    // ABI 6: no signals to processes outside the sandbox

struct RulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};

// Rights a rule on a regular or device file may carry; directory rights there are EINVAL.
constexpr std::uint64_t kFileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate;

std::uint64_t handled_fs(int abi) {
  std::uint64_t rights = kFsAbi1;
  if (abi >= 2) rights |= kFsRefer;
  if (abi >= 3) rights |= kFsTruncate;
  // ABI 5's IOCTL_DEV is left unhandled: it guards device ioctls (terminals), not writes.
  return rights;
}

// The kernel takes the attribute at the size it knows; a larger one must be zero past that.
std::size_t ruleset_attr_size(int abi) {
  if (abi >= 6) return sizeof(RulesetAttr);
  if (abi >= 4) return offsetof(RulesetAttr, scoped);
  return offsetof(RulesetAttr, handled_access_net);
}

int landlock_create_ruleset(const RulesetAttr* attr, std::size_t size, std::uint32_t flags) {
  return static_cast<int>(::syscall(SYS_landlock_create_ruleset, attr, size, flags));
}

// Devices a command legitimately writes to; everything else under /dev stays read-only.
constexpr std::array<const char*, 7> kWritableDevices = {"/dev/null",    "/dev/zero", "/dev/full", "/dev/random",
                                                         "/dev/urandom", "/dev/tty",  "/dev/ptmx"};

support::Error errno_error(Errc code, std::string_view what, int error) {
  return support::Error(code, fmt::format("{}: {}", what, std::generic_category().message(error)), error);
}

// Adds "`path` and everything beneath it may be accessed with `rights`". ENOENT is the caller's call.
int add_path_rule(int ruleset_fd, const char* path, std::uint64_t rights) {
  const int fd = ::open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno;
  landlock_path_beneath_attr rule{};
  rule.allowed_access = rights;
  rule.parent_fd = fd;
  const long rc = ::syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
  const int error = rc == 0 ? 0 : errno;
  ::close(fd);
  return error;
}

// write(2) of a whole short string to a /proc file; async-signal-safe.
int write_proc_file(const char* path, const char* text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const std::size_t length = std::strlen(text);
  const ssize_t n = ::write(fd, text, length);
  const int error = n == static_cast<ssize_t>(length) ? 0 : (n < 0 ? errno : EIO);
  ::close(fd);
  return error;
}

// Brings the namespace's loopback interface up, so a test suite can still talk to a server it starts
// itself. Best effort: with loopback down only local servers suffer, and the outside stays cut off.
void bring_loopback_up() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  ifreq request{};
  std::memcpy(request.ifr_name, "lo", 3);
  if (::ioctl(fd, SIOCGIFFLAGS, &request) == 0) {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
    (void)::ioctl(fd, SIOCSIFFLAGS, &request);
  }
  ::close(fd);
}

// In a user namespace just entered: the user keeps its own ids inside. Async-signal-safe.
int write_id_maps(const char* uid_map, const char* gid_map, const char** step) {
  // An unprivileged process may map its gid only after giving up setgroups(2).
  if (int error = write_proc_file("/proc/self/setgroups", "deny"); error != 0 && error != ENOENT) {
    *step = "writing /proc/self/setgroups";
    return error;
  }
  if (int error = write_proc_file("/proc/self/gid_map", gid_map); error != 0) {
    *step = "writing /proc/self/gid_map";
    return error;
  }
  if (int error = write_proc_file("/proc/self/uid_map", uid_map); error != 0) {
    *step = "writing /proc/self/uid_map";
    return error;
  }
  return 0;
}

// A new user namespace (so no privilege is needed) holding a new network namespace, which has only a
// loopback interface: nothing outside is reachable. The user keeps its own ids inside.
// Async-signal-safe: runs between fork and exec.
int enter_network_namespace(const char* uid_map, const char* gid_map, const char** step) {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
    *step = "unshare(CLONE_NEWUSER | CLONE_NEWNET)";
    return errno;
  }
  if (int error = write_id_maps(uid_map, gid_map, step); error != 0) return error;
  bring_loopback_up();
  return 0;
}

// A private mount namespace, with a network namespace when `network`, inside a new user namespace when
// `user_namespace` (agentd is not root: that is where the right to mount comes from). Nothing mounted
// afterwards propagates back: the whole tree is made private first. Async-signal-safe.
int enter_mount_namespace(bool user_namespace, bool network, const char* uid_map, const char* gid_map,
                          const char** step) {
  const int flags = CLONE_NEWNS | (network ? CLONE_NEWNET : 0) | (user_namespace ? CLONE_NEWUSER : 0);
  if (::unshare(flags) != 0) {
    *step = user_namespace ? "unshare(CLONE_NEWUSER | CLONE_NEWNS)" : "unshare(CLONE_NEWNS)";
    return errno;
  }
  if (user_namespace) {
    if (int error = write_id_maps(uid_map, gid_map, step); error != 0) return error;
  }
  if (network) bring_loopback_up();
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    *step = "mount(MS_REC | MS_PRIVATE) of /";
    return errno;
  }
  return 0;
}

// Empties the bounding, ambient, inheritable, permitted and effective capability sets. Async-signal-safe.
int drop_capabilities(const char** step) noexcept {
  for (int cap = 0; cap <= 63; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;  // past the kernel's last capability
      if (errno == EPERM) break;   // no CAP_SETPCAP: an unprivileged process with nothing to drop
      *step = "prctl(PR_CAPBSET_DROP)";
      return errno;
    }
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    *step = "prctl(PR_CAP_AMBIENT_CLEAR_ALL)";
    return errno;
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3> data{};
  if (::syscall(SYS_capset, &header, data.data()) != 0) {
    *step = "capset (dropping every capability)";
    return errno;
  }
  return 0;
}

// The flags of the mount under `path` that a remount has to keep: in a user namespace the kernel locks
// nosuid, nodev, noexec and the atime flags of mounts that came from outside, and a remount that drops
// one fails with EPERM. statfs(2) is a plain system call: async-signal-safe.
unsigned long kept_mount_flags(const char* path) noexcept {
  struct statfs info {};
  if (::statfs(path, &info) != 0) return 0;
  const auto has = [&](unsigned long flag) { return (static_cast<unsigned long>(info.f_flags) & flag) != 0; };
  unsigned long flags = 0;
  if (has(ST_NOSUID)) flags |= MS_NOSUID;
  if (has(ST_NODEV)) flags |= MS_NODEV;
  if (has(ST_NOEXEC)) flags |= MS_NOEXEC;
  if (has(ST_NOATIME)) flags |= MS_NOATIME;
  if (has(ST_NODIRATIME)) flags |= MS_NODIRATIME;
  if (has(ST_RELATIME)) flags |= MS_RELATIME;
  return flags;
}

// `source` bound onto `target`, then that new mount made read-only (a bind mount takes no flags of its
// own at first). The recursive bind keeps what is mounted below `target`. Async-signal-safe.
int bind_read_only(const char* source, const char* target) noexcept {
  if (::mount(source, target, nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
  const unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY | kept_mount_flags(target);
  if (::mount(nullptr, target, nullptr, flags, nullptr) != 0) return errno;
  return 0;
}

// An empty directory nobody can write to.
int mount_empty_tmpfs(const char* target) noexcept {
  if (::mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=4k") != 0) {
    return errno;
  }
  return 0;
}

int apply_mount(const SandboxPlan::Mount& mount, const char** step) noexcept {
  using Kind = SandboxPlan::Mount::Kind;
  int error = 0;
  switch (mount.kind) {
    case Kind::pin:
      error = ::mount(mount.target.c_str(), mount.target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0 ? 0 : errno;
      *step = "mount: bind of a directory onto itself";
      break;
    case Kind::read_only:
      error = bind_read_only(mount.target.c_str(), mount.target.c_str());
      *step = "mount: read-only bind of a protected path";
      break;
    case Kind::hide_dir:
      error = mount_empty_tmpfs(mount.target.c_str());
      *step = "mount: empty tmpfs over a hidden directory";
      break;
    case Kind::hide_file:
      error = bind_read_only("/dev/null", mount.target.c_str());
      *step = "mount: /dev/null over a hidden file";
      break;
  }
  return error;
}

// "<id> <id> 1\n": the user keeps its own id inside the namespace.
void format_id_map(char (&out)[32], unsigned int id) {
  const auto end = fmt::format_to_n(out, sizeof out - 1, "{} {} 1\n", id, id);
  out[end.size < sizeof out ? end.size : sizeof out - 1] = '\0';
}

void format_id_maps(char (&uid_map)[32], char (&gid_map)[32]) {
  format_id_map(uid_map, ::geteuid());
  format_id_map(gid_map, ::getegid());
}

std::string landlock_unavailable(int error) {
  switch (error) {
    case ENOSYS:
      return "this kernel has no Landlock (it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK)";
    case EOPNOTSUPP:
      return "Landlock is built into this kernel but not enabled (add landlock to the lsm= boot parameter)";
    default: return fmt::format("landlock_create_ruleset failed: {}", std::generic_category().message(error));
  }
}

// Runs `body` (async-signal-safe: it returns an errno and names the failed step) in a throwaway child
// and says what failed, or "" when it worked. Namespaces are often restricted (sysctls, AppArmor,
// seccomp) in ways only trying shows.
template <class Body>
std::string probe_in_child(const Body& body) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return fmt::format("pipe2: {}", std::generic_category().message(errno));
  const pid_t pid = ::fork();
  if (pid == 0) {
    const char* step = "";
    const int error = body(&step);
    if (error != 0) {
      // The step names are string literals in this image, so their address means the same to the parent.
      const std::pair<int, const char*> failure{error, step};
      [[maybe_unused]] const ssize_t ignored = ::write(report[1], &failure, sizeof failure);
    }
    ::_exit(error == 0 ? 0 : 1);
  }
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    return fmt::format("fork: {}", std::generic_category().message(errno));
  }
  std::pair<int, const char*> failure{0, nullptr};
  ssize_t n = 0;
  do {
    n = ::read(report[0], &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(sizeof failure)) {
    return fmt::format("{}: {}", failure.second, std::generic_category().message(failure.first));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "the probe child failed";
  return "";
}

std::string probe_network_namespaces() {
  char uid_map[32];
  char gid_map[32];
  format_id_maps(uid_map, gid_map);
  return probe_in_child([&](const char** step) { return enter_network_namespace(uid_map, gid_map, step); });
}

// What a sandboxed command's child does, on a scratch directory: the namespaces, a read-only bind and a
// tmpfs mask. Root needs no user namespace; anyone else needs one that grants the right to mount.
std::string probe_mount_namespaces() {
  char uid_map[32];
  char gid_map[32];
  format_id_maps(uid_map, gid_map);
  const bool user_namespace = ::geteuid() != 0;
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  std::string scratch = ((ec ? std::filesystem::path("/tmp") : base) / "agentd-probe-XXXXXX").string();
  if (::mkdtemp(scratch.data()) == nullptr) {
    return fmt::format("creating a scratch directory like {}: {}", scratch, std::generic_category().message(errno));
  }
  const char* target = scratch.c_str();
  std::string error = probe_in_child([&](const char** step) {
    if (int failed = enter_mount_namespace(user_namespace, false, uid_map, gid_map, step); failed != 0) return failed;
    if (int failed = bind_read_only(target, target); failed != 0) {
      *step = "mount: read-only bind";
      return failed;
    }
    if (int failed = mount_empty_tmpfs(target); failed != 0) {
      *step = "mount: tmpfs";
      return failed;
    }
    return 0;
  });
  ::rmdir(target);
  return error;
}

SandboxStatus probe() {
  SandboxStatus status;
  const int abi = landlock_create_ruleset(nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi > 0) {
    status.landlock_abi = abi;
  } else {
    status.landlock_error = landlock_unavailable(errno);
  }
  status.network_namespaces_error = probe_network_namespaces();
  status.network_namespaces = status.network_namespaces_error.empty();
  status.mount_namespaces_error = probe_mount_namespaces();
  status.mount_namespaces = status.mount_namespaces_error.empty();
  return status;
}

// ---------------------------------------------------------------------------------------------------
// What the mount namespace covers, worked out in the parent (the child only mounts a list of paths).

namespace fs = std::filesystem;

// Below $HOME: secrets to hide (credentials, keys, tokens), whatever the workspace.
constexpr auto kHiddenInHome = std::to_array<std::string_view>(
    {".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".config/gh", ".netrc", ".git-credentials",
     ".docker/config.json", ".password-store", ".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
     ".claude/.credentials.json"});
// Below $HOME: files that make git or the user's shell run code, read-only when a writable root holds
// them (the workspace is $HOME, or a parent of it).
// .claude: Claude Code's settings, whose hooks agentd runs too.
// (Sized by their contents: a size written by hand once left an empty name, which hid all of $HOME.)
constexpr auto kReadOnlyInHome =
    std::to_array<std::string_view>({".gitconfig", ".config/git", ".bashrc", ".bash_profile", ".bash_login", ".profile",
                                     ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".config/fish", ".claude"});
// In a git directory: what makes git run code (config: core.fsmonitor, aliases, filters; hooks), what
// changes what it reads (info: attributes, excludes, sparse-checkout) and `commondir`, which would send
// git to another directory's config and hooks. The objects, refs, index and HEAD stay writable, so add,
// commit and checkout still work.
constexpr std::array<std::string_view, 4> kGitControl = {"config", "hooks", "info", "commondir"};
// Directories the deny-path scan does not enter: git's internals (handled apart), package trees.
constexpr std::array<std::string_view, 4> kUnscanned = {".git", "node_modules", ".hg", ".svn"};
// The scan stops after this many entries across all roots, breadth first so that the shallow files,
// where `.env` and keys usually sit, come first. A deny-listed file deeper in a huge tree stays
// readable; describe() says when the scan stopped.
constexpr std::size_t kScanLimit = 10000;
// Each mount costs the child a few microseconds and the kernel some memory; a tree with thousands of
// deny-listed files (a TLS library's test certificates) keeps those past this number readable.
constexpr std::size_t kMaxMounts = 2000;
// Submodules' git directories (.git/modules/<name>/, names may hold slashes) are looked for this deep.
constexpr int kModulesDepth = 4;

bool exists_no_follow(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Decides every mount. Three kinds of path:
//  - protected (agentd's and git's control files): a read-only bind over it. Because git and agentd
//    find these by name, every directory between the writable root and the path is also bound onto
//    itself, still writable (a "pin"): a mount point cannot be renamed, so `mv .git x && cp -r x .git`
//    cannot swap in an unprotected copy;
//  - hidden (secrets, deny-listed files): an empty read-only tmpfs or /dev/null over it;
//  - absent protected paths (.agentd/ in most projects): a mount needs an existing mount point, which
//    would have to be created in the user's tree, so they are remembered and removed after the command
//    if it made them (SandboxPlan::remove_created_protected_paths). Their existing parents below the
//    writable root are pinned too, so that the path cannot be made to lead elsewhere by then.
class MountPlanner {
 public:
  explicit MountPlanner(const SandboxRequest& request) : request_(request) {
    for (const auto& dir : request.writable) writable_.push_back(canonical_or_self(dir));
    for (const auto& root : request.protected_roots) roots_.push_back(canonical_or_self(root));
  }

  void plan_roots() {
    for (const auto& root : roots_) {
      protect(root / ".agentd");
      protect(root / ".claude");  // Claude Code's project settings: agentd runs their hooks
      protect_repository(root / ".git");
    }
    scan();
  }

  void plan_home() {
    const fs::path home = env_path("HOME");
    const fs::path config_home = env_path("XDG_CONFIG_HOME");
    const fs::path data_home = env_path("XDG_DATA_HOME");
    // agentd's own config (with trusted-projects.json) and data (the database and its approvals), in
    // both their XDG and their default places.
    if (!config_home.empty()) {
      hide(config_home / "agentd", Found::by_name);
      protect(config_home / "git");
    }
    if (!data_home.empty()) hide(data_home / "agentd", Found::by_name);
    if (!home.empty()) {
      hide(home / ".config" / "agentd", Found::by_name);
      hide(home / ".local" / "share" / "agentd", Found::by_name);
      for (std::string_view name : kHiddenInHome) hide(home / name, Found::by_name);
      for (std::string_view name : kReadOnlyInHome) protect(home / name);
    }
    // Session sockets (D-Bus, the GPG agent, Wayland) and the SSH agent's, wherever it is.
    if (const fs::path runtime = env_path("XDG_RUNTIME_DIR"); !runtime.empty()) hide(runtime, Found::by_scan);
    if (const fs::path agent = env_path("SSH_AUTH_SOCK"); !agent.empty()) hide(agent, Found::by_scan);
  }

  // The mounts in the order the child makes them: binds (pins and read-only) first, parents before
  // children (sorted paths), then masks; nothing below a hidden directory, which covers it already.
  std::vector<SandboxPlan::Mount> mounts() {
    using Kind = SandboxPlan::Mount::Kind;
    for (auto* list : {&read_only_, &pins_, &hide_dirs_, &hide_files_}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    const auto under_hidden_dir = [&](const fs::path& path, bool strictly) {
      return std::any_of(hide_dirs_.begin(), hide_dirs_.end(),
                         [&](const fs::path& dir) { return is_under(path, dir) && (!strictly || path != dir); });
    };
    std::vector<std::pair<fs::path, Kind>> binds;
    for (const auto& path : pins_) {
      if (!std::binary_search(read_only_.begin(), read_only_.end(), path)) binds.emplace_back(path, Kind::pin);
    }
    for (const auto& path : read_only_) binds.emplace_back(path, Kind::read_only);
    std::sort(binds.begin(), binds.end());
    std::vector<SandboxPlan::Mount> out;
    for (const auto& [path, kind] : binds) {
      if (!under_hidden_dir(path, false)) out.push_back({kind, path.string()});
    }
    for (const auto& path : hide_dirs_) {
      if (!under_hidden_dir(path, true)) out.push_back({Kind::hide_dir, path.string()});
    }
    for (const auto& path : hide_files_) {
      if (under_hidden_dir(path, false)) continue;
      if (out.size() >= kMaxMounts) {
        ++not_hidden_;
      } else {
        out.push_back({Kind::hide_file, path.string()});
      }
    }
    return out;
  }
  std::vector<SandboxPlan::AbsentPath> take_absent() {
    std::sort(absent_.begin(), absent_.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    absent_.erase(
        std::unique(absent_.begin(), absent_.end(), [](const auto& a, const auto& b) { return a.path == b.path; }),
        absent_.end());
    return std::move(absent_);
  }

  bool truncated() const noexcept { return truncated_; }
  std::size_t not_hidden() const noexcept { return not_hidden_; }

 private:
  // How a hidden path was found: by its name in a fixed place (~/.ssh, agentd's config), which someone
  // may look up again (so its parents are pinned and an absent one is removed after the command), or by
  // a scan (its content is what matters, and a mount moves with it when a parent is renamed).
  enum class Found { by_name, by_scan };

  static fs::path canonical_or_self(const fs::path& path) {
    std::error_code ec;
    fs::path canonical = fs::canonical(path, ec);
    return ec ? path.lexically_normal() : canonical;
  }

  fs::path env_path(const char* name) const {
    const char* value = request_.env ? request_.env(name) : std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
    if (value == nullptr || value[0] != '/') return {};
    return fs::path(value).lexically_normal();
  }

  // The outermost writable directory holding `path` (anything inside it can be renamed), or null.
  const fs::path* writable_root_of(const fs::path& path) const {
    const fs::path* found = nullptr;
    for (const auto& dir : writable_) {
      if (is_under(path, dir) && (found == nullptr || is_under(*found, dir))) found = &dir;
    }
    return found;
  }

  // A mask over a directory that holds a workspace root or another writable directory would hide the
  // work itself (a workspace inside ~/.config/agentd, $XDG_RUNTIME_DIR=/tmp): left alone.
  bool holds_writable(const fs::path& path) const {
    const auto inside = [&](const fs::path& dir) { return is_under(dir, path); };
    return std::any_of(writable_.begin(), writable_.end(), inside) || std::any_of(roots_.begin(), roots_.end(), inside);
  }

  // Every directory strictly between the writable root and `path`.
  void pin_parents(const fs::path& path, const fs::path& root) {
    for (fs::path dir = path.parent_path(); dir != root && is_under(dir, root); dir = dir.parent_path()) {
      pins_.push_back(dir);
    }
  }

  // `path` (resolved, missing, below `root`) is remembered with its first missing component, the
  // topmost one the command would have to make; the existing directories above that are pinned.
  void add_absent(const fs::path& path, const fs::path& root) {
    fs::path first_missing = path;
    for (fs::path parent = path.parent_path(); parent != root && is_under(parent, root) && !exists_no_follow(parent);
         parent = parent.parent_path()) {
      first_missing = parent;
    }
    pin_parents(first_missing, root);
    absent_.push_back({path, first_missing});
  }

  // `path` becomes read-only when it exists and a command could write it (Landlock refuses the rest).
  void protect(const fs::path& path) {
    auto resolved = resolve_symlinks(path);
    if (!resolved) return;
    const fs::path* root = writable_root_of(*resolved);
    if (root == nullptr) return;
    if (!exists_no_follow(*resolved)) {
      add_absent(*resolved, *root);
      return;
    }
    read_only_.push_back(*resolved);
    pin_parents(*resolved, *root);
  }

  // `path` is masked: an empty read-only tmpfs over a directory, /dev/null over anything else.
  void hide(const fs::path& path, Found found) {
    auto resolved = resolve_symlinks(path);
    if (!resolved) return;
    const fs::path* root = writable_root_of(*resolved);
    struct stat st {};
    if (::lstat(resolved->c_str(), &st) != 0) {
      // ~/.ssh made in a workspace that is $HOME would let someone in.
      if (found == Found::by_name && root != nullptr) add_absent(*resolved, *root);
      return;
    }
    if (holds_writable(*resolved)) return;
    (S_ISDIR(st.st_mode) ? hide_dirs_ : hide_files_).push_back(*resolved);
    if (found == Found::by_name && root != nullptr) pin_parents(*resolved, *root);
  }

  // `dot_git` is a repository's .git: a directory, or a file "gitdir: <path>" (a linked worktree or a
  // submodule) naming the git directory, whose `commondir` names the one with config and hooks.
  void protect_repository(const fs::path& dot_git) {
    std::error_code ec;
    const fs::file_status status = fs::status(dot_git, ec);
    if (ec || !fs::exists(status)) return;
    if (fs::is_directory(status)) {
      protect_git_dir(dot_git, true);
      return;
    }
    if (!fs::is_regular_file(status)) return;
    protect(dot_git);  // rewritten, it would send git elsewhere
    const fs::path git_dir = read_pointer(dot_git, "gitdir: ");
    if (git_dir.empty()) return;
    protect(git_dir / "commondir");
    // config.worktree counts only where the (read-only) common config enables it: existing ones only.
    if (exists_no_follow(git_dir / "config.worktree")) protect(git_dir / "config.worktree");
    const fs::path common = read_pointer(git_dir / "commondir", "");
    protect_git_dir(common.empty() ? git_dir : common, common.empty());
  }

  // The path a one-line pointer file names after `prefix`, relative to the file's directory; empty when
  // it is not one.
  static fs::path read_pointer(const fs::path& file, std::string_view prefix) {
    std::ifstream in(file);
    std::string line;
    if (!std::getline(in, line) || !line.starts_with(prefix)) return {};
    line.erase(0, prefix.size());
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) return {};
    const fs::path target(line);
    return (target.is_absolute() ? target : file.parent_path() / target).lexically_normal();
  }

  // `with_commondir`: a main git directory, where a `commondir` file must not appear (a linked
  // worktree's has one, protected by protect_repository).
  void protect_git_dir(const fs::path& git_dir, bool with_commondir) {
    for (std::string_view name : kGitControl) {
      if (name != "commondir" || with_commondir) protect(git_dir / name);
    }
    if (exists_no_follow(git_dir / "config.worktree")) protect(git_dir / "config.worktree");
    protect_modules(git_dir / "modules", 1);
  }

  // Submodules' git directories: any directory below modules/ that has a config and a HEAD.
  void protect_modules(const fs::path& dir, int depth) {
    if (depth > kModulesDepth) return;
    std::error_code ec;
    for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
         it.increment(ec)) {
      std::error_code type_ec;
      if (it->symlink_status(type_ec).type() != fs::file_type::directory) continue;
      const fs::path& sub = it->path();
      if (exists_no_follow(sub / "HEAD") && exists_no_follow(sub / "config")) {
        for (std::string_view name : kGitControl) protect(sub / name);
        protect_modules(sub / "modules", depth + 1);  // a submodule's own submodules
      } else {
        protect_modules(sub, depth + 1);  // a submodule named "a/b"
      }
    }
  }

  // Breadth first through every root, .gitignore'd files included (a .env usually is ignored): the
  // shared walker (tools/walk.h) skips deny-listed paths, which is what this looks for, so it is not
  // used. Finds deny-listed files to hide, and nested repositories and .agentd directories to protect.
  void scan() {
    build_name_filters();
    for (const auto& root : roots_) {
      std::deque<fs::path> pending{root};
      while (!pending.empty()) {
        const fs::path dir = std::move(pending.front());
        pending.pop_front();
        std::error_code ec;
        for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
             it.increment(ec)) {
          if (++scanned_ > kScanLimit) {
            truncated_ = true;
            return;
          }
          if (visit(root, dir, *it)) pending.push_back(it->path());
        }
      }
    }
  }

  // Looks at one entry; true when the scan should go into it (a directory neither hidden nor skipped).
  bool visit(const fs::path& root, const fs::path& dir, const fs::directory_entry& entry) {
    const fs::path& path = entry.path();
    std::error_code ec;
    const fs::file_type type = entry.symlink_status(ec).type();
    const std::string name = path.filename().string();
    if (may_be_denied(name) && denied_path(path.lexically_relative(root), PathAccess::read, request_.denied_paths)) {
      hide(path, Found::by_scan);  // a directory is hidden whole
      return false;
    }
    if (type == fs::file_type::symlink) {
      hide_if_target_denied(path);
      return false;
    }
    if (name == ".git") {
      if (dir != root) protect_repository(path);  // a nested repository (the root's is done)
      return false;
    }
    if (type != fs::file_type::directory) return false;
    if (name == ".agentd" && dir != root) protect(path);  // a subdirectory's settings, for a session there
    return std::find(kUnscanned.begin(), kUnscanned.end(), name) == kUnscanned.end();
  }

  // The scan enters only directories no pattern matched, so a match must end at the entry itself: its
  // name must match a pattern's last component. fnmatch(3) checks that without allocating, and
  // denied_path() (the rule every tool applies) decides for the few names that pass.
  void build_name_filters() {
    const auto add = [&](std::string_view pattern) {
      while (pattern.ends_with('/')) pattern.remove_suffix(1);
      const std::size_t slash = pattern.rfind('/');
      std::string last(slash == std::string_view::npos ? pattern : pattern.substr(slash + 1));
      // fnmatch gives ? [ and \ a meaning the deny patterns do not: such a name always goes to denied_path.
      if (last.find_first_of("?[\\") != std::string::npos) last = "*";
      name_filters_.push_back(std::move(last));
    };
    for (const DeniedPath& rule : kDeniedPaths) {
      if (!rule.writes_only) add(rule.pattern);
    }
    for (const std::string& pattern : request_.denied_paths) add(pattern);
  }

  bool may_be_denied(const std::string& name) const {
    return std::any_of(name_filters_.begin(), name_filters_.end(),
                       [&](const std::string& filter) { return ::fnmatch(filter.c_str(), name.c_str(), 0) == 0; });
  }

  // A link with an innocent name to a deny-listed file (config.txt -> .env, key -> ~/work/id_rsa): the
  // target is hidden, matched below the root it is in, or by its whole path when outside every root.
  void hide_if_target_denied(const fs::path& link) {
    auto target = resolve_symlinks(link);
    if (!target || !exists_no_follow(*target)) return;
    fs::path relative = target->relative_path();
    for (const auto& root : roots_) {
      if (is_under(*target, root)) {
        relative = target->lexically_relative(root);
        break;
      }
    }
    if (denied_path(relative, PathAccess::read, request_.denied_paths)) hide(*target, Found::by_scan);
  }

  const SandboxRequest& request_;
  std::vector<fs::path> writable_;
  std::vector<fs::path> roots_;
  std::vector<fs::path> read_only_;
  std::vector<fs::path> pins_;
  std::vector<fs::path> hide_dirs_;
  std::vector<fs::path> hide_files_;
  std::vector<SandboxPlan::AbsentPath> absent_;
  std::vector<std::string> name_filters_;
  std::size_t scanned_ = 0;
  bool truncated_ = false;
  std::size_t not_hidden_ = 0;
};

}  // namespace

std::string SandboxStatus::summary() const {
  std::string out = landlock() ? fmt::format("Landlock ABI {}", landlock_abi) : "no Landlock (" + landlock_error + ")";
  if (network_namespaces) {
    out += "; network isolation: network namespace";
  } else if (landlock_tcp()) {
    out += "; network isolation: Landlock TCP rules only (no network namespace: " + network_namespaces_error + ")";
  } else {
    out += "; no network isolation (" + network_namespaces_error + ")";
  }
  if (mount_namespaces) {
    out += "; file protection: mount namespace";
  } else {
    out += "; no mount namespace (" + mount_namespaces_error + ")";
  }
  return out;
}

const SandboxStatus& sandbox_status() {
  static const SandboxStatus kStatus = probe();  // thread-safe, once
  return kStatus;
}

support::Result<SandboxPlan> SandboxPlan::prepare(const SandboxRequest& request) {
  return prepare(request, sandbox_status());
}

support::Result<SandboxPlan> SandboxPlan::prepare(const SandboxRequest& request, const SandboxStatus& status) {
  if (!status.landlock()) return support::Error(Errc::unsupported, status.landlock_error);
  if (request.deny_network && !status.network_namespaces && !status.landlock_tcp()) {
    return support::Error(Errc::unsupported, "network access cannot be cut off here: neither network namespaces (" +
                                                 status.network_namespaces_error +
                                                 ") nor Landlock TCP rules (Linux 6.7+) are available");
  }
  const bool wants_mounts = !request.protected_roots.empty() || request.hide_user_secrets;
  if (wants_mounts && !status.mount_namespaces && !request.mounts_optional) {
    return support::Error(Errc::unsupported,
                          "no mount namespace here (" + status.mount_namespaces_error +
                              "), so .git/config, .git/hooks and .agentd/ would stay writable and the user's secrets "
                              "readable");
  }

  SandboxPlan plan;
  plan.abi_ = status.landlock_abi;
  RulesetAttr attr;
  attr.handled_access_fs = handled_fs(plan.abi_);
  plan.network_namespace_ = request.deny_network && status.network_namespaces;
  if (request.deny_network && !plan.network_namespace_) {
    // Without a namespace, Landlock's TCP rules: weaker (UDP passes, loopback is cut off too).
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    plan.tcp_rule_ = true;
  }
  if (plan.abi_ >= 6) attr.scoped = kScopeSignal;
  plan.ruleset_fd_ = landlock_create_ruleset(&attr, ruleset_attr_size(plan.abi_), 0);
  if (plan.ruleset_fd_ < 0) return errno_error(Errc::io, "landlock_create_ruleset", errno);

  if (int error = add_path_rule(plan.ruleset_fd_, "/", kFsExecute | kFsReadFile | kFsReadDir); error != 0) {
    return errno_error(Errc::io, "adding the read-everywhere Landlock rule", error);
  }
  for (const auto& dir : request.writable) {
    if (int error = add_path_rule(plan.ruleset_fd_, dir.c_str(), attr.handled_access_fs); error != 0) {
      return errno_error(Errc::io, fmt::format("making {} writable in the sandbox", dir.string()), error);
    }
    ++plan.writable_count_;
  }
  // Missing devices (a minimal container) are simply not writable.
  for (const char* device : kWritableDevices) {
    (void)add_path_rule(plan.ruleset_fd_, device, kFileRights & attr.handled_access_fs);
  }
  (void)add_path_rule(plan.ruleset_fd_, "/dev/pts", kFileRights & attr.handled_access_fs);
  // POSIX shared memory and semaphores (Python's multiprocessing) live here.
  (void)add_path_rule(plan.ruleset_fd_, "/dev/shm", attr.handled_access_fs);

  if (wants_mounts && status.mount_namespaces) {
    plan.mount_namespace_ = true;
    plan.user_namespace_ = ::geteuid() != 0;
    MountPlanner planner(request);
    if (!request.protected_roots.empty()) planner.plan_roots();
    if (request.hide_user_secrets) planner.plan_home();
    plan.mounts_ = planner.mounts();
    plan.absent_protected_ = planner.take_absent();
    plan.scan_truncated_ = planner.truncated();
    plan.not_hidden_ = planner.not_hidden();
  } else if (wants_mounts) {
    plan.mount_namespace_error_ = status.mount_namespaces_error;
  }

  format_id_maps(plan.uid_map_, plan.gid_map_);
  return plan;
}

SandboxPlan::SandboxPlan(SandboxPlan&& other) noexcept { *this = std::move(other); }

SandboxPlan& SandboxPlan::operator=(SandboxPlan&& other) noexcept {
  if (this == &other) return *this;
  if (ruleset_fd_ >= 0) ::close(ruleset_fd_);
  ruleset_fd_ = std::exchange(other.ruleset_fd_, -1);
  abi_ = other.abi_;
  writable_count_ = other.writable_count_;
  network_namespace_ = other.network_namespace_;
  tcp_rule_ = other.tcp_rule_;
  mount_namespace_ = other.mount_namespace_;
  user_namespace_ = other.user_namespace_;
  mount_namespace_error_ = std::move(other.mount_namespace_error_);
  mounts_ = std::move(other.mounts_);
  absent_protected_ = std::move(other.absent_protected_);
  scan_truncated_ = other.scan_truncated_;
  not_hidden_ = other.not_hidden_;
  std::memcpy(uid_map_, other.uid_map_, sizeof uid_map_);
  std::memcpy(gid_map_, other.gid_map_, sizeof gid_map_);
  return *this;
}

SandboxPlan::~SandboxPlan() {
  if (ruleset_fd_ >= 0) ::close(ruleset_fd_);
}

int SandboxPlan::apply_in_child(const char** step) const noexcept {
  // The namespaces first: writing the id maps is a write under /proc, and mounting is a change of the
  // file system's topology, both of which the ruleset forbids.
  if (mount_namespace_) {
    if (int error = enter_mount_namespace(user_namespace_, network_namespace_, uid_map_, gid_map_, step); error != 0) {
      return error;
    }
    for (const Mount& mount : mounts_) {
      const int error = apply_mount(mount, step);
      // Gone since the plan was made: nothing left there to protect or hide.
      if (error != 0 && error != ENOENT) return error;
    }
  } else if (network_namespace_) {
    if (int error = enter_network_namespace(uid_map_, gid_map_, step); error != 0) return error;
  }
  // Landlock requires it of an unprivileged process; it also keeps setuid programs from escaping.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *step = "prctl(PR_SET_NO_NEW_PRIVS)";
    return errno;
  }
  // No capability survives into the command. As root, CAP_SYS_PTRACE would let it read agentd's own
  // environment (API keys) through /proc/<pid>/environ past Landlock's ptrace scoping, and
  // CAP_DAC_OVERRIDE, CAP_SYS_ADMIN and the rest are ways around the rules too. The bounding set goes
  // first (it needs CAP_SETPCAP, which root and the owner of a new user namespace have; without it there
  // is nothing to drop), then the ambient set, then the process's own sets: an exec as uid 0 regains
  // only what the bounding set still holds, which is nothing.
  if (int error = drop_capabilities(step); error != 0) return error;
  if (::syscall(SYS_landlock_restrict_self, ruleset_fd_, 0) != 0) {
    *step = "landlock_restrict_self";
    return errno;
  }
  return 0;
}

std::string SandboxPlan::describe() const {
  std::string network = "network allowed";
  if (network_namespace_) {
    network = "network denied (own network namespace, loopback only)";
  } else if (tcp_rule_) {
    network = "TCP denied (Landlock rule; UDP is not covered)";
  }
  std::string out = fmt::format("Landlock ABI {}, writes only in {} director{} and /dev; {}", abi_, writable_count_,
                                writable_count_ == 1 ? "y" : "ies", network);
  if (mount_namespace_) {
    const auto count = [&](auto&& pred) {
      return static_cast<std::size_t>(std::count_if(mounts_.begin(), mounts_.end(), pred));
    };
    const std::size_t read_only = count([](const Mount& mount) { return mount.kind == Mount::Kind::read_only; });
    const std::size_t hidden = count(
        [](const Mount& mount) { return mount.kind == Mount::Kind::hide_dir || mount.kind == Mount::Kind::hide_file; });
    out +=
        fmt::format("; mount namespace: {} path{} read-only, {} hidden", read_only, read_only == 1 ? "" : "s", hidden);
    if (scan_truncated_) out += fmt::format(" (the deny-path scan stopped after {} entries)", kScanLimit);
    if (not_hidden_ > 0) out += fmt::format(" ({} more deny-listed files left visible: too many)", not_hidden_);
  } else if (!mount_namespace_error_.empty()) {
    out += "; no mount namespace (" + mount_namespace_error_ + ")";
  }
  return out;
}

std::vector<std::filesystem::path> SandboxPlan::remove_created_protected_paths() const {
  std::vector<std::filesystem::path> removed;
  for (const auto& [path, first_missing] : absent_protected_) {
    // Down from the first component that did not exist (everything above it did and was pinned, so it
    // still leads where it did): directories the command made are followed, the path itself or a link
    // the command put on the way is what goes. A link is removed, never followed.
    std::filesystem::path at = first_missing;
    const std::filesystem::path rest = path.lexically_relative(first_missing);
    auto next = rest.begin();
    if (next != rest.end() && *next == ".") ++next;
    for (;;) {
      struct stat st {};
      if (::lstat(at.c_str(), &st) != 0) break;  // not made: nothing to undo
      if (at == path || S_ISLNK(st.st_mode)) {
        std::error_code ec;
        std::filesystem::remove_all(at, ec);
        removed.push_back(at);
        break;
      }
      if (!S_ISDIR(st.st_mode) || next == rest.end()) break;  // nothing below it leads to the path
      at /= *next++;
    }
  }
  return removed;
}

support::Result<PrivateTempDir> PrivateTempDir::create() {
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  std::string pattern = ((ec ? std::filesystem::path("/tmp") : base) / "agentd-shell-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return errno_error(Errc::io, fmt::format("creating a private temp dir like {}", pattern), errno);
  }
  return PrivateTempDir(std::filesystem::path(pattern));
}

PrivateTempDir::~PrivateTempDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace agentd::tools
