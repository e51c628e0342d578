#include "core/context/git_state.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "test/support/temp_dir.h"
#include "test/unit/context/fixture_repo.h"
#include "tools/sandbox.h"

namespace agentd::core::context {
namespace {

using testing::FixtureRepo;

const GitChange* find_change(const GitState& state, const std::string& path) {
  for (const auto& c : state.changes) {
    if (c.path == path) return &c;
  }
  return nullptr;
}

TEST(GitState, OutsideARepositoryRunsNothing) {
  agentd::testing::TempDir dir;
  GitOptions options;
  options.git = "/nonexistent/git";  // would fail if it were run
  auto state = read_git_state(dir.path().string(), options, {});
  ASSERT_TRUE(state);
  EXPECT_FALSE(state->repository);
  EXPECT_EQ(state->note, "not a git repository");
  EXPECT_FALSE(state->branch);
}

TEST(GitState, BranchAndCleanTree) {
  FixtureRepo repo("py_service");
  repo.git("checkout -q -b fix/discounts");
  auto state = read_git_state(repo.path(), {}, {});
  ASSERT_TRUE(state);
  EXPECT_TRUE(state->repository);
  EXPECT_TRUE(state->has_head);
  EXPECT_EQ(state->branch, "fix/discounts");
  EXPECT_TRUE(state->changes.empty());
  EXPECT_EQ(state->top_level, repo.path());
}

TEST(GitState, WorkingTreeAndStagedChanges) {
  FixtureRepo repo("py_service");
  repo.append("app/billing.py", "\n# unstaged edit\n");
  repo.append("app/models.py", "\n# staged edit\n");
  repo.git("add app/models.py");
  repo.write("app/new_module.py", "X = 1\n");
  repo.git("add app/new_module.py");
  repo.write("notes.txt", "untracked\n");
  repo.git("rm -q tests/test_billing.py");
  repo.git("mv pyproject.toml project.toml");
  auto state = read_git_state(repo.path(), {}, {});
  ASSERT_TRUE(state);
  const GitChange* c = find_change(*state, "app/billing.py");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "modified");
  EXPECT_FALSE(c->staged);
  EXPECT_TRUE(c->unstaged);
  c = find_change(*state, "app/models.py");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "modified");
  EXPECT_TRUE(c->staged);
  EXPECT_FALSE(c->unstaged);
  c = find_change(*state, "app/new_module.py");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "added");
  c = find_change(*state, "notes.txt");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "untracked");
  c = find_change(*state, "tests/test_billing.py");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "deleted");
  c = find_change(*state, "project.toml");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "renamed");
  EXPECT_EQ(c->orig_path, "pyproject.toml");
}

TEST(GitState, FromASubdirectoryPathsStayTopLevelRelative) {
  FixtureRepo repo("py_service");
  repo.append("app/billing.py", "\n# edit\n");
  auto state = read_git_state((repo.root() / "tests").string(), {}, {});
  ASSERT_TRUE(state);
  EXPECT_EQ(state->top_level, repo.path());
  EXPECT_NE(find_change(*state, "app/billing.py"), nullptr);
}

TEST(GitState, DetachedHeadAndNoCommits) {
  FixtureRepo repo("rust_lib");
  repo.git("checkout -q --detach");
  auto state = read_git_state(repo.path(), {}, {});
  ASSERT_TRUE(state);
  ASSERT_TRUE(state->branch);
  EXPECT_TRUE(state->branch->starts_with("(detached at ")) << *state->branch;

  FixtureRepo fresh("go_cli", false);
  fresh.git("init -q -b trunk");
  auto empty = read_git_state(fresh.path(), {}, {});
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->repository);
  EXPECT_FALSE(empty->has_head);
  EXPECT_EQ(empty->branch, "trunk");
  EXPECT_NE(find_change(*empty, "main.go"), nullptr);
}

TEST(GitState, MissingGitIsANote) {
  FixtureRepo repo("rust_lib");
  GitOptions options;
  options.git = "/nonexistent/bin/git";
  auto state = read_git_state(repo.path(), options, {});
  ASSERT_TRUE(state);
  EXPECT_FALSE(state->repository);
  EXPECT_EQ(state->note, "git not found: no branch or changed files");
}

