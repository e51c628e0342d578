// spawn_process against /bin/sh and friends: exit codes, pipes both ways, environment, cwd, process
// group, a missing program, and that no descriptor of ours leaks into the child.
#include "core/support/spawn.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

namespace agentd::support {
namespace {

// Everything the child writes to `fd`, until it closes it (the children here all end on their own).
std::string read_all(const OwnedFd& fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

bool write_all(const OwnedFd& fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd.get(), bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The child's exit code; -1 when a signal ended it.
int wait_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

SpawnOptions shell(std::string script) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", std::move(script)};
  return options;
}

TEST(SpawnProcess, ReportsTheExitCode) {
  auto child = spawn_process(shell("exit 3"));
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_GT(child->pid, 0);
  EXPECT_FALSE(child->stdin_fd);
  EXPECT_FALSE(child->stdout_fd);
  EXPECT_FALSE(child->stderr_fd);
  EXPECT_EQ(wait_exit(child->pid), 3);
}

TEST(SpawnProcess, PipesGoBothWays) {
  SpawnOptions options = shell("read line; echo \"out:$line\"; echo \"err:$line\" >&2");
  options.stdin_mode = ChildStdio::pipe();
  options.stdout_mode = ChildStdio::pipe();
  options.stderr_mode = ChildStdio::pipe();
  auto child = spawn_process(options);
  ASSERT_TRUE(child) << child.error().message();
  ASSERT_TRUE(child->stdin_fd && child->stdout_fd && child->stderr_fd);
  // Our ends are close-on-exec: a later child of ours must not hold them open.
  for (const OwnedFd* fd : {&child->stdin_fd, &child->stdout_fd, &child->stderr_fd}) {
    EXPECT_NE(::fcntl(fd->get(), F_GETFD) & FD_CLOEXEC, 0);
  }
  ASSERT_TRUE(write_all(child->stdin_fd, "hello\n"));
  child->stdin_fd.reset();
  EXPECT_EQ(read_all(child->stdout_fd), "out:hello\n");
  EXPECT_EQ(read_all(child->stderr_fd), "err:hello\n");
  EXPECT_EQ(wait_exit(child->pid), 0);
}

TEST(SpawnProcess, StdinFromNullOrAFileAndStderrToAnFd) {
  SpawnOptions from_null = shell("cat; echo end");
  from_null.stdin_mode = ChildStdio::null();
  from_null.stdout_mode = ChildStdio::pipe();
  auto first = spawn_process(from_null);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(read_all(first->stdout_fd), "end\n");
  EXPECT_EQ(wait_exit(first->pid), 0);

  // Its own source file is a file every test run has (by absolute path: __FILE__ is relative under
  // ccache's base_dir, and the test runs in another directory).
  SpawnOptions from_file = shell("head -c 2");
  from_file.stdin_mode = ChildStdio::from_file(AGENTD_SOURCE_DIR "/test/unit/support/spawn_test.cpp");
  from_file.stdout_mode = ChildStdio::pipe();
  auto second = spawn_process(from_file);
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(read_all(second->stdout_fd), "//");
  EXPECT_EQ(wait_exit(second->pid), 0);

  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  OwnedFd read_end(fds[0]);
  OwnedFd write_end(fds[1]);
  SpawnOptions to_fd = shell("echo oops >&2");
  to_fd.stderr_mode = ChildStdio::from_fd(write_end.get());
  auto third = spawn_process(to_fd);
  ASSERT_TRUE(third) << third.error().message();
  write_end.reset();
  EXPECT_EQ(read_all(read_end), "oops\n");
  EXPECT_EQ(wait_exit(third->pid), 0);
}

TEST(SpawnProcess, PassesTheEnvironmentGivenOrOurs) {
  SpawnOptions given = shell("echo \"${AGENTD_SPAWN_A-unset}/${AGENTD_SPAWN_B-unset}\"");
  given.env = std::vector<std::string>{"AGENTD_SPAWN_A=alpha"};
  given.stdout_mode = ChildStdio::pipe();
  ::setenv("AGENTD_SPAWN_B", "ours", 1);
  auto child = spawn_process(given);
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(read_all(child->stdout_fd), "alpha/unset\n");
  EXPECT_EQ(wait_exit(child->pid), 0);

  SpawnOptions inherited = given;
  inherited.env.reset();
  auto second = spawn_process(inherited);
  ::unsetenv("AGENTD_SPAWN_B");
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(read_all(second->stdout_fd), "unset/ours\n");
  EXPECT_EQ(wait_exit(second->pid), 0);
}

TEST(SpawnProcess, RunsInTheGivenDirectory) {
  SpawnOptions options = shell("pwd -P");
  options.cwd = "/";
  options.stdout_mode = ChildStdio::pipe();
  auto child = spawn_process(options);
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(read_all(child->stdout_fd), "/\n");
  EXPECT_EQ(wait_exit(child->pid), 0);

  options.cwd = "/nonexistent-agentd-spawn-dir";
  auto missing = spawn_process(options);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::not_found);
  // The error names the directory, not the program (which exists).
  EXPECT_NE(missing.error().message().find("/nonexistent-agentd-spawn-dir"), std::string::npos)
      << missing.error().message();
}

// A stdio file that cannot be opened is an error naming that file, not a failure to start the program.
TEST(SpawnProcess, AFileThatCannotBeOpenedIsNamed) {
  SpawnOptions in = shell("cat");
  in.stdin_mode = ChildStdio::from_file("/nonexistent-agentd-spawn-dir/input.txt");
  auto no_input = spawn_process(in);
  ASSERT_FALSE(no_input);
  EXPECT_EQ(no_input.error().code(), Errc::not_found);
  EXPECT_NE(no_input.error().message().find("/nonexistent-agentd-spawn-dir/input.txt"), std::string::npos)
      << no_input.error().message();
  EXPECT_NE(no_input.error().message().find("stdin"), std::string::npos) << no_input.error().message();
  EXPECT_EQ(no_input.error().message().find("/bin/sh"), std::string::npos) << no_input.error().message();

  SpawnOptions out = shell("echo hi");
  out.stderr_mode = ChildStdio::from_file("/nonexistent-agentd-spawn-dir/log.txt");
  auto no_log = spawn_process(out);
  ASSERT_FALSE(no_log);
  EXPECT_NE(no_log.error().message().find("stderr"), std::string::npos) << no_log.error().message();
}

// Output files are created (0600) and appended to, never truncated.
TEST(SpawnProcess, AppendsToAnOutputFile) {
  char dir_template[] = "/tmp/agentd-spawn-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string log = std::string(dir_template) + "/out.log";
  for (const char* word : {"one", "two"}) {
    SpawnOptions options = shell(std::string("echo ") + word);
    options.stdout_mode = ChildStdio::from_file(log);
    auto child = spawn_process(options);
    ASSERT_TRUE(child) << child.error().message();
    EXPECT_EQ(wait_exit(child->pid), 0);
  }
  OwnedFd fd(::open(log.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  EXPECT_EQ(read_all(fd), "one\ntwo\n");
  struct stat st {};
  ASSERT_EQ(::stat(log.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ::unlink(log.c_str());
  ::rmdir(dir_template);
}

TEST(SpawnProcess, LooksUpThePathOnlyWhenAsked) {
  SpawnOptions options;
  options.argv = {"sh", "-c", "exit 7"};
  options.search_path = true;
  auto found = spawn_process(options);
  ASSERT_TRUE(found) << found.error().message();
  EXPECT_EQ(wait_exit(found->pid), 7);

  options.search_path = false;
  options.cwd = "/";  // no ./sh there
  auto not_searched = spawn_process(options);
  ASSERT_FALSE(not_searched);
  EXPECT_EQ(not_searched.error().code(), Errc::not_found);

  // `program` is what runs; argv[0] is only the name the child sees.
  SpawnOptions named = shell("echo \"$0\"");
  named.program = "/bin/sh";
  named.argv = {"a-name-of-its-own", "-c", "echo \"$0\""};
  named.stdout_mode = ChildStdio::pipe();
  auto child = spawn_process(named);
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(read_all(child->stdout_fd), "a-name-of-its-own\n");
  EXPECT_EQ(wait_exit(child->pid), 0);
}

TEST(SpawnProcess, AMissingProgramIsAnErrorNotACrash) {
  SpawnOptions options;
  options.argv = {"/nonexistent/agentd-no-such-program"};
  options.stdin_mode = ChildStdio::pipe();
  options.stdout_mode = ChildStdio::pipe();
  auto missing = spawn_process(options);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::not_found);
  EXPECT_EQ(missing.error().native_code(), ENOENT);
  EXPECT_NE(missing.error().message().find("/nonexistent/agentd-no-such-program"), std::string::npos);

  options.argv = {"agentd-no-such-program-anywhere"};
  options.search_path = true;
  auto unfound = spawn_process(options);
  ASSERT_FALSE(unfound);
  EXPECT_EQ(unfound.error().code(), Errc::not_found);

  SpawnOptions empty;
  auto refused = spawn_process(empty);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::invalid_argument);
}

TEST(SpawnProcess, NoDescriptorOfOursLeaksIntoTheChild) {
  // One descriptor without close-on-exec, as a careless library would leave it.
  OwnedFd careless(::open("/dev/null", O_RDONLY));
  ASSERT_TRUE(careless);
  ASSERT_EQ(::fcntl(careless.get(), F_GETFD) & FD_CLOEXEC, 0);
  // ls holds its own descriptor for the directory it lists (the lowest free one, 3).
  SpawnOptions options;
  options.argv = {"ls", "-1", "/proc/self/fd"};
  options.search_path = true;
  options.stdin_mode = ChildStdio::pipe();
  options.stdout_mode = ChildStdio::pipe();
  options.stderr_mode = ChildStdio::pipe();
  auto child = spawn_process(options);
  ASSERT_TRUE(child) << child.error().message();
  child->stdin_fd.reset();
  const std::string listed = read_all(child->stdout_fd);
  EXPECT_EQ(wait_exit(child->pid), 0) << read_all(child->stderr_fd);
  std::set<std::string> fds;
  for (std::size_t at = 0; at < listed.size();) {
    const std::size_t nl = listed.find('\n', at);
    fds.insert(listed.substr(at, nl - at));
    at = nl == std::string::npos ? listed.size() : nl + 1;
  }
  EXPECT_EQ(fds, (std::set<std::string>{"0", "1", "2", "3"})) << listed;
}

TEST(SpawnProcess, NewProcessGroupAndDefaultSignals) {
  // A signal ignored here (as agentd ignores SIGPIPE) stays ignored across exec unless
  // `default_signals` gives the child the default back.
  struct sigaction ignore {};
  struct sigaction previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGUSR1, &ignore, &previous);
  SpawnOptions options = shell("kill -USR1 $$; echo survived");
  options.stdout_mode = ChildStdio::pipe();
  options.new_process_group = true;
  auto ignoring = spawn_process(options);
  ASSERT_TRUE(ignoring) << ignoring.error().message();
  EXPECT_EQ(::getpgid(ignoring->pid), ignoring->pid);
  EXPECT_EQ(read_all(ignoring->stdout_fd), "survived\n");
  EXPECT_EQ(wait_exit(ignoring->pid), 0);

  options.default_signals = true;
  auto defaulted = spawn_process(options);
  ASSERT_TRUE(defaulted) << defaulted.error().message();
  EXPECT_EQ(read_all(defaulted->stdout_fd), "");
  int status = 0;
  ASSERT_EQ(::waitpid(defaulted->pid, &status, 0), defaulted->pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGUSR1);
  ::sigaction(SIGUSR1, &previous, nullptr);
}

}  // namespace
}  // namespace agentd::support
