// What the tool tests share: a workspace in a temp dir, a ToolContext over it (disk FileAccess, a
// FileState, a cancel source), and run() which drives Tool::run on an io_context to completion.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>

#include <arpa/inet.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "core/support/cancel.h"
#include "core/support/json.h"
#include "test/support/temp_dir.h"
#include "tools/disk_file_access.h"
#include "tools/file_state.h"
#include "tools/tool.h"

namespace agentd::support {
// gtest prints Json values as their compact text instead of raw bytes.
inline void PrintTo(const Json& value, std::ostream* out) { *out << value.dump(); }
}  // namespace agentd::support

namespace agentd::tools::testing {

inline support::Json json(std::string_view text) { return support::parse_json(text).value(); }

inline void write_text(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Drives one coroutine to completion on a fresh io_context; an exception inside it fails the test.
template <class T>
T run_sync(boost::asio::awaitable<T> work) {
  boost::asio::io_context io;
  std::optional<T> out;
  boost::asio::co_spawn(
      io, [&]() -> boost::asio::awaitable<void> { out.emplace(co_await std::move(work)); },
      [](const std::exception_ptr& error) {
        if (error) std::rethrow_exception(error);
      });
  io.run();
  return std::move(*out);
}

// Fault injection that works as root too (permission bits do not stop root): while one of these lives,
// opening any file fails with EMFILE ...
class ScopedNoMoreFiles {
 public:
  ScopedNoMoreFiles() {
    ::getrlimit(RLIMIT_NOFILE, &old_);
    // dup() returns the lowest free descriptor, so every one below it is taken: a limit of that number
    // leaves no room for another.
    const int lowest_free = ::dup(0);
    ::close(lowest_free);
    rlimit tight = old_;
    tight.rlim_cur = static_cast<rlim_t>(lowest_free);
    ::setrlimit(RLIMIT_NOFILE, &tight);
  }
  ScopedNoMoreFiles(const ScopedNoMoreFiles&) = delete;
  ScopedNoMoreFiles& operator=(const ScopedNoMoreFiles&) = delete;
  ~ScopedNoMoreFiles() { ::setrlimit(RLIMIT_NOFILE, &old_); }

 private:
  rlimit old_{};
};

// ... and while one of these lives, writing past `bytes` into any file fails with EFBIG.
class ScopedFileSizeLimit {
 public:
  explicit ScopedFileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);  // else the kernel kills the process instead of failing the write
    rlimit tight = old_;
    tight.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &tight);
  }
  ScopedFileSizeLimit(const ScopedFileSizeLimit&) = delete;
  ScopedFileSizeLimit& operator=(const ScopedFileSizeLimit&) = delete;
  ~ScopedFileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  sighandler_t old_handler_ = SIG_DFL;
};

// A TCP listener on 127.0.0.1 with a free port: connecting needs no accept, the backlog takes it. For
// tests that check whether a sandboxed command reaches the network. Closed when it goes.
class LoopbackListener {
 public:
  LoopbackListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      return;
    }
    port_ = ntohs(address.sin_port);
  }
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;
  ~LoopbackListener() {
    if (fd_ >= 0) ::close(fd_);
  }
  // 0 when the listener could not be set up.
  int port() const noexcept { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class ToolHarness {
 public:
  ToolHarness() : root_(std::filesystem::canonical(temp_.path())) {
    std::filesystem::create_directories(workspace());
    std::filesystem::create_directories(outside());
    context.session_id = "test-session";
    context.cwd = workspace().string();
    context.cancel = cancel.token();
    context.files = &files;
    context.file_state = &file_state;
  }

  // The session's cwd, and a sibling directory no tool may reach.
  std::filesystem::path workspace() const { return root_ / "ws"; }
  std::filesystem::path outside() const { return root_ / "outside"; }
  std::filesystem::path path(const std::string& relative) const { return workspace() / relative; }
  void write(const std::string& relative, std::string_view text) const { write_text(path(relative), text); }

  // Input as JSON text (parsed here) or as a Json value.
  support::Result<ToolResult> run(Tool& tool, std::string_view input) { return run(tool, json(input)); }
  support::Result<ToolResult> run(Tool& tool, const char* input) { return run(tool, json(input)); }
  support::Result<ToolResult> run(Tool& tool, support::Json input) {
    return run_sync(tool.run(std::move(input), context));
  }

  DiskFileAccess files;
  FileState file_state;
  support::CancelSource cancel;
  ToolContext context;

 private:
  agentd::testing::TempDir temp_;
  std::filesystem::path root_;
};

}  // namespace agentd::tools::testing
