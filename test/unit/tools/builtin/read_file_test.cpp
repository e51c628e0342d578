#include <gtest/gtest.h>

#include "test/unit/tools/tool_harness.h"
#include "tools/builtin/builtin_tools.h"
#include "tools/sha256.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Json;
using testing::json;

// A FileAccess that answers from a fixed result: an editor's unsaved buffer, or a failure.
class FakeFileAccess final : public FileAccess {
 public:
  explicit FakeFileAccess(support::Result<std::string> answer) : answer_(std::move(answer)) {}
  boost::asio::awaitable<support::Result<std::string>> read_text(std::string path,
                                                                 support::CancelToken /*cancel*/) override {
    paths.push_back(std::move(path));
    co_return answer_;
  }
  std::vector<std::string> paths;

 private:
  support::Result<std::string> answer_;
};

class ReadFileTest : public ::testing::Test {
 protected:
  support::Result<ToolResult> read(std::string_view input) { return h_.run(*tool_, input); }
  // The failure message of a call that must fail the model-recoverable way.
  std::string failure(std::string_view input) {
    auto result = read(input);
    if (!result) {
      ADD_FAILURE() << "error instead of a failed result: " << result.error().message();
      return "";
    }
    EXPECT_FALSE(result->ok);
    EXPECT_EQ(result->summary.empty(), false);
    return result->content;
  }
  std::string numbered(std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t i = from; i <= to; ++i) out += fmt::format("{:>6}\tline {}\n", i, i);
    return out;
  }
  void write_lines(const std::string& name, std::size_t count) {
    std::string text;
    for (std::size_t i = 1; i <= count; ++i) text += fmt::format("line {}\n", i);
    h_.write(name, text);
  }

  testing::ToolHarness h_;
  std::shared_ptr<Tool> tool_ = make_read_file_tool();
};

TEST_F(ReadFileTest, ShowsNumberedLinesAndRecordsTheHash) {
  h_.write("src/a.txt", "alpha\nbeta\n\tgamma");  // the last line has no newline
  auto result = read(R"({"path": "src/a.txt"})");
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_TRUE(result->ok);
  EXPECT_EQ(result->content, "     1\talpha\n     2\tbeta\n     3\t\tgamma\n");
  EXPECT_EQ(result->summary, "Read src/a.txt (lines 1-3 of 3)");
  const std::string absolute = h_.path("src/a.txt").string();
  EXPECT_EQ(result->locations, std::vector<std::string>{absolute});
  Json expected = Json::object();
  expected.set("path", absolute);
  expected.set("startLine", 1);
  expected.set("endLine", 3);
  expected.set("totalLines", 3);
  expected.set("truncated", false);
  expected.set("sha256", sha256_hex("alpha\nbeta\n\tgamma"));
  expected.set("bytes", 17);
  EXPECT_EQ(result->metadata, expected);
  EXPECT_TRUE(result->diffs.empty());

  const auto seen = h_.file_state.find(h_.path("src/a.txt"));
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->sha256, sha256_hex("alpha\nbeta\n\tgamma"));
  EXPECT_EQ(seen->size, 17U);
}

TEST_F(ReadFileTest, TitleAndLocationsBeforeRunning) {
  EXPECT_EQ(tool_->title(json(R"({"path": "src/./a.txt"})"), h_.context), "Read src/a.txt");
  EXPECT_EQ(tool_->title(json(R"({"path": ")" + h_.path("b.txt").string() + R"("})"), h_.context), "Read b.txt");
  EXPECT_EQ(tool_->locations(json(R"({"path": "b.txt"})"), h_.context),
            std::vector<std::string>{h_.path("b.txt").string()});
  EXPECT_TRUE(tool_->locations(json(R"({"path": "../outside/x"})"), h_.context).empty());
  EXPECT_EQ(tool_->assess(json(R"({"path": "b.txt"})"), h_.context).risk, Risk::read);
}

