#include "daemon/demo.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <sys/wait.h>

#include "core/support/json.h"
#include "core/support/log.h"
#include "core/support/spawn.h"

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

  support::SpawnOptions options;
  options.argv = {exe, "--script", script};
  options.stdin_mode = support::ChildStdio::null();
  options.stdout_mode = support::ChildStdio::pipe();  // stdout-ok: the child's stdout
  auto child = support::spawn_process(options);
  if (!child) return Error(Errc::io, child.error().message(), child.error().native_code());
  const pid_t pid = child->pid;
  const support::OwnedFd out = std::move(child->stdout_fd);
  DemoModelServer server(pid, "");

  // The server prints {"port":N,"url":"http://127.0.0.1:N"} once it listens.
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (line.find('\n') == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd p{out.get(), POLLIN, 0};
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) break;
    char buf[512];
    const ssize_t n = read(out.get(), buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<std::size_t>(n));
  }
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
