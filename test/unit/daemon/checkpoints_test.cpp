// File checkpoints and undo over the real binary and the mock model: a turn edits one file and creates
// another; /undo puts both back; _agentd/checkpoints/restore of the undo redoes the turn; a file the user
// changed after the turn is a conflict, left alone. No git anywhere: plain files in a temp dir.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/mock_model/mock_model_server.h"
#include "test/support/agentd_process.h"
#include "test/support/session_fixture.h"
#include "test/support/temp_dir.h"

namespace agentd {
namespace {

namespace fs = std::filesystem;
using support::Json;
using testing::request;

constexpr std::string_view kScript = R"({"exchanges": [
  {"name": "read", "response": {"generate": {"provider": "anthropic", "text": "Reading.",
     "tool_calls": [{"id": "toolu_read", "name": "read_file", "input": {"path": "notes.txt"}}]}}},
  {"name": "change", "response": {"generate": {"provider": "anthropic", "text": "Changing.",
     "tool_calls": [
       {"id": "toolu_edit", "name": "edit_file",
        "input": {"path": "notes.txt", "old_string": "text on disk", "new_string": "edited text"}},
       {"id": "toolu_write", "name": "write_file", "input": {"path": "sub/created.txt", "content": "new\n"}}]}}},
  {"name": "done", "response": {"generate": {"provider": "anthropic", "text": "Done."}}}]})";

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<mock_model::MockModelServer> mock;
  std::unique_ptr<testing::AcpClient> agentd;
  std::string session;
  fs::path work;
  int next_id = 0;

  Fixture() {
    fs::create_directories(dir.file("work"));
    work = fs::canonical(dir.file("work"));
    std::ofstream(work / "notes.txt") << "text on disk\n";
    auto script = mock_model::parse_script(*support::parse_json(kScript), dir.path());
    EXPECT_TRUE(script);
    auto server = mock_model::MockModelServer::start(std::move(*script));
    EXPECT_TRUE(server);
    mock = std::move(*server);
    agentd = testing::start_in_process_with_mock(dir, mock->url());
    call("initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
    Json created = call("session/new", R"({"cwd":")" + work.string() + R"(","mcpServers":[]})");
    session = created["result"]["sessionId"].is_string() ? created["result"]["sessionId"].as_string() : "";
    EXPECT_FALSE(session.empty()) << created.dump();
    // Edits run without a permission prompt.
    Json mode = call("session/set_mode", R"({"sessionId":")" + session + R"(","modeId":"acceptEdits"})");
    EXPECT_TRUE(mode.contains("result")) << mode.dump();
  }

  Json call(std::string_view method, const std::string& params, std::string* text = nullptr) {
    return request(*agentd, next_id++, method, params, [&](const Json& m) {
      if (text == nullptr || !m["method"].is_string() || m["method"].as_string() != "session/update") return;
      const Json& update = m["params"]["update"];
      if (update["sessionUpdate"].is_string() && update["sessionUpdate"].as_string() == "agent_message_chunk") {
        *text += update["content"]["text"].as_string();
      }
    });
  }

  // A prompt; returns its turn id and collects the agent's text.
  std::string prompt(const std::string& words, std::string* text = nullptr) {
    Json answer =
        call("session/prompt",
             R"({"sessionId":")" + session + R"(","prompt":[{"type":"text","text":")" + words + R"("}]})", text);
    EXPECT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
    const Json& turn = answer["result"]["_meta"]["agentd"]["turnId"];
    return turn.is_string() ? turn.as_string() : "";
  }

  Json checkpoints() {
    Json list = call("_agentd/checkpoints/list", R"({"sessionId":")" + session + R"("})");
    EXPECT_TRUE(list.contains("result")) << list.dump();
    return list["result"]["checkpoints"];
  }
};

Json file_entry(const std::string& path, const char* change) {
  Json j = Json::object();
  j["path"] = path;
  j["change"] = change;
  return j;
}

