#include "daemon/cli/agent_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>
#include <sys/wait.h>

#include "protocol/jsonrpc.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere else

namespace agentd::daemon::cli {

using support::Errc;
using support::Error;
using support::Json;

support::Result<std::unique_ptr<AgentProcess>> AgentProcess::spawn(const std::vector<std::string>& argv,
                                                                   const std::string& log_path) {
  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return Error(Errc::io, fmt::format("pipe: {}", std::strerror(errno)));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return Error(Errc::io, fmt::format("pipe: {}", std::strerror(errno)));
  }
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawnattr_init(&attr);
  ::posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  ::posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  if (log >= 0) {
    ::posix_spawn_file_actions_adddup2(&actions, log, 2);
  } else {
    ::posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  // Its own process group: the terminal's SIGINT is the CLI's to interpret (cancel, then exit).
  ::posix_spawnattr_setpgroup(&attr, 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGPIPE);
  ::posix_spawnattr_setsigdefault(&attr, &defaults);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // NOLINT: posix_spawn's signature
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  if (log >= 0) ::close(log);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    return Error(rc == ENOENT ? Errc::not_found : Errc::io,
                 fmt::format("cannot start {}: {}", argv[0], std::strerror(rc)));
  }
  return std::unique_ptr<AgentProcess>(new AgentProcess(pid, in[1], out[0]));
}

AgentProcess::AgentProcess(pid_t pid, int in_fd, int out_fd) : pid_(pid), in_fd_(in_fd), out_fd_(out_fd) {
  reader_ = std::thread([this] { read_loop(); });
}

AgentProcess::~AgentProcess() {
  if (in_fd_ >= 0) ::close(in_fd_);
  // agentd cancels what runs and exits on end of input; give it a moment, then insist.
  int status = 0;
  bool reaped = false;
  for (int i = 0; i < 50 && !reaped; ++i) {
    reaped = ::waitpid(pid_, &status, WNOHANG) == pid_;
    if (!reaped) ::usleep(100 * 1000);
  }
  if (!reaped) {
    ::kill(-pid_, SIGTERM);
    for (int i = 0; i < 30 && !reaped; ++i) {
      reaped = ::waitpid(pid_, &status, WNOHANG) == pid_;
      if (!reaped) ::usleep(100 * 1000);
    }
  }
  if (!reaped) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
  }
  if (reader_.joinable()) reader_.join();
  ::close(out_fd_);
}

bool AgentProcess::send(const Json& message) { return send_line(message.dump()); }

bool AgentProcess::send_line(std::string line) {
  line += '\n';
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(in_fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::int64_t AgentProcess::request_raw(std::string_view method, std::string_view params_json) {
  const std::int64_t id = next_id_++;
  send_line(protocol::encode_request(id, method, params_json));
  return id;
}

void AgentProcess::notify_raw(std::string_view method, std::string_view params_json) {
  send_line(protocol::encode_notification(method, params_json));
}

void AgentProcess::respond_raw(const Json& id, std::string_view result_json) {
  // agentd numbers its requests; a string id is answered as it came.
  const protocol::RequestId rid =
      id.is_integer() ? protocol::RequestId(id.as_int64()) : protocol::RequestId(id.is_string() ? id.as_string() : "");
  send_line(protocol::encode_result(rid, result_json));
}

AgentProcess::Next AgentProcess::next(std::chrono::milliseconds timeout, Json& out) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, timeout, [this] { return !queue_.empty() || closed_; });
  if (!queue_.empty()) {
    out = std::move(queue_.front());
    queue_.pop_front();
    return Next::message;
  }
  return closed_ ? Next::closed : Next::timeout;
}

void AgentProcess::read_loop() {
  std::string buffer;
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(out_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n', start)) {
      auto parsed = support::parse_json(std::string_view(buffer).substr(start, nl - start));
      start = nl + 1;
      if (!parsed) continue;  // agentd writes only JSON-RPC; anything else is not ours to act on
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(*parsed));
      ready_.notify_one();
    }
    buffer.erase(0, start);
  }
  std::lock_guard lock(mutex_);
  closed_ = true;
  ready_.notify_all();
}

}  // namespace agentd::daemon::cli
