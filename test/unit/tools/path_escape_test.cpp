// The workspace boundary under attack: a table of escape attempts against the PathGuard (every tool's
// first step), the configured deny-paths, and a symlink swapped in after the check, which the no-follow
// opens of reads and writes must catch.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/support/temp_dir.h"
#include "test/unit/tools/tool_harness.h"
#include "tools/atomic_write.h"
#include "tools/disk_file_access.h"
#include "tools/path_guard.h"
#include "tools/safe_open.h"
#include "tools/walk.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using testing::read_text;
using testing::write_text;

enum class Outcome {
  refused,  // an error, never a path
  inside,   // allowed, and what it resolves to is inside the workspace
};

struct Attempt {
  std::string path;
  PathAccess access;
  Outcome outcome;
  std::string why;
};

class PathEscapeTest : public ::testing::Test {
 protected:
  PathEscapeTest() : root_(fs::canonical(temp_.path())) {
    fs::create_directories(ws() / "sub/deeper");
    fs::create_directories(root_ / "ws2");  // a sibling whose name extends the workspace's
    fs::create_directories(outside());
    write_text(ws() / "file.txt", "inside\n");
    write_text(ws() / ".env", "KEY=1\n");
    write_text(outside() / "secret.txt", "s3cret\n");
    link(outside(), "link_out");
    link(outside() / "secret.txt", "link_file_out");
    link("../outside", "link_rel_out");
    link("chain2", "chain1");
    link(outside(), "chain2");
    link(outside() / "not-yet.txt", "dangling_out");
    link("loop_b", "loop_a");
    link("loop_a", "loop_b");
    link("self", "self");
    link("../../../outside", "sub/deeper/link_up");
    link("/", "link_root");
    link("..", "link_parent");
    link(".env", "innocent.txt");
    link("sub", "link_sub");  // inside: fine
  }

  void link(const fs::path& target, const std::string& name) { fs::create_symlink(target, ws() / name); }
  fs::path ws() const { return root_ / "ws"; }
  fs::path outside() const { return root_ / "outside"; }

  agentd::testing::TempDir temp_;
  fs::path root_;
};

