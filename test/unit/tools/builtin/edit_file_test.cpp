#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "test/unit/tools/fake_journal.h"
#include "test/unit/tools/tool_harness.h"
#include "tools/builtin/builtin_tools.h"
#include "tools/sha256.h"

namespace agentd::tools {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using support::Errc;
using support::Json;
using testing::json;

Json edit_input(const std::string& path, const std::string& old_string, const std::string& new_string,
                bool replace_all = false) {
  Json input = Json::object();
  input.set("path", path);
  input.set("old_string", old_string);
  input.set("new_string", new_string);
  if (replace_all) input.set("replace_all", true);
  return input;
}

class EditFileTest : public ::testing::Test {
 protected:
  support::Result<ToolResult> edit(const std::string& path, const std::string& old_string,
                                   const std::string& new_string, bool replace_all = false) {
    return h_.run(*tool_, edit_input(path, old_string, new_string, replace_all));
  }
  void read(const std::string& path) {
    Json input = Json::object();
    input.set("path", path);
    auto r = h_.run(*read_tool_, std::move(input));
    ASSERT_TRUE(r && r->ok) << (r ? r->content : r.error().message());
  }
  std::string failure(const std::string& path, const std::string& old_string, const std::string& new_string) {
    auto result = edit(path, old_string, new_string);
    if (!result) {
      ADD_FAILURE() << "error instead of a failed result: " << result.error().message();
      return "";
    }
    EXPECT_FALSE(result->ok);
    return result->content;
  }

  testing::ToolHarness h_;
  std::shared_ptr<Tool> tool_ = make_edit_file_tool();
  std::shared_ptr<Tool> read_tool_ = make_read_file_tool();
};

TEST_F(EditFileTest, EditsAFileReadBeforeAndReturnsAnEditResult) {
  h_.write("src/a.cpp", "int f() {\n  return 1;\n}\n");
  read("src/a.cpp");
  auto result = edit("src/a.cpp", "  return 1;", "  return 2;");
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_TRUE(result->ok) << result->content;
  const fs::path path = h_.path("src/a.cpp");
  EXPECT_EQ(testing::read_text(path), "int f() {\n  return 2;\n}\n");
  const std::string diff =
      "--- src/a.cpp\n+++ src/a.cpp\n@@ -1,3 +1,3 @@\n int f() {\n-  return 1;\n+  return 2;\n }\n";

  Json verification = Json::object();
  verification.set("readBack", true);
  verification.set("expectedTextFound", true);
  Json expected = Json::object();
  expected.set("path", path.string());
  expected.set("diff", diff);
  expected.set("oldHash", sha256_hex("int f() {\n  return 1;\n}\n"));
  expected.set("newHash", sha256_hex("int f() {\n  return 2;\n}\n"));
  expected.set("changedLines", 1);
  expected.set("replacements", 1);
  expected.set("firstLine", 2);
  expected.set("verification", verification);
  EXPECT_EQ(result->metadata, expected);
  EXPECT_EQ(result->summary, "Edited src/a.cpp (1 line changed)");
  EXPECT_EQ(result->content, "Edited src/a.cpp at line 2 (1 line changed):\n" + diff);
  EXPECT_EQ(result->locations, std::vector<std::string>{path.string()});
  ASSERT_EQ(result->diffs.size(), 1U);
  EXPECT_EQ(result->diffs[0].path, path.string());
  EXPECT_EQ(result->diffs[0].old_text, std::optional<std::string>("int f() {\n  return 1;\n}\n"));
  EXPECT_EQ(result->diffs[0].new_text, "int f() {\n  return 2;\n}\n");

  // The edit counts as seen: a second edit needs no new read.
  auto again = edit("src/a.cpp", "return 2", "return 3");
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->ok) << again->content;
}

