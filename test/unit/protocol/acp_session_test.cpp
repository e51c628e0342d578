#include <gtest/gtest.h>

#include "protocol/acp/session.h"
#include "test/unit/protocol/acp_test_util.h"

namespace agentd::protocol::acp {
namespace {

using support::Json;
using testing::json;
using testing::read;
using testing::read_error;
using testing::round_trip;
using testing::written;

TEST(AcpSession, NewSessionRequestWithEveryKindOfMcpServer) {
  auto req = read<NewSessionRequest>(R"({"cwd":"/home/ada/calc","additionalDirectories":["/home/ada/lib"],
      "mcpServers":[
        {"name":"docs","command":"/usr/bin/docs-mcp","args":["--stdio"],"env":[{"name":"TOKEN","value":"x"}]},
        {"type":"http","name":"web","url":"https://mcp.example/v1","headers":[{"name":"Authorization","value":"Bearer t"}]},
        {"type":"sse","name":"old","url":"https://mcp.example/sse","headers":[]}],
      "_meta":{"client":{"x":1}}})");
  ASSERT_TRUE(req) << req.error().message();
  EXPECT_EQ(req->cwd, "/home/ada/calc");
  EXPECT_EQ(req->additional_directories, std::vector<std::string>{"/home/ada/lib"});
  ASSERT_EQ(req->mcp_servers.size(), 3u);
  const auto& stdio = std::get<McpServerStdio>(req->mcp_servers[0]);
  EXPECT_EQ(stdio.command, "/usr/bin/docs-mcp");
  EXPECT_EQ(stdio.args, std::vector<std::string>{"--stdio"});
  ASSERT_EQ(stdio.env.size(), 1u);
  EXPECT_EQ(stdio.env[0].name, "TOKEN");
  EXPECT_EQ(stdio.env[0].value, "x");
  const auto& http = std::get<McpServerHttp>(req->mcp_servers[1]);
  EXPECT_EQ(http.url, "https://mcp.example/v1");
  ASSERT_EQ(http.headers.size(), 1u);
  EXPECT_EQ(http.headers[0].name, "Authorization");
  EXPECT_TRUE(std::holds_alternative<McpServerSse>(req->mcp_servers[2]));
  EXPECT_EQ(req->meta, json(R"({"client":{"x":1}})"));
  // Written back the same (stdio stays untagged).
  EXPECT_EQ(written(*req), json(R"({"cwd":"/home/ada/calc","additionalDirectories":["/home/ada/lib"],
      "mcpServers":[
        {"name":"docs","command":"/usr/bin/docs-mcp","args":["--stdio"],"env":[{"name":"TOKEN","value":"x"}]},
        {"type":"http","name":"web","url":"https://mcp.example/v1","headers":[{"name":"Authorization","value":"Bearer t"}]},
        {"type":"sse","name":"old","url":"https://mcp.example/sse","headers":[]}],
      "_meta":{"client":{"x":1}}})"));
}

TEST(AcpSession, NewSessionRequestNullArraysReadAsEmpty) {
  auto req =
      read<NewSessionRequest>(R"({"cwd":"/w","mcpServers":null,"additionalDirectories":null,"_meta":"not an object"})");
  ASSERT_TRUE(req) << req.error().message();
  EXPECT_TRUE(req->mcp_servers.empty());
  EXPECT_TRUE(req->meta.is_null());
  auto stdio = read<NewSessionRequest>(
      R"({"cwd":"/w","mcpServers":[{"type":"stdio","name":"a","command":"/a","args":null,"env":null}]})");
  ASSERT_TRUE(stdio) << stdio.error().message();
  EXPECT_TRUE(std::holds_alternative<McpServerStdio>(stdio->mcp_servers[0]));
}

TEST(AcpSession, NewSessionRequestErrorsNameTheField) {
  EXPECT_EQ(read_error<NewSessionRequest>(R"({"mcpServers":[]})"), "params.cwd: required field is missing");
  EXPECT_EQ(read_error<NewSessionRequest>(R"({"cwd":"/w"})"), "params.mcpServers: required field is missing");
  EXPECT_EQ(read_error<NewSessionRequest>(R"({"cwd":"/w","mcpServers":[{"name":"a","args":[],"env":[]}]})"),
            "params.mcpServers[0].command: required field is missing");
  EXPECT_EQ(read_error<NewSessionRequest>(R"({"cwd":"/w","mcpServers":[{"name":"a","command":"/a","args":[]}]})"),
            "params.mcpServers[0].env: required field is missing");
  EXPECT_EQ(read_error<NewSessionRequest>(R"({"cwd":"/w","mcpServers":[{"type":"ws","name":"a","url":"u"}]})"),
            R"(params.mcpServers[0].type: unknown MCP server type "ws")");
  EXPECT_EQ(read_error<NewSessionRequest>(R"({"cwd":"/w","mcpServers":[{"type":"http","name":"a","url":"u"}]})"),
            "params.mcpServers[0].headers: required field is missing");
  EXPECT_EQ(read_error<NewSessionRequest>(
                R"({"cwd":"/w","mcpServers":[{"name":"a","command":"/a","args":[],"env":[{"name":"K","value":1}]}]})"),
            "params.mcpServers[0].env[0].value: expected string, got integer");
  EXPECT_EQ(read_error<NewSessionRequest>(R"([])"), "params: expected object, got array");
}

SessionModeState permission_modes() {
  return SessionModeState{.current_mode_id = "default",
                          .available_modes = {{.id = "default", .name = "Default", .description = "Edits ask"},
                                              {.id = "plan", .name = "Read-only plan"}}};
}

SessionConfigOption model_option() {
  return SessionConfigOption{.id = "model",
                             .name = "Model",
                             .description = "Which model answers",
                             .category = "model",
                             .current_value = "sonnet",
                             .options = {{.value = "sonnet", .name = "Claude Sonnet"},
                                         {.value = "gpt", .name = "GPT", .description = "OpenAI"}}};
}

TEST(AcpSession, NewSessionResponseWithModesAndConfigOptions) {
  NewSessionResponse r{.session_id = "s_1", .modes = permission_modes(), .config_options = {{model_option()}}};
  EXPECT_EQ(written(r), json(R"({"sessionId":"s_1",
      "modes":{"currentModeId":"default","availableModes":[
        {"id":"default","name":"Default","description":"Edits ask"},{"id":"plan","name":"Read-only plan"}]},
      "configOptions":[{"type":"select","id":"model","name":"Model","description":"Which model answers",
        "category":"model","currentValue":"sonnet","options":[{"value":"sonnet","name":"Claude Sonnet"},
        {"value":"gpt","name":"GPT","description":"OpenAI"}]}]})"));
  EXPECT_EQ(written(NewSessionResponse{.session_id = "s_2"}), json(R"({"sessionId":"s_2"})"));
  EXPECT_EQ(round_trip<NewSessionResponse>(written(r), "result"), written(r));
}

TEST(AcpSession, LoadAndResume) {
  const Json load = json(R"({"sessionId":"s_1","cwd":"/w","mcpServers":[]})");
  EXPECT_EQ(round_trip<LoadSessionRequest>(load), load);
  EXPECT_EQ(read_error<LoadSessionRequest>(R"({"sessionId":"s_1","cwd":"/w"})"),
            "params.mcpServers: required field is missing");
  // Resume may leave mcpServers out.
  auto resume = read<ResumeSessionRequest>(R"({"sessionId":"s_1","cwd":"/w","additionalDirectories":["/x"]})");
  ASSERT_TRUE(resume) << resume.error().message();
  EXPECT_EQ(resume->session_id, "s_1");
  EXPECT_EQ(resume->additional_directories, std::vector<std::string>{"/x"});
  EXPECT_EQ(written(*resume), json(R"({"sessionId":"s_1","cwd":"/w","additionalDirectories":["/x"]})"));
  EXPECT_EQ(read_error<ResumeSessionRequest>(R"({"cwd":"/w"})"), "params.sessionId: required field is missing");

  EXPECT_EQ(written(LoadSessionResponse{}), json("{}"));
  EXPECT_EQ(written(ResumeSessionResponse{.modes = permission_modes()}),
            json(R"({"modes":{"currentModeId":"default","availableModes":[
              {"id":"default","name":"Default","description":"Edits ask"},{"id":"plan","name":"Read-only plan"}]}})"));
}

