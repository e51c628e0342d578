// Pinned instructions: found from the workspace root down to the cwd, CLAUDE.md beside AGENTS.md, the
// user's file first, bytes kept exactly (CRLF, UTF-8, trailing spaces), caps that say what they cut.
#include "core/memory/instructions.h"

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test/support/temp_dir.h"
#include "test/unit/memory/file_util.h"

namespace agentd::core::memory {
namespace {

namespace fs = std::filesystem;
using agentd::testing::TempDir;
using agentd::testing::write_file;

class InstructionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(dir_.path()) / "repo";
    fs::create_directories(root_ / ".git");
    fs::create_directories(root_ / "src" / "lib");
    user_file_ = fs::canonical(dir_.path()) / "config" / "agentd" / "AGENTS.md";
  }
  InstructionOptions options(const fs::path& cwd) const {
    InstructionOptions o;
    o.cwd = cwd;
    o.user_file = user_file_;
    return o;
  }
  TempDir dir_;
  fs::path root_;
  fs::path user_file_;
};

TEST_F(InstructionsTest, WorkspaceRootIsTheNearestGitAncestor) {
  EXPECT_EQ(find_workspace_root(root_ / "src" / "lib"), root_);
  EXPECT_EQ(find_workspace_root(root_), root_);
  // A .git file (worktree, submodule) marks a root too.
  write_file(root_ / "src" / ".git", "gitdir: ../.git/modules/src\n");
  EXPECT_EQ(find_workspace_root(root_ / "src" / "lib"), root_ / "src");
  // Above the nearest .git the search stops: a repository nested in another is its own root.
  const fs::path outer = fs::canonical(dir_.path()) / "outer";
  fs::create_directories(outer / ".git");
  fs::create_directories(outer / "inner" / ".git");
  fs::create_directories(outer / "inner" / "a" / "b");
  fs::create_directories(outer / "c");
  EXPECT_EQ(find_workspace_root(outer / "inner" / "a" / "b"), outer / "inner");
  EXPECT_EQ(find_workspace_root(outer / "c"), outer);
}

// Where the temp dir itself lies in a repository (a TMPDIR inside a checkout), that repository is the
// root; where it does not, the cwd is. Both are asserted, whichever holds on this machine.
TEST_F(InstructionsTest, WithNoGitInTheTreeTheRootIsTheRepositoryAboveOrTheCwd) {
  const fs::path lone = fs::canonical(dir_.path()) / "lone" / "deeper";
  fs::create_directories(lone);
  fs::path above;  // the nearest ancestor of the temp dir holding .git, if any
  for (fs::path d = fs::canonical(dir_.path()).parent_path();; d = d.parent_path()) {
    if (fs::exists(d / ".git")) {
      above = d;
      break;
    }
    if (d == d.parent_path()) break;
  }
  EXPECT_EQ(find_workspace_root(lone), above.empty() ? lone : above);
}

TEST_F(InstructionsTest, FoundFromRootDownToCwdInOrderWithTheUserFileFirst) {
  write_file(user_file_, "user rules\n");
  write_file(root_ / "AGENTS.md", "root agents\n");
  write_file(root_ / "CLAUDE.md", "root claude\n");
  write_file(root_ / "src" / "lib" / "AGENTS.md", "lib agents\n");
  write_file(root_ / "src" / "lib" / "deeper" / "AGENTS.md", "below the cwd: not included\n");
  write_file(dir_.path() / "AGENTS.md", "above the root: not included\n");

  Instructions found = load_instructions(options(root_ / "src" / "lib"));
  EXPECT_EQ(found.root, root_);
  ASSERT_EQ(found.files.size(), 4U);
  EXPECT_EQ(found.files[0].path, user_file_.string());
  EXPECT_EQ(found.files[0].scope, InstructionScope::user);
  EXPECT_EQ(found.files[1].path, (root_ / "AGENTS.md").string());
  EXPECT_EQ(found.files[1].scope, InstructionScope::project);
  EXPECT_EQ(found.files[2].path, (root_ / "CLAUDE.md").string());
  EXPECT_EQ(found.files[2].text, "root claude\n");
  EXPECT_EQ(found.files[3].path, (root_ / "src" / "lib" / "AGENTS.md").string());
  EXPECT_TRUE(found.notes.empty());
  EXPECT_EQ(found.bytes(), std::string("user rules\nroot agents\nroot claude\nlib agents\n").size());

  const std::string pinned = render_instructions(found);
  EXPECT_LT(pinned.find("user rules"), pinned.find("root agents"));
  EXPECT_LT(pinned.find("root agents"), pinned.find("root claude"));
  EXPECT_LT(pinned.find("root claude"), pinned.find("lib agents"));
  EXPECT_EQ(pinned.find("not included"), std::string::npos);
  EXPECT_NE(pinned.find("<instructions scope=\"user\" path=\"" + user_file_.string() +
                        "\">\nuser rules\n"
                        "</instructions>\n"),
            std::string::npos)
      << pinned;

  // An explicit root (no .git needed), and no user file.
  InstructionOptions o = options(root_ / "src");
  o.root = root_ / "src";
  o.user_file = fs::path();
  Instructions only_src = load_instructions(o);
  EXPECT_TRUE(only_src.files.empty());
  EXPECT_EQ(render_instructions(only_src), "");
}