TEST_F(EditFileTest, ReplaceAllChangesEveryOccurrence) {
  h_.write("n.txt", "foo bar\nfoo\nbaz foo\n");
  read("n.txt");
  auto result = edit("n.txt", "foo", "qux", true);
  ASSERT_TRUE(result && result->ok);
  EXPECT_EQ(testing::read_text(h_.path("n.txt")), "qux bar\nqux\nbaz qux\n");
  EXPECT_EQ(result->metadata["replacements"], Json(3));
  EXPECT_EQ(result->metadata["changedLines"], Json(3));
  EXPECT_EQ(result->summary, "Edited n.txt (3 lines changed)");
  EXPECT_TRUE(result->content.starts_with("Edited n.txt in 3 places, the first at line 1 (3 lines changed):\n"))
      << result->content;
}

TEST_F(EditFileTest, KeepsModeLineEndingsAndBom) {
  const std::string bom = "\xEF\xBB\xBF";
  h_.write("run.bat", bom + "@echo off\r\necho one\r\n");
  ASSERT_EQ(::chmod(h_.path("run.bat").c_str(), 0751), 0);
  read("run.bat");
  auto result = edit("run.bat", "echo one\n", "echo one\necho two\n");  // the model writes LF
  ASSERT_TRUE(result && result->ok) << (result ? result->content : "");
  EXPECT_EQ(testing::read_text(h_.path("run.bat")), bom + "@echo off\r\necho one\r\necho two\r\n");
  struct stat st {};
  ASSERT_EQ(::stat(h_.path("run.bat").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0751U);
}

TEST_F(EditFileTest, RefusesFilesNeverReadStaleMissingOrNotFiles) {
  h_.write("never.txt", "x\n");
  EXPECT_EQ(failure("never.txt", "x", "y"),
            "You have not read never.txt in this session. Read it with read_file first, then make the edit.");

  h_.write("stale.txt", "a = 1\n");
  read("stale.txt");
  h_.write("stale.txt", "a = 1\nb = 2\n");
  EXPECT_EQ(failure("stale.txt", "a = 1", "a = 3"),
            "stale.txt changed since you last read it (then 6 bytes, now 12): the user, the editor or a command "
            "edited it. Read it again with read_file and redo your edit on the current content.");
  EXPECT_EQ(testing::read_text(h_.path("stale.txt")), "a = 1\nb = 2\n");

  EXPECT_EQ(failure("missing.txt", "a", "b"),
            "missing.txt does not exist. edit_file changes existing files; create it with write_file.");
  fs::create_directories(h_.path("dir"));
  EXPECT_EQ(failure("dir", "a", "b"), "dir is a directory; edit_file edits files");
  EXPECT_EQ(failure(".git/config", "a", "b"),
            "path \".git/config\" is refused: git's internals are changed with git commands (shell), never edited "
            "directly (deny-listed pattern \".git/\")");
}

TEST_F(EditFileTest, NoMatchAndManyMatchesSayWhereToLook) {
  h_.write("c.py", "def f():\n    return 1\n\ndef g():\n    return 1\n");
  read("c.py");
  auto none = edit("c.py", "def f():\n  return 1", "def f():\n  return 2");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->ok);
  EXPECT_EQ(none->summary, "old_string not found in c.py");
  EXPECT_TRUE(none->content.starts_with("Cannot edit c.py: old_string was not found in the file. The closest text"))
      << none->content;
  EXPECT_NE(none->content.find("lines 1-2"), std::string::npos) << none->content;
  EXPECT_NE(none->content.find("     1\tdef f():\n     2\t    return 1\n"), std::string::npos) << none->content;
  EXPECT_EQ(none->metadata["matches"], Json(0));
  EXPECT_EQ(none->metadata["candidates"].as_array()[0]["firstLine"], Json(1));

  auto many = edit("c.py", "    return 1", "    return 2");
  ASSERT_TRUE(many);
  EXPECT_FALSE(many->ok);
  EXPECT_EQ(many->summary, "old_string occurs 2 times in c.py");
  EXPECT_NE(many->content.find("(starting at lines 2 and 5)"), std::string::npos) << many->content;
  EXPECT_EQ(testing::read_text(h_.path("c.py")), "def f():\n    return 1\n\ndef g():\n    return 1\n");
}

