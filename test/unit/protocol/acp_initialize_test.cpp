#include <gtest/gtest.h>

#include "protocol/acp/initialize.h"

namespace agentd::protocol::acp {
namespace {

using support::Json;

TEST(AcpInitialize, ReadsTheClientsCapabilities) {
  auto req = support::read_json<InitializeRequest>(*support::parse_json(
      R"({"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false},"terminal":true},
          "clientInfo":{"name":"zed","title":"Zed","version":"0.200.0"}})"));
  ASSERT_TRUE(req) << req.error().message();
  EXPECT_EQ(req->protocol_version, 1u);
  EXPECT_TRUE(req->client_capabilities.fs.read_text_file);
  EXPECT_FALSE(req->client_capabilities.fs.write_text_file);
  EXPECT_TRUE(req->client_capabilities.terminal);
  ASSERT_TRUE(req->client_info);
  EXPECT_EQ(req->client_info->name, "zed");
}

TEST(AcpInitialize, MalformedCapabilitiesDefaultInsteadOfFailing) {
  auto req = support::read_json<InitializeRequest>(*support::parse_json(
      R"({"protocolVersion":1,"clientCapabilities":{"fs":"yes","terminal":"no"},"clientInfo":7})"));
  ASSERT_TRUE(req);
  EXPECT_FALSE(req->client_capabilities.fs.read_text_file);
  EXPECT_FALSE(req->client_capabilities.terminal);
  EXPECT_FALSE(req->client_info);
}

TEST(AcpInitialize, ProtocolVersionIsRequiredAndNumeric) {
  auto missing = support::read_json<InitializeRequest>(*support::parse_json(R"({})"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), "params.protocolVersion: required field is missing");
  auto text = support::read_json<InitializeRequest>(*support::parse_json(R"({"protocolVersion":"1"})"));
  ASSERT_FALSE(text);
  auto huge = support::read_json<InitializeRequest>(*support::parse_json(R"({"protocolVersion":70000})"));
  ASSERT_FALSE(huge);
}

TEST(AcpInitialize, NegotiatesDownToWhatWeSpeak) {
  EXPECT_EQ(negotiate_version(1), 1u);
  EXPECT_EQ(negotiate_version(2), 1u);
  EXPECT_EQ(negotiate_version(0), 1u);
}

TEST(AcpInitialize, ResponseHasTheSchemaShape) {
  InitializeResponse r;
  r.agent_info = Implementation{"agentd", "agentd", "1.2.3"};
  std::string out;
  support::JsonWriter w(out);
  w.value(r);
  EXPECT_EQ(*support::parse_json(out), *support::parse_json(R"({
    "protocolVersion":1,
    "agentCapabilities":{"loadSession":false,
      "promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},
      "mcpCapabilities":{"http":false,"sse":false}},
    "agentInfo":{"name":"agentd","title":"agentd","version":"1.2.3"},
    "authMethods":[]})"));
}

TEST(AcpInitialize, SessionCapabilitiesAreEmptyObjectsWhenOffered) {
  InitializeResponse r;
  r.agent_info = Implementation{"agentd", std::nullopt, "1.2.3"};
  r.agent_capabilities.load_session = true;
  r.agent_capabilities.prompt.embedded_context = true;
  r.agent_capabilities.session.list = true;
  r.agent_capabilities.session.resume = true;
  r.agent_capabilities.session.close = true;
  std::string out;
  support::JsonWriter w(out);
  w.value(r);
  EXPECT_EQ(*support::parse_json(out), *support::parse_json(R"({
    "protocolVersion":1,
    "agentCapabilities":{"loadSession":true,
      "promptCapabilities":{"image":false,"audio":false,"embeddedContext":true},
      "mcpCapabilities":{"http":false,"sse":false},
      "sessionCapabilities":{"list":{},"resume":{},"close":{}}},
    "agentInfo":{"name":"agentd","version":"1.2.3"},
    "authMethods":[]})"));
}

}  // namespace
}  // namespace agentd::protocol::acp
