// The sandbox's mount namespace: agentd's and git's control files read-only, the user's secrets and the
// workspace's deny-listed files hidden, git still usable. Each attack is also run without the sandbox,
// where it must work, so a test that passes shows the sandbox stopped it. The unprivileged path (a user
// namespace) and a kernel without user namespaces run in a fresh copy of this binary as `nobody`.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "test/support/temp_dir.h"
#include "test/unit/tools/tool_harness.h"
#include "tools/builtin/shell.h"
#include "tools/process.h"
#include "tools/sandbox.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using support::Errc;
using support::Json;
using testing::read_text;
using testing::run_sync;
using testing::write_text;
using Kind = SandboxPlan::Mount::Kind;

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

class SandboxMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const SandboxStatus& status = sandbox_status();
    if (!status.landlock() || !status.mount_namespaces) GTEST_SKIP() << status.summary();
    fs::create_directories(workspace_);
    auto temp = PrivateTempDir::create();
    ASSERT_TRUE(temp) << temp.error().message();
    temp_.emplace(std::move(*temp));
    env_["HOME"] = home_.string();
  }

  SandboxRequest request() {
    SandboxRequest request;
    request.writable = {workspace_, temp_->path()};
    request.protected_roots = {workspace_};
    request.denied_paths = denied_;
    request.hide_user_secrets = true;
    request.deny_network = deny_network_;
    request.env = [this](const char* name) -> const char* {
      const auto it = env_.find(name);
      return it == env_.end() ? nullptr : it->second.c_str();
    };
    return request;
  }

  struct Ran {
    std::string output;
    int exit_code = -1;
    std::vector<fs::path> removed;  // what the sweep after the command took away
    std::string description;
  };

  // `script` under /bin/sh in the workspace, sandboxed as the shell tool does it, or not at all.
  Ran run(const std::string& script, bool sandboxed = true) {
    Ran ran;
    std::optional<SandboxPlan> plan;
    if (sandboxed) {
      auto prepared = SandboxPlan::prepare(request());
      if (!prepared) {
        ADD_FAILURE() << prepared.error().message();
        return ran;
      }
      plan.emplace(std::move(*prepared));
      ran.description = plan->describe();
    }
    ProcessOptions options;
    options.argv = {"/bin/sh", "-c", script};
    options.env = {"PATH=/usr/local/bin:/usr/bin:/bin",
                   "LC_ALL=C",
                   "TMPDIR=" + temp_->path().string(),
                   "GIT_CONFIG_NOSYSTEM=1",
                   "GIT_AUTHOR_NAME=t",
                   "GIT_AUTHOR_EMAIL=t@example.com",
                   "GIT_COMMITTER_NAME=t",
                   "GIT_COMMITTER_EMAIL=t@example.com"};
    for (const auto& [name, value] : env_) options.env.push_back(fmt::format("{}={}", name, value));
    options.cwd = workspace_.string();
    options.timeout = 60s;
    options.sandbox = plan ? &*plan : nullptr;
    auto result = run_sync(run_process(options, on_output_, cancel_.token()));
    if (plan) ran.removed = plan->remove_created_protected_paths();
    if (!result) {
      ADD_FAILURE() << result.error().message();
      return ran;
    }
    ran.output = result->output;
    ran.exit_code = result->exit_code;
    return ran;
  }

  void git_init() {
    const Ran init =
        run("git -c init.defaultBranch=main init -q && git commit -q --allow-empty -m first && echo ok", false);
    ASSERT_EQ(init.output, "ok\n");
  }

  agentd::testing::TempDir dir_;
  fs::path root_ = fs::canonical(dir_.path());
  fs::path home_ = root_ / "home";
  fs::path workspace_ = home_ / "proj";
  std::vector<std::string> denied_;
  bool deny_network_ = false;
  std::map<std::string, std::string> env_;
  std::optional<PrivateTempDir> temp_;
  OutputCallback on_output_;
  support::CancelSource cancel_;
};

