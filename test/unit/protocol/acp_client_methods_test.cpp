#include <gtest/gtest.h>

#include "protocol/acp/client_methods.h"
#include "test/unit/protocol/acp_test_util.h"

namespace agentd::protocol::acp {
namespace {

using support::Json;
using testing::json;
using testing::read;
using testing::read_error;
using testing::round_trip;
using testing::written;

TEST(AcpClientMethods, RequestPermissionRequest) {
  RequestPermissionRequest req{
      .session_id = "s_1",
      .tool_call = {.tool_call_id = "tc_2", .title = "Run pytest", .kind = ToolKind::execute},
      .options = {{.option_id = "allow_once", .name = "Allow", .kind = PermissionOptionKind::allow_once},
                  {.option_id = "allow_always", .name = "Always", .kind = PermissionOptionKind::allow_always},
                  {.option_id = "reject_once", .name = "Reject", .kind = PermissionOptionKind::reject_once},
                  {.option_id = "reject_always", .name = "Never", .kind = PermissionOptionKind::reject_always}}};
  req.meta["agentd"]["inputDigest"] = "sha256:9f2c";
  EXPECT_EQ(written(req), json(R"({"sessionId":"s_1",
      "toolCall":{"toolCallId":"tc_2","title":"Run pytest","kind":"execute"},
      "options":[{"optionId":"allow_once","name":"Allow","kind":"allow_once"},
                 {"optionId":"allow_always","name":"Always","kind":"allow_always"},
                 {"optionId":"reject_once","name":"Reject","kind":"reject_once"},
                 {"optionId":"reject_always","name":"Never","kind":"reject_always"}],
      "_meta":{"agentd":{"inputDigest":"sha256:9f2c"}}})"));
  EXPECT_EQ(round_trip<RequestPermissionRequest>(written(req)), written(req));
}

TEST(AcpClientMethods, RequestPermissionOutcomes) {
  auto selected =
      read<RequestPermissionResponse>(R"({"outcome":{"outcome":"selected","optionId":"allow_once"}})", "result");
  ASSERT_TRUE(selected) << selected.error().message();
  EXPECT_EQ(std::get<SelectedPermissionOutcome>(selected->outcome).option_id, "allow_once");

  auto cancelled = read<RequestPermissionResponse>(R"({"outcome":{"outcome":"cancelled"}})", "result");
  ASSERT_TRUE(cancelled) << cancelled.error().message();
  EXPECT_TRUE(std::holds_alternative<CancelledPermissionOutcome>(cancelled->outcome));

  EXPECT_EQ(written(RequestPermissionResponse{.outcome = CancelledPermissionOutcome{}}),
            json(R"({"outcome":{"outcome":"cancelled"}})"));
  EXPECT_EQ(written(RequestPermissionResponse{.outcome = SelectedPermissionOutcome{.option_id = "x"}}),
            json(R"({"outcome":{"outcome":"selected","optionId":"x"}})"));
}

TEST(AcpClientMethods, BadPermissionResponsesNameTheField) {
  EXPECT_EQ(read_error<RequestPermissionResponse>(R"({"outcome":{"outcome":"maybe"}})", "result"),
            R"(result.outcome.outcome: unknown permission outcome "maybe")");
  EXPECT_EQ(read_error<RequestPermissionResponse>(R"({"outcome":{"outcome":"selected"}})", "result"),
            "result.outcome.optionId: required field is missing");
  EXPECT_EQ(read_error<RequestPermissionResponse>(R"({})", "result"), "result.outcome: required field is missing");
  EXPECT_EQ(read_error<RequestPermissionRequest>(R"({"sessionId":"s","toolCall":{"toolCallId":"t"},
      "options":[{"optionId":"o","name":"n","kind":"allow_forever"}]})"),
            R"(params.options[0].kind: unknown permission option kind "allow_forever" (expected one of allow_once, )"
            R"(allow_always, reject_once, reject_always))");
}

TEST(AcpClientMethods, ReadTextFile) {
  EXPECT_EQ(written(ReadTextFileRequest{.session_id = "s_1", .path = "/w/a.py"}),
            json(R"({"sessionId":"s_1","path":"/w/a.py"})"));
  EXPECT_EQ(written(ReadTextFileRequest{.session_id = "s_1", .path = "/w/a.py", .line = 10, .limit = 50}),
            json(R"({"sessionId":"s_1","path":"/w/a.py","line":10,"limit":50})"));
  auto res = read<ReadTextFileResponse>(R"({"content":"a\nb\n"})", "result");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->content, "a\nb\n");
  EXPECT_EQ(read_error<ReadTextFileResponse>(R"({"text":"a"})", "result"), "result.content: required field is missing");
  EXPECT_EQ(read_error<ReadTextFileRequest>(R"({"sessionId":"s","path":"/a","line":-1})"),
            "params.line: integer -1 is out of range for non-negative 32-bit integer");
}

TEST(AcpClientMethods, WriteTextFile) {
  const Json req = json(R"({"sessionId":"s_1","path":"/w/a.py","content":"x = 1\n"})");
  EXPECT_EQ(round_trip<WriteTextFileRequest>(req), req);
  EXPECT_TRUE(read<WriteTextFileResponse>("{}", "result"));
  EXPECT_TRUE(read<WriteTextFileResponse>("null", "result"));
  EXPECT_EQ(read_error<WriteTextFileResponse>("[]", "result"), "result: expected object, got array");
  EXPECT_EQ(written(WriteTextFileResponse{}), json("{}"));
}

}  // namespace
}  // namespace agentd::protocol::acp
