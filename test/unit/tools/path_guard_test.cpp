#include "tools/path_guard.h"

#include <gtest/gtest.h>

#include "test/support/temp_dir.h"
#include "test/unit/tools/tool_harness.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using testing::write_text;

// A workspace, an additional directory and an outside directory side by side in a temp dir.
class PathGuardTest : public ::testing::Test {
 protected:
  PathGuardTest() : root_(fs::canonical(temp_.path())) {
    fs::create_directories(ws() / "src");
    fs::create_directories(extra());
    fs::create_directories(outside());
    write_text(ws() / "src/main.cpp", "int main() {}\n");
    write_text(outside() / "secret.txt", "s3cret\n");
  }

  fs::path ws() const { return root_ / "ws"; }
  fs::path extra() const { return root_ / "extra"; }
  fs::path outside() const { return root_ / "outside"; }
  PathGuard guard() const { return PathGuard(ws().string(), {extra().string()}); }

  // The message of a refusal; fails the test when the path was let through.
  std::string refusal(std::string_view path, PathAccess access = PathAccess::read) const {
    auto resolved = guard().resolve(path, access);
    if (resolved) {
      ADD_FAILURE() << path << " was allowed as " << resolved->absolute;
      return "";
    }
    EXPECT_EQ(resolved.error().code(), Errc::invalid_argument) << resolved.error().message();
    return resolved.error().message();
  }
  fs::path allowed(std::string_view path, PathAccess access = PathAccess::read) const {
    auto resolved = guard().resolve(path, access);
    if (!resolved) {
      ADD_FAILURE() << path << " was refused: " << resolved.error().message();
      return {};
    }
    return resolved->absolute;
  }
  std::string allowed_roots() const {
    return ws().string() + " (the working directory), " + extra().string() + " (an additional directory)";
  }

  agentd::testing::TempDir temp_;
  fs::path root_;
};

TEST_F(PathGuardTest, RelativeAndAbsolutePathsInsideResolve) {
  auto resolved = guard().resolve("src/main.cpp", PathAccess::read);
  ASSERT_TRUE(resolved) << resolved.error().message();
  EXPECT_EQ(resolved->absolute, ws() / "src/main.cpp");
  EXPECT_EQ(resolved->display, "src/main.cpp");
  EXPECT_FALSE(resolved->trailing_slash);

  EXPECT_EQ(allowed((ws() / "src/main.cpp").string()), ws() / "src/main.cpp");
  EXPECT_EQ(allowed("./src/./main.cpp"), ws() / "src/main.cpp");
  EXPECT_EQ(allowed("src/../src/main.cpp"), ws() / "src/main.cpp");
  EXPECT_EQ(allowed("src/new/dir/file.txt"), ws() / "src/new/dir/file.txt");  // need not exist

  auto cwd = guard().resolve(".", PathAccess::read);
  ASSERT_TRUE(cwd);
  EXPECT_EQ(cwd->absolute, ws());
  EXPECT_EQ(cwd->display, ".");
  auto dir = guard().resolve("src/", PathAccess::read);
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->absolute, ws() / "src");
  EXPECT_TRUE(dir->trailing_slash);
}

TEST_F(PathGuardTest, DotDotTricksAreRefused) {
  const std::string resolved = (outside() / "secret.txt").string();
  EXPECT_EQ(refusal("../outside/secret.txt"),
            "path \"../outside/secret.txt\" is outside the workspace: it resolves to " + resolved +
                ". Allowed: paths under " + allowed_roots());
  EXPECT_EQ(refusal("src/../../outside/secret.txt"),
            "path \"src/../../outside/secret.txt\" is outside the workspace: it resolves to " + resolved +
                ". Allowed: paths under " + allowed_roots());
  // A sibling whose name starts with the root's name is not under it.
  fs::create_directories(root_ / "ws2");
  EXPECT_FALSE(guard().resolve("../ws2/x", PathAccess::read));
  // Climbing past the file system root stays at the root.
  EXPECT_FALSE(guard().resolve("../../../../../../../../etc/passwd", PathAccess::read));
}