TEST_F(SandboxMountTest, GitConfigHooksAndInfoAreReadOnly) {
  git_init();
  const std::string config = read_text(workspace_ / ".git/config");
  const std::string attack =
      "exec 2>/dev/null\n"
      "git config core.fsmonitor 'env > /tmp/k; false #' && echo LEAK:config-changed\n"
      "echo 'echo pwned' > .git/hooks/pre-commit && echo LEAK:hook-written\n";
  const Ran ran = run(attack +
                      "echo x >> .git/config && echo LEAK:config-appended\n"
                      "echo '*' > .git/info/exclude && echo LEAK:info-written\n"
                      "rm -f .git/config && echo LEAK:config-removed\n"
                      "mv .git/hooks .git/h2 && echo LEAK:hooks-moved\n"
                      "mv .git g2 && echo LEAK:git-moved\n"
                      "echo done\n");
  EXPECT_EQ(ran.output, "done\n");
  EXPECT_EQ(read_text(workspace_ / ".git/config"), config);
  EXPECT_FALSE(fs::exists(workspace_ / ".git/hooks/pre-commit"));
  EXPECT_TRUE(fs::is_directory(workspace_ / ".git/hooks"));
  EXPECT_TRUE(fs::is_directory(workspace_ / ".git"));
  EXPECT_TRUE(contains(ran.description, "mount namespace: ")) << ran.description;

  // The control: without the sandbox the same attack works.
  const Ran control = run(attack, false);
  EXPECT_EQ(control.output, "LEAK:config-changed\nLEAK:hook-written\n");
  EXPECT_TRUE(contains(read_text(workspace_ / ".git/config"), "fsmonitor"));
}

TEST_F(SandboxMountTest, CommondirCannotSendGitElsewhere) {
  git_init();
  // A `commondir` file in .git would make git read another directory's config and hooks.
  const Ran ran = run("cp -r .git evil && echo ../evil > .git/commondir && echo written");
  EXPECT_EQ(ran.output, "written\n") << "a path no mount can cover: the command may create it";
  EXPECT_EQ(ran.removed, std::vector<fs::path>{workspace_ / ".git/commondir"});
  EXPECT_FALSE(fs::exists(workspace_ / ".git/commondir"));
}

TEST_F(SandboxMountTest, GitWorksInsideTheSandbox) {
  // A fresh repository made inside the sandbox...
  const Ran fresh =
      run("git -c init.defaultBranch=main init -q && echo a > a.txt && git add a.txt && git commit -qm first && git "
          "rev-list --count HEAD");
  EXPECT_EQ(fresh.output, "1\n");
  EXPECT_TRUE(fresh.removed.empty());
  // ... and one whose config and hooks are read-only now: add, commit, branch, checkout.
  const Ran existing = run(
      "echo b > b.txt && git add b.txt && git commit -qm second && git checkout -qb topic && echo c > c.txt && "
      "git add c.txt && git commit -qm third && git checkout -q - && git merge -q topic && git rev-list --count HEAD "
      "&& git status --short && git config user.name someone || echo config-refused");
  EXPECT_EQ(existing.output.substr(0, 2), "3\n") << existing.output;
  EXPECT_TRUE(contains(existing.output, "config-refused")) << existing.output;
  EXPECT_TRUE(contains(existing.description, "read-only")) << existing.description;
  EXPECT_TRUE(fs::exists(workspace_ / "c.txt"));
}

TEST_F(SandboxMountTest, ProjectAgentdDirIsReadOnly) {
  write_text(workspace_ / ".agentd/config.json", R"({"mode": "default"})");
  const std::string attack =
      "exec 2>/dev/null\necho '{\"mode\": \"bypass\"}' > .agentd/config.json && echo LEAK:wrote\n";
  const Ran ran = run(attack +
                      "rm -f .agentd/config.json && echo LEAK:removed\n"
                      "mv .agentd a2 && echo LEAK:moved\n"
                      "touch .agentd/other.json && echo LEAK:created\n"
                      "echo done\n");
  EXPECT_EQ(ran.output, "done\n");
  EXPECT_EQ(read_text(workspace_ / ".agentd/config.json"), R"({"mode": "default"})");
  EXPECT_FALSE(fs::exists(workspace_ / ".agentd/other.json"));

  const Ran control = run(attack, false);
  EXPECT_EQ(control.output, "LEAK:wrote\n");
}

// Claude Code's project settings hold hooks agentd runs: a command may not rewrite them (or the scripts
// they name) to have agentd run its code outside any permission question.
TEST_F(SandboxMountTest, ProjectClaudeSettingsAreReadOnly) {
  write_text(workspace_ / ".claude/settings.json", R"({"hooks": {}})");
  const Ran ran =
      run("exec 2>/dev/null\n"
          "echo '{\"hooks\": {\"Stop\": []}}' > .claude/settings.json && echo LEAK:wrote\n"
          "mkdir .claude/hooks && echo LEAK:hooks\n"
          "mv .claude c2 && echo LEAK:moved\n"
          "echo done\n");
  EXPECT_EQ(ran.output, "done\n");
  EXPECT_EQ(read_text(workspace_ / ".claude/settings.json"), R"({"hooks": {}})");
}