TEST_F(EditFileTest, TheJournalGetsThePreImageFirst) {
  testing::FakeJournal journal;
  h_.context.journal = &journal;
  h_.write("j.txt", "before\n");
  read("j.txt");
  auto result = edit("j.txt", "before", "after");
  ASSERT_TRUE(result && result->ok);
  ASSERT_EQ(journal.entries.size(), 1U);
  EXPECT_EQ(journal.entries[0].change.path, h_.path("j.txt").string());
  EXPECT_EQ(journal.entries[0].change.before, "before\n");
  EXPECT_EQ(journal.entries[0].change.after_hash, sha256_hex("after\n"));
  EXPECT_EQ(journal.entries[0].on_disk, "before\n");
  EXPECT_FALSE(journal.entries[0].abandoned);

  // A journal that cannot store the pre-image stops the edit: nothing is written.
  journal.fail_with = support::Error(Errc::storage, "database is locked");
  auto refused = edit("j.txt", "after", "again");
  ASSERT_FALSE(refused);
  EXPECT_EQ(testing::read_text(h_.path("j.txt")), "after\n");
}

TEST_F(EditFileTest, WriteFileJournalsCreationsAndReplacements) {
  testing::FakeJournal journal;
  h_.context.journal = &journal;
  auto write_tool = make_write_file_tool();
  Json create = Json::object();
  create.set("path", "new.txt");
  create.set("content", "one\n");
  ASSERT_TRUE(h_.run(*write_tool, create)->ok);
  Json replace = Json::object();
  replace.set("path", "new.txt");
  replace.set("content", "two\n");
  ASSERT_TRUE(h_.run(*write_tool, replace)->ok);
  ASSERT_EQ(journal.entries.size(), 2U);
  EXPECT_FALSE(journal.entries[0].change.before);
  EXPECT_FALSE(journal.entries[0].on_disk);
  EXPECT_EQ(journal.entries[1].change.before, "one\n");
  EXPECT_EQ(journal.entries[1].change.after_hash, sha256_hex("two\n"));
}

TEST_F(EditFileTest, AnEditOfAnotherSessionMakesThisOneStale) {
  h_.write("shared.txt", "count = 1\n");
  read("shared.txt");
  FileState other_state;  // a second session, which read the same file
  other_state.record(h_.path("shared.txt"), snapshot_of("count = 1\n", h_.path("shared.txt")));
  ToolContext other = h_.context;
  other.file_state = &other_state;

  auto first = edit("shared.txt", "count = 1", "count = 2");
  ASSERT_TRUE(first && first->ok);
  Json input = edit_input("shared.txt", "count = 1",
                          "count = 3");  // named: GCC 12 destroys class temporaries passed to coroutines twice
  auto second = testing::run_sync(tool_->run(std::move(input), other));
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->ok);
  EXPECT_NE(second->content.find("changed since you last read it"), std::string::npos) << second->content;
  EXPECT_EQ(testing::read_text(h_.path("shared.txt")), "count = 2\n");
}

// Holds every record() until the second one arrives, so two edits are both past their stale checks before
// either writes: the race commit_file must settle.
class GateJournal : public ChangeJournal {
 public:
  explicit GateJournal(asio::io_context& io) : gate_(io, asio::steady_timer::time_point::max()) {}
  asio::awaitable<support::Result<std::int64_t>> record(FileChange change) override {
    const auto id = static_cast<std::int64_t>(changes.size());
    changes.push_back(std::move(change));
    abandoned.push_back(false);
    if (changes.size() < 2) {
      co_await gate_.async_wait(asio::as_tuple(asio::use_awaitable));
    } else {
      gate_.cancel();
    }
    co_return id;
  }
  void abandon(std::int64_t id) override { abandoned.at(static_cast<std::size_t>(id)) = true; }

  std::vector<FileChange> changes;
  std::vector<bool> abandoned;

 private:
  asio::steady_timer gate_;
};

