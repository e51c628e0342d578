#include <gtest/gtest.h>
#include <sys/stat.h>

#include "test/unit/tools/tool_harness.h"
#include "tools/builtin/builtin_tools.h"
#include "tools/sha256.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Json;
using testing::json;

struct stat stat_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st;
}

class WriteFileTest : public ::testing::Test {
 protected:
  support::Result<ToolResult> write(const std::string& path, const std::string& content) {
    Json input = Json::object();
    input.set("path", path);
    input.set("content", content);
    return h_.run(*tool_, std::move(input));
  }
  support::Result<ToolResult> read(const std::string& path) {
    Json input = Json::object();
    input.set("path", path);
    return h_.run(*read_tool_, std::move(input));
  }
  std::string failure(const std::string& path, const std::string& content) {
    auto result = write(path, content);
    if (!result) {
      ADD_FAILURE() << "error instead of a failed result: " << result.error().message();
      return "";
    }
    EXPECT_FALSE(result->ok);
    return result->content;
  }
  static Json verification(bool read_back, bool found) {
    Json out = Json::object();
    out.set("readBack", read_back);
    out.set("expectedTextFound", found);
    return out;
  }

  testing::ToolHarness h_;
  std::shared_ptr<Tool> tool_ = make_write_file_tool();
  std::shared_ptr<Tool> read_tool_ = make_read_file_tool();
};

TEST_F(WriteFileTest, CreatesANewFile) {
  auto result = write("notes.md", "# Notes\n\nhello\n");
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_TRUE(result->ok) << result->content;
  const fs::path path = h_.path("notes.md");
  EXPECT_EQ(testing::read_text(path), "# Notes\n\nhello\n");
  EXPECT_EQ(result->summary, "Created notes.md (3 lines)");
  EXPECT_EQ(result->content, "Created notes.md (3 lines, 15 bytes).");
  EXPECT_EQ(result->locations, std::vector<std::string>{path.string()});

  Json expected = Json::object();
  expected.set("path", path.string());
  expected.set("oldHash", Json());
  expected.set("newHash", sha256_hex("# Notes\n\nhello\n"));
  expected.set("changedLines", 3);
  expected.set("created", true);
  expected.set("bytes", 15);
  expected.set("verification", verification(true, true));
  EXPECT_EQ(result->metadata, expected);

  ASSERT_EQ(result->diffs.size(), 1U);
  EXPECT_EQ(result->diffs[0].path, path.string());
  EXPECT_FALSE(result->diffs[0].old_text.has_value());
  EXPECT_EQ(result->diffs[0].new_text, "# Notes\n\nhello\n");

  // What the model wrote counts as seen: it may write again without reading.
  EXPECT_EQ(h_.file_state.find(path)->sha256, sha256_hex("# Notes\n\nhello\n"));
  auto again = write("notes.md", "# Notes\n");
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->ok) << again->content;
}

TEST_F(WriteFileTest, CreatesMissingParentDirectories) {
  auto result = write("a/b/c.txt", "x");
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->ok);
  EXPECT_EQ(result->content, "Created a/b/c.txt (1 line, 1 bytes, with its missing parent directories).");
  EXPECT_EQ(testing::read_text(h_.path("a/b/c.txt")), "x");
}

TEST_F(WriteFileTest, ReplacesAFileReadBeforeAndKeepsItsMode) {
  h_.write("run.sh", "#!/bin/sh\necho one\necho two\n");
  ASSERT_EQ(::chmod(h_.path("run.sh").c_str(), 0751), 0);
  ASSERT_TRUE(read("run.sh"));

  auto result = write("run.sh", "#!/bin/sh\necho ONE\necho two\necho three\n");
  ASSERT_TRUE(result);
  ASSERT_TRUE(result->ok) << result->content;
  EXPECT_EQ(result->summary, "Wrote run.sh (3 lines changed)");
  EXPECT_EQ(result->content, "Replaced the content of run.sh: now 4 lines, 39 bytes (3 lines changed).");
  EXPECT_EQ(stat_of(h_.path("run.sh")).st_mode & 07777, 0751U);

  Json expected = Json::object();
  expected.set("path", h_.path("run.sh").string());
  expected.set("oldHash", sha256_hex("#!/bin/sh\necho one\necho two\n"));
  expected.set("newHash", sha256_hex("#!/bin/sh\necho ONE\necho two\necho three\n"));
  expected.set("changedLines", 3);  // line 2 changed; line 3 changed and line 4 added count as the larger middle
  expected.set("created", false);
  expected.set("bytes", 39);
  expected.set("verification", verification(true, true));
  EXPECT_EQ(result->metadata, expected);
  ASSERT_EQ(result->diffs.size(), 1U);
  EXPECT_EQ(result->diffs[0].old_text, std::optional<std::string>("#!/bin/sh\necho one\necho two\n"));
  EXPECT_EQ(result->diffs[0].new_text, "#!/bin/sh\necho ONE\necho two\necho three\n");
}