TEST(GitState, ChangedLinesFromTheDiff) {
  FixtureRepo repo("py_service");
  std::string text = testing::read_file(repo.root() / "app/billing.py");
  text.replace(text.find("\"VIP25\": 25,"), 12, "\"VIP25\": 30,\n    \"STAFF\": 50,");
  repo.write("app/billing.py", text);
  auto state = read_git_state(repo.path(), {}, {});
  ASSERT_TRUE(state);
  auto lines = read_changed_lines(*state, {"app/billing.py"}, {}, {});
  ASSERT_TRUE(lines);
  ASSERT_EQ(lines->count("app/billing.py"), 1U);
  const auto& ranges = lines->at("app/billing.py");
  ASSERT_EQ(ranges.size(), 1U);
  EXPECT_EQ(ranges[0].start, 7U);
  EXPECT_EQ(ranges[0].count, 2U);
}

// ---------------------------------------------------------------------------------------------------
// The repository cannot make agentd's git run anything (DESIGN.md section 5, trust model). Each route
// below is planted in a fresh repository with a command that creates a marker file; agentd's git state
// must come out right with no marker, and then plain git on the same repository must create it, which
// proves the route was live.

namespace fs = std::filesystem;

// A config value that runs `then` after creating `marker`, quoted for a config file (`;` and `#` start
// comments outside quotes).
std::string marking(const fs::path& marker, const std::string& then) {
  return "\"touch '" + marker.string() + "'; " + then + "\"";
}

void add_config(const FixtureRepo& repo, const std::string& text) {
  testing::write_file(repo.root() / ".git/config", testing::read_file(repo.root() / ".git/config") + text);
}

void write_hook(const fs::path& dir, const fs::path& marker) {
  fs::create_directories(dir);
  const fs::path hook = dir / "post-index-change";
  testing::write_file(hook, "#!/bin/sh\ntouch '" + marker.string() + "'\n");
  fs::permissions(hook, fs::perms::owner_all);
}

// A stand-in `git` that runs `before` first, then the real git unless `before` exits.
std::string wrapped_git(const fs::path& dir, const std::string& before) {
  const fs::path script = dir / "git";
  testing::write_file(script, "#!/bin/sh\n" + before + "\nexec git \"$@\"\n");
  fs::permissions(script, fs::perms::owner_all);
  return script.string();
}

struct Route {
  std::string name;
  // Plants the route; `scratch` is a directory outside the repository for whatever it needs.
  std::function<void(const FixtureRepo&, const fs::path& marker, const fs::path& scratch)> plant;
  // What plain git runs to show the route is live: status and diff, or diff on a terminal (a pager).
  bool needs_terminal = false;
};

// gtest's name for it.
void PrintTo(const Route& route, std::ostream* out) { *out << route.name; }  // NOLINT(readability-identifier-naming)