TEST_F(ReadFileTest, OffsetAndLimitPage) {
  write_lines("ten.txt", 10);
  auto result = read(R"({"path": "ten.txt", "offset": 3, "limit": 2})");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->content, numbered(3, 4) + "\n[Showing lines 3-4 of 10. To read on, call read_file with offset=5.]");
  EXPECT_EQ(result->summary, "Read ten.txt (lines 3-4 of 10)");
  EXPECT_EQ(result->metadata["truncated"], Json(true));

  auto tail = read(R"({"path": "ten.txt", "offset": 9.0})");  // 9.0 is an integer to JSON Schema
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->content, numbered(9, 10));
  EXPECT_EQ(tail->metadata["truncated"], Json(false));

  auto past_limit = read(R"({"path": "ten.txt", "limit": 50})");
  ASSERT_TRUE(past_limit);
  EXPECT_EQ(past_limit->content, numbered(1, 10));
}

TEST_F(ReadFileTest, LongFilesStopAtTheLineCap) {
  write_lines("long.txt", 2500);
  auto result = read(R"({"path": "long.txt"})");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->content, numbered(1, 2000) +
                                 "\n[Showing lines 1-2000 of 2500 (read_file shows at most 2000 lines per call). To "
                                 "read on, call read_file with offset=2001.]");
  // Asking for more than the cap still gets the cap.
  auto asked = read(R"({"path": "long.txt", "offset": 2, "limit": 100000})");
  ASSERT_TRUE(asked);
  EXPECT_EQ(asked->metadata["endLine"], Json(2001));
}

TEST_F(ReadFileTest, WideFilesStopAtTheByteCap) {
  std::string text;
  for (int i = 0; i < 400; ++i) text += std::string(999, 'w') + "\n";
  h_.write("wide.txt", text);
  auto result = read(R"({"path": "wide.txt"})");
  ASSERT_TRUE(result);
  // Each shown line is 7 (number and tab) + 999 + 1 bytes; 260 of them fit in 256 KiB.
  EXPECT_EQ(result->metadata["endLine"], Json(260));
  EXPECT_TRUE(result->content.ends_with(
      "\n[Showing lines 1-260 of 400 (read_file shows at most 256 KiB per call). To read on, call read_file with "
      "offset=261.]"));
  EXPECT_LE(result->content.size(), kReadFileMaxBytes + 200);
}

TEST_F(ReadFileTest, VeryLongLinesAreCut) {
  h_.write("min.js", "short\n" + std::string(5000, 'x') + "\n");
  auto result = read(R"({"path": "min.js"})");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->content, "     1\tshort\n     2\t" + std::string(2000, 'x') + " [line cut: 3000 more bytes]\n");
}

TEST_F(ReadFileTest, EmptyFile) {
  h_.write("empty.txt", "");
  auto result = read(R"({"path": "empty.txt"})");
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->ok);
  EXPECT_EQ(result->content, "[empty.txt is empty]");
  EXPECT_EQ(result->summary, "Read empty.txt (empty)");
  EXPECT_TRUE(h_.file_state.find(h_.path("empty.txt")));
  EXPECT_EQ(failure(R"({"path": "empty.txt", "offset": 2})"),
            "offset 2 is past the end of empty.txt, which has 0 lines");
}

TEST_F(ReadFileTest, OffsetPastTheEnd) {
  write_lines("ten.txt", 10);
  EXPECT_EQ(failure(R"({"path": "ten.txt", "offset": 11})"),
            "offset 11 is past the end of ten.txt, which has 10 lines; use an offset from 1 to 10");
  h_.write("one.txt", "x");
  EXPECT_EQ(failure(R"({"path": "one.txt", "offset": 5})"),
            "offset 5 is past the end of one.txt, which has 1 line; use an offset from 1 to 1");
}

TEST_F(ReadFileTest, BinaryFilesAreRefusedAndNotRecorded) {
  h_.write("image.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  EXPECT_EQ(failure(R"({"path": "image.png"})"),
            "image.png looks like a binary file (it has a NUL byte at offset 8); read_file shows text files only");
  h_.write("latin1.txt", "caf\xe9\n");
  EXPECT_EQ(failure(R"({"path": "latin1.txt"})"),
            "latin1.txt looks like a binary file (it is not valid UTF-8 text); read_file shows text files only");
  EXPECT_EQ(h_.file_state.size(), 0U);
}