TEST_F(WriteFileTest, RefusesAFileNeverRead) {
  h_.write("existing.txt", "keep me\n");
  EXPECT_EQ(failure("existing.txt", "overwritten"),
            "existing.txt already exists and you have not read it in this session. Read it with read_file first, so "
            "you know what you are replacing, then write it again.");
  EXPECT_EQ(testing::read_text(h_.path("existing.txt")), "keep me\n");
}

TEST_F(WriteFileTest, RefusesAStaleFile) {
  h_.write("config.toml", "a = 1\n");
  ASSERT_TRUE(read("config.toml"));
  h_.write("config.toml", "a = 1\nb = 2\n");  // the user edits it behind the model's back
  EXPECT_EQ(failure("config.toml", "a = 3\n"),
            "config.toml changed since you last read it (then 6 bytes, now 12): the user, the editor or a command "
            "edited it. Read it again with read_file and redo your change on the current content.");
  EXPECT_EQ(testing::read_text(h_.path("config.toml")), "a = 1\nb = 2\n");

  ASSERT_TRUE(read("config.toml"));
  auto retried = write("config.toml", "a = 3\nb = 2\n");
  ASSERT_TRUE(retried);
  EXPECT_TRUE(retried->ok) << retried->content;
}

TEST_F(WriteFileTest, IdenticalContentIsNotRewritten) {
  h_.write("same.txt", "same\n");
  ASSERT_TRUE(read("same.txt"));
  const ino_t inode = stat_of(h_.path("same.txt")).st_ino;
  auto result = write("same.txt", "same\n");
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->ok);
  EXPECT_EQ(result->summary, "same.txt unchanged");
  EXPECT_EQ(result->content, "same.txt already has exactly this content; nothing was written.");
  EXPECT_EQ(result->metadata["changedLines"], Json(0));
  EXPECT_TRUE(result->diffs.empty());
  EXPECT_EQ(stat_of(h_.path("same.txt")).st_ino, inode);  // an atomic rewrite would have a new inode
}

TEST_F(WriteFileTest, OnlyAFinalNewlineChangedIsStillAChange) {
  h_.write("nl.txt", "text");
  ASSERT_TRUE(read("nl.txt"));
  auto result = write("nl.txt", "text\n");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->summary, "Wrote nl.txt (1 line changed)");
}

TEST_F(WriteFileTest, WrongKindsOfTarget) {
  fs::create_directories(h_.path("dir"));
  EXPECT_EQ(failure("dir", "x"), "dir is a directory; write_file writes files");
  EXPECT_EQ(failure("new/", "x"), "path \"new/\" ends in '/', so it names a directory; give a file path");
  h_.write("file.txt", "x");
  EXPECT_EQ(failure("file.txt/child.txt", "x"),
            "Cannot create file.txt/child.txt: a parent of it is a file, not a directory");
  ASSERT_EQ(::mkfifo(h_.path("pipe").c_str(), 0600), 0);
  EXPECT_EQ(failure("pipe", "x"), "pipe is not a regular file (a device, socket or pipe)");
}

TEST_F(WriteFileTest, ExistingFileTooLargeToCheck) {
  h_.write("huge.bin", "");
  fs::resize_file(h_.path("huge.bin"), kDefaultMaxFileBytes + 1);  // sparse: instant
  EXPECT_EQ(failure("huge.bin", "small"),
            "Cannot read the current huge.bin to check it before changing it: " + h_.path("huge.bin").string() +
                " is 16777217 bytes, over the 16777216-byte limit for reading a file");
}

TEST_F(WriteFileTest, GuardRefusalsLeaveTheDiskAlone) {
  fs::create_directory_symlink(h_.outside(), h_.path("out"));
  EXPECT_EQ(failure("out/evil.txt", "x").rfind("path \"out/evil.txt\" leads outside " + h_.workspace().string(), 0),
            0U);
  EXPECT_FALSE(fs::exists(h_.outside() / "evil.txt"));
  fs::create_symlink(h_.outside() / "planted.txt", h_.path("dangling"));
  EXPECT_EQ(failure("dangling", "x").rfind("path \"dangling\" leads outside ", 0), 0U);
  EXPECT_FALSE(fs::exists(h_.outside() / "planted.txt"));
  EXPECT_EQ(failure(".git/config", "[core]\n"),
            "path \".git/config\" is refused: git's internals are changed with git commands (shell), never edited "
            "directly (deny-listed pattern \".git/\")");
  EXPECT_EQ(failure("deploy.key", "k"),
            "path \"deploy.key\" is refused: key files hold secrets (deny-listed pattern \"*.key\")");
}

