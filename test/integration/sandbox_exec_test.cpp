// `agentd sandbox-exec`: the binary confines one program the way the shell tool does (writes only in
// the roots and its private TMPDIR, .agentd/ and .claude/ read-only, the user's secrets hidden, the
// environment without secrets), passes its output and exit status through, and refuses bad options.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "test/support/child_process.h"
#include "test/support/temp_dir.h"
#include "tools/sandbox.h"

namespace agentd {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Ran {
  int code = -1;
  std::string out;
  std::string err;
};

Ran sandbox_exec(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv{AGENTD_BIN, "sandbox-exec"};
  argv.insert(argv.end(), args.begin(), args.end());
  testing::ChildProcess::Options options;
  options.env_overrides = env;
  testing::ChildProcess child(argv, options);
  child.close_stdin();
  Ran ran;
  ran.out = child.read_all_stdout(30s);
  const auto status = child.wait(30s);
  ran.err = child.stderr_text();
  if (status && status->exited) ran.code = status->code;
  return ran;
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(SandboxExec, OutputAndExitStatusPassThrough) {
  const Ran ran = sandbox_exec({"--allow-unsandboxed", "--", "sh", "-c", "echo out; echo err >&2; exit 7"});
  EXPECT_EQ(ran.code, 7) << ran.err;
  EXPECT_EQ(ran.out, "out\n");
  EXPECT_NE(ran.err.find("err"), std::string::npos);
  const Ran missing = sandbox_exec({"--allow-unsandboxed", "--", "no-such-program-anywhere"});
  EXPECT_EQ(missing.code, 127);
  EXPECT_NE(missing.err.find("no-such-program-anywhere"), std::string::npos) << missing.err;
}

// Nothing the program started outlives it, and a TERM for agentd sandbox-exec reaches them all.
TEST(SandboxExec, NothingOutlivesTheProgram) {
  testing::TempDir dir;
  const std::string marker = dir.file("late");
  const auto started = std::chrono::steady_clock::now();
  const Ran ran = sandbox_exec(
      {"--allow-unsandboxed", "--root", dir.path(), "--", "sh", "-c", "(sleep 1; touch " + marker + ") & echo bg"});
  EXPECT_EQ(ran.code, 0) << ran.err;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s) << "the background job did not hold it";
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(fs::exists(marker)) << "the background job was killed with the command";

  // A daemon in a session of its own is found too (it becomes our orphan).
  const Ran daemonized = sandbox_exec({"--allow-unsandboxed", "--root", dir.path(), "--", "sh", "-c",
                                       "setsid sh -c 'sleep 1; touch " + marker + "' & echo bg"});
  EXPECT_EQ(daemonized.code, 0) << daemonized.err;
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(fs::exists(marker)) << "the setsid job was killed with the command";

  std::vector<std::string> argv{AGENTD_BIN, "sandbox-exec", "--allow-unsandboxed",
                                "--root",   dir.path(),     "--",
                                "sh",       "-c",           "sleep 30 & sleep 30; echo never"};
  testing::ChildProcess child(argv);
  std::this_thread::sleep_for(300ms);
  child.signal(SIGTERM);
  const auto status = child.wait(5s);
  ASSERT_TRUE(status);
  EXPECT_EQ(child.read_all_stdout(5s), "") << "the whole group ended: no pipe held open";
}

TEST(SandboxExec, BadOptionsAreRefused) {
  EXPECT_EQ(sandbox_exec({
                             "--",
                         })
                .code,
            2);
  EXPECT_EQ(sandbox_exec({"echo", "hi"}).code, 2) << "the program goes after --";
  EXPECT_EQ(sandbox_exec({"--root"}).code, 2);
  const Ran ran = sandbox_exec({"--root", "/no/such/dir", "--", "true"});
  EXPECT_EQ(ran.code, 2);
  EXPECT_NE(ran.err.find("--root /no/such/dir: not a directory"), std::string::npos) << ran.err;
}

TEST(SandboxExec, ConfinedLikeTheShellTool) {
  const tools::SandboxStatus& status = tools::sandbox_status();
  if (!status.landlock() || !status.mount_namespaces) GTEST_SKIP() << status.summary();
  testing::TempDir dir;
  const fs::path root = fs::canonical(dir.path()) / "ws";
  const fs::path outside = fs::canonical(dir.path()) / "outside";
  const fs::path home = fs::canonical(dir.path()) / "home";
  write(root / ".agentd/config.json", "{}");
  write(root / ".claude/settings.json", "{}");
  write(home / ".ssh/id_ed25519", "PRIVATE KEY");
  fs::create_directories(outside);
  const std::string script =
      "echo inside > made.txt; echo $TMPDIR > tmp.txt; touch \"$TMPDIR/x\" && echo tmp-ok;"
      "echo x > " +
      (outside / "escaped").string() +
      " 2>/dev/null || echo outside-refused;"
      "echo '{\"mode\":\"bypass\"}' > .agentd/config.json 2>/dev/null || echo agentd-refused;"
      "echo '{\"hooks\":{}}' > .claude/settings.json 2>/dev/null || echo claude-refused;"
      "cat $HOME/.ssh/id_ed25519 2>/dev/null | grep -q PRIVATE || echo key-hidden;"
      "env | grep -q AGENTD_TEST_SECRET_TOKEN || echo secret-dropped";
  testing::ChildProcess::Options options;
  const Ran ran = sandbox_exec({"--root", root.string(), "--", "sh", "-c", "cd " + root.string() + " && " + script},
                               {"HOME=" + home.string(), "AGENTD_TEST_SECRET_TOKEN=abc"});
  EXPECT_EQ(ran.code, 0) << ran.err;
  for (const char* line :
       {"tmp-ok", "outside-refused", "agentd-refused", "claude-refused", "key-hidden", "secret-dropped"}) {
    EXPECT_NE(ran.out.find(line), std::string::npos) << line << " in:\n" << ran.out << ran.err;
  }
  EXPECT_TRUE(fs::exists(root / "made.txt"));
  EXPECT_FALSE(fs::exists(outside / "escaped"));
  std::ifstream tmp_file(root / "tmp.txt");
  std::string tmp;
  std::getline(tmp_file, tmp);
  EXPECT_FALSE(tmp.empty());
  EXPECT_FALSE(fs::exists(tmp)) << "the private TMPDIR goes with the command";
}

}  // namespace
}  // namespace agentd
