#include "tools/builtin/shell.h"

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "test/unit/tools/tool_harness.h"
#include "tools/builtin/builtin_tools.h"
#include "tools/sandbox.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using support::Errc;
using support::Json;
using testing::json;

class ShellTest : public ::testing::Test {
 protected:
  ShellTest() {
    // Without Landlock the tool refuses by default; these tests are about the runner, so let it run.
    config_.sandbox.allow_unsandboxed = true;
    config_.kill_grace = 200ms;
    tool_ = make_shell_tool(config_);
  }

  support::Result<ToolResult> shell(const Json& input) { return h_.run(*tool_, input); }
  ToolResult ran(const std::string& command, std::optional<int> timeout_ms = std::nullopt) {
    Json input = Json::object();
    input.set("command", command);
    if (timeout_ms) input.set("timeout_ms", *timeout_ms);
    auto result = shell(input);
    if (!result) {
      ADD_FAILURE() << "error instead of a result: " << result.error().message();
      return ToolResult::failure(result.error().message());
    }
    return std::move(*result);
  }

  ShellConfig config_;
  testing::ToolHarness h_;
  std::shared_ptr<Tool> tool_;
};

TEST_F(ShellTest, OutputAndExitCode) {
  const ToolResult result = ran("echo hello; echo oops >&2");
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.content, "hello\noops\nexit code 0");
  EXPECT_EQ(result.summary, "echo hello; echo oops >&2: exit code 0");
  EXPECT_EQ(result.metadata["exitCode"], Json(0));
  EXPECT_EQ(result.metadata["signal"], Json());
  EXPECT_EQ(result.metadata["endedBy"], Json("exit"));
  EXPECT_EQ(result.metadata["outputBytes"], Json(11));
  EXPECT_EQ(result.metadata["truncatedBytes"], Json(0));
  EXPECT_TRUE(result.metadata["durationMs"].is_integer());
  EXPECT_TRUE(result.metadata["sandbox"]["enforced"].is_bool());
}

TEST_F(ShellTest, NonZeroExitIsInformationNotFailure) {
  const ToolResult result = ran("printf 'no newline'; exit 7");
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.content, "no newline\nexit code 7");
  EXPECT_EQ(result.metadata["exitCode"], Json(7));
  const ToolResult silent = ran("true");
  EXPECT_EQ(silent.content, "(no output)\nexit code 0");
}

TEST_F(ShellTest, KilledBySignal) {
  const ToolResult result = ran("kill -KILL $$");
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.content, "(no output)\nkilled by signal 9 (SIGKILL)");
  EXPECT_EQ(result.metadata["signal"], Json(SIGKILL));
  EXPECT_EQ(result.metadata["exitCode"], Json());
  EXPECT_EQ(result.metadata["endedBy"], Json("signal"));
}

TEST_F(ShellTest, TimeoutKillsAndSaysHowToGetMore) {
  const ToolResult result = ran("echo started; sleep 30", 200);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.content,
            "started\ntimed out after 200ms: the command and every process it started were killed (timeout_ms can "
            "be at most 600000)");
  EXPECT_EQ(result.summary, "echo started; sleep 30: timed out after 200ms");
  EXPECT_EQ(result.metadata["endedBy"], Json("timeout"));
  EXPECT_EQ(result.metadata["signal"], Json(SIGTERM));
}

TEST_F(ShellTest, TimeoutAboveTheMaximumIsRefusedByTheSchema) {
  auto result = shell(json(R"({"command": "true", "timeout_ms": 600001})"));
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->ok);
  EXPECT_NE(result->content.find("timeout_ms"), std::string::npos) << result->content;
}

TEST_F(ShellTest, RunawayOutputIsCapped) {
  config_.output_head_bytes = 100;
  config_.output_tail_bytes = 100;
  config_.stream_bytes = 2048;
  tool_ = make_shell_tool(config_);
  std::string streamed;
  h_.context.progress = [&](std::string_view chunk) { streamed += chunk; };
  const ToolResult result = ran("yes", 300);
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.content.starts_with("y\ny\n"));
  EXPECT_NE(result.content.find("bytes of output omitted"), std::string::npos);
  EXPECT_LT(result.content.size(), 600U) << "100 + 100 bytes kept, the omission note and the last line";
  EXPECT_GT(result.metadata["truncatedBytes"].as_int64(), 10000);
  // The live stream stopped at its budget, with a note.
  EXPECT_LT(streamed.size(), 2300U);
  EXPECT_NE(streamed.find("[live output stops here after 2 KiB"), std::string::npos) << streamed;
}