// The files of a listed checkpoint without their hashes, which the test cannot know in advance.
Json files_of(const Json& checkpoint) {
  Json out = Json::array();
  for (const Json& f : checkpoint["files"].as_array())
    out.push_back(file_entry(f["path"].as_string(), f["change"].as_string().c_str()));
  return out;
}

TEST(Checkpoints, UndoRedoAndConflictRoundTrip) {
  Fixture f;
  const fs::path notes = f.work / "notes.txt";
  const fs::path created = f.work / "sub" / "created.txt";

  const std::string turn = f.prompt("change the notes");
  ASSERT_FALSE(turn.empty());
  EXPECT_EQ(slurp(notes), "edited text\n");
  EXPECT_EQ(slurp(created), "new\n");

  Json list = f.checkpoints();
  ASSERT_EQ(list.size(), 1U) << list.dump();
  const Json& first = list.as_array()[0];
  EXPECT_EQ(first["turnId"], Json(turn));
  EXPECT_EQ(first["kind"], Json("turn"));
  EXPECT_EQ(first["undone"], Json(false));
  Json expected_files = Json::array();
  expected_files.push_back(file_entry(notes.string(), "modified"));
  expected_files.push_back(file_entry(created.string(), "created"));
  EXPECT_EQ(files_of(first), expected_files);
  EXPECT_TRUE(first["files"].as_array()[1]["beforeHash"].is_null());

  // /undo: the edit is reverted, the created file removed.
  std::string reply;
  const std::string undo_turn = f.prompt("/undo", &reply);
  EXPECT_NE(reply.find("Undid the file changes of turn " + turn), std::string::npos) << reply;
  EXPECT_NE(reply.find("restored notes.txt"), std::string::npos) << reply;
  EXPECT_NE(reply.find("removed sub/created.txt"), std::string::npos) << reply;
  EXPECT_EQ(slurp(notes), "text on disk\n");
  EXPECT_FALSE(fs::exists(created));

  list = f.checkpoints();
  ASSERT_EQ(list.size(), 2U) << list.dump();
  EXPECT_EQ(list.as_array()[0]["undone"], Json(true));
  EXPECT_EQ(list.as_array()[1]["turnId"], Json(undo_turn));
  EXPECT_EQ(list.as_array()[1]["kind"], Json("restore"));
  EXPECT_EQ(list.as_array()[1]["restoresTurnId"], Json(turn));

  // Restoring the undo redoes the turn.
  Json redo =
      f.call("_agentd/checkpoints/restore", R"({"sessionId":")" + f.session + R"(","turnId":")" + undo_turn + R"("})");
  ASSERT_TRUE(redo.contains("result")) << redo.dump();
  EXPECT_EQ(redo["result"]["restoredTurnId"], Json(undo_turn));
  EXPECT_EQ(redo["result"]["conflicts"], Json(0));
  EXPECT_TRUE(redo["result"]["checkpointId"].as_string().starts_with("r_")) << redo.dump();
  EXPECT_EQ(slurp(notes), "edited text\n");
  EXPECT_EQ(slurp(created), "new\n");
  list = f.checkpoints();
  ASSERT_EQ(list.size(), 3U);
  EXPECT_EQ(list.as_array()[0]["undone"], Json(false)) << list.dump();
  EXPECT_EQ(list.as_array()[1]["undone"], Json(true)) << list.dump();

  // The user changes the notes; /undo reverts what it can and reports the rest.
  std::ofstream(notes, std::ios::trunc) << "the user's own words\n";
  reply.clear();
  f.prompt("/undo", &reply);
  EXPECT_NE(reply.find("conflict notes.txt"), std::string::npos) << reply;
  EXPECT_NE(reply.find("removed sub/created.txt"), std::string::npos) << reply;
  EXPECT_EQ(slurp(notes), "the user's own words\n");
  EXPECT_FALSE(fs::exists(created));

  Json unknown = f.call("_agentd/checkpoints/restore", R"({"sessionId":")" + f.session + R"(","turnId":"t_nope"})");
  EXPECT_TRUE(unknown.contains("error")) << unknown.dump();
  Json closed = f.call("_agentd/checkpoints/list", R"({"sessionId":"s_nope"})");
  EXPECT_TRUE(closed.contains("error")) << closed.dump();
}