TEST_F(SandboxMountTest, AbsentProtectedPathsAreRemovedAfterTheCommand) {
  git_init();
  fs::remove_all(workspace_ / ".git/hooks");
  const Ran ran =
      run("mkdir .agentd && echo '{\"mode\": \"bypass\"}' > .agentd/config.json && echo agentd-made\n"
          "mkdir .git/hooks && echo 'echo pwned' > .git/hooks/pre-commit && echo hooks-made\n"
          "mkdir build && echo kept > build/out && echo build-made\n");
  EXPECT_EQ(ran.output, "agentd-made\nhooks-made\nbuild-made\n") << "no mount point to cover them with";
  EXPECT_EQ(ran.removed, (std::vector<fs::path>{workspace_ / ".agentd", workspace_ / ".git/hooks"}));
  EXPECT_FALSE(fs::exists(workspace_ / ".agentd"));
  EXPECT_FALSE(fs::exists(workspace_ / ".git/hooks"));
  EXPECT_EQ(read_text(workspace_ / "build/out"), "kept\n") << "only protected paths are swept";

  // A link in its place is removed, not followed.
  write_text(root_ / "elsewhere/config.json", "theirs");
  const Ran link = run(fmt::format("ln -s '{}' .agentd && echo linked", (root_ / "elsewhere").string()));
  EXPECT_EQ(link.output, "linked\n");
  EXPECT_FALSE(fs::exists(fs::symlink_status(workspace_ / ".agentd")));
  EXPECT_EQ(read_text(root_ / "elsewhere/config.json"), "theirs");
}

TEST_F(SandboxMountTest, UserAgentdConfigAndDataWhenTheWorkspaceIsHome) {
  workspace_ = home_;
  write_text(home_ / ".config/agentd/config.json", "USER-CONFIG");
  write_text(home_ / ".config/agentd/trusted-projects.json", "TRUSTED-PROJECTS");
  write_text(home_ / ".local/share/agentd/agentd.db", "DATABASE");
  write_text(home_ / "xdg-config/agentd/config.json", "XDG-CONFIG");
  write_text(home_ / "xdg-data/agentd/agentd.db", "XDG-DATABASE");
  env_["XDG_CONFIG_HOME"] = (home_ / "xdg-config").string();
  env_["XDG_DATA_HOME"] = (home_ / "xdg-data").string();
  const std::string reads =
      "cat ~/.config/agentd/config.json ~/.config/agentd/trusted-projects.json ~/.local/share/agentd/agentd.db "
      "\"$XDG_CONFIG_HOME/agentd/config.json\" \"$XDG_DATA_HOME/agentd/agentd.db\" 2>/dev/null\n";
  const Ran ran = run("exec 2>/dev/null\n" + reads +
                      "echo '{\"mode\": \"bypass\"}' > ~/.config/agentd/config.json && echo LEAK:config-written\n"
                      "echo '{}' > \"$XDG_CONFIG_HOME/agentd/config.json\" && echo LEAK:xdg-written\n"
                      "rm ~/.local/share/agentd/agentd.db && echo LEAK:database-removed\n"
                      "mv ~/.config ~/c2 && echo LEAK:config-dir-moved\n"
                      "mv ~/.local ~/l2 && echo LEAK:local-dir-moved\n"
                      "echo \"[$(ls -A ~/.config/agentd)$(ls -A ~/.local/share/agentd)]\"\n");
  EXPECT_EQ(ran.output, "[]\n");
  EXPECT_EQ(read_text(home_ / ".config/agentd/config.json"), "USER-CONFIG");
  EXPECT_EQ(read_text(home_ / ".config/agentd/trusted-projects.json"), "TRUSTED-PROJECTS");
  EXPECT_EQ(read_text(home_ / ".local/share/agentd/agentd.db"), "DATABASE");
  EXPECT_EQ(read_text(home_ / "xdg-config/agentd/config.json"), "XDG-CONFIG");

  const Ran control = run(reads, false);
  EXPECT_EQ(control.output, "USER-CONFIGTRUSTED-PROJECTSDATABASEXDG-CONFIGXDG-DATABASE");
}