TEST_F(ShellTest, StreamsOutputAndCancelKillsTheTree) {
  std::string streamed;
  h_.context.progress = [&](std::string_view chunk) {
    streamed += chunk;
    if (streamed.find("ready") != std::string::npos) h_.cancel.cancel();
  };
  const auto started = std::chrono::steady_clock::now();
  auto result = shell(json(R"({"command": "sleep 300 & echo $!; echo ready; sleep 300"})"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), Errc::cancelled);
  const pid_t background = static_cast<pid_t>(std::stol(streamed));
  EXPECT_NE(::kill(background, 0), 0) << "the background sleep survived the cancel";
}

TEST_F(ShellTest, LeftoverBackgroundJobsAreKilledAndReported) {
  const ToolResult result = ran("sleep 300 & echo started");
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.content,
            "started\n[1 process still running when the command ended (background jobs) was killed; nothing "
            "outlives a shell call]\nexit code 0");
}

TEST_F(ShellTest, RunsInTheWorkspaceOrAGivenDirectoryInsideIt) {
  fs::create_directories(h_.path("sub"));
  EXPECT_EQ(ran("pwd").content, h_.workspace().string() + "\nexit code 0");
  auto sub = shell(json(R"({"command": "pwd", "cwd": "sub"})"));
  ASSERT_TRUE(sub);
  EXPECT_EQ(sub->content, h_.path("sub").string() + "\nexit code 0");

  auto outside = shell(Json(Json::Object{{"command", "pwd"}, {"cwd", h_.outside().string()}}));
  ASSERT_TRUE(outside);
  EXPECT_FALSE(outside->ok);
  auto missing = shell(json(R"({"command": "pwd", "cwd": "nope"})"));
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->ok);
  EXPECT_NE(missing->content.find("not a directory"), std::string::npos) << missing->content;
}

TEST_F(ShellTest, EnvironmentHasNoSecretsAndAPrivateTmpdir) {
  ::setenv("AGENTD_SHELL_TEST_TOKEN", "t0ps3cret", 1);
  ::setenv("OPENAI_API_KEY", "sk-test", 1);
  const ToolResult result = ran("env; echo \"tmp=$TMPDIR\"; touch \"$TMPDIR/scratch\" && echo tmp-writable");
  ::unsetenv("AGENTD_SHELL_TEST_TOKEN");
  ::unsetenv("OPENAI_API_KEY");
  EXPECT_EQ(result.content.find("t0ps3cret"), std::string::npos);
  EXPECT_EQ(result.content.find("sk-test"), std::string::npos);
  EXPECT_NE(result.content.find("\nPATH="), std::string::npos);
  EXPECT_NE(result.content.find("tmp-writable"), std::string::npos) << result.content;
  const std::size_t at = result.content.find("tmp=");
  ASSERT_NE(at, std::string::npos);
  const std::string tmpdir = result.content.substr(at + 4, result.content.find('\n', at) - at - 4);
  EXPECT_NE(tmpdir.find("agentd-shell-"), std::string::npos);
  EXPECT_FALSE(fs::exists(tmpdir)) << "the private temp dir is removed after the call";
}

TEST_F(ShellTest, AllowListKeepsAVariable) {
  config_.env_allow = {"AGENTD_SHELL_TEST_TOKEN"};
  tool_ = make_shell_tool(config_);
  ::setenv("AGENTD_SHELL_TEST_TOKEN", "allowed-value", 1);
  const ToolResult result = ran("echo \"$AGENTD_SHELL_TEST_TOKEN\"");
  ::unsetenv("AGENTD_SHELL_TEST_TOKEN");
  EXPECT_EQ(result.content, "allowed-value\nexit code 0");
}