TEST_F(InstructionsTest, BytesAreKeptExactly) {
  // CRLF, UTF-8 (accents, an emoji, a BOM), trailing spaces and tabs, no final newline, a NUL byte.
  const std::string agents =
      "\xEF\xBB\xBF# Rules\r\nUse caf\xC3\xA9 \xF0\x9F\x98\x80  \r\n\tindented\t \r\n\r\nlast line";
  const std::string claude = std::string("trailing spaces   \n\nnul:") + '\0' + "end\n";
  write_file(root_ / "AGENTS.md", agents);
  write_file(root_ / "CLAUDE.md", claude);
  Instructions found = load_instructions(options(root_));
  ASSERT_EQ(found.files.size(), 2U);
  EXPECT_EQ(found.files[0].text, agents);
  EXPECT_EQ(found.files[0].file_bytes, agents.size());
  EXPECT_FALSE(found.files[0].cut);
  EXPECT_EQ(found.files[1].text, claude);
  const std::string pinned = render_instructions(found);
  EXPECT_NE(pinned.find(agents), std::string::npos);
  EXPECT_NE(pinned.find(claude), std::string::npos);
  // A file without a final newline gets its closing marker on a line of its own, outside its bytes.
  EXPECT_NE(pinned.find(agents + "\n</instructions>"), std::string::npos);
}

TEST_F(InstructionsTest, ClaudeMdLinkedToAgentsMdIsIncludedOnce) {
  write_file(root_ / "AGENTS.md", "shared\n");
  fs::create_symlink("AGENTS.md", root_ / "CLAUDE.md");
  Instructions found = load_instructions(options(root_));
  ASSERT_EQ(found.files.size(), 1U);
  EXPECT_EQ(found.files[0].path, (root_ / "AGENTS.md").string());
  ASSERT_EQ(found.notes.size(), 1U);
  EXPECT_NE(found.notes[0].find("same file as"), std::string::npos);
}