TEST_F(PathEscapeTest, EveryEscapeAttemptIsRefusedOrStaysInside) {
  const std::string ws_abs = ws().string();
  std::string deep_dotdot;
  for (int i = 0; i < 2000; ++i) deep_dotdot += "../";
  std::string long_name(5000, 'x');
  std::string many_components;
  for (int i = 0; i < 3000; ++i) many_components += "a/../";
  const std::vector<Attempt> attempts = {
      {"../outside/secret.txt", PathAccess::read, Outcome::refused, "dot-dot out"},
      {"../../etc/passwd", PathAccess::read, Outcome::refused, "dot-dot to the system"},
      {"sub/../../outside/secret.txt", PathAccess::read, Outcome::refused, "dot-dot after a real directory"},
      {"./../outside", PathAccess::read, Outcome::refused, "dot then dot-dot"},
      {"sub/deeper/../../../outside/x", PathAccess::write, Outcome::refused, "dot-dot chain, write"},
      {"../ws2/file.txt", PathAccess::write, Outcome::refused, "a sibling that shares the prefix"},
      {(root_ / "ws2").string(), PathAccess::read, Outcome::refused, "the sibling, absolute"},
      {"/etc/passwd", PathAccess::read, Outcome::refused, "absolute outside"},
      {"/", PathAccess::read, Outcome::refused, "the file system root"},
      {(outside() / "secret.txt").string(), PathAccess::write, Outcome::refused, "absolute outside, write"},
      {ws_abs + "/../outside/secret.txt", PathAccess::read, Outcome::refused, "absolute with dot-dot"},
      {"link_out/secret.txt", PathAccess::read, Outcome::refused, "directory symlink to outside"},
      {"link_out", PathAccess::read, Outcome::refused, "the directory symlink itself"},
      {"link_file_out", PathAccess::read, Outcome::refused, "file symlink to outside"},
      {"link_file_out", PathAccess::write, Outcome::refused, "file symlink to outside, write"},
      {"link_rel_out/secret.txt", PathAccess::read, Outcome::refused, "relative symlink to outside"},
      {"chain1/secret.txt", PathAccess::read, Outcome::refused, "a chain of symlinks"},
      {"dangling_out", PathAccess::write, Outcome::refused, "dangling symlink whose target is outside"},
      {"loop_a", PathAccess::read, Outcome::refused, "symlink loop"},
      {"self", PathAccess::write, Outcome::refused, "a symlink to itself"},
      {"sub/deeper/link_up/secret.txt", PathAccess::read, Outcome::refused, "symlink climbing from a subdirectory"},
      {"link_root/etc/passwd", PathAccess::read, Outcome::refused, "symlink to /"},
      {"link_parent/outside/secret.txt", PathAccess::read, Outcome::refused, "symlink to .."},
      {std::string("file.txt\0/../../etc/passwd", 26), PathAccess::read, Outcome::refused, "NUL in the path"},
      {std::string("\0", 1), PathAccess::write, Outcome::refused, "only a NUL"},
      {"", PathAccess::read, Outcome::refused, "empty"},
      {deep_dotdot + "etc/passwd", PathAccess::read, Outcome::refused, "a very long run of dot-dots"},
      {long_name, PathAccess::write, Outcome::refused, "a name over NAME_MAX"},
      {".env", PathAccess::read, Outcome::refused, "a secret"},
      {"sub/.env.local", PathAccess::write, Outcome::refused, "a secret in a subdirectory"},
      {"innocent.txt", PathAccess::read, Outcome::refused, "a symlink laundering a secret's name"},
      {".git/config", PathAccess::write, Outcome::refused, "git internals, write"},
      {"~/.ssh/id_rsa", PathAccess::read, Outcome::refused, "tilde is not expanded, and .ssh is denied"},
      // Look-alikes are just names: they must resolve inside, never be read as "..".
      {"\u2024\u2024/outside/secret.txt", PathAccess::read, Outcome::inside, "one-dot leaders look like .."},
      {"..\uFF0Foutside", PathAccess::write, Outcome::inside, "a fullwidth solidus is no separator"},
      {"\u2025/outside", PathAccess::read, Outcome::inside, "a two-dot leader"},
      {"%2e%2e/outside", PathAccess::read, Outcome::inside, "percent-encoding is not decoded"},
      {"..\\outside", PathAccess::read, Outcome::inside, "a backslash is no separator"},
      {many_components + "file.txt", PathAccess::read, Outcome::inside, "many components that cancel out"},
      {"link_sub/deeper", PathAccess::write, Outcome::inside, "a symlink that stays inside"},
      // `..` is taken lexically before symlinks are followed, and what is opened is the resolved path, so
      // these name (missing) paths inside the workspace rather than the link target's parent.
      {"link_out/../outside/secret.txt", PathAccess::read, Outcome::inside, "dot-dot after a symlink"},
      {"link_out/../ws/file.txt", PathAccess::write, Outcome::inside, "dot-dot after a symlink, back in"},
  };
  ASSERT_GE(attempts.size(), 30U);
  const PathGuard guard(ws().string(), {});
  for (const Attempt& attempt : attempts) {
    SCOPED_TRACE(attempt.why);
    auto resolved = guard.resolve(attempt.path, attempt.access);
    if (attempt.outcome == Outcome::refused) {
      EXPECT_FALSE(resolved) << "let through as " << resolved->absolute;
      if (!resolved) {
        EXPECT_FALSE(resolved.error().message().empty());
      }
    } else {
      ASSERT_TRUE(resolved) << resolved.error().message();
      EXPECT_TRUE(is_under(resolved->absolute, ws())) << resolved->absolute;
    }
  }
}