TEST_F(PathGuardTest, AbsolutePathsOutsideAreRefused) {
  EXPECT_EQ(refusal("/etc/passwd"),
            "path \"/etc/passwd\" is outside the workspace: it resolves to /etc/passwd. Allowed: paths under " +
                allowed_roots());
  EXPECT_FALSE(guard().resolve("/", PathAccess::read));
}

TEST_F(PathGuardTest, SymlinkInsidePointingOutsideIsRefused) {
  fs::create_directory_symlink(outside(), ws() / "link");
  fs::create_symlink(outside() / "secret.txt", ws() / "file_link");
  EXPECT_EQ(refusal("link/secret.txt"),
            "path \"link/secret.txt\" leads outside " + ws().string() + " through a symlink: it resolves to " +
                (outside() / "secret.txt").string() + ". Allowed: paths under " + allowed_roots());
  EXPECT_FALSE(guard().resolve("file_link", PathAccess::read));
  EXPECT_FALSE(guard().resolve("link", PathAccess::read));
  EXPECT_FALSE(guard().resolve("link/new_file.txt", PathAccess::write));
}

TEST_F(PathGuardTest, DanglingSymlinksAreFollowed) {
  // weakly_canonical would stop at the dangling link and let this through as ws/dangling.
  fs::create_symlink(outside() / "not_yet.txt", ws() / "dangling");
  EXPECT_EQ(refusal("dangling", PathAccess::write),
            "path \"dangling\" leads outside " + ws().string() + " through a symlink: it resolves to " +
                (outside() / "not_yet.txt").string() + ". Allowed: paths under " + allowed_roots());
  fs::create_symlink("src/later.txt", ws() / "dangling_inside");
  EXPECT_EQ(allowed("dangling_inside", PathAccess::write), ws() / "src/later.txt");
}

TEST_F(PathGuardTest, RelativeSymlinkTargetsResolveFromTheLinksDirectory) {
  fs::create_symlink("../main.cpp", ws() / "src/up");  // ws/src/up -> ws/main.cpp (missing)
  EXPECT_EQ(allowed("src/up"), ws() / "main.cpp");
  fs::create_symlink("../../outside/secret.txt", ws() / "src/escape");
  EXPECT_FALSE(guard().resolve("src/escape", PathAccess::read));
  // Lexical normalization comes first, so "out/.." is the cwd whatever `out` points to; only `..` inside a
  // link's target is applied after the link is followed.
  fs::create_directory_symlink(outside(), ws() / "out");
  EXPECT_EQ(allowed("out/../src/main.cpp"), ws() / "src/main.cpp");
}

TEST_F(PathGuardTest, SymlinkLoopsAreAnError) {
  fs::create_symlink("loop_b", ws() / "loop_a");
  fs::create_symlink("loop_a", ws() / "loop_b");
  auto resolved = guard().resolve("loop_a", PathAccess::read);
  ASSERT_FALSE(resolved);
  EXPECT_EQ(resolved.error().code(), Errc::io);
  EXPECT_EQ(resolved.error().message(),
            "resolving path \"loop_a\": too many levels of symbolic links at " + (ws() / "loop_a").string());
}

TEST_F(PathGuardTest, UninspectablePathsAreAnIoError) {
  const std::string long_name(300, 'n');
  auto resolved = guard().resolve(long_name, PathAccess::read);
  ASSERT_FALSE(resolved);
  EXPECT_EQ(resolved.error().code(), Errc::io);
  EXPECT_EQ(resolved.error().message(), "resolving path \"" + long_name + "\": cannot inspect " +
                                            (ws() / long_name).string() + ": File name too long");
}

TEST_F(PathGuardTest, AdditionalDirectoriesAreAllowed) {
  write_text(extra() / "notes.md", "# notes\n");
  auto resolved = guard().resolve((extra() / "notes.md").string(), PathAccess::write);
  ASSERT_TRUE(resolved);
  EXPECT_EQ(resolved->absolute, extra() / "notes.md");
  EXPECT_EQ(resolved->display, (extra() / "notes.md").string());  // not under the cwd: shown absolute
  EXPECT_EQ(allowed("../extra/notes.md"), extra() / "notes.md");
  // A symlink from the workspace into an additional directory stays allowed.
  fs::create_directory_symlink(extra(), ws() / "to_extra");
  EXPECT_EQ(allowed("to_extra/notes.md"), extra() / "notes.md");
}