// A large file's pre-image is kept in a blob file next to the database (not in a database transaction,
// where writing it would hold the write lock every session's events wait for), and undo reads it back.
TEST(Checkpoints, ALargeFilesPreImageLivesInABlobFileAndUndoPutsItBack) {
  Fixture f;
  const fs::path notes = f.work / "notes.txt";
  std::string large = "text on disk\n";
  for (int i = 0; large.size() < (std::size_t{1} << 20); ++i) large += "padding line " + std::to_string(i) + "\n";
  std::ofstream(notes, std::ios::trunc | std::ios::binary) << large;

  f.prompt("change the notes");
  EXPECT_EQ(slurp(notes).substr(0, 12), "edited text\n");
  const fs::path blobs = f.dir.file("agentd.db.blobs");
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(blobs)) {
    if (entry.is_regular_file()) {
      ++files;
      EXPECT_EQ(slurp(entry.path()), large);
    }
  }
  EXPECT_EQ(files, 1U);

  std::string reply;
  f.prompt("/undo", &reply);
  EXPECT_NE(reply.find("restored notes.txt"), std::string::npos) << reply;
  EXPECT_EQ(slurp(notes), large);
}

// The prompt's answer says what verified the turn's change: here nothing did, and the project's test
// command is what was not run (_meta.agentd.verification, issue: "what a turn verified").
TEST(Checkpoints, TheAnswerSaysWhatVerifiedTheChange) {
  Fixture f;
  std::ofstream(f.work / "Makefile") << "test:\n\t@true\n";
  Json answer = f.call("session/prompt",
                       R"({"sessionId":")" + f.session + R"(","prompt":[{"type":"text","text":"change the notes"}]})");
  ASSERT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
  const Json& verification = answer["result"]["_meta"]["agentd"]["verification"];
  ASSERT_TRUE(verification.is_object()) << answer.dump();
  Json changed = Json::array();
  changed.push_back((f.work / "notes.txt").string());
  changed.push_back((f.work / "sub" / "created.txt").string());
  EXPECT_EQ(verification["changedFiles"], changed);
  EXPECT_EQ(verification["runs"], Json::array());
  ASSERT_EQ(verification["notRun"].size(), 1U) << verification.dump();
  EXPECT_EQ(verification["notRun"].as_array().at(0)["command"], Json("make test"));
  EXPECT_EQ(verification["summary"], Json("not verified: `make test` was not run"));

  // A turn that changed nothing says nothing about verification.
  f.mock->set_script(*mock_model::parse_script(
      *support::parse_json(R"({"exchanges": [{"response": {"generate": {"provider": "anthropic", "text": "Hi."}}}]})"),
      f.dir.path()));
  Json quiet =
      f.call("session/prompt", R"({"sessionId":")" + f.session + R"(","prompt":[{"type":"text","text":"hello"}]})");
  ASSERT_EQ(quiet["result"]["stopReason"], Json("end_turn")) << quiet.dump();
  EXPECT_FALSE(quiet["result"]["_meta"]["agentd"].contains("verification")) << quiet.dump();
}

TEST(Checkpoints, UndoWithNothingToUndoSaysSo) {
  Fixture f;
  std::string reply;
  f.prompt("/undo", &reply);
  EXPECT_EQ(reply, "Nothing to undo: no turn of this session changed files that are not undone yet.");
  EXPECT_EQ(f.checkpoints().size(), 0U);
}

}  // namespace
}  // namespace agentd
