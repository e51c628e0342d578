// Editing files an editor holds (issue: a file with unsaved editor changes could never be edited). When the
// client serves reads and writes, edit_file and write_file build on the buffer's text and write through the
// editor; when it serves reads only, a buffer that differs from the disk is refused with a message that says
// why, instead of "changed since you last read it" forever.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/unit/tools/fake_journal.h"
#include "test/unit/tools/tool_harness.h"
#include "tools/builtin/builtin_tools.h"
#include "tools/sha256.h"

namespace agentd::tools {
namespace {

using support::Errc;
using support::Json;

// An editor's view of the files: a buffer per path (the disk when it has none), and what was written.
class FakeEditor final : public FileAccess {
 public:
  explicit FakeEditor(bool writes) : writes_(writes) {}

  boost::asio::awaitable<support::Result<std::string>> read_text(std::string path,
                                                                 support::CancelToken /*cancel*/) override {
    ++reads;
    if (before_read) before_read(path);
    if (auto it = buffers.find(path); it != buffers.end()) co_return it->second;
    if (!std::filesystem::exists(path)) co_return support::make_error(Errc::not_found, "{} not found", path);
    co_return testing::read_text(path);
  }
  bool reads_buffers() const override { return true; }
  bool writes_buffers() const override { return writes_; }
  boost::asio::awaitable<support::Result<void>> write_text(std::string path, std::string text,
                                                           support::CancelToken /*cancel*/) override {
    if (fail_writes) co_return support::make_error(Errc::io, "the editor refused");
    writes.emplace_back(path, text);
    // The editor saves what it holds after its format-on-save.
    buffers[path] = format_on_save ? format_on_save(text) : text;
    testing::write_text(path, buffers[path]);
    co_return support::ok();
  }

  std::map<std::string, std::string> buffers;
  std::vector<std::pair<std::string, std::string>> writes;
  std::function<std::string(const std::string&)> format_on_save;
  std::function<void(const std::string&)> before_read;
  bool fail_writes = false;
  int reads = 0;

 private:
  bool writes_;
};

Json edit_input(const std::string& path, const std::string& old_string, const std::string& new_string) {
  Json input = Json::object();
  input.set("path", path);
  input.set("old_string", old_string);
  input.set("new_string", new_string);
  return input;
}

class EditorBufferTest : public ::testing::Test {
 protected:
  void use_editor(bool writes) {
    editor_.emplace(writes);
    h_.context.files = &*editor_;
    h_.context.journal = &journal_;
  }
  std::string path(const std::string& relative) const { return h_.path(relative).string(); }
  // The model reads the file through the editor, as read_file does when the client serves reads.
  void read(const std::string& relative) {
    Json input = Json::object();
    input.set("path", relative);
    auto r = h_.run(*read_tool_, std::move(input));
    ASSERT_TRUE(r && r->ok) << (r ? r->content : r.error().message());
  }

