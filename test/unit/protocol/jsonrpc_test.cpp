#include "protocol/jsonrpc.h"

#include <gtest/gtest.h>

namespace agentd::protocol {
namespace {

const Malformed& malformed(const Incoming& in) {
  static const Malformed none{};
  const auto* m = std::get_if<Malformed>(&in);
  EXPECT_NE(m, nullptr);
  return m != nullptr ? *m : none;
}

TEST(JsonRpc, DecodesRequestsNotificationsAndResponses) {
  auto req = decode_message(R"({"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}})");
  ASSERT_TRUE(std::holds_alternative<Request>(req));
  EXPECT_EQ(std::get<Request>(req).id, RequestId(std::int64_t{7}));
  EXPECT_EQ(std::get<Request>(req).method, "initialize");

  auto str_id = decode_message(R"({"jsonrpc":"2.0","id":"abc","method":"x"})");
  ASSERT_TRUE(std::holds_alternative<Request>(str_id));
  EXPECT_EQ(std::get<Request>(str_id).id, RequestId(std::string("abc")));
  EXPECT_TRUE(std::get<Request>(str_id).params.is_null());

  auto note = decode_message(R"({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}})");
  ASSERT_TRUE(std::holds_alternative<Notification>(note));

  auto ok = decode_message(R"({"jsonrpc":"2.0","id":0,"result":{"outcome":"x"}})");
  ASSERT_TRUE(std::holds_alternative<Response>(ok));
  EXPECT_TRUE(std::get<Response>(ok).result.has_value());

  auto err = decode_message(R"({"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"nope","data":[1]}})");
  ASSERT_TRUE(std::holds_alternative<Response>(err));
  ASSERT_TRUE(std::get<Response>(err).error.has_value());
  EXPECT_EQ(std::get<Response>(err).error->code, -32601);
  EXPECT_EQ(std::get<Response>(err).error->data, support::Json::Array{1});
}

struct BadCase {
  std::string input;
  int code;
  std::optional<RequestId> id;
  std::string message_part;
};

TEST(JsonRpc, EveryMalformedMessageGetsTheRightError) {
  const BadCase cases[] = {
      {"not json", error_code::kParseError, std::nullopt, "Parse error"},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"", error_code::kParseError, std::nullopt, "Parse error"},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", error_code::kParseError, std::nullopt, "invalid UTF-8"},
      {"[]", error_code::kInvalidRequest, std::nullopt, "batch"},
      {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}]", error_code::kInvalidRequest, std::nullopt, "batch"},
      {"42", error_code::kInvalidRequest, std::nullopt, "JSON object"},
      {"\"str\"", error_code::kInvalidRequest, std::nullopt, "JSON object"},
      {R"({"id":1,"method":"x"})", error_code::kInvalidRequest, RequestId(std::int64_t{1}), "jsonrpc"},
      {R"({"jsonrpc":"1.0","id":1,"method":"x"})", error_code::kInvalidRequest, RequestId(std::int64_t{1}), "jsonrpc"},
      {R"({"jsonrpc":2.0,"id":1,"method":"x"})", error_code::kInvalidRequest, RequestId(std::int64_t{1}), "jsonrpc"},
      {R"({"jsonrpc":"2.0","id":1,"method":5})", error_code::kInvalidRequest, RequestId(std::int64_t{1}), "method"},
      {R"({"jsonrpc":"2.0","id":1})", error_code::kInvalidRequest, RequestId(std::int64_t{1}), "method"},
      {R"({"jsonrpc":"2.0","id":null,"method":"x"})", error_code::kInvalidRequest, std::nullopt, "not null"},
      {R"({"jsonrpc":"2.0","id":1.5,"method":"x"})", error_code::kInvalidRequest, std::nullopt, "integer or a string"},
      {R"({"jsonrpc":"2.0","id":{},"method":"x"})", error_code::kInvalidRequest, std::nullopt, "integer or a string"},
      {R"({"jsonrpc":"2.0","id":true,"method":"x"})", error_code::kInvalidRequest, std::nullopt, "integer or a string"},
      {R"({"jsonrpc":"2.0","id":2,"method":"x","params":"s"})", error_code::kInvalidRequest, RequestId(std::int64_t{2}),
       "params"},
      {R"({"jsonrpc":"2.0","method":"x","params":3})", error_code::kInvalidRequest, std::nullopt, "params"},
      {R"({"jsonrpc":"2.0"})", error_code::kInvalidRequest, std::nullopt, "method"},
  };
  for (const auto& c : cases) {
    const auto in = decode_message(c.input);
    const Malformed& m = malformed(in);
    EXPECT_TRUE(m.reply) << c.input;
    EXPECT_EQ(m.error.code, c.code) << c.input;
    EXPECT_EQ(m.id, c.id) << c.input;
    EXPECT_NE(m.error.message.find(c.message_part), std::string::npos) << c.input << " -> " << m.error.message;
  }
}