TEST_F(WriteFileTest, WriteFailuresAreReportedAndCleanedUp) {
  {
    const testing::ScopedFileSizeLimit limit(4);
    const std::string message = failure("big.txt", "more than four bytes");
    EXPECT_EQ(message.rfind("Cannot write big.txt: cannot write " + h_.workspace().string() + "/.big.txt.agentd-", 0),
              0U)
        << message;
    EXPECT_TRUE(message.ends_with(".tmp: File too large")) << message;
  }
  {
    const testing::ScopedNoMoreFiles no_files;
    EXPECT_EQ(failure("other.txt", "x"),
              "Cannot write other.txt: cannot open the directory " + h_.workspace().string() + ": Too many open files");
  }
  EXPECT_TRUE(fs::is_empty(h_.workspace()));  // no temporaries left behind
}

TEST_F(WriteFileTest, DirectoryCreationFailure) {
  // procfs refuses new entries even to root, which permission bits would not.
  h_.context.cwd = "/proc/self";
  const std::string message = failure("newdir/file.txt", "x");
  EXPECT_EQ(message, "Cannot create the directory newdir for newdir/file.txt: No such file or directory");
}

TEST_F(WriteFileTest, InvalidInput) {
  auto result = h_.run(*tool_, R"({"path": "", "contents": "x"})");
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(result->content,
            "Invalid input for write_file; fix these and call it again:\n"
            "- input: missing required field \"content\"\n"
            "- input.path: expected a non-empty string, got an empty string\n"
            "- input: unknown field \"contents\"; allowed fields: path, content");
}

TEST_F(WriteFileTest, TitleLocationsAndRisk) {
  EXPECT_EQ(tool_->title(json(R"({"path": "src/a.cpp", "content": ""})"), h_.context), "Write src/a.cpp");
  EXPECT_EQ(tool_->locations(json(R"({"path": "src/a.cpp", "content": ""})"), h_.context),
            std::vector<std::string>{h_.path("src/a.cpp").string()});
  EXPECT_TRUE(tool_->locations(json(R"({"path": ".git/config", "content": ""})"), h_.context).empty());
  EXPECT_EQ(tool_->assess(json(R"({"path": "a", "content": ""})"), h_.context).risk, Risk::write);
  EXPECT_TRUE(is_mutating(tool_->spec().base_risk));
}

TEST_F(WriteFileTest, CancelledOrMissingContext) {
  h_.cancel.cancel();
  auto cancelled = write("a.txt", "x");
  ASSERT_FALSE(cancelled);
  EXPECT_EQ(cancelled.error().code(), Errc::cancelled);
  EXPECT_FALSE(fs::exists(h_.path("a.txt")));

  testing::ToolHarness fresh;
  fresh.context.file_state = nullptr;
  auto no_state = fresh.run(*tool_, R"({"path": "a.txt", "content": "x"})");
  ASSERT_FALSE(no_state);
  EXPECT_EQ(no_state.error().code(), Errc::internal);
  EXPECT_EQ(no_state.error().message(), "write_file ran without file_state in its ToolContext");
}

// Before a write is allowed the user sees it: the tool previews the change as a diff, and marks a write to
// agentd's project settings (or through a symlink to them) as a protected-path risk.
TEST_F(WriteFileTest, PreviewsTheChangeAndMarksProtectedPaths) {
  h_.write("notes.md", "old\n");
  Json input = json(R"({"path": "notes.md", "content": "new\n"})");
  auto diffs = testing::run_sync(tool_->preview(input, h_.context));
  ASSERT_EQ(diffs.size(), 1U);
  EXPECT_EQ(diffs[0].path, h_.path("notes.md").string());
  EXPECT_EQ(diffs[0].old_text, std::optional<std::string>("old\n"));
  EXPECT_EQ(diffs[0].new_text, "new\n");
  EXPECT_FALSE(has_risk(tool_->assess(input, h_.context).risk, Risk::protected_path));
  EXPECT_TRUE(fs::exists(h_.path("notes.md")));
  EXPECT_EQ(testing::read_text(h_.path("notes.md")), "old\n");  // previewing changed nothing

  Json created = json(R"({"path": "new/file.txt", "content": "x"})");
  diffs = testing::run_sync(tool_->preview(created, h_.context));
  ASSERT_EQ(diffs.size(), 1U);
  EXPECT_FALSE(diffs[0].old_text);

  h_.write(".agentd/config.json", "{}");
  fs::create_symlink(".agentd/config.json", h_.path("innocent.json"));
  for (const char* path : {".agentd/config.json", "innocent.json", ".agentd/new.json"}) {
    Json escalate = Json::object();
    escalate.set("path", path);
    escalate.set("content", R"({"mode": "bypass"})");
    EXPECT_TRUE(has_risk(tool_->assess(escalate, h_.context).risk, Risk::protected_path)) << path;
  }
}

}  // namespace
}  // namespace agentd::tools