std::vector<Route> routes() {
  return {
      {"fsmonitor",
       [](const FixtureRepo& repo, const fs::path& marker, const fs::path&) {
         add_config(repo, "[core]\n\tfsmonitor = " + marking(marker, "false #") + "\n");
       }},
      {"clean_filter",
       [](const FixtureRepo& repo, const fs::path& marker, const fs::path&) {
         repo.write(".gitattributes", "app/billing.py filter=evil\n");
         add_config(repo, "[filter \"evil\"]\n\tclean = " + marking(marker, "cat") + "\n\trequired = true\n");
       }},
      {"process_filter",
       [](const FixtureRepo& repo, const fs::path& marker, const fs::path&) {
         repo.write(".gitattributes", "*.py filter=longrunning\n");
         add_config(repo, "[filter \"longrunning\"]\n\tprocess = " + marking(marker, "exit 1") + "\n");
       }},
      {"dotted_filter_name",
       [](const FixtureRepo& repo, const fs::path& marker, const fs::path&) {
         repo.write(".gitattributes", "app/billing.py filter=a.b.c\n");
         add_config(repo, "[filter \"a.b.c\"]\n\tclean = " + marking(marker, "cat") + "\n");
       }},
      {"empty_filter_name",
       [](const FixtureRepo& repo, const fs::path& marker, const fs::path&) {
         repo.write(".gitattributes", "app/billing.py filter=\n");
         add_config(repo, "[filter \"\"]\n\tclean = " + marking(marker, "cat") + "\n");
       }},
      {"diff_external",
       [](const FixtureRepo& repo, const fs::path& marker, const fs::path&) {
         add_config(repo, "[diff]\n\texternal = " + marking(marker, "false #") + "\n");
       }},
      {"diff_driver_command",
       [](const FixtureRepo& repo, const fs::path& marker, const fs::path&) {
         testing::write_file(repo.root() / ".git/info/attributes", "*.py diff=tool\n");
         add_config(repo, "[diff \"tool\"]\n\tcommand = " + marking(marker, "false #") + "\n");
       }},
      {"textconv",
       [](const FixtureRepo& repo, const fs::path& marker, const fs::path&) {
         repo.write(".gitattributes", "*.py diff=conv\n");
         add_config(repo, "[diff \"conv\"]\n\ttextconv = " + marking(marker, "cat") + "\n");
       }},
      {"pager",
       [](const FixtureRepo& repo, const fs::path& marker, const fs::path&) {
         add_config(repo, "[core]\n\tpager = " + marking(marker, "cat") + "\n[pager]\n\tstatus = true\n");
       },
       true},
      {"hooks",
       [](const FixtureRepo& repo, const fs::path& marker, const fs::path& scratch) {
         // Status writes the refreshed index when it may (plain git may: a file touched but not changed),
         // which runs post-index-change: from core.hooksPath, or .git/hooks without it.
         write_hook(scratch / "hooks", marker);
         write_hook(repo.root() / ".git/hooks", marker);
         add_config(repo, "[core]\n\thooksPath = " + (scratch / "hooks").string() + "\n");
         fs::last_write_time(repo.root() / "app/models.py", fs::file_time_type::clock::now() - std::chrono::hours(1));
       }},
      {"include_path",
       [](const FixtureRepo& repo, const fs::path& marker, const fs::path& scratch) {
         // The included file names a filter driver too: the listing must follow includes.
         testing::write_file(scratch / "included.cfg", "[core]\n\tfsmonitor = " + marking(marker, "false #") +
                                                           "\n[filter \"inc\"]\n\tclean = " + marking(marker, "cat") +
                                                           "\n");
         repo.write(".gitattributes", "app/billing.py filter=inc\n");
         add_config(repo, "[include]\n\tpath = " + (scratch / "included.cfg").string() + "\n");
       }},
      {"include_if",
       [](const FixtureRepo& repo, const fs::path& marker, const fs::path& scratch) {
         testing::write_file(scratch / "conditional.cfg", "[core]\n\tfsmonitor = " + marking(marker, "false #") + "\n");
         add_config(repo, "[includeIf \"gitdir:" + repo.path() +
                              "/\"]\n\tpath = " + (scratch / "conditional.cfg").string() + "\n");
       }},
  };
}

// app/billing.py with two lines changed at line 7, as ChangedLinesFromTheDiff.
void edit_billing(const FixtureRepo& repo) {
  std::string text = testing::read_file(repo.root() / "app/billing.py");
  text.replace(text.find("\"VIP25\": 25,"), 12, "\"VIP25\": 30,\n    \"STAFF\": 50,");
  repo.write("app/billing.py", text);
}

class GitHardening : public ::testing::TestWithParam<Route> {};

