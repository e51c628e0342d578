#include "tools/process.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <gtest/gtest.h>

#include "test/unit/tools/tool_harness.h"
#include "tools/environment.h"

namespace agentd::tools {
namespace {

using namespace std::chrono_literals;
using support::Errc;
using testing::run_sync;

// Every pid listed by /proc/self/task/*/children: the processes this test process still has to reap.
std::string our_children() {
  std::string out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "children");
    std::string pids((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    out += pids;
  }
  return out;
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

std::vector<pid_t> pids_in(const std::string& text) {
  std::vector<pid_t> pids;
  std::istringstream in(text);
  long pid = 0;
  while (in >> pid) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

class ProcessTest : public ::testing::Test {
 protected:
  ProcessTest() {
    options_.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"};
    options_.kill_grace = 200ms;
  }
  void TearDown() override { EXPECT_EQ(our_children(), "") << "a run left a child unreaped"; }

  support::Result<ProcessResult> sh(const std::string& script) {
    options_.argv = {"/bin/sh", "-c", script};
    return run_sync(run_process(options_, on_output_, cancel_.token()));
  }

  ProcessOptions options_;
  std::string streamed_;
  OutputCallback on_output_ = [this](std::string_view chunk) { streamed_ += chunk; };
  support::CancelSource cancel_;
};

TEST_F(ProcessTest, ExitCodesAndMergedOutput) {
  auto result = sh("echo out; echo err >&2; exit 3");
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->ended_by, EndedBy::exit);
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_EQ(result->signal, 0);
  EXPECT_EQ(result->output, "out\nerr\n");
  EXPECT_EQ(result->output_bytes, 8U);
  EXPECT_EQ(result->truncated_bytes, 0U);
  EXPECT_EQ(streamed_, "out\nerr\n");
  EXPECT_GT(result->pid, 0);

  auto ok = sh("true");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->exit_code, 0);
  EXPECT_EQ(ok->output, "");
}

TEST_F(ProcessTest, KilledBySignal) {
  auto result = sh("kill -KILL $$");
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->ended_by, EndedBy::signal);
  EXPECT_EQ(result->signal, SIGKILL);
  EXPECT_EQ(result->exit_code, -1);
}

TEST_F(ProcessTest, StdinIsEmptyAndEnvironmentIsExactlyTheOneGiven) {
  options_.env.push_back("GREETING=hello there");
  auto result = sh("cat; echo \"$GREETING\"; echo \"${HOME:-no home}\"");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->output, "hello there\nno home\n");
}

TEST_F(ProcessTest, RunsInItsOwnProcessGroupAndCwd) {
  options_.cwd = "/";
  auto result = sh("pwd; cut -d' ' -f5 /proc/$$/stat; echo $$");
  ASSERT_TRUE(result);
  const std::string& out = result->output;
  ASSERT_TRUE(out.starts_with("/\n")) << out;
  const auto numbers = pids_in(out.substr(2));
  ASSERT_EQ(numbers.size(), 2U) << out;
  EXPECT_EQ(numbers[0], numbers[1]) << "pgid == pid: a group of its own";
  EXPECT_NE(::getpgrp(), result->pid);
}

TEST_F(ProcessTest, TimeoutKillsTheCommand) {
  options_.timeout = 200ms;
  const auto started = std::chrono::steady_clock::now();
  auto result = sh("echo before; sleep 30; echo after");
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->ended_by, EndedBy::timeout);
  EXPECT_EQ(result->signal, SIGTERM);
  EXPECT_EQ(result->output, "before\n");
  EXPECT_GE(result->duration, 200ms);
  EXPECT_LT(elapsed, 5s);
}

TEST_F(ProcessTest, TimeoutEscalatesToSigkillWhenTermIsIgnored) {
  options_.timeout = 100ms;
  options_.kill_grace = 100ms;
  auto result = sh("trap '' TERM; sleep 30");
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->ended_by, EndedBy::timeout);
  EXPECT_EQ(result->signal, SIGKILL);
  EXPECT_LT(result->duration, 5s);
}