TEST_F(SandboxMountTest, AbsentUserConfigMadeByTheCommandIsRemoved) {
  workspace_ = home_;
  fs::create_directories(home_);
  const Ran ran =
      run("mkdir -p ~/.config/agentd && echo '{\"mode\": \"bypass\"}' > ~/.config/agentd/config.json && echo made\n"
          "git config --global core.fsmonitor 'env > /tmp/k; false #' && echo gitconfig-made\n");
  EXPECT_EQ(ran.output, "made\ngitconfig-made\n");
  EXPECT_EQ(ran.removed, (std::vector<fs::path>{home_ / ".config/agentd", home_ / ".gitconfig"}));
  EXPECT_FALSE(fs::exists(home_ / ".config/agentd"));
  EXPECT_FALSE(fs::exists(home_ / ".gitconfig"));
}

TEST_F(SandboxMountTest, AbsentPathsCannotBeRedirected) {
  workspace_ = home_;
  write_text(home_ / ".config/other/settings", "theirs");
  // The parent exists: it is pinned, so it cannot be moved aside and replaced by a link.
  const Ran moved = run("mv ~/.config ~/c2 2>/dev/null && echo LEAK:moved; echo done");
  EXPECT_EQ(moved.output, "done\n");
  EXPECT_EQ(read_text(home_ / ".config/other/settings"), "theirs");

  // The parent is missing too: a link the command puts there is what goes, not what it leads to.
  fs::remove_all(home_ / ".config");
  write_text(home_ / "projects/foo/agentd/notes", "not the command's");
  const Ran linked =
      run("echo '{\"mode\": \"bypass\"}' > ~/projects/foo/agentd/config.json && ln -s ~/projects/foo ~/.config && "
          "echo linked");
  EXPECT_EQ(linked.output, "linked\n");
  EXPECT_EQ(linked.removed, std::vector<fs::path>{home_ / ".config"});
  EXPECT_FALSE(fs::exists(fs::symlink_status(home_ / ".config")));
  EXPECT_EQ(read_text(home_ / "projects/foo/agentd/notes"), "not the command's");
}

TEST_F(SandboxMountTest, NetworkNamespaceAndMountsTogether) {
  if (!sandbox_status().network_namespaces) GTEST_SKIP() << sandbox_status().summary();
  if (!fs::exists("/bin/bash")) GTEST_SKIP() << "needs bash for /dev/tcp";
  // A listener of agentd's on loopback: the command's own namespace has a loopback of its own.
  const testing::LoopbackListener listener;
  ASSERT_NE(listener.port(), 0);
  write_text(workspace_ / ".env", "ENV-SECRET");
  const std::string script = fmt::format(
      "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{}' 2>/dev/null && echo connected; cat .env; echo", listener.port());
  deny_network_ = true;
  const Ran ran = run(script);
  EXPECT_EQ(ran.output, "\n");
  EXPECT_TRUE(contains(ran.description, "network denied")) << ran.description;
  EXPECT_TRUE(contains(ran.description, "mount namespace: ")) << ran.description;
  const Ran control = run(script, false);
  EXPECT_EQ(control.output, "connected\nENV-SECRET\n");
}

TEST_F(SandboxMountTest, SecretsAndDenyListedFilesAreHidden) {
  denied_ = {"secrets/token"};
  write_text(home_ / ".ssh/id_rsa", "SSH-SECRET");
  write_text(home_ / ".gnupg/private-keys", "GPG-SECRET");
  write_text(home_ / ".aws/credentials", "AWS-SECRET");
  write_text(root_ / "run/bus", "RUNTIME-SECRET");
  env_["XDG_RUNTIME_DIR"] = (root_ / "run").string();
  write_text(workspace_ / ".env", "ENV-SECRET");
  write_text(workspace_ / ".gitignore", ".env\n.env.*\n");  // ignored files are found all the same
  write_text(workspace_ / "secrets/token", "TOKEN-SECRET");
  write_text(workspace_ / "secrets/readme", "not secret");
  write_text(workspace_ / "sub/deeper/.env.local", "DEEP-SECRET");
  write_text(root_ / "elsewhere/server.pem", "PEM-SECRET");
  fs::create_symlink(root_ / "elsewhere/server.pem", workspace_ / "cert.txt");  // an innocent name
  const std::string script =
      "cat .env secrets/token sub/deeper/.env.local cert.txt ~/.ssh/id_rsa ~/.gnupg/private-keys ~/.aws/credentials "
      "\"$XDG_RUNTIME_DIR/bus\" 2>/dev/null\n"
      "echo \"[$(ls -A ~/.ssh)$(ls -A ~/.gnupg)$(ls -A \"$XDG_RUNTIME_DIR\")]\"\n"
      "cat secrets/readme; echo\n";
  const Ran ran = run(script + "echo overwritten 2>/dev/null > .env; echo done\n");
  EXPECT_EQ(ran.output, "[]\nnot secret\ndone\n");
  EXPECT_EQ(read_text(workspace_ / ".env"), "ENV-SECRET");
  EXPECT_EQ(read_text(home_ / ".ssh/id_rsa"), "SSH-SECRET");

  const Ran control = run(script, false);
  for (const char* secret : {"ENV-SECRET", "TOKEN-SECRET", "DEEP-SECRET", "PEM-SECRET", "SSH-SECRET", "GPG-SECRET",
                             "AWS-SECRET", "RUNTIME-SECRET"}) {
    EXPECT_TRUE(contains(control.output, secret)) << secret << " is not readable even without the sandbox";
  }
}