// A repository is a stranger's: its instruction files may not be links out of the workspace, nor to a file
// the caller refuses (a deny-listed .env), whatever the link is called. The user's own file may be a link.
TEST_F(InstructionsTest, ProjectFilesThatLeadOutsideOrToRefusedFilesAreLeftOut) {
  write_file(dir_.path() / "secret" / "id_ed25519", "PRIVATE KEY\n");
  write_file(root_ / ".env", "API_TOKEN=secret\n");
  write_file(root_ / "src" / "AGENTS.md", "src agents\n");
  write_file(dir_.path() / "mine.md", "user rules\n");
  fs::create_directories(user_file_.parent_path());
  fs::create_symlink(dir_.path() / "mine.md", user_file_);
  fs::create_symlink(dir_.path() / "secret" / "id_ed25519", root_ / "AGENTS.md");
  fs::create_symlink(".env", root_ / "CLAUDE.md");
  fs::create_symlink("AGENTS.md", root_ / "src" / "CLAUDE.md");  // inside, not refused: fine, and only once
  InstructionOptions o = options(root_ / "src");
  o.refuse_project_file = [&](const fs::path& p) -> std::optional<std::string> {
    if (p.filename() == ".env") return "it is .env";
    return std::nullopt;
  };
  const Instructions got = load_instructions(o);
  ASSERT_EQ(got.files.size(), 2u);
  EXPECT_EQ(got.files[0].text, "user rules\n");
  EXPECT_EQ(got.files[1].text, "src agents\n");
  ASSERT_EQ(got.notes.size(), 3u);
  EXPECT_NE(got.notes[0].find("outside the workspace"), std::string::npos) << got.notes[0];
  EXPECT_NE(got.notes[1].find("left out, it is .env"), std::string::npos) << got.notes[1];
  EXPECT_NE(got.notes[2].find("same file"), std::string::npos) << got.notes[2];
  const std::string rendered = render_instructions(got);
  EXPECT_EQ(rendered.find("PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(rendered.find("API_TOKEN"), std::string::npos);
}

TEST_F(InstructionsTest, CapsCutAtALineOrCharacterAndSaySo) {
  // Per-file cap: cut at the last line end in the final quarter.
  std::string big;
  for (int i = 0; i < 30; ++i) big += "line " + std::to_string(i) + " of the rules\n";
  write_file(root_ / "AGENTS.md", big);
  // Per-file cap where no line end is close: cut before a multi-byte character, never inside it.
  const std::string utf8 = std::string(99, 'x') + "\xC3\xA9" + std::string(50, 'y');
  write_file(root_ / "src" / "AGENTS.md", utf8);
  InstructionOptions o = options(root_ / "src");
  o.max_file_bytes = 100;
  Instructions found = load_instructions(o);
  ASSERT_EQ(found.files.size(), 2U);
  const InstructionFile& a = found.files[0];
  EXPECT_TRUE(a.cut);
  EXPECT_EQ(a.file_bytes, big.size());
  EXPECT_LE(a.text.size(), 100U);
  EXPECT_EQ(a.text, big.substr(0, a.text.size()));  // a prefix, byte for byte
  EXPECT_EQ(a.text.back(), '\n');
  EXPECT_NE(a.note.find(fmt::format("cut to its first {} of {} bytes (the per-file cap is 100 bytes)", a.text.size(),
                                    big.size())),
            std::string::npos)
      << a.note;
  const InstructionFile& b = found.files[1];
  EXPECT_TRUE(b.cut);
  EXPECT_EQ(b.text, std::string(99, 'x'));
  const std::string pinned = render_instructions(found);
  EXPECT_NE(pinned.find("[agentd: " + (root_ / "AGENTS.md").string() + " was cut to its first"), std::string::npos);
  ASSERT_EQ(found.notes.size(), 2U);

  // The total cap: later files are cut to what is left, then left out.
  write_file(root_ / "CLAUDE.md", "claude\n");
  InstructionOptions t = options(root_ / "src");
  t.max_file_bytes = 1000;
  t.max_total_bytes = big.size() + 3;
  Instructions total = load_instructions(t);
  ASSERT_EQ(total.files.size(), 2U);
  EXPECT_FALSE(total.files[0].cut);
  EXPECT_TRUE(total.files[1].cut);
  EXPECT_EQ(total.files[1].text, "cla");
  EXPECT_NE(total.files[1].note.find("total instructions cap"), std::string::npos);
  ASSERT_EQ(total.notes.size(), 2U);
  EXPECT_NE(total.notes[1].find("src/AGENTS.md: left out"), std::string::npos) << total.notes[1];
}

TEST_F(InstructionsTest, UnreadableFilesAreNotesAndDirectoriesAreIgnored) {
  fs::create_directories(root_ / "AGENTS.md");  // a directory by that name: not a file
  write_file(root_ / "CLAUDE.md", "readable\n");
  Instructions found = load_instructions(options(root_));
  ASSERT_EQ(found.files.size(), 1U);
  EXPECT_EQ(found.files[0].text, "readable\n");
  if (::geteuid() != 0) {  // root reads anything
    write_file(root_ / "src" / "AGENTS.md", "secret\n");
    fs::permissions(root_ / "src" / "AGENTS.md", fs::perms::none);
    Instructions denied = load_instructions(options(root_ / "src"));
    ASSERT_EQ(denied.files.size(), 1U);
    ASSERT_EQ(denied.notes.size(), 1U);
    EXPECT_NE(denied.notes[0].find("cannot be read"), std::string::npos);
  }
}

TEST(UserConfigDir, XdgThenHome) {
  EXPECT_EQ(user_config_dir("/x/cfg", "/home/u"), std::filesystem::path("/x/cfg/agentd"));
  EXPECT_EQ(user_config_dir("relative", "/home/u"), std::filesystem::path("/home/u/.config/agentd"));
  EXPECT_EQ(user_config_dir("", "/home/u"), std::filesystem::path("/home/u/.config/agentd"));
  EXPECT_TRUE(user_config_dir("", "").empty());
}

}  // namespace
}  // namespace agentd::core::memory