TEST_P(GitHardening, PlantedCommandNeverRunsAndTheStateIsRight) {
  const Route& route = GetParam();
  FixtureRepo repo("py_service");
  agentd::testing::TempDir scratch;
  const fs::path marker = fs::canonical(scratch.path()) / "marker";
  edit_billing(repo);
  route.plant(repo, marker, fs::canonical(scratch.path()));

  for (const bool sandbox : {false, true}) {
    SCOPED_TRACE(sandbox ? "sandboxed" : "not sandboxed");
    GitOptions options;
    options.sandbox = sandbox;
    auto state = read_git_state(repo.path(), options, {});
    ASSERT_TRUE(state);
    EXPECT_TRUE(state->repository) << state->note;
    EXPECT_EQ(state->branch, "main");
    const GitChange* c = find_change(*state, "app/billing.py");
    ASSERT_NE(c, nullptr) << state->note;
    EXPECT_EQ(c->status, "modified");
    auto lines = read_changed_lines(*state, {"app/billing.py"}, options, {});
    ASSERT_TRUE(lines);
    ASSERT_EQ(lines->count("app/billing.py"), 1U);
    ASSERT_EQ(lines->at("app/billing.py").size(), 1U);
    EXPECT_EQ(lines->at("app/billing.py")[0].start, 7U);
    EXPECT_EQ(lines->at("app/billing.py")[0].count, 2U);
    EXPECT_FALSE(fs::exists(marker)) << route.name << " ran";
  }

  // The same repository through plain git: the route is live.
  std::string command = "cd '" + repo.path() + "' && ";
  if (route.needs_terminal) {
    if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no `script` to give git a terminal";
    command += "script -qc 'git status; git diff HEAD' /dev/null </dev/null >/dev/null 2>&1";
  } else {
    command += "{ git status --porcelain=v2; git diff -U0 HEAD; } </dev/null >/dev/null 2>&1";
  }
  (void)std::system(command.c_str());
  EXPECT_TRUE(fs::exists(marker)) << "plain git did not run the planted " << route.name << ": the test proves nothing";
}

INSTANTIATE_TEST_SUITE_P(Routes, GitHardening, ::testing::ValuesIn(routes()),
                         [](const ::testing::TestParamInfo<Route>& info) { return info.param.name; });

TEST(GitHardening, AFilterNameNoOverrideCanReachIsRefused) {
  // `-c filter.a=b.clean=` is split at its first '=', so this driver cannot be switched off.
  FixtureRepo repo("py_service");
  agentd::testing::TempDir scratch;
  const fs::path marker = fs::canonical(scratch.path()) / "marker";
  edit_billing(repo);
  repo.write(".gitattributes", "app/billing.py filter=a=b\n");
  add_config(repo, "[filter \"a=b\"]\n\tclean = " + marking(marker, "cat") + "\n");
  GitOptions options;
  options.sandbox = false;
  auto state = read_git_state(repo.path(), options, {});
  ASSERT_TRUE(state);
  EXPECT_FALSE(state->repository);
  EXPECT_EQ(state->note, "git state not read: the git config names filter \"a=b\", which agentd cannot switch off");
  GitState forced;
  forced.repository = true;
  forced.has_head = true;
  forced.top_level = repo.path();
  auto lines = read_changed_lines(forced, {"app/billing.py"}, options, {});
  ASSERT_TRUE(lines);
  EXPECT_TRUE(lines->empty());
  EXPECT_FALSE(fs::exists(marker));
  (void)std::system(("cd '" + repo.path() + "' && git diff HEAD >/dev/null 2>&1").c_str());
  EXPECT_TRUE(fs::exists(marker)) << "the route is live in plain git";
}

TEST(GitHardening, OverridesCoverEveryNamedDriverAndTransport) {
  const auto overrides = git_config_overrides({"lfs", "a.b"}, {"ext", "evil"});
  for (const char* expected :
       {"core.fsmonitor=false", "core.hooksPath=/dev/null", "core.pager=cat", "diff.external=", "credential.helper=",
        "core.askPass=", "core.sshCommand=false", "protocol.allow=never", "core.untrackedCache=false",
        "protocol.ext.allow=never", "protocol.file.allow=never", "protocol.evil.allow=never",
        "filter.lfs.clean=", "filter.lfs.smudge=", "filter.lfs.process=", "filter.lfs.required=false",
        "filter.a.b.clean=", "filter.a.b.process=", "filter.a.b.required=false"}) {
    EXPECT_NE(std::find(overrides.begin(), overrides.end(), expected), overrides.end()) << expected;
  }
  EXPECT_EQ(std::count(overrides.begin(), overrides.end(), "protocol.ext.allow=never"), 1);
}