TEST_F(SandboxMountTest, PlanListsItsMounts) {
  git_init();
  write_text(workspace_ / ".env", "x");
  write_text(workspace_ / "nested/.git/config", "[core]\n");
  write_text(workspace_ / "nested/.git/HEAD", "ref: refs/heads/main\n");
  fs::create_directories(workspace_ / "nested/.git/hooks");
  write_text(home_ / ".ssh/id_rsa", "k");
  auto plan = SandboxPlan::prepare(request());
  ASSERT_TRUE(plan) << plan.error().message();
  ASSERT_TRUE(plan->mount_namespace());
  std::vector<std::pair<Kind, std::string>> mounts;
  for (const auto& mount : plan->mounts()) {
    if (mount.target.starts_with(root_.string()))
      mounts.emplace_back(mount.kind, mount.target.substr(root_.string().size()));
  }
  const std::vector<std::pair<Kind, std::string>> expected = {
      {Kind::pin, "/home/proj/.git"},
      {Kind::read_only, "/home/proj/.git/config"},
      {Kind::read_only, "/home/proj/.git/hooks"},
      {Kind::read_only, "/home/proj/.git/info"},
      {Kind::pin, "/home/proj/nested"},
      {Kind::pin, "/home/proj/nested/.git"},
      {Kind::read_only, "/home/proj/nested/.git/config"},
      {Kind::read_only, "/home/proj/nested/.git/hooks"},
      {Kind::hide_dir, "/home/.ssh"},
      {Kind::hide_file, "/home/proj/.env"},
  };
  EXPECT_EQ(mounts, expected);
  EXPECT_EQ(plan->describe(),
            fmt::format("Landlock ABI {}, writes only in 2 directories and /dev; network allowed; mount namespace: "
                        "{} paths read-only, {} hidden",
                        plan->landlock_abi(), 5, 2));
}

TEST_F(SandboxMountTest, ScanIsBoundedBreadthFirst) {
  write_text(workspace_ / ".env", "SHALLOW-SECRET");
  fs::create_directories(workspace_ / "many");
  for (int i = 0; i < 10001; ++i) {
    const int fd = ::open((workspace_ / "many" / std::to_string(i)).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ::close(fd);
  }
  write_text(workspace_ / "many/zz/.env", "DEEP-SECRET");
  const Ran ran = run("cat .env many/zz/.env");
  EXPECT_TRUE(contains(ran.description, "the deny-path scan stopped after 10000 entries")) << ran.description;
  EXPECT_EQ(ran.output, "DEEP-SECRET") << "found only past the bound: readable, and the description says so";
}

TEST_F(SandboxMountTest, WithoutAMountNamespaceThePolicyDecides) {
  SandboxStatus status = sandbox_status();
  status.mount_namespaces = false;
  status.mount_namespaces_error = "unshare(CLONE_NEWUSER | CLONE_NEWNS): Operation not permitted";
  SandboxRequest asked = request();
  auto refused = SandboxPlan::prepare(asked, status);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::unsupported);
  EXPECT_TRUE(contains(refused.error().message(), "no mount namespace here (unshare(CLONE_NEWUSER | CLONE_NEWNS)"))
      << refused.error().message();

  asked.mounts_optional = true;
  auto landlock_only = SandboxPlan::prepare(asked, status);
  ASSERT_TRUE(landlock_only) << landlock_only.error().message();
  EXPECT_FALSE(landlock_only->mount_namespace());
  EXPECT_EQ(landlock_only->mount_namespace_error(), status.mount_namespaces_error);
  EXPECT_TRUE(landlock_only->mounts().empty());
  EXPECT_TRUE(contains(landlock_only->describe(), "; no mount namespace (unshare")) << landlock_only->describe();

  // agentd's own git asks for no mounts at all, and needs no mount namespace.
  SandboxRequest plain;
  plain.writable = {workspace_};
  auto git_plan = SandboxPlan::prepare(plain, status);
  ASSERT_TRUE(git_plan) << git_plan.error().message();
  EXPECT_EQ(git_plan->describe(), fmt::format("Landlock ABI {}, writes only in 1 directory and /dev; network allowed",
                                              git_plan->landlock_abi()));
}