TEST(JsonRpc, MalformedResponsesAreNeverAnswered) {
  for (const char* input :
       {R"({"jsonrpc":"2.0","result":1})", R"({"jsonrpc":"2.0","id":null,"result":1})",
        R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}})", R"({"id":1,"result":1})"}) {
    const Incoming in = decode_message(input);
    const Malformed& m = malformed(in);
    EXPECT_FALSE(m.reply) << input;
  }
}

TEST(JsonRpc, MalformedErrorObjectInAResponseStillResolvesTheCall) {
  auto in = decode_message(R"({"jsonrpc":"2.0","id":3,"error":"bad"})");
  ASSERT_TRUE(std::holds_alternative<Response>(in));
  EXPECT_EQ(std::get<Response>(in).error->code, error_code::kInternalError);
}

TEST(JsonRpc, EncodesEnvelopes) {
  EXPECT_EQ(encode_result(RequestId(std::int64_t{1}), "{}"), R"({"jsonrpc":"2.0","id":1,"result":{}})");
  EXPECT_EQ(encode_error(std::nullopt, RpcError{-32700, "Parse error", std::nullopt}),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
  EXPECT_EQ(encode_request(RequestId(std::string("a")), "fs/read_text_file", R"({"path":"/x"})"),
            R"({"jsonrpc":"2.0","id":"a","method":"fs/read_text_file","params":{"path":"/x"}})");
  EXPECT_EQ(encode_notification("session/update", "{}"), R"({"jsonrpc":"2.0","method":"session/update","params":{}})");
}

TEST(JsonRpc, EngineErrorsMapToOneCodeEach) {
  using support::Errc;
  EXPECT_EQ(rpc_error_from(support::Error(Errc::invalid_argument, "x")).code, error_code::kInvalidParams);
  EXPECT_EQ(rpc_error_from(support::Error(Errc::cancelled, "x")).code, error_code::kRequestCancelled);
  EXPECT_EQ(rpc_error_from(support::Error(Errc::unsupported, "x")).code, error_code::kMethodNotFound);
  EXPECT_EQ(rpc_error_from(support::Error(Errc::not_found, "x")).code, error_code::kResourceNotFound);
  EXPECT_EQ(rpc_error_from(support::Error(Errc::internal, "x")).code, error_code::kInternalError);
  const auto storage = rpc_error_from(support::Error(Errc::storage, "disk"));
  EXPECT_EQ(storage.code, error_code::kServerError);
  EXPECT_EQ(storage.data->find("kind")->as_string(), "storage");
  const auto back = error_from_rpc(RpcError{error_code::kRequestCancelled, "stop", std::nullopt}, "fs/read_text_file");
  EXPECT_EQ(back.code(), Errc::cancelled);
  EXPECT_EQ(back.native_code(), error_code::kRequestCancelled);
}

}  // namespace
}  // namespace agentd::protocol