TEST(AcpSession, ListSessions) {
  auto all = read<ListSessionsRequest>("null");
  ASSERT_TRUE(all);
  EXPECT_FALSE(all->cwd);
  auto filtered = read<ListSessionsRequest>(R"({"cwd":"/w","cursor":"c2"})");
  ASSERT_TRUE(filtered);
  EXPECT_EQ(filtered->cwd, "/w");
  EXPECT_EQ(filtered->cursor, "c2");
  EXPECT_EQ(read_error<ListSessionsRequest>(R"({"cwd":1})"), "params.cwd: expected string, got integer");

  ListSessionsResponse r{.sessions = {{.session_id = "s_1",
                                       .cwd = "/w",
                                       .title = "fix div",
                                       .updated_at = "2026-08-22T10:00:00Z",
                                       .meta = json(R"({"agentd":{"turns":3}})")},
                                      {.session_id = "s_2", .cwd = "/w", .additional_directories = {"/lib"}}},
                         .next_cursor = "c3"};
  EXPECT_EQ(written(r), json(R"({"sessions":[
      {"sessionId":"s_1","cwd":"/w","title":"fix div","updatedAt":"2026-08-22T10:00:00Z","_meta":{"agentd":{"turns":3}}},
      {"sessionId":"s_2","cwd":"/w","additionalDirectories":["/lib"]}],"nextCursor":"c3"})"));
  EXPECT_EQ(written(ListSessionsResponse{}), json(R"({"sessions":[]})"));
  EXPECT_EQ(round_trip<ListSessionsResponse>(written(r), "result"), written(r));
}