TEST_F(SandboxMountTest, ShellToolHidesDenyPathsAndProtectsGit) {
  testing::ToolHarness h;
  const std::vector<std::string> denied = {"secrets/token"};
  h.context.denied_paths = &denied;
  h.write(".env", "ENV-SECRET");
  h.write("secrets/token", "TOKEN-SECRET");
  ShellConfig config;
  auto tool = make_shell_tool(config);
  auto init = h.run(*tool, R"({"command": "git init -q ."})");
  ASSERT_TRUE(init && init->ok) << (init ? init->content : init.error().message());
  Json input = Json::object();
  input.set("command",
            "cat .env secrets/token; echo x >> .git/config || echo config-refused; "
            "mkdir .agentd && echo '{}' > .agentd/config.json && echo agentd-made");
  auto result = h.run(*tool, input);
  ASSERT_TRUE(result) << result.error().message();
  const std::string& content = result->content;
  EXPECT_FALSE(contains(content, "SECRET")) << content;
  EXPECT_TRUE(contains(content, "config-refused")) << content;
  EXPECT_TRUE(contains(content, "agentd-made\n\n[agentd removed " + (h.workspace() / ".agentd").string())) << content;
  EXPECT_FALSE(fs::exists(h.path(".agentd")));
  EXPECT_EQ(result->metadata["sandbox"]["enforced"], Json(true));
  EXPECT_TRUE(contains(result->metadata["sandbox"]["description"].as_string(), "mount namespace: "));
}

// ---------------------------------------------------------------------------------------------------
// As an ordinary user, in a fresh process: the user namespace path, and a kernel that refuses it.

constexpr const char* kInnerVariable = "AGENTD_SANDBOX_INNER";

// Makes unshare(2) with CLONE_NEWUSER or CLONE_NEWNS fail with EPERM, as container runtimes' default
// seccomp profiles and some distributions do. A test filter, not a boundary: no architecture check.
bool block_namespaces() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER | CLONE_NEWNS, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

struct InnerRun {
  int status = -1;
  std::string output;
};

// Runs this binary's disabled test `test` as `nobody` (when root), with `kInnerVariable` set.
InnerRun run_inner(const std::string& test, bool without_namespaces) {
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  std::vector<std::string> args = {exe, "--gtest_also_run_disabled_tests", "--gtest_filter=" + test};
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent",
                                  std::string(kInnerVariable) + "=1"};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (auto& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    if (without_namespaces && !block_namespaces()) ::_exit(125);
    if (::geteuid() == 0) {
      const gid_t nobody = 65534;
      if (::setgroups(0, nullptr) != 0 || ::setresgid(nobody, nobody, nobody) != 0 ||
          ::setresuid(nobody, nobody, nobody) != 0) {
        ::_exit(126);
      }
    }
    ::execve(exe.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  InnerRun run;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  char buffer[4096];
  for (;;) {
    pollfd fd{out[0], POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      run.output += "\n[timed out]";
      break;
    }
    if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;
    run.output.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  ::waitpid(pid, &run.status, 0);
  return run;
}

bool inner() { return std::getenv(kInnerVariable) != nullptr; }  // NOLINT(concurrency-mt-unsafe)

TEST(SandboxUnprivileged, MountNamespaceWorksForAnOrdinaryUser) {
  if (!sandbox_status().landlock()) GTEST_SKIP() << sandbox_status().summary();
  const InnerRun run = run_inner("SandboxMountTest.DISABLED_AsAnOrdinaryUser", false);
  EXPECT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0) << run.output;
  EXPECT_TRUE(contains(run.output, "[  PASSED  ] 1 test")) << run.output;
}

TEST(SandboxUnprivileged, WithoutUserNamespacesTheConfigDecides) {
  if (!sandbox_status().landlock()) GTEST_SKIP() << sandbox_status().summary();
  const InnerRun run = run_inner("SandboxInner.DISABLED_WithoutUserNamespaces", true);
  EXPECT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0) << run.output;
  EXPECT_TRUE(contains(run.output, "[  PASSED  ] 1 test")) << run.output;
}