TEST_F(PathEscapeTest, ConfiguredDenyPathsApplyToResolveAndToWalks) {
  fs::create_directories(ws() / "config/secrets");
  write_text(ws() / "config/secrets/prod.json", "{}\n");
  write_text(ws() / "config/app.json", "{}\n");
  write_text(ws() / "sub/cert.p12", "x");
  const std::vector<std::string> denied = {"config/secrets/", "*.p12"};
  const PathGuard guard(ws().string(), {}, denied);

  auto refused = guard.resolve("config/secrets/prod.json", PathAccess::read);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("permissions.denyPaths"), std::string::npos) << refused.error().message();
  EXPECT_NE(refused.error().message().find("config/secrets/"), std::string::npos);
  EXPECT_FALSE(guard.resolve("sub/cert.p12", PathAccess::write));
  EXPECT_TRUE(guard.resolve("config/app.json", PathAccess::read));
  // Without the configuration the same paths are fine.
  EXPECT_TRUE(PathGuard(ws().string(), {}).resolve("sub/cert.p12", PathAccess::read));

  // A walk from inside config/ still knows where it is: the two-component pattern applies.
  const auto walked = [&](const fs::path& root) {
    WalkOptions options;
    options.denied = denied;
    options.deny_base = guard.relative_to_root(root);
    std::vector<std::string> seen;
    auto stats = walk(
        root.string(), options,
        [&](const WalkEntry& entry) {
          seen.push_back(entry.relative);
          return true;
        },
        support::CancelToken{});
    EXPECT_TRUE(stats);
    return seen;
  };
  EXPECT_EQ(walked(ws() / "config"), (std::vector<std::string>{"app.json"}));
  const auto everything = walked(ws());
  EXPECT_EQ(std::count(everything.begin(), everything.end(), "sub/cert.p12"), 0);
  EXPECT_EQ(std::count(everything.begin(), everything.end(), "config/secrets"), 0);
  EXPECT_EQ(std::count(everything.begin(), everything.end(), "config/app.json"), 1);
}

// The check and the open are two system calls. A process that swaps a directory for a symlink between
// them must not get the write (or the read) redirected outside.
TEST_F(PathEscapeTest, ADirectorySwappedForASymlinkAfterTheCheckIsRefused) {
  fs::create_directories(ws() / "dir");
  write_text(ws() / "dir/f.txt", "mine\n");
  const PathGuard guard(ws().string(), {});
  auto checked = guard.resolve("dir/f.txt", PathAccess::write);
  ASSERT_TRUE(checked) << checked.error().message();

  fs::rename(ws() / "dir", ws() / "dir_old");
  fs::create_symlink(outside(), ws() / "dir");
  write_text(outside() / "f.txt", "theirs\n");

  auto written = write_file_atomically(checked->absolute, "pwned\n");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().code(), Errc::conflict) << written.error().message();
  EXPECT_NE(written.error().message().find("changed while it was being opened"), std::string::npos);
  EXPECT_EQ(read_text(outside() / "f.txt"), "theirs\n");

  auto read = read_disk_file(checked->absolute);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), Errc::conflict) << read.error().message();
}

TEST_F(PathEscapeTest, AFileSwappedForASymlinkAfterTheCheckIsNotFollowed) {
  const PathGuard guard(ws().string(), {});
  auto checked = guard.resolve("file.txt", PathAccess::write);
  ASSERT_TRUE(checked);
  fs::remove(ws() / "file.txt");
  fs::create_symlink(outside() / "secret.txt", ws() / "file.txt");

  auto read = read_disk_file(checked->absolute);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), Errc::conflict) << read.error().message();

  // A write replaces the link itself (rename does not follow it): the outside file is untouched.
  ASSERT_TRUE(write_file_atomically(checked->absolute, "new\n"));
  EXPECT_EQ(read_text(outside() / "secret.txt"), "s3cret\n");
  EXPECT_FALSE(fs::is_symlink(ws() / "file.txt"));
  EXPECT_EQ(read_text(ws() / "file.txt"), "new\n");
}

TEST(SafeOpen, OpensResolvedPathsAndNamesWhatIsMissing) {
  agentd::testing::TempDir temp;
  const fs::path root = fs::canonical(temp.path());
  write_text(root / "a/b.txt", "x");
  auto dir = open_directory_nofollow(root / "a");
  ASSERT_TRUE(dir) << dir.error().message();
  EXPECT_TRUE(dir->valid());
  auto file = open_file_nofollow(root / "a/b.txt", O_RDONLY);
  ASSERT_TRUE(file) << file.error().message();
  auto missing = open_file_nofollow(root / "nope/b.txt", O_RDONLY);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::not_found);
  EXPECT_FALSE(open_directory_nofollow("relative/path"));
  EXPECT_FALSE(open_directory_nofollow(root / "a/../a"));
  EXPECT_TRUE(open_directory_nofollow("/"));
}

}  // namespace
}  // namespace agentd::tools