TEST(AcpSession, CloseDeleteSetMode) {
  const Json id_only = json(R"({"sessionId":"s_1"})");
  EXPECT_EQ(round_trip<CloseSessionRequest>(id_only), id_only);
  EXPECT_EQ(round_trip<DeleteSessionRequest>(id_only), id_only);
  EXPECT_EQ(round_trip<CancelNotification>(id_only), id_only);
  EXPECT_EQ(read_error<CloseSessionRequest>("{}"), "params.sessionId: required field is missing");
  EXPECT_EQ(read_error<CancelNotification>(R"({"sessionId":7})"), "params.sessionId: expected string, got integer");
  EXPECT_EQ(written(CloseSessionResponse{}), json("{}"));
  EXPECT_EQ(written(DeleteSessionResponse{}), json("{}"));
  EXPECT_EQ(written(SetSessionModeResponse{.meta = json(R"({"agentd":{"x":1}})")}),
            json(R"({"_meta":{"agentd":{"x":1}}})"));

  auto mode = read<SetSessionModeRequest>(R"({"sessionId":"s_1","modeId":"plan"})");
  ASSERT_TRUE(mode);
  EXPECT_EQ(mode->mode_id, "plan");
  EXPECT_EQ(written(*mode), json(R"({"sessionId":"s_1","modeId":"plan"})"));
  EXPECT_EQ(read_error<SetSessionModeRequest>(R"({"sessionId":"s_1"})"), "params.modeId: required field is missing");
}