TEST_F(PathGuardTest, RootsReachedThroughSymlinksAreCanonicalized) {
  fs::create_directory_symlink(ws(), root_ / "ws_link");
  const PathGuard linked((root_ / "ws_link").string(), {});
  ASSERT_EQ(linked.roots().size(), 1U);
  EXPECT_EQ(linked.roots()[0], ws());
  auto resolved = linked.resolve((root_ / "ws_link/src/main.cpp").string(), PathAccess::read);
  ASSERT_TRUE(resolved);
  EXPECT_EQ(resolved->absolute, ws() / "src/main.cpp");
  EXPECT_EQ(resolved->display, "src/main.cpp");
}

TEST_F(PathGuardTest, EmptyAndNulPathsAreRefused) {
  EXPECT_EQ(refusal(""),
            "path is empty: give a path relative to the working directory " + ws().string() + ", or an absolute path");
  EXPECT_EQ(refusal(std::string_view("a\0b", 3)), "path contains a NUL byte; no file can have that name");
}

TEST_F(PathGuardTest, DenyListAppliesToEveryAccess) {
  const auto denied = [&](std::string_view path, std::string_view reason, std::string_view pattern) {
    EXPECT_EQ(refusal(path), "path \"" + std::string(path) + "\" is refused: " + std::string(reason) +
                                 " (deny-listed pattern \"" + std::string(pattern) + "\")");
  };
  denied(".env", "environment files hold secrets", ".env");
  denied("config/.env", "environment files hold secrets", ".env");
  denied(".env.local", "environment files hold secrets", ".env.*");
  denied("certs/server.pem", "key and certificate files hold secrets", "*.pem");
  denied("tls.key", "key files hold secrets", "*.key");
  denied("keys/id_rsa", "SSH keys are secrets", "id_rsa*");
  denied("keys/id_rsa.pub", "SSH keys are secrets", "id_rsa*");
  denied("id_ed25519", "SSH keys are secrets", "id_ed25519*");
  denied(".ssh", "SSH keys and configuration are secrets", ".ssh/");
  denied("home/.ssh/config", "SSH keys and configuration are secrets", ".ssh/");
  denied(".aws/credentials", "cloud credentials are secrets", ".aws/credentials");
  denied(".netrc", "login credentials are secrets", ".netrc");
  // Components match whole: these only look similar.
  for (const char* path : {"my.env", "env", ".envrc", "pem", "keys.txt", "key.pem.txt", ".aws/config", "credentials",
                           "aws/credentials", ".sshd", "not_id_rsa", ".netrc.example"}) {
    EXPECT_TRUE(guard().resolve(path, PathAccess::write)) << path;
  }
}

TEST_F(PathGuardTest, GitInternalsAreReadOnly) {
  EXPECT_EQ(allowed(".git/HEAD"), ws() / ".git/HEAD");
  EXPECT_EQ(refusal(".git/config", PathAccess::write),
            "path \".git/config\" is refused: git's internals are changed with git commands (shell), never edited "
            "directly (deny-listed pattern \".git/\")");
  EXPECT_FALSE(guard().resolve("sub/.git/hooks/pre-commit", PathAccess::write));
  EXPECT_TRUE(guard().resolve(".gitignore", PathAccess::write));
  EXPECT_TRUE(guard().resolve(".github/workflows/ci.yml", PathAccess::write));
}

TEST_F(PathGuardTest, SymlinksCannotLaunderADeniedName) {
  write_text(ws() / ".env", "TOKEN=1\n");
  write_text(ws() / "plain.txt", "hello\n");
  fs::create_symlink(".env", ws() / "harmless.txt");
  fs::create_symlink("plain.txt", ws() / ".env.copy");
  EXPECT_EQ(refusal("harmless.txt"),
            "path \"harmless.txt\" is refused: environment files hold secrets (deny-listed "
            "pattern \".env\")");
  EXPECT_EQ(refusal(".env.copy"),
            "path \".env.copy\" is refused: environment files hold secrets (deny-listed "
            "pattern \".env.*\")");
}