// Sets variables of this process's environment for one test, restoring them when it goes.
class ScopedVariables {
 public:
  explicit ScopedVariables(const std::vector<std::pair<std::string, std::string>>& variables) {
    for (const auto& [name, value] : variables) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old != nullptr ? std::optional<std::string>(old) : std::nullopt);
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ScopedVariables(const ScopedVariables&) = delete;
  ScopedVariables& operator=(const ScopedVariables&) = delete;
  ~ScopedVariables() {
    for (const auto& [name, old] : saved_) {
      if (old) {
        ::setenv(name.c_str(), old->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(ShellTest, EnvShowsNoSecretsAndNoSession) {
  // Innocent names with credential-shaped values, session sockets, and a model key under a name that
  // says nothing (the engine passes each model's api_key_env).
  const std::vector<std::pair<std::string, std::string>> planted = {
      {"AGENTD_T_URL", "https://deploy:Hunter2pass@registry.example.com/simple"},
      {"AGENTD_T_OPENAI", "sk-proj-Planted0123456789AbCdEfGhIj"},
      {"AGENTD_T_ANTHROPIC", "sk-ant-api03-Planted0123456789AbCdEfGh"},
      {"AGENTD_T_GITHUB", "ghp_Planted0123456789AbCdEfGhIjKlMnOpQr"},
      {"AGENTD_T_GITLAB", "glpat-Planted0123456789AbCd"},
      {"AGENTD_T_SLACK", "xoxb-123456789012-1234567890123-PlantedSlackToken"},
      {"AGENTD_T_AWS", "AKIAPLANTED012345678"},
      {"AGENTD_T_GOOGLE", "AIzaPlanted-0123456789abcdefghijklmnopq"},
      {"AGENTD_T_JWT", "eyJhbGciOiJIUzI1NiJ9.eyJwbGFudGVkIjp0cnVlfQ.PlantedSignature0123"},
      {"AGENTD_T_PEM", "-----BEGIN EC PRIVATE KEY-----\nPlantedPemBody\n-----END EC PRIVATE KEY-----"},
      {"AGENTD_T_MODEL_AUTH", "planted-custom-model-credential"},
      {"SSH_AUTH_SOCK", "/tmp/planted-ssh-agent.sock"},
      {"DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/planted-bus"},
      {"XDG_RUNTIME_DIR", "/tmp/planted-runtime"},
      {"DISPLAY", ":4242"},
      {"KRB5CCNAME", "FILE:/tmp/planted-krb5cc"},
  };
  const ScopedVariables variables(planted);
  const ScopedVariables ordinary({{"AGENTD_T_PLAIN_PATH", "/usr/share/doc"},
                                  {"AGENTD_T_PLAIN_URL", "https://example.com/docs"},
                                  {"AGENTD_T_PLAIN_NUMBER", "4242"}});
  config_.secret_env_names = {"AGENTD_T_MODEL_AUTH"};
  tool_ = make_shell_tool(config_);
  const ToolResult result = ran("env");
  ASSERT_TRUE(result.ok) << result.content;
  for (const auto& [name, value] : planted) {
    EXPECT_EQ(result.content.find(name + "="), std::string::npos) << name << " reached the command";
    EXPECT_EQ(result.content.find(value.substr(0, 20)), std::string::npos) << value;
  }
  EXPECT_NE(result.content.find("\nPATH="), std::string::npos);
  EXPECT_NE(result.content.find("AGENTD_T_PLAIN_PATH=/usr/share/doc\n"), std::string::npos) << result.content;
  EXPECT_NE(result.content.find("AGENTD_T_PLAIN_URL=https://example.com/docs\n"), std::string::npos);
  EXPECT_NE(result.content.find("AGENTD_T_PLAIN_NUMBER=4242\n"), std::string::npos);
}

TEST_F(ShellTest, SandboxedCommandCannotWriteOutsideTheWorkspace) {
  if (!sandbox_status().landlock()) GTEST_SKIP() << "no Landlock on this kernel: " << sandbox_status().summary();
  config_.sandbox.allow_unsandboxed = false;
  tool_ = make_shell_tool(config_);
  const std::string outside = (h_.outside() / "escaped").string();
  const ToolResult result =
      ran(fmt::format("echo in > inside.txt && echo wrote-inside; echo out > '{}' || echo refused", outside));
  EXPECT_TRUE(result.ok);
  EXPECT_NE(result.content.find("wrote-inside"), std::string::npos) << result.content;
  EXPECT_NE(result.content.find("Permission denied"), std::string::npos) << result.content;
  EXPECT_NE(result.content.find("refused"), std::string::npos) << result.content;
  EXPECT_TRUE(fs::exists(h_.path("inside.txt")));
  EXPECT_FALSE(fs::exists(outside));
  EXPECT_EQ(result.metadata["sandbox"]["enforced"], Json(true));
}

TEST_F(ShellTest, SandboxTurnedOffIsSaidInTheResult) {
  config_.sandbox.require = false;
  tool_ = make_shell_tool(config_);
  const ToolResult result = ran("echo hi");
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.content,
            "hi\n[ran without a sandbox: the sandbox is turned off in agentd's configuration]\nexit code 0");
  Json expected = Json::object();
  expected.set("enforced", false);
  expected.set("reason", "the sandbox is turned off in agentd's configuration");
  EXPECT_EQ(result.metadata["sandbox"], expected);
}

TEST_F(ShellTest, SpecTitleAndRegistration) {
  EXPECT_EQ(tool_->spec().name, "shell");
  EXPECT_EQ(tool_->spec().kind, ToolKind::execute);
  EXPECT_EQ(tool_->spec().base_risk, Risk::execute);
  EXPECT_EQ(tool_->title(json(R"({"command": "make test\necho done"})"), h_.context), "Run make test...");
  ToolRegistry registry;
  ASSERT_TRUE(register_builtin_tools(registry));
  EXPECT_EQ(registry.names().back(), "shell");
}

}  // namespace
}  // namespace agentd::tools
