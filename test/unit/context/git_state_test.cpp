#include "core/context/git_state.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "test/support/temp_dir.h"
#include "test/unit/context/fixture_repo.h"

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

TEST(RunCommand, TimeoutKillsTheProcess) {
  const auto start = std::chrono::steady_clock::now();
  auto out = run_command({"sleep", "30"}, {"PATH=/usr/bin:/bin"}, std::chrono::milliseconds(100), 1024, {});
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(RunCommand, CancellationKillsTheProcess) {
  support::CancelSource source;
  const auto start = std::chrono::steady_clock::now();
  std::thread canceller([&] { source.cancel(); });
  auto out = run_command({"sleep", "30"}, {"PATH=/usr/bin:/bin"}, std::chrono::milliseconds(0), 1024, source.token());
  canceller.join();
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code(), support::Errc::cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(RunCommand, OutputIsCapped) {
  auto out = run_command({"seq", "1", "100000"}, {"PATH=/usr/bin:/bin"}, std::chrono::milliseconds(10000), 100, {});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->exit_code, 0);
  EXPECT_EQ(out->out.size(), 100U);
  EXPECT_TRUE(out->out_truncated);
}

TEST(RunCommand, MissingProgramIsNotFound) {
  auto out = run_command({"/nonexistent/program"}, {}, std::chrono::milliseconds(1000), 100, {});
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code(), support::Errc::not_found);
}

}  // namespace
}  // namespace agentd::core::context