TEST_F(EditFileTest, TwoRacingEditsOfOneFileNeverLoseAnUpdate) {
  h_.write("race.txt", "a\nb\n");
  read("race.txt");
  FileState other_state;
  other_state.record(h_.path("race.txt"), snapshot_of("a\nb\n", h_.path("race.txt")));

  asio::io_context io;
  GateJournal journal(io);
  ToolContext mine = h_.context;
  mine.journal = &journal;
  ToolContext theirs = h_.context;
  theirs.file_state = &other_state;
  theirs.journal = &journal;
  std::optional<support::Result<ToolResult>> first;
  std::optional<support::Result<ToolResult>> second;
  auto run = [&](Json input, ToolContext& context,
                 std::optional<support::Result<ToolResult>>& out) -> asio::awaitable<void> {
    out.emplace(co_await tool_->run(std::move(input), context));
  };
  Json input_a = edit_input("race.txt", "a\n", "A\n");
  Json input_b = edit_input("race.txt", "b\n", "B\n");
  asio::co_spawn(io, run(std::move(input_a), mine, first), asio::detached);
  asio::co_spawn(io, run(std::move(input_b), theirs, second), asio::detached);
  io.run();

  ASSERT_TRUE(first && *first && second && *second);
  const ToolResult& a = **first;
  const ToolResult& b = **second;
  EXPECT_NE(a.ok, b.ok) << "exactly one edit wins: " << a.content << " / " << b.content;
  const ToolResult& loser = a.ok ? b : a;
  EXPECT_NE(loser.content.find("changed while this edit was being saved"), std::string::npos) << loser.content;
  // The winner's edit is there, on top of the text both read; the loser's is not, and nothing was lost.
  const std::string now = testing::read_text(h_.path("race.txt"));
  EXPECT_TRUE(now == "A\nb\n" || now == "a\nB\n") << now;
  EXPECT_EQ(now, a.ok ? "A\nb\n" : "a\nB\n");
  ASSERT_EQ(journal.changes.size(), 2U);
  EXPECT_NE(journal.abandoned[0], journal.abandoned[1]);
}

TEST_F(EditFileTest, TitleLocationsRiskAndInput) {
  EXPECT_EQ(tool_->title(edit_input("src/a.cpp", "x", "y"), h_.context), "Edit src/a.cpp");
  EXPECT_EQ(tool_->locations(edit_input("src/a.cpp", "x", "y"), h_.context),
            std::vector<std::string>{h_.path("src/a.cpp").string()});
  EXPECT_EQ(tool_->assess(edit_input("a", "x", "y"), h_.context).risk, Risk::write);
  EXPECT_EQ(tool_->spec().kind, ToolKind::edit);
  auto result = h_.run(*tool_, R"({"path": "a.txt", "old": "x"})");
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->ok);
  EXPECT_TRUE(result->content.starts_with("Invalid input for edit_file")) << result->content;

  h_.cancel.cancel();
  auto cancelled = edit("a.txt", "x", "y");
  ASSERT_FALSE(cancelled);
  EXPECT_EQ(cancelled.error().code(), Errc::cancelled);
}

TEST_F(EditFileTest, PreviewsTheEditAsItWouldApply) {
  h_.write("a.txt", "one\ntwo\ntwo\n");
  auto diffs = testing::run_sync(tool_->preview(edit_input("a.txt", "one", "ONE"), h_.context));
  ASSERT_EQ(diffs.size(), 1U);
  EXPECT_EQ(diffs[0].old_text, std::optional<std::string>("one\ntwo\ntwo\n"));
  EXPECT_EQ(diffs[0].new_text, "ONE\ntwo\ntwo\n");
  EXPECT_EQ(testing::run_sync(tool_->preview(edit_input("a.txt", "two", "2", true), h_.context)).at(0).new_text,
            "one\n2\n2\n");
  // Nothing to show when the edit would not apply, or for a file that is not there.
  EXPECT_TRUE(testing::run_sync(tool_->preview(edit_input("a.txt", "two", "2"), h_.context)).empty());
  EXPECT_TRUE(testing::run_sync(tool_->preview(edit_input("missing.txt", "a", "b"), h_.context)).empty());
  EXPECT_EQ(testing::read_text(h_.path("a.txt")), "one\ntwo\ntwo\n");
}

}  // namespace
}  // namespace agentd::tools