// Restores one variable of this process's environment when it goes.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

std::vector<std::string> names_of(const std::vector<std::string>& env) {
  std::vector<std::string> names;
  names.reserve(env.size());
  for (const auto& e : env) names.push_back(e.substr(0, e.find('=')));
  std::sort(names.begin(), names.end());
  return names;
}

TEST(GitEnvironment, OnlyWhatGitNeeds) {
  const ScopedEnv key("OPENAI_API_KEY", "sk-proj-git-env-test-0123456789");
  const ScopedEnv custom("MY_LLM_KEY", "custom-secret");
  const ScopedEnv agent("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock");
  const ScopedEnv git_dir("GIT_DIR", "/elsewhere/.git");
  const ScopedEnv path("PATH", ".:bin::/usr/local/bin:/usr/bin:/bin");
  const auto env = git_environment();
  EXPECT_EQ(names_of(env),
            (std::vector<std::string>{"GIT_OPTIONAL_LOCKS", "GIT_TERMINAL_PROMPT", "HOME", "LANG", "LC_ALL", "PATH"}));
  EXPECT_NE(std::find(env.begin(), env.end(), "PATH=/usr/local/bin:/usr/bin:/bin"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "GIT_OPTIONAL_LOCKS=0"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "LC_ALL=C"), env.end());
}

// A stand-in `git` (named by absolute path, as GitOptions::git allows) that records the environment and
// the arguments it was started with, then runs the real git.
std::string recording_git(const fs::path& dir) {
  return wrapped_git(dir, "env >> '" + (dir / "env.txt").string() + "'\nprintf '%s\\n' \"$@\" >> '" +
                              (dir / "argv.txt").string() + "'");
}

TEST(GitEnvironment, GitStartsWithoutAgentdsSecrets) {
  const ScopedEnv key("OPENAI_API_KEY", "sk-proj-git-env-test-0123456789");
  const ScopedEnv agent("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock");
  FixtureRepo repo("py_service");
  edit_billing(repo);
  repo.write(".gitattributes", "app/billing.py filter=evil\n");
  add_config(repo, "[filter \"evil\"]\n\tclean = cat\n[protocol \"ext\"]\n\tallow = always\n");
  agentd::testing::TempDir scratch;
  GitOptions options;
  options.git = recording_git(scratch.path());
  options.sandbox = false;  // the script writes its record
  auto state = read_git_state(repo.path(), options, {});
  ASSERT_TRUE(state);
  ASSERT_TRUE(state->repository) << state->note;
  auto lines = read_changed_lines(*state, {"app/billing.py"}, options, {});
  ASSERT_TRUE(lines);
  EXPECT_EQ(lines->count("app/billing.py"), 1U);

  const std::string env = testing::read_file(scratch.path() / "env.txt");
  EXPECT_NE(env.find("GIT_TERMINAL_PROMPT=0"), std::string::npos) << env;
  EXPECT_EQ(env.find("sk-proj-git-env-test"), std::string::npos) << env;
  EXPECT_EQ(env.find("SSH_AUTH_SOCK"), std::string::npos) << env;
  const std::string argv = testing::read_file(scratch.path() / "argv.txt");
  for (const char* expected :
       {"--no-pager\n", "core.fsmonitor=false\n", "filter.evil.clean=\n", "filter.evil.process=\n",
        "protocol.ext.allow=never\n", "--no-ext-diff\n", "--no-textconv\n"}) {
    EXPECT_NE(argv.find(expected), std::string::npos) << expected << " missing from\n" << argv;
  }
}

