#include "tools/sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <linux/landlock.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

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

// A new user namespace (so no privilege is needed) holding a new network namespace, which has only a
// loopback interface: nothing outside is reachable. The user keeps its own ids inside.
// Async-signal-safe: runs between fork and exec.
int enter_network_namespace(const char* uid_map, const char* gid_map, const char** step) {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
    *step = "unshare(CLONE_NEWUSER | CLONE_NEWNET)";
    return errno;
  }
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
  bring_loopback_up();
  return 0;
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

// Tries in a throwaway child what a sandboxed command would do, since user namespaces are often
// restricted (sysctls, AppArmor) in ways only trying shows.
std::string probe_network_namespaces() {
  char uid_map[32];
  char gid_map[32];
  format_id_maps(uid_map, gid_map);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return fmt::format("pipe2: {}", std::generic_category().message(errno));
  const pid_t pid = ::fork();
  if (pid == 0) {
    const char* step = "";
    const int error = enter_network_namespace(uid_map, gid_map, &step);
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
  return status;
}

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
  return out;
}

const SandboxStatus& sandbox_status() {
  static const SandboxStatus kStatus = probe();  // thread-safe, once
  return kStatus;
}

support::Result<SandboxPlan> SandboxPlan::prepare(const SandboxRequest& request) {
  const SandboxStatus& status = sandbox_status();
  if (!status.landlock()) return support::Error(Errc::unsupported, status.landlock_error);
  if (request.deny_network && !status.network_namespaces && !status.landlock_tcp()) {
    return support::Error(Errc::unsupported, "network access cannot be cut off here: neither network namespaces (" +
                                                 status.network_namespaces_error +
                                                 ") nor Landlock TCP rules (Linux 6.7+) are available");
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
  std::memcpy(uid_map_, other.uid_map_, sizeof uid_map_);
  std::memcpy(gid_map_, other.gid_map_, sizeof gid_map_);
  return *this;
}

SandboxPlan::~SandboxPlan() {
  if (ruleset_fd_ >= 0) ::close(ruleset_fd_);
}

int SandboxPlan::apply_in_child(const char** step) const noexcept {
  // The namespace first: writing the id maps is a write under /proc, which the ruleset would forbid.
  if (network_namespace_) {
    if (int error = enter_network_namespace(uid_map_, gid_map_, step); error != 0) return error;
  }
  // Landlock requires it of an unprivileged process; it also keeps setuid programs from escaping.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *step = "prctl(PR_SET_NO_NEW_PRIVS)";
    return errno;
  }
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
  return fmt::format("Landlock ABI {}, writes only in {} director{} and /dev; {}", abi_, writable_count_,
                     writable_count_ == 1 ? "y" : "ies", network);
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
