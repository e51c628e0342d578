#include "daemon/cli/agent_process.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>
#include <sys/wait.h>

#include "core/support/spawn.h"
#include "protocol/jsonrpc.h"

namespace agentd::daemon::cli {

using support::Errc;
using support::Error;
using support::Json;

support::Result<std::unique_ptr<AgentProcess>> AgentProcess::spawn(const std::vector<std::string>& argv,
                                                                   const std::string& log_path) {
  const support::OwnedFd log(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  support::SpawnOptions options;
  options.argv = argv;
  options.stdin_mode = support::ChildStdio::pipe();
  options.stdout_mode = support::ChildStdio::pipe();
  options.stderr_mode = log ? support::ChildStdio::from_fd(log.get()) : support::ChildStdio::null();
  // Its own process group: the terminal's SIGINT is the CLI's to interpret (cancel, then exit).
  options.new_process_group = true;
  options.default_signals = true;
  auto child = support::spawn_process(options);
  if (!child) {
    // Only a missing agentd is "not found" to the CLI; a file it may not run is an I/O failure.
    const int rc = child.error().native_code();
    return Error(rc == ENOENT ? Errc::not_found : Errc::io, child.error().message(), rc);
  }
  return std::unique_ptr<AgentProcess>(
      new AgentProcess(child->pid, child->stdin_fd.release(), child->stdout_fd.release()));
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