TEST_F(ProcessTest, RunawayOutputKeepsHeadAndTail) {
  options_.timeout = 300ms;
  options_.capture_head_bytes = 1000;
  options_.capture_tail_bytes = 1000;
  std::uint64_t streamed_bytes = 0;
  OutputCallback count = [&](std::string_view chunk) { streamed_bytes += chunk.size(); };
  options_.argv = {"yes"};
  auto result = run_sync(run_process(options_, count, cancel_.token()));
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->ended_by, EndedBy::timeout);
  EXPECT_GT(result->output_bytes, 100'000U);
  EXPECT_EQ(streamed_bytes, result->output_bytes) << "every byte was streamed";
  EXPECT_EQ(result->truncated_bytes, result->output_bytes - 2000);
  EXPECT_LT(result->output.size(), 2100U) << "the capture is bounded";
  EXPECT_TRUE(result->output.starts_with("y\ny\ny\n"));
  EXPECT_TRUE(result->output.ends_with("y\ny\n"));
  EXPECT_NE(result->output.find(fmt::format("\n[... {} bytes of output omitted ...]\n", result->truncated_bytes)),
            std::string::npos);
}

TEST_F(ProcessTest, BackgroundChildrenThatOutliveTheCommandAreKilled) {
  // A plain background job (same group), and one that left the group and the session and was orphaned.
  auto result = sh("sleep 300 & echo $!; setsid sh -c 'sleep 300 & echo $!'");
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->ended_by, EndedBy::exit);
  EXPECT_EQ(result->exit_code, 0);
  const auto pids = pids_in(result->output);
  ASSERT_EQ(pids.size(), 2U) << result->output;
  for (pid_t pid : pids) EXPECT_TRUE(process_gone(pid)) << "pid " << pid << " survived the run";
  EXPECT_EQ(result->leftover_processes, 2);
}

TEST_F(ProcessTest, DoubleForkedDaemonHoldingThePipeIsKilled) {
  // The daemon keeps stderr (the run's pipe) open: the run still ends, because the supervisor kills it.
  // `head` waits for the daemon's pid, so the command ends only after the daemon is up.
  auto result = sh("(setsid sh -c 'echo $$; exec sleep 300' &) | head -n 1");
  ASSERT_TRUE(result) << result.error().message();
  const auto pids = pids_in(result->output);
  ASSERT_EQ(pids.size(), 1U) << result->output;
  EXPECT_TRUE(process_gone(pids[0]));
}

TEST_F(ProcessTest, CancellationKillsTheTreePromptlyAfterOutputStreamed) {
  // The cancel fires from the output callback: output streamed while the command was still running.
  std::chrono::steady_clock::time_point cancelled_at;
  OutputCallback cancel_on_ready = [&](std::string_view chunk) {
    streamed_ += chunk;
    if (streamed_.find("ready") != std::string::npos && !cancel_.cancelled()) {
      cancelled_at = std::chrono::steady_clock::now();
      cancel_.cancel();
    }
  };
  options_.argv = {"/bin/sh", "-c", "sleep 300 & echo $!; setsid sleep 300 & echo $!; echo ready; sleep 300"};
  auto result = run_sync(run_process(options_, cancel_on_ready, cancel_.token()));
  const auto latency = std::chrono::steady_clock::now() - cancelled_at;
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->ended_by, EndedBy::cancelled);
  EXPECT_EQ(result->signal, SIGTERM);
  EXPECT_LT(latency, 500ms);
  const auto pids = pids_in(streamed_.substr(0, streamed_.find("ready")));
  ASSERT_EQ(pids.size(), 2U) << streamed_;
  for (pid_t pid : pids) EXPECT_TRUE(process_gone(pid)) << "pid " << pid << " survived the cancel";
}

TEST_F(ProcessTest, AsioCancellationOfTheAwaitingCoroutineKillsTheTree) {
  // What a TaskGroup's cancel_all does: terminal cancellation through the coroutine's slot.
  boost::asio::io_context io;
  boost::asio::cancellation_signal signal;
  bool emitted = false;
  OutputCallback cancel_on_ready = [&](std::string_view chunk) {
    streamed_ += chunk;
    if (!emitted && streamed_.find("ready") != std::string::npos) {
      emitted = true;
      boost::asio::post(io, [&] { signal.emit(boost::asio::cancellation_type::terminal); });
    }
  };
  options_.argv = {"/bin/sh", "-c", "sleep 300 & echo $!; echo ready; sleep 300"};
  std::optional<support::Result<ProcessResult>> out;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        out.emplace(co_await run_process(options_, cancel_on_ready, cancel_.token()));
      },
      boost::asio::bind_cancellation_slot(signal.slot(), [](const std::exception_ptr& error) {
        if (error) std::rethrow_exception(error);
      }));
  io.run();
  ASSERT_TRUE(out.has_value());
  ASSERT_TRUE(*out) << out->error().message();
  EXPECT_EQ((*out)->ended_by, EndedBy::cancelled);
  const auto pids = pids_in(streamed_.substr(0, streamed_.find("ready")));
  ASSERT_EQ(pids.size(), 1U) << streamed_;
  EXPECT_TRUE(process_gone(pids[0]));
}