// Inner: the fixture's attacks again, as `nobody` through a user namespace.
TEST_F(SandboxMountTest, DISABLED_AsAnOrdinaryUser) {
  ASSERT_TRUE(inner()) << "run by SandboxUnprivileged.MountNamespaceWorksForAnOrdinaryUser";
  EXPECT_NE(::geteuid(), 0U);
  git_init();
  const std::string config = read_text(workspace_ / ".git/config");
  write_text(workspace_ / ".env", "ENV-SECRET");
  write_text(workspace_ / ".agentd/config.json", "{}");
  write_text(home_ / ".ssh/id_rsa", "SSH-SECRET");
  deny_network_ = sandbox_status().network_namespaces;  // one user namespace holding both
  const Ran ran =
      run("exec 2>/dev/null\n"
          "git config core.fsmonitor 'env > /tmp/k; false #' && echo LEAK:config-changed\n"
          "echo x > .git/hooks/pre-commit && echo LEAK:hook-written\n"
          "echo x > .agentd/config.json && echo LEAK:agentd-written\n"
          "cat .env ~/.ssh/id_rsa\n"
          "echo a > a.txt && git add a.txt && git commit -qm second && git rev-list --count HEAD\n");
  EXPECT_EQ(ran.output, "2\n");
  EXPECT_EQ(read_text(workspace_ / ".git/config"), config);
  EXPECT_EQ(read_text(workspace_ / ".agentd/config.json"), "{}");
  EXPECT_FALSE(fs::exists(workspace_ / ".git/hooks/pre-commit"));
  EXPECT_TRUE(contains(ran.description, "mount namespace: ")) << ran.description;
}

// Inner: unshare(CLONE_NEWUSER | CLONE_NEWNS) fails, as without unprivileged user namespaces.
TEST(SandboxInner, DISABLED_WithoutUserNamespaces) {
  ASSERT_TRUE(inner()) << "run by SandboxUnprivileged.WithoutUserNamespacesTheConfigDecides";
  const SandboxStatus& status = sandbox_status();
  ASSERT_TRUE(status.landlock()) << status.summary();
  EXPECT_FALSE(status.mount_namespaces);
  EXPECT_TRUE(contains(status.mount_namespaces_error, "Operation not permitted")) << status.mount_namespaces_error;
  EXPECT_TRUE(contains(status.summary(), "; no mount namespace (")) << status.summary();

  testing::ToolHarness h;
  Json input = Json::object();
  input.set("command",
            fmt::format("echo in > inside.txt; echo out > '{}' || echo refused", (h.outside() / "escaped").string()));
  ShellConfig config;  // require, without consent to run unprotected: refused
  auto refused = h.run(*make_shell_tool(config), input);
  ASSERT_TRUE(refused) << refused.error().message();
  EXPECT_FALSE(refused->ok);
  EXPECT_TRUE(contains(refused->content, "Not run: the command sandbox cannot be set up (no mount namespace here"))
      << refused->content;
  EXPECT_FALSE(fs::exists(h.path("inside.txt")));

  config.sandbox.allow_unsandboxed = true;  // consent: Landlock alone, and the result says so
  auto ran = h.run(*make_shell_tool(config), input);
  ASSERT_TRUE(ran) << ran.error().message();
  EXPECT_TRUE(contains(ran->content, "refused\n[ran without a sandbox: no mount namespace on this kernel"))
      << ran->content;
  EXPECT_TRUE(fs::exists(h.path("inside.txt")));
  EXPECT_FALSE(fs::exists(h.outside() / "escaped"));
  EXPECT_EQ(ran->metadata["sandbox"]["enforced"], Json(false));
  EXPECT_TRUE(contains(ran->metadata["sandbox"]["description"].as_string(), "; no mount namespace ("));
}

}  // namespace
}  // namespace agentd::tools