  testing::ToolHarness h_;
  std::optional<FakeEditor> editor_;
  testing::FakeJournal journal_;
  std::shared_ptr<Tool> edit_tool_ = make_edit_file_tool();
  std::shared_ptr<Tool> write_tool_ = make_write_file_tool();
  std::shared_ptr<Tool> read_tool_ = make_read_file_tool();
};

TEST_F(EditorBufferTest, AnEditOfAnUnsavedBufferGoesThroughTheEditor) {
  use_editor(true);
  h_.write("a.py", "x = 1\n");
  editor_->buffers[path("a.py")] = "x = 1\ny = 2  # unsaved\n";
  read("a.py");

  auto result = h_.run(*edit_tool_, edit_input("a.py", "y = 2", "y = 3"));
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_TRUE(result->ok) << result->content;
  // Built on the buffer, written through the editor; the disk is the editor's business.
  ASSERT_EQ(editor_->writes.size(), 1U);
  EXPECT_EQ(editor_->writes[0].second, "x = 1\ny = 3  # unsaved\n");
  ASSERT_EQ(result->diffs.size(), 1U);
  EXPECT_EQ(result->diffs[0].old_text, std::optional<std::string>("x = 1\ny = 2  # unsaved\n"));
  EXPECT_EQ(result->metadata["oldHash"], Json(sha256_hex("x = 1\ny = 2  # unsaved\n")));
  EXPECT_EQ(result->metadata["verification"]["readBack"], Json(true));
  // The checkpoint keeps the buffer's text, so undo puts back what the user had.
  ASSERT_EQ(journal_.entries.size(), 1U);
  EXPECT_EQ(journal_.entries[0].change.before, std::optional<std::string>("x = 1\ny = 2  # unsaved\n"));
  EXPECT_FALSE(journal_.entries[0].abandoned);

  // What was written counts as seen: the next edit needs no new read.
  auto again = h_.run(*edit_tool_, edit_input("a.py", "y = 3", "y = 4"));
  ASSERT_TRUE(again && again->ok) << (again ? again->content : again.error().message());
  EXPECT_EQ(editor_->buffers[path("a.py")], "x = 1\ny = 4  # unsaved\n");

  // write_file replaces the buffer the same way.
  Json replace = Json::object();
  replace.set("path", "a.py");
  replace.set("content", "z = 0\n");
  auto written = h_.run(*write_tool_, replace);
  ASSERT_TRUE(written && written->ok) << (written ? written->content : written.error().message());
  EXPECT_EQ(editor_->writes.back().second, "z = 0\n");
  EXPECT_EQ(written->diffs.at(0).old_text, std::optional<std::string>("x = 1\ny = 4  # unsaved\n"));
}

TEST_F(EditorBufferTest, ThePermissionPreviewShowsTheBuffer) {
  use_editor(true);
  h_.write("a.txt", "disk\n");
  editor_->buffers[path("a.txt")] = "buffer\n";
  auto diffs = testing::run_sync(edit_tool_->preview(edit_input("a.txt", "buffer", "edited"), h_.context));
  ASSERT_EQ(diffs.size(), 1U);
  EXPECT_EQ(diffs[0].old_text, std::optional<std::string>("buffer\n"));
  EXPECT_EQ(diffs[0].new_text, "edited\n");
}

// The editor reformats on save: the bytes did not land as written, the new text may or may not be there,
// and the model is told so (the EditResult's two questions answered separately).
TEST_F(EditorBufferTest, FormatOnSaveIsReportedAsADifferenceNotHidden) {
  use_editor(true);
  h_.write("f.js", "let a=1\n");
  read("f.js");
  editor_->format_on_save = [](const std::string& text) { return text + "// formatted\n"; };
  auto result = h_.run(*edit_tool_, edit_input("f.js", "a=1", "a=2"));
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_TRUE(result->ok) << "the new text is there: " << result->content;
  EXPECT_EQ(result->metadata["verification"]["readBack"], Json(false));
  EXPECT_EQ(result->metadata["verification"]["expectedTextFound"], Json(true));
  EXPECT_NE(result->content.find("your new text is in it"), std::string::npos) << result->content;

  editor_->format_on_save = [](const std::string&) { return std::string("rewritten\n"); };
  read("f.js");
  auto lost = h_.run(*edit_tool_, edit_input("f.js", "a=2", "a=3"));
  ASSERT_TRUE(lost) << lost.error().message();
  EXPECT_FALSE(lost->ok);
  EXPECT_EQ(lost->metadata["verification"]["expectedTextFound"], Json(false));
}

// The user types between the model's read and the write: nothing is written over it, the checkpoint
// entry is dropped, and the model is told to read again.
TEST_F(EditorBufferTest, TypingDuringTheEditIsAConflictNotOverwritten) {
  use_editor(true);
  h_.write("t.txt", "one\n");
  read("t.txt");
  journal_.during_record = [&](const FileChange& change) { editor_->buffers[change.path] = "one\ntyped\n"; };
  auto result = h_.run(*edit_tool_, edit_input("t.txt", "one", "two"));
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_FALSE(result->ok);
  EXPECT_NE(result->content.find("nothing was written"), std::string::npos) << result->content;
  EXPECT_TRUE(editor_->writes.empty());
  ASSERT_EQ(journal_.entries.size(), 1U);
  EXPECT_TRUE(journal_.entries[0].abandoned);

  journal_.during_record = nullptr;
  editor_->fail_writes = true;
  read("t.txt");
  auto failed = h_.run(*edit_tool_, edit_input("t.txt", "typed", "x"));
  ASSERT_TRUE(failed) << failed.error().message();
  EXPECT_FALSE(failed->ok);
  EXPECT_NE(failed->content.find("the editor refused"), std::string::npos) << failed->content;
  EXPECT_TRUE(journal_.entries.back().abandoned);
}

// An editor that serves reads but not writes: the model read the buffer, the edit would replace the disk.
TEST_F(EditorBufferTest, UnsavedChangesWithoutEditorWritesAreRefusedSayingWhy) {
  use_editor(false);
  h_.write("n.txt", "saved\n");
  editor_->buffers[path("n.txt")] = "saved\nunsaved\n";
  read("n.txt");
  auto result = h_.run(*edit_tool_, edit_input("n.txt", "unsaved", "x"));
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_FALSE(result->ok);
  EXPECT_NE(result->content.find("has changes in the editor that are not saved to disk"), std::string::npos)
      << result->content;
  EXPECT_EQ(testing::read_text(h_.path("n.txt")), "saved\n");

  Json replace = Json::object();
  replace.set("path", "n.txt");
  replace.set("content", "x\n");
  auto written = h_.run(*write_tool_, replace);
  ASSERT_TRUE(written) << written.error().message();
  EXPECT_FALSE(written->ok);
  EXPECT_NE(written->content.find("not saved to disk"), std::string::npos) << written->content;

  // Once saved (buffer and disk agree), the edit works on disk as always.
  editor_->buffers.erase(path("n.txt"));
  h_.write("n.txt", "saved\nunsaved\n");
  auto saved = h_.run(*edit_tool_, edit_input("n.txt", "unsaved", "edited"));
  ASSERT_TRUE(saved && saved->ok) << (saved ? saved->content : saved.error().message());
  EXPECT_EQ(testing::read_text(h_.path("n.txt")), "saved\nedited\n");
  EXPECT_TRUE(editor_->writes.empty());
}

// A file the editor does not have: a new file is created on disk even when the editor writes buffers.
TEST_F(EditorBufferTest, NewFilesAreCreatedOnDisk) {
  use_editor(true);
  Json create = Json::object();
  create.set("path", "new/b.txt");
  create.set("content", "b\n");
  auto result = h_.run(*write_tool_, create);
  ASSERT_TRUE(result && result->ok) << (result ? result->content : result.error().message());
  EXPECT_EQ(testing::read_text(h_.path("new/b.txt")), "b\n");
  EXPECT_TRUE(editor_->writes.empty());
}

// A hostile model cannot reach past the workspace or into a protected file through the editor: the path
// guard decides before any buffer is read or written, even when the editor holds a buffer for the target.
TEST_F(EditorBufferTest, TheEditorNeverWritesWhatThePathGuardRefuses) {
  use_editor(true);
  const std::string outside = (h_.outside() / "victim.txt").string();
  testing::write_text(outside, "theirs\n");
  editor_->buffers[outside] = "theirs\n";
  h_.write(".env", "KEY=1\n");
  editor_->buffers[path(".env")] = "KEY=1\n";
  for (const std::string& target : {std::string("../outside/victim.txt"), outside, std::string(".env")}) {
    auto edited = h_.run(*edit_tool_, edit_input(target, "theirs", "mine"));
    ASSERT_TRUE(edited) << edited.error().message();
    EXPECT_FALSE(edited->ok) << target;
    Json write = Json::object();
    write.set("path", target);
    write.set("content", "mine\n");
    auto written = h_.run(*write_tool_, write);
    ASSERT_TRUE(written) << written.error().message();
    EXPECT_FALSE(written->ok) << target;
  }
  EXPECT_TRUE(editor_->writes.empty());
  EXPECT_EQ(editor_->reads, 0);
  EXPECT_EQ(testing::read_text(outside), "theirs\n");
  EXPECT_EQ(testing::read_text(h_.path(".env")), "KEY=1\n");
}

}  // namespace
}  // namespace agentd::tools