TEST(AcpSession, SetConfigOptionTakesAValueIdOrATaggedBoolean) {
  auto select = read<SetSessionConfigOptionRequest>(R"({"sessionId":"s_1","configId":"model","value":"gpt"})");
  ASSERT_TRUE(select) << select.error().message();
  EXPECT_EQ(std::get<std::string>(select->value), "gpt");
  EXPECT_EQ(written(*select), json(R"({"sessionId":"s_1","configId":"model","value":"gpt"})"));

  auto flag =
      read<SetSessionConfigOptionRequest>(R"({"sessionId":"s_1","configId":"fast","type":"boolean","value":true})");
  ASSERT_TRUE(flag) << flag.error().message();
  EXPECT_TRUE(std::get<bool>(flag->value));
  EXPECT_EQ(written(*flag), json(R"({"sessionId":"s_1","configId":"fast","type":"boolean","value":true})"));

  EXPECT_EQ(read_error<SetSessionConfigOptionRequest>(R"({"sessionId":"s_1","configId":"m","value":true})"),
            "params.value: expected string, got boolean");
  EXPECT_EQ(
      read_error<SetSessionConfigOptionRequest>(R"({"sessionId":"s_1","configId":"m","type":"number","value":1})"),
      R"(params.type: unknown config value type "number")");
  EXPECT_EQ(read_error<SetSessionConfigOptionRequest>(R"({"sessionId":"s_1","configId":"m"})"),
            "params.value: required field is missing");

  SetSessionConfigOptionResponse r{.config_options = {model_option()}};
  EXPECT_EQ(written(r), json(R"({"configOptions":[{"type":"select","id":"model","name":"Model",
      "description":"Which model answers","category":"model","currentValue":"sonnet",
      "options":[{"value":"sonnet","name":"Claude Sonnet"},{"value":"gpt","name":"GPT","description":"OpenAI"}]}]})"));
}

TEST(AcpSession, ConfigOptionsOfOtherKindsAreRefusedByName) {
  EXPECT_EQ(read_error<SessionConfigOption>(R"({"type":"boolean","id":"fast","name":"Fast","currentValue":true})"),
            R"(params.type: unknown config option type "boolean")");
}

TEST(AcpSession, PromptRequestAndItsErrors) {
  auto req = read<PromptRequest>(R"({"sessionId":"s_1","prompt":[
      {"type":"text","text":"fix it"},
      {"type":"resource_link","uri":"file:///w/a.py","name":"a.py"},
      {"type":"resource","resource":{"uri":"file:///w/b.py","text":"b = 2\n"}}]})");
  ASSERT_TRUE(req) << req.error().message();
  ASSERT_EQ(req->prompt.size(), 3u);
  EXPECT_EQ(std::get<TextContent>(req->prompt[0]).text, "fix it");
  EXPECT_EQ(std::get<ResourceLink>(req->prompt[1]).name, "a.py");
  EXPECT_TRUE(std::holds_alternative<EmbeddedResource>(req->prompt[2]));

  EXPECT_EQ(read_error<PromptRequest>(R"({"sessionId":"s_1","prompt":[{"type":"video"}]})"),
            R"(params.prompt[0].type: unknown content block type "video")");
  EXPECT_EQ(read_error<PromptRequest>(R"({"sessionId":"s_1","prompt":[{"type":"text","text":"a"},{"text":"b"}]})"),
            "params.prompt[1].type: required field is missing");
  EXPECT_EQ(read_error<PromptRequest>(R"({"sessionId":"s_1","prompt":{"type":"text","text":"a"}})"),
            "params.prompt: expected array, got object");
  EXPECT_EQ(read_error<PromptRequest>(R"({"prompt":[]})"), "params.sessionId: required field is missing");
}

TEST(AcpSession, StopReasons) {
  for (auto reason : {StopReason::end_turn, StopReason::max_tokens, StopReason::max_turn_requests, StopReason::refusal,
                      StopReason::cancelled}) {
    StopReason parsed{};
    ASSERT_TRUE(parse(name(reason), parsed)) << name(reason);
    EXPECT_EQ(parsed, reason);
  }
  EXPECT_EQ(written(PromptResponse{.stop_reason = StopReason::max_turn_requests}),
            json(R"({"stopReason":"max_turn_requests"})"));
  EXPECT_EQ(
      written(PromptResponse{.stop_reason = StopReason::cancelled, .meta = json(R"({"agentd":{"turnId":"t1"}})")}),
      json(R"({"stopReason":"cancelled","_meta":{"agentd":{"turnId":"t1"}}})"));
  StopReason ignored{};
  EXPECT_FALSE(parse("stopped", ignored));
  EXPECT_EQ(read_error<PromptResponse>(R"({"stopReason":"stopped"})", "result"),
            R"(result.stopReason: unknown stop reason "stopped" (expected one of end_turn, max_tokens, )"
            R"(max_turn_requests, refusal, cancelled))");
}

}  // namespace
}  // namespace agentd::protocol::acp