TEST_F(PathGuardTest, DenyListMatchesBelowTheRootOnly) {
  // A workspace that itself lives in a folder named like a secret still works.
  fs::create_directories(root_ / ".ssh/project");
  write_text(root_ / ".ssh/project/readme.md", "hi\n");
  const PathGuard inside_ssh((root_ / ".ssh/project").string(), {});
  EXPECT_TRUE(inside_ssh.resolve("readme.md", PathAccess::write));
  EXPECT_FALSE(inside_ssh.resolve("id_rsa", PathAccess::read));
}

TEST(PathHelpers, IsUnderComparesComponents) {
  EXPECT_TRUE(is_under("/a/b", "/a"));
  EXPECT_TRUE(is_under("/a", "/a"));
  EXPECT_TRUE(is_under("/a/b", "/a/"));
  EXPECT_TRUE(is_under("/anything", "/"));
  EXPECT_FALSE(is_under("/ab", "/a"));
  EXPECT_FALSE(is_under("/a", "/a/b"));
}

TEST(PathHelpers, ResolveSymlinksKeepsMissingTailsLexical) {
  auto resolved = resolve_symlinks("/nonexistent-agentd-dir/x/../y");
  ASSERT_TRUE(resolved);
  EXPECT_EQ(*resolved, "/nonexistent-agentd-dir/y");
}

TEST(PathHelpers, LexicalDisplayNeedsNoDisk) {
  EXPECT_EQ(lexical_display("src/./a.cpp", "/w"), "src/a.cpp");
  EXPECT_EQ(lexical_display("/w/src/a.cpp", "/w"), "src/a.cpp");
  EXPECT_EQ(lexical_display("/w", "/w"), ".");
  EXPECT_EQ(lexical_display("/elsewhere/a", "/w"), "/elsewhere/a");
  EXPECT_EQ(lexical_display("../x", "/w"), "../x");
}

TEST(PathHelpers, DeniedPathReportsTheRule) {
  const auto rule = denied_path("a/.aws/credentials", PathAccess::read);
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->pattern, ".aws/credentials");
  EXPECT_FALSE(denied_path(".git/config", PathAccess::read));
  EXPECT_TRUE(denied_path(".git/config", PathAccess::write));
  EXPECT_FALSE(denied_path("src/main.cpp", PathAccess::write));
}

// agentd's own settings and git's executable configuration, wherever they are (the policy asks a person
// before any tool writes them).
TEST(ProtectedPath, AgentdAndGitControlFilesAreProtected) {
  const auto env = [](const char* name) -> const char* {
    if (std::string_view(name) == "HOME") return "/home/ada";
    if (std::string_view(name) == "XDG_CONFIG_HOME") return "/cfg";
    return nullptr;
  };
  for (const char* path :
       {"/w/.agentd/config.json", "/w/sub/.agentd/skills/x.md", "/w/.git/config", "/w/.git/hooks/pre-commit",
        "/w/.git/info/attributes", "/w/.git/modules/lib/config", "/w/.git/worktrees/b/config.worktree",
        "/home/ada/.config/agentd/config.json", "/home/ada/.config/agentd/trusted-projects.json",
        "/home/ada/.local/share/agentd/agentd.db", "/cfg/agentd/config.json", "/home/ada/.gitconfig",
        "/home/ada/.config/git/config", "/w/.claude/settings.json", "/w/.claude/hooks/guard.sh",
        "/home/ada/.claude/settings.json"}) {
    EXPECT_TRUE(protected_path(path, env)) << path;
  }
  for (const char* path : {"/w/src/config", "/w/hooks/x", "/w/.git/HEAD", "/w/.git/objects/ab/cd", "/w/.gitignore",
                           "/w/agentd/config.json", "/home/ada/.config/other/config", "/home/ada/notes.txt"}) {
    EXPECT_FALSE(protected_path(path, env)) << path;
  }
}

}  // namespace
}  // namespace agentd::tools
