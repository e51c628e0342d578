#include "tools/sandbox.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "test/support/temp_dir.h"
#include "test/unit/tools/tool_harness.h"
#include "tools/process.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using support::Errc;
using testing::read_text;
using testing::run_sync;
using testing::write_text;

TEST(SandboxStatus, ReportsWhatTheKernelOffers) {
  const SandboxStatus& status = sandbox_status();
  EXPECT_FALSE(status.summary().empty());
  EXPECT_EQ(status.landlock(), status.landlock_error.empty()) << status.summary();
  EXPECT_EQ(status.network_namespaces, status.network_namespaces_error.empty()) << status.summary();
  std::cerr << "[ sandbox  ] " << status.summary() << "\n";
}

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sandbox_status().landlock()) GTEST_SKIP() << "no Landlock on this kernel: " << sandbox_status().summary();
    fs::create_directories(workspace_);
    fs::create_directories(outside_);
    auto temp = PrivateTempDir::create();
    ASSERT_TRUE(temp) << temp.error().message();
    temp_.emplace(std::move(*temp));
  }

  support::Result<ProcessResult> sandboxed(const std::string& script, bool deny_network = false) {
    SandboxRequest request;
    request.writable = {workspace_, temp_->path()};
    request.deny_network = deny_network;
    auto plan = SandboxPlan::prepare(request);
    if (!plan) return std::move(plan).error();
    ProcessOptions options;
    options.argv = {"/bin/sh", "-c", script};
    options.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "TMPDIR=" + temp_->path().string(),
                   "WS=" + workspace_.string(), "OUT=" + outside_.string()};
    options.cwd = workspace_.string();
    options.timeout = 20s;
    options.sandbox = &*plan;
    return run_sync(run_process(options, on_output_, cancel_.token()));
  }

  agentd::testing::TempDir dir_;
  fs::path workspace_ = fs::canonical(dir_.path()) / "ws";
  fs::path outside_ = fs::canonical(dir_.path()) / "outside";
  std::optional<PrivateTempDir> temp_;
  OutputCallback on_output_;
  support::CancelSource cancel_;
};

TEST_F(SandboxTest, WritesOnlyInsideTheWorkspaceAndTemp) {
  write_text(outside_ / "existing", "keep me");
  write_text(outside_ / "readable", "read me");
  write_text(workspace_ / "to_move", "m");
  auto result = sandboxed(
      "echo in > \"$WS/inside\" && echo tmp > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo dev > /dev/null && "
      "mkdir -p sub/deeper && echo deep > sub/deeper/f && echo inside-ok\n"
      "cat \"$OUT/readable\"; echo\n"
      "echo via-dev-stdout > /dev/stdout\n"
      "echo out > \"$OUT/created\" || echo create-refused\n"
      "rm -f \"$OUT/existing\" || echo remove-refused\n"
      "mkdir \"$OUT/dir\" || echo mkdir-refused\n"
      "mv to_move \"$OUT/moved\" || echo move-refused\n"
      "echo appended >> \"$OUT/existing\" || echo append-refused\n");
  ASSERT_TRUE(result) << result.error().message();
  const std::string& out = result->output;
  EXPECT_NE(out.find("tmp\ninside-ok\nread me\nvia-dev-stdout\n"), std::string::npos) << out;
  for (const char* refused : {"create-refused", "remove-refused", "mkdir-refused", "move-refused", "append-refused"}) {
    EXPECT_NE(out.find(refused), std::string::npos) << refused << " missing in:\n" << out;
  }
  EXPECT_NE(out.find("Permission denied"), std::string::npos) << "EACCES, as the sandbox reports it:\n" << out;
  EXPECT_EQ(read_text(workspace_ / "inside"), "in\n");
  EXPECT_EQ(read_text(workspace_ / "sub/deeper/f"), "deep\n");
  EXPECT_FALSE(fs::exists(outside_ / "created"));
  EXPECT_FALSE(fs::exists(outside_ / "dir"));
  EXPECT_FALSE(fs::exists(outside_ / "moved"));
  EXPECT_TRUE(fs::exists(workspace_ / "to_move"));
  EXPECT_EQ(read_text(outside_ / "existing"), "keep me");
}

TEST_F(SandboxTest, SymlinkInsideTheWorkspaceDoesNotLeadOut) {
  fs::create_directory_symlink(outside_, workspace_ / "escape");
  auto result = sandboxed("echo x > escape/through-link || echo refused");
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_NE(result->output.find("refused"), std::string::npos) << result->output;
  EXPECT_FALSE(fs::exists(outside_ / "through-link"));
}

TEST_F(SandboxTest, NetworkCanBeCutOff) {
  const SandboxStatus& status = sandbox_status();
  if (!status.network_namespaces && !status.landlock_tcp()) GTEST_SKIP() << status.summary();
  if (!fs::exists("/bin/bash")) GTEST_SKIP() << "needs bash for /dev/tcp";
  // A listener of our own on loopback: connecting needs no accept, the backlog takes it.
  const testing::LoopbackListener listener;
  ASSERT_NE(listener.port(), 0);
  const std::string connect = fmt::format(
      "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{}' 2>/dev/null && echo connected || echo no-network", listener.port());

  auto allowed = sandboxed(connect, false);
  ASSERT_TRUE(allowed) << allowed.error().message();
  EXPECT_EQ(allowed->output, "connected\n") << "the control: the listener is reachable";
  auto denied = sandboxed(connect, true);
  ASSERT_TRUE(denied) << denied.error().message();
  EXPECT_EQ(denied->output, "no-network\n");
}

TEST_F(SandboxTest, CannotSignalProcessesOutsideTheSandbox) {
  if (sandbox_status().landlock_abi < 6) GTEST_SKIP() << "signal scoping needs Landlock ABI 6";
  auto result = sandboxed(fmt::format("kill -0 {} 2>/dev/null && echo reached || echo refused", ::getpid()));
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->output, "refused\n");
}

TEST_F(SandboxTest, PlanDescribesItselfAndRefusesMissingDirectories) {
  SandboxRequest request;
  request.writable = {workspace_, temp_->path()};
  auto plan = SandboxPlan::prepare(request);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(plan->landlock_abi(), sandbox_status().landlock_abi);
  EXPECT_FALSE(plan->denies_network());
  EXPECT_EQ(plan->describe(), fmt::format("Landlock ABI {}, writes only in 2 directories and /dev; network allowed",
                                          plan->landlock_abi()));

  request.writable.push_back(dir_.path() / "missing");
  auto missing = SandboxPlan::prepare(request);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::io);
  EXPECT_NE(missing.error().message().find("missing"), std::string::npos);
}

TEST(PrivateTempDir, RemovedWithItsContents) {
  fs::path path;
  {
    auto temp = PrivateTempDir::create();
    ASSERT_TRUE(temp) << temp.error().message();
    path = temp->path();
    EXPECT_TRUE(fs::is_directory(path));
    EXPECT_EQ((fs::status(path).permissions() & fs::perms::all), fs::perms::owner_all);
    write_text(path / "a/b/c", "x");
  }
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace agentd::tools