TEST(GitEnvironment, TheReportedAttackGetsNothing) {
  // A sandboxed command sets core.fsmonitor to dump the environment; agentd's next status must not run
  // it, while plain git hands it the key.
  const ScopedEnv key("OPENAI_API_KEY", "sk-proj-reported-attack-0123456789abcdef");
  FixtureRepo repo("py_service");
  edit_billing(repo);
  agentd::testing::TempDir scratch;
  const fs::path dump = fs::canonical(scratch.path()) / "k";
  add_config(repo, "[core]\n\tfsmonitor = \"env > '" + dump.string() + "'; false #\"\n");
  GitOptions options;
  options.sandbox = false;
  auto state = read_git_state(repo.path(), options, {});
  ASSERT_TRUE(state);
  EXPECT_NE(find_change(*state, "app/billing.py"), nullptr) << state->note;
  EXPECT_FALSE(fs::exists(dump));
  (void)std::system(("cd '" + repo.path() + "' && git status >/dev/null 2>&1").c_str());
  EXPECT_NE(testing::read_file(dump).find("sk-proj-reported-attack"), std::string::npos) << "the attack is live";
}

TEST(GitEnvironment, TheSandboxLetsGitWriteNothing) {
  if (!tools::sandbox_status().landlock()) GTEST_SKIP() << tools::sandbox_status().summary();
  FixtureRepo repo("py_service");
  edit_billing(repo);
  agentd::testing::TempDir scratch;
  const fs::path attempt = fs::canonical(scratch.path()) / "written-from-the-sandbox";
  GitOptions options;
  options.git = wrapped_git(scratch.path(), "echo x > '" + attempt.string() + "' 2>/dev/null");
  auto state = read_git_state(repo.path(), options, {});
  ASSERT_TRUE(state);
  EXPECT_TRUE(state->repository) << state->note;
  EXPECT_NE(find_change(*state, "app/billing.py"), nullptr);
  EXPECT_FALSE(fs::exists(attempt));
  options.sandbox = false;
  ASSERT_TRUE(read_git_state(repo.path(), options, {}));
  EXPECT_TRUE(fs::exists(attempt)) << "without the sandbox the same write works";
}

TEST(GitState, StderrStaysOutOfTheRecords) {
  FixtureRepo repo("py_service");
  edit_billing(repo);
  agentd::testing::TempDir scratch;
  GitOptions options;
  // A record git never wrote: if stderr were merged into stdout, it would be an untracked file.
  options.git = wrapped_git(scratch.path(), "printf '? from-stderr\\0' >&2");
  auto state = read_git_state(repo.path(), options, {});
  ASSERT_TRUE(state);
  ASSERT_TRUE(state->repository) << state->note;
  ASSERT_EQ(state->changes.size(), 1U);
  EXPECT_EQ(state->changes[0].path, "app/billing.py");

  options.git = wrapped_git(scratch.path(), "echo 'fatal: something broke' >&2; exit 128");
  state = read_git_state(repo.path(), options, {});
  ASSERT_TRUE(state);
  EXPECT_FALSE(state->repository);
  EXPECT_EQ(state->note, "git state not read: git config failed: fatal: something broke");
}

TEST(GitState, TimeoutIsANote) {
  agentd::testing::TempDir scratch;
  FixtureRepo repo("rust_lib");
  GitOptions options;
  options.git = wrapped_git(scratch.path(), "exec sleep 30");
  options.timeout = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  auto state = read_git_state(repo.path(), options, {});
  ASSERT_TRUE(state);
  EXPECT_FALSE(state->repository);
  EXPECT_EQ(state->note, "git state not read: git config took longer than 200 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(GitState, CancellationEndsTheRun) {
  agentd::testing::TempDir scratch;
  FixtureRepo repo("rust_lib");
  GitOptions options;
  options.git = wrapped_git(scratch.path(), "exec sleep 30");
  options.timeout = std::chrono::milliseconds(0);
  support::CancelSource source;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    source.cancel();
  });
  const auto start = std::chrono::steady_clock::now();
  auto state = read_git_state(repo.path(), options, source.token());
  canceller.join();
  ASSERT_FALSE(state);
  EXPECT_EQ(state.error().code(), support::Errc::cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace agentd::core::context
