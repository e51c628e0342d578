// agentd-mock-model: the mock model server as a program. Prints one JSON line with its port on stdout
// once it listens (so a parent process can read it), logs to stderr, and runs until SIGINT or SIGTERM.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/support/log.h"
#include "test/mock_model/mock_model_server.h"

namespace {

constexpr std::string_view kUsage = R"(usage: agentd-mock-model [--script FILE] [--port N] [--record FILE]

A scripted Anthropic Messages / OpenAI Chat Completions server on 127.0.0.1 for tests, demos and
editor integrations. See test/mock_model/README.md for the script format.

  --script FILE   the exchanges to play (JSON); without it every model request gets a 500 until a
                  script is posted to /_mock/script
  --port N        port to listen on (default 0: any free port)
  --record FILE   append every request received to FILE as one JSON line (credentials redacted)

Prints {"port":N,"url":"http://127.0.0.1:N"} on stdout once listening. Endpoints besides the model
paths: GET /_mock/health, GET|DELETE /_mock/requests, POST /_mock/script. AGENTD_LOG sets the log level.
)";

int usage_error(std::string_view message) {
  fmt::print(stderr, "agentd-mock-model: {}\n\n{}", message, kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace agentd;
  support::log::init_from_env();

  std::string script_path;
  mock_model::ServerOptions options;
  options.script_dir = std::filesystem::current_path();
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    } else if (arg == "--script") {
      const char* v = value();
      if (v == nullptr) return usage_error("--script needs a file");
      script_path = v;
    } else if (arg == "--port") {
      const char* v = value();
      char* end = nullptr;
      const long port = v != nullptr ? std::strtol(v, &end, 10) : -1;
      if (v == nullptr || *end != '\0' || port < 0 || port > 65535) return usage_error("--port needs 0..65535");
      options.port = static_cast<std::uint16_t>(port);
    } else if (arg == "--record") {
      const char* v = value();
      if (v == nullptr) return usage_error("--record needs a file");
      options.record_file = v;
    } else {
      return usage_error(fmt::format("unknown argument {}", arg));
    }
  }

  mock_model::Script script;
  if (!script_path.empty()) {
    auto loaded = mock_model::load_script_file(script_path);
    if (!loaded) {
      fmt::print(stderr, "agentd-mock-model: {}\n", loaded.error().message());
      return 1;
    }
    script = std::move(loaded).value();
    options.script_dir = std::filesystem::absolute(script_path).parent_path();
  }

  // Block the stop signals before any thread starts, so only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const std::size_t exchanges = script.exchanges.size();
  auto server = mock_model::MockModelServer::start(std::move(script), options);
  if (!server) {
    fmt::print(stderr, "agentd-mock-model: {}\n", server.error().message());
    return 1;
  }
  fmt::print("{{\"port\":{},\"url\":\"{}\"}}\n", (*server)->port(), (*server)->url());
  std::fflush(stdout);
  support::log::info("mock-model: listening on {} with {} scripted exchanges", (*server)->url(), exchanges);

  int received = 0;
  sigwait(&stop_signals, &received);
  support::log::info("mock-model: stopping on signal {}", received);
  (*server)->stop();
  return 0;
}
