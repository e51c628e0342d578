#include "daemon/demo.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <sys/wait.h>

#include "core/support/json.h"
#include "core/support/log.h"

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace agentd::daemon {

namespace fs = std::filesystem;
using support::Errc;
using support::Error;
using support::Result;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): start-up, one thread
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

}  // namespace

Result<DemoModelServer> DemoModelServer::start(const std::string& agentd_path) {
  std::error_code ec;
  const fs::path self = fs::canonical(agentd_path, ec);
  const fs::path build_dir = ec ? fs::path(".") : self.parent_path().parent_path();
  const std::string exe = env_or("AGENTD_MOCK_MODEL", (build_dir / "test/mock_model/agentd-mock-model").string());
  const std::string script = env_or("AGENTD_DEMO_SCRIPT", AGENTD_SOURCE_DIR "/examples/demo/script.json");
  if (access(exe.c_str(), X_OK) != 0) {
    return Error(Errc::not_found, fmt::format("--demo needs agentd-mock-model, not found at {} (build the tests, or "
                                              "set AGENTD_MOCK_MODEL)",
                                              exe));
  }
  if (access(script.c_str(), R_OK) != 0) {
    return Error(Errc::not_found, fmt::format("--demo script {} not found (set AGENTD_DEMO_SCRIPT)", script));
  }

  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Error(Errc::io, fmt::format("pipe: {}", std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);  // stdout-ok: the child's stdout
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> args = {exe, "--script", script};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    return Error(Errc::io, fmt::format("starting {}: {}", exe, std::strerror(rc)));
  }
  DemoModelServer server(pid, "");

  // The server prints {"port":N,"url":"http://127.0.0.1:N"} once it listens.
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (line.find('\n') == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd p{out[0], POLLIN, 0};
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) break;
    char buf[512];
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<std::size_t>(n));
  }
  close(out[0]);
  auto json = support::parse_json(line.substr(0, line.find('\n')));
  if (!json || !(*json)["url"].is_string()) {
    return Error(Errc::unavailable, fmt::format("{} did not report its address (got \"{}\")", exe, line));
  }
  server.url_ = (*json)["url"].as_string();
  support::log::warn("DEMO MODE: the model is agentd-mock-model playing {} at {}; it is a script, not a real model",
                     script, server.url_);
  return server;
}

DemoModelServer::DemoModelServer(DemoModelServer&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), url_(std::move(other.url_)) {}

DemoModelServer::~DemoModelServer() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace agentd::daemon
