// Our example conversation (test/fixtures/acp/acp_examples.jsonl: two turns, a permission, fs reads and
// writes, a cancel, mode and config changes, list, resume, close): every message's params or result reads
// through our type for its method and writes back as the same JSON.
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <gtest/gtest.h>

#include "protocol/acp/client_methods.h"
#include "protocol/acp/ext.h"
#include "protocol/acp/initialize.h"
#include "protocol/acp/methods.h"
#include "protocol/acp/session.h"
#include "protocol/acp/session_update.h"
#include "test/unit/protocol/acp_test_util.h"

namespace agentd::protocol::acp {
namespace {

using support::Json;
using testing::json;
using testing::round_trip;
using testing::written;

struct Line {
  std::string dir;  // "c2a" or "a2c"
  std::string note;
  Json msg;
};

std::vector<Line> examples() {
  const auto path = std::filesystem::path(AGENTD_SOURCE_DIR) / "test/fixtures/acp/acp_examples.jsonl";
  std::ifstream file(path);
  EXPECT_TRUE(file) << "cannot open " << path;
  std::vector<Line> lines;
  std::string text;
  while (std::getline(file, text)) {
    if (text.empty()) continue;
    const Json line = json(text);
    lines.push_back({line["dir"].as_string(), line["note"].as_string(), line["msg"]});
  }
  return lines;
}

// Reads `value` as T and writes it back.
template <class T>
Json through(const Json& value, std::string_view root) {
  return round_trip<T>(value, root);
}

using Check = std::function<Json(const Json&, std::string_view)>;

// Requests and notifications by method, and the results that answer them.
const std::map<std::string_view, Check>& params_types() {
  static const std::map<std::string_view, Check> kTypes = {
      {method::kAuthenticate, through<AuthenticateRequest>},
      {method::kLogout, through<LogoutRequest>},
      {method::kSessionNew, through<NewSessionRequest>},
      {method::kSessionLoad, through<LoadSessionRequest>},
      {method::kSessionList, through<ListSessionsRequest>},
      {method::kSessionResume, through<ResumeSessionRequest>},
      {method::kSessionClose, through<CloseSessionRequest>},
      {method::kSessionDelete, through<DeleteSessionRequest>},
      {method::kSessionSetMode, through<SetSessionModeRequest>},
      {method::kSessionSetConfigOption, through<SetSessionConfigOptionRequest>},
      {method::kSessionPrompt, through<PromptRequest>},
      {method::kSessionCancel, through<CancelNotification>},
      {method::kSessionUpdate, through<SessionNotification>},
      {method::kSessionRequestPermission, through<RequestPermissionRequest>},
      {method::kFsReadTextFile, through<ReadTextFileRequest>},
      {method::kFsWriteTextFile, through<WriteTextFileRequest>},
  };
  return kTypes;
}

const std::map<std::string_view, Check>& result_types() {
  static const std::map<std::string_view, Check> kTypes = {
      {method::kAuthenticate, through<Empty>},
      {method::kLogout, through<Empty>},
      {method::kSessionNew, through<NewSessionResponse>},
      {method::kSessionLoad, through<LoadSessionResponse>},
      {method::kSessionList, through<ListSessionsResponse>},
      {method::kSessionResume, through<ResumeSessionResponse>},
      {method::kSessionClose, through<CloseSessionResponse>},
      {method::kSessionDelete, through<DeleteSessionResponse>},
      {method::kSessionSetMode, through<SetSessionModeResponse>},
      {method::kSessionSetConfigOption, through<SetSessionConfigOptionResponse>},
      {method::kSessionPrompt, through<PromptResponse>},
      {method::kSessionRequestPermission, through<RequestPermissionResponse>},
      {method::kFsReadTextFile, through<ReadTextFileResponse>},
      {method::kFsWriteTextFile, through<WriteTextFileResponse>},
  };
  return kTypes;
}

constexpr std::size_t kLines = 42;

TEST(AcpExamples, EveryMessageRoundTrips) {
  const auto lines = examples();
  ASSERT_EQ(lines.size(), kLines);
  // Each side numbers its own requests: a response is matched to the request the other side sent.
  std::map<std::pair<std::string, std::int64_t>, std::string> pending;
  int checked = 0;
  for (const Line& line : lines) {
    SCOPED_TRACE(line.dir + ": " + line.note);
    const Json& msg = line.msg;
    if (const Json* m = msg.find("method")) {
      const std::string& name = m->as_string();
      if (const Json* id = msg.find("id")) pending[{line.dir, id->as_int64()}] = name;
      if (name == method::kInitialize) {
        auto req = support::read_json<InitializeRequest>(msg["params"]);
        ASSERT_TRUE(req) << req.error().message();
        EXPECT_TRUE(req->client_capabilities.fs.read_text_file);
        ++checked;
        continue;
      }
      const auto it = params_types().find(name);
      ASSERT_NE(it, params_types().end()) << "no type for " << name;
      EXPECT_EQ(it->second(msg["params"], "params"), msg["params"]) << name;
      ++checked;
      continue;
    }
    const std::string requester = line.dir == "c2a" ? "a2c" : "c2a";
    const auto request = pending.find({requester, msg["id"].as_int64()});
    ASSERT_NE(request, pending.end()) << "a response to nothing: " << msg.dump();
    const std::string name = request->second;
    pending.erase(request);
    if (name == method::kInitialize) {
      // Truthful capabilities: what the example advertises, from our struct.
      InitializeResponse r;
      r.agent_capabilities.load_session = true;
      r.agent_capabilities.prompt.embedded_context = true;
      r.agent_capabilities.prompt.image = true;
      r.agent_capabilities.session = {
          .list = true, .resume = true, .close = true, .delete_session = true, .additional_directories = true};
      r.agent_capabilities.mcp.http = true;
      r.agent_capabilities.logout = true;
      r.agent_info = Implementation{.name = "agentd", .title = "agentd", .version = "0.1.0"};
      r.auth_methods.push_back(AuthMethod{
          "ANTHROPIC_API_KEY", "Anthropic API key",
          "Uses ANTHROPIC_API_KEY from agentd's environment, or the key given as _meta.agentd.apiKey of authenticate "
          "(kept in memory for this process only, never stored)",
          ext::to_meta(ext::AuthMethodMeta{"ANTHROPIC_API_KEY"})});
      EXPECT_EQ(written(r), msg["result"]);
      ++checked;
      continue;
    }
    const auto it = result_types().find(name);
    ASSERT_NE(it, result_types().end()) << "no result type for " << name;
    EXPECT_EQ(it->second(msg["result"], "result"), msg["result"]) << name;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(kLines));
  EXPECT_TRUE(pending.empty());
}

// The session/update params with this seq.
const Json& update_with_seq(const std::vector<Line>& lines, std::int64_t seq) {
  for (const Line& line : lines) {
    const Json& msg = line.msg;
    if (msg["method"] == Json("session/update") && msg["params"]["_meta"]["agentd"]["seq"] == Json(seq)) {
      return msg["params"];
    }
  }
  ADD_FAILURE() << "no session/update with seq " << seq;
  static const Json kNone;
  return kNone;
}

// Updates the daemon builds, field by field, are the examples' lines exactly.
TEST(AcpExamples, TheDaemonsUpdatesAsStructs) {
  const auto lines = examples();
  ASSERT_EQ(lines.size(), kLines);

  ToolCall edit_call{.tool_call_id = "call_e1",
                     .title = "Edit config/kite.toml",
                     .kind = ToolKind::edit,
                     .status = ToolCallStatus::pending};
  SessionNotification pending_call{.session_id = "s_7f3k2q", .update = edit_call};
  pending_call.meta["agentd"]["seq"] = 3;
  EXPECT_EQ(written(pending_call), update_with_seq(lines, 3));

  ToolCallUpdate running{
      .tool_call_id = "call_e1",
      .status = ToolCallStatus::in_progress,
      .locations = std::vector<ToolCallLocation>{{.path = "/srv/src/kite/config/kite.toml"}},
      .raw_input = json(R"({"path":"config/kite.toml","old_string":"limit = 3","new_string":"limit = 5"})")};
  SessionNotification in_progress{.session_id = "s_7f3k2q", .update = running};
  in_progress.meta["agentd"]["seq"] = 4;
  EXPECT_EQ(written(in_progress), update_with_seq(lines, 4));

  UsageUpdate usage{.used = 3400, .size = 200000, .cost = Cost{.amount = 0.0087, .currency = "USD"}};
  usage.meta["agentd"] =
      json(R"({"inputTokens":3100,"outputTokens":120,"cacheReadTokens":2048,"cacheWriteTokens":512})");
  SessionNotification usage_note{.session_id = "s_7f3k2q", .update = usage};
  usage_note.meta["agentd"]["seq"] = 7;
  EXPECT_EQ(written(usage_note), update_with_seq(lines, 7));

  EXPECT_EQ(written(PromptResponse{.stop_reason = StopReason::end_turn}), lines[16].msg["result"]);
  EXPECT_EQ(written(PromptResponse{.stop_reason = StopReason::cancelled}), lines[31].msg["result"]);
}

}  // namespace
}  // namespace agentd::protocol::acp