TEST_F(ReadFileTest, MissingDirectoryAndTooLarge) {
  EXPECT_EQ(failure(R"({"path": "nope.txt"})"),
            "File not found: nope.txt. Check the name with list_dir, or create it with write_file");
  fs::create_directories(h_.path("src"));
  EXPECT_EQ(failure(R"({"path": "src"})"), "src is a directory; use list_dir to see what it holds");

  DiskFileAccess tiny(4);
  h_.context.files = &tiny;
  h_.write("five.txt", "12345");
  EXPECT_EQ(failure(R"({"path": "five.txt"})"),
            "five.txt is too large to read (" + h_.path("five.txt").string() +
                " is 5 bytes, over the 4-byte limit for reading a file); search it for the part you need instead");
}

TEST_F(ReadFileTest, GuardRefusals) {
  EXPECT_EQ(failure(R"({"path": "../outside/x.txt"})"),
            "path \"../outside/x.txt\" is outside the workspace: it resolves to " + (h_.outside() / "x.txt").string() +
                ". Allowed: paths under " + h_.workspace().string() + " (the working directory)");
  h_.write(".env", "TOKEN=1\n");
  EXPECT_EQ(failure(R"({"path": ".env"})"),
            "path \".env\" is refused: environment files hold secrets (deny-listed pattern \".env\")");
  fs::create_directory_symlink(h_.outside(), h_.path("out"));
  EXPECT_EQ(failure(R"({"path": "out/x.txt"})").rfind("path \"out/x.txt\" leads outside ", 0), 0U);
}

TEST_F(ReadFileTest, InvalidInputListsEveryProblem) {
  auto result = read(R"({"limit": -3, "offset": "2", "lines": 5})");
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(result->summary, "Invalid input for read_file");
  EXPECT_EQ(result->content,
            "Invalid input for read_file; fix these and call it again:\n"
            "- input: missing required field \"path\"\n"
            "- input.limit: expected integer >= 1, got -3\n"
            "- input.offset: expected integer >= 1, got string \"2\"\n"
            "- input: unknown field \"lines\"; allowed fields: path, offset, limit");
}

TEST_F(ReadFileTest, ReadsThroughTheSessionsFileAccess) {
  h_.write("buffer.txt", "on disk\n");
  FakeFileAccess editor(std::string("unsaved buffer\n"));
  h_.context.files = &editor;
  auto result = read(R"({"path": "buffer.txt"})");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->content, "     1\tunsaved buffer\n");
  EXPECT_EQ(editor.paths, std::vector<std::string>{h_.path("buffer.txt").string()});
  EXPECT_EQ(h_.file_state.find(h_.path("buffer.txt"))->sha256, sha256_hex("unsaved buffer\n"));
}

TEST_F(ReadFileTest, OtherReadErrorsBecomeFailures) {
  h_.write("a.txt", "x\n");
  FakeFileAccess broken(support::Error(Errc::unavailable, "editor went away"));
  h_.context.files = &broken;
  EXPECT_EQ(failure(R"({"path": "a.txt"})"), "Cannot read a.txt: editor went away");
}

TEST_F(ReadFileTest, CancellationEndsTheTurn) {
  h_.write("a.txt", "x\n");
  FakeFileAccess cancelled_read(support::Error(Errc::cancelled, "cancelled by the client"));
  h_.context.files = &cancelled_read;
  auto during = read(R"({"path": "a.txt"})");
  ASSERT_FALSE(during);
  EXPECT_EQ(during.error().code(), Errc::cancelled);

  h_.cancel.cancel();
  auto before = read(R"({"path": "a.txt"})");
  ASSERT_FALSE(before);
  EXPECT_EQ(before.error().code(), Errc::cancelled);
}

TEST_F(ReadFileTest, MissingContextIsAnInternalError) {
  h_.write("a.txt", "x\n");
  h_.context.file_state = nullptr;
  auto no_state = read(R"({"path": "a.txt"})");
  ASSERT_FALSE(no_state);
  EXPECT_EQ(no_state.error().code(), Errc::internal);
  EXPECT_EQ(no_state.error().message(), "read_file ran without file_state in its ToolContext");
  h_.context.files = nullptr;
  auto no_files = read(R"({"path": "a.txt"})");
  ASSERT_FALSE(no_files);
  EXPECT_EQ(no_files.error().message(), "read_file ran without files in its ToolContext");
}

}  // namespace
}  // namespace agentd::tools