TEST_F(ProcessTest, QuickCommandsAreQuick) {
  constexpr int kRuns = 20;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < kRuns; ++i) {
    auto result = sh("true");
    ASSERT_TRUE(result);
    EXPECT_EQ(result->exit_code, 0);
  }
  const auto per_run =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started) / kRuns;
  std::cerr << "[ timing   ] /bin/sh -c true: " << per_run.count() << " us per run (fork, supervisor, exec, reap)\n";
  EXPECT_LT(per_run, 1s);
}

TEST_F(ProcessTest, CancelledBeforeStartRunsNothing) {
  cancel_.cancel();
  auto result = sh("echo never");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), Errc::cancelled);
}

TEST_F(ProcessTest, StartFailuresAreErrors) {
  options_.argv = {"no-such-program-anywhere"};
  auto missing = run_sync(run_process(options_, on_output_, cancel_.token()));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::not_found);

  options_.argv = {"/no/such/program"};
  auto bad_path = run_sync(run_process(options_, on_output_, cancel_.token()));
  ASSERT_FALSE(bad_path);
  EXPECT_EQ(bad_path.error().code(), Errc::not_found);
  EXPECT_NE(bad_path.error().message().find("execve"), std::string::npos) << bad_path.error().message();

  options_.cwd = "/no/such/dir";
  auto bad_cwd = sh("true");
  ASSERT_FALSE(bad_cwd);
  EXPECT_EQ(bad_cwd.error().code(), Errc::not_found);
  EXPECT_NE(bad_cwd.error().message().find("/no/such/dir"), std::string::npos);
}

TEST_F(ProcessTest, ArgvIsPassedWithoutAShell) {
  options_.argv = {"printf", "%s|", "a b", "$HOME", "*"};
  auto result = run_sync(run_process(options_, on_output_, cancel_.token()));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->output, "a b|$HOME|*|");
}

TEST(OutputCapture, WholeWhenItFits) {
  OutputCapture capture(4, 4);
  capture.append("abc");
  capture.append("defgh");
  EXPECT_EQ(capture.text(), "abcdefgh");
  EXPECT_EQ(capture.dropped_bytes(), 0U);
  EXPECT_EQ(capture.total_bytes(), 8U);
}

TEST(OutputCapture, HeadAndTailAcrossManyAppends) {
  OutputCapture capture(3, 4);
  for (char c = 'a'; c <= 'z'; ++c) capture.append(std::string(1, c));
  EXPECT_EQ(capture.text(), "abc\n[... 19 bytes of output omitted ...]\nwxyz");
  EXPECT_EQ(capture.dropped_bytes(), 19U);
  OutputCapture big(2, 3);
  big.append("0123456789");
  big.append("abcdefghij");
  EXPECT_EQ(big.text(), "01\n[... 15 bytes of output omitted ...]\nhij");
}

TEST(OutputCapture, CutsKeepUtf8SequencesWhole) {
  OutputCapture capture(4, 4);
  capture.append("ab\xC3\xA9");  // "abé": the head ends inside nothing
  capture.append("xxxxxxxx");
  capture.append("\xE2\x82\xAC");  // "€" at the end
  // Head "abé" (4 bytes), tail "x€" (4 bytes).
  EXPECT_EQ(capture.text(), "ab\xC3\xA9\n[... 7 bytes of output omitted ...]\nx\xE2\x82\xAC");
  OutputCapture split(3, 2);
  split.append("ab\xC3\xA9zzzz\xE2\x82\xAC");
  // The head would end inside "é" and the tail start inside "€": both are trimmed to whole sequences.
  EXPECT_EQ(split.text(), "ab\n[... 9 bytes of output omitted ...]\n");
  EXPECT_EQ(split.dropped_bytes(), 9U);
}

TEST(Utf8Chunker, HoldsBackACutSequence) {
  Utf8Chunker chunker;
  EXPECT_EQ(chunker.feed("a\xE2\x82"), "a");
  EXPECT_EQ(chunker.feed("\xAC"
                         "b"),
            "\xE2\x82\xAC"
            "b");
  EXPECT_EQ(chunker.feed("\xC3"), "");
  EXPECT_EQ(chunker.flush(), "\xC3");
  EXPECT_EQ(chunker.flush(), "");
}

}  // namespace
}  // namespace agentd::tools
