#include "tools/mcp/mcp_content.h"

#include <gtest/gtest.h>

#include "core/support/json.h"

namespace agentd::tools::mcp {
namespace {

using support::Json;

Json parse(std::string_view text) {
  auto parsed = support::parse_json(text);
  EXPECT_TRUE(parsed) << text;
  return parsed ? *parsed : Json();
}

TEST(McpContent, ToolNamesAreSanitizedAndCut) {
  EXPECT_EQ(mcp_tool_name("fs", "read_file"), "mcp__fs__read_file");
  EXPECT_EQ(mcp_tool_name("my server", "get.sum/v2"), "mcp__my_server__get_sum_v2");
  EXPECT_EQ(mcp_tool_name("srv", "héllo"), "mcp__srv__h__llo");  // each byte of a UTF-8 sequence
  const std::string long_name = mcp_tool_name("server", std::string(100, 'x'));
  EXPECT_EQ(long_name.size(), 64U);
  EXPECT_TRUE(long_name.starts_with("mcp__server__xxx"));
}

TEST(McpContent, ProtocolVersions) {
  EXPECT_EQ(kProtocolVersion, "2025-11-25");
  for (std::string_view v : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
    EXPECT_TRUE(is_supported_protocol_version(v)) << v;
  }
  EXPECT_FALSE(is_supported_protocol_version("2026-07-28"));
  EXPECT_FALSE(is_supported_protocol_version("1999-01-01"));
  EXPECT_FALSE(is_supported_protocol_version(""));
}

TEST(McpContent, ServerToolBecomesSpec) {
  auto read_only = read_server_tool("fs", parse(R"({"name":"read.file","description":"Reads",
      "inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},
      "annotations":{"readOnlyHint":true}})"));
  ASSERT_TRUE(read_only);
  EXPECT_EQ(read_only->name, "read.file");
  EXPECT_EQ(read_only->spec.name, "mcp__fs__read_file");
  EXPECT_EQ(read_only->spec.description, "Reads");
  EXPECT_EQ(read_only->spec.kind, ToolKind::read);
  EXPECT_EQ(read_only->spec.base_risk, Risk::read);
  EXPECT_EQ(read_only->spec.input_schema["properties"]["path"]["type"], Json("string"));

  auto writer = read_server_tool("fs", parse(R"({"name":"write","title":"Write a file"})"));
  ASSERT_TRUE(writer);
  EXPECT_EQ(writer->spec.kind, ToolKind::other);
  EXPECT_EQ(writer->spec.base_risk, Risk::execute);
  EXPECT_EQ(writer->spec.description, "Write a file");
  EXPECT_EQ(writer->spec.input_schema, parse(R"({"type":"object"})"));

  EXPECT_FALSE(read_server_tool("fs", parse(R"({"description":"no name"})")));
  EXPECT_FALSE(read_server_tool("fs", parse(R"({"name":""})")));
}

TEST(McpContent, CallResultContentBlocks) {
  const ToolResult result = tool_result_from_call("srv", "rich", parse(R"({"content":[
      {"type":"text","text":"hello"},
      {"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="},
      {"type":"audio","mimeType":"audio/wav","data":"AAAA"},
      {"type":"resource","resource":{"uri":"file:///a.txt","text":"inside"}},
      {"type":"resource","resource":{"uri":"file:///b.bin","mimeType":"application/zip","blob":"AAAAAA=="}},
      {"type":"resource_link","uri":"file:///c.txt","name":"c","description":"a link"}],
      "structuredContent":{"answer":42}})"));
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.content,
            "hello\n[image: image/png, 8 bytes]\n[audio: audio/wav, 3 bytes]\nfile:///a.txt\ninside\n"
            "file:///b.bin\n[application/zip, 4 bytes]\nfile:///c.txt (c)\na link");
  EXPECT_EQ(result.summary, "hello");
  EXPECT_EQ(result.metadata["structuredContent"], parse(R"({"answer":42})"));
  EXPECT_EQ(result.metadata["server"], Json("srv"));
}

TEST(McpContent, ErrorResultsAndStructuredOnly) {
  const ToolResult failed = tool_result_from_call(
      "srv", "t", parse(R"({"content":[{"type":"text","text":"bad input\nmore"}],"isError":true})"));
  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.content, "bad input\nmore");
  EXPECT_EQ(failed.summary, "bad input");

  const ToolResult empty_error = tool_result_from_call("srv", "t", parse(R"({"content":[],"isError":true})"));
  EXPECT_FALSE(empty_error.ok);
  EXPECT_NE(empty_error.content.find("reported an error"), std::string::npos);

  const ToolResult structured = tool_result_from_call("srv", "t", parse(R"({"structuredContent":{"a":[1,2]}})"));
  EXPECT_TRUE(structured.ok);
  EXPECT_EQ(structured.content, R"({"a":[1,2]})");
}

// A server that answers with megabytes: the model, the history and the events get the head and the tail
// and are told how much was left out; oversized structured content stays out of the metadata.
TEST(McpContent, LargeResultsAreCutLikeShellOutput) {
  const std::string big = "BEGIN" + std::string(std::size_t{3} << 20, 'x') + "END";
  Json content = Json::array();
  Json block = Json::object();
  block["type"] = "text";
  block["text"] = big;
  content.push_back(block);
  Json structured = Json::object();
  structured["blob"] = big;
  Json call = Json::object();
  call["content"] = content;
  call["structuredContent"] = structured;
  const ToolResult result = tool_result_from_call("srv", "dump", call);
  EXPECT_TRUE(result.ok);
  EXPECT_LT(result.content.size(), kResultHeadBytes + kResultTailBytes + 100);
  EXPECT_EQ(result.content.rfind("BEGIN", 0), 0U);
  EXPECT_EQ(result.content.substr(result.content.size() - 3), "END");
  EXPECT_NE(result.content.find("omitted"), std::string::npos);
  EXPECT_EQ(result.metadata["omittedBytes"].as_int64(),
            static_cast<std::int64_t>(big.size() - kResultHeadBytes - kResultTailBytes));
  EXPECT_EQ(result.metadata.find("structuredContent"), nullptr);
  EXPECT_GT(result.metadata["structuredContentBytes"].as_int64(), static_cast<std::int64_t>(big.size()));
  // Small results are untouched.
  const ToolResult small = tool_result_from_call("srv", "t", parse(R"({"content":[{"type":"text","text":"ok"}]})"));
  EXPECT_EQ(small.content, "ok");
  EXPECT_EQ(small.metadata.find("omittedBytes"), nullptr);
}

TEST(McpContent, ProgressLines) {
  EXPECT_EQ(format_progress(parse(R"({"progressToken":"t","progress":3,"total":10,"message":"copying"})")),
            "progress 3/10: copying");
  EXPECT_EQ(format_progress(parse(R"({"progressToken":"t","progress":2})")), "progress 2");
  EXPECT_EQ(format_progress(parse(R"({"progressToken":"t","progress":2.0,"total":4.0})")), "progress 2/4");
  EXPECT_EQ(format_progress(parse(R"({"progressToken":"t","progress":0.5,"message":"half"})")), "progress 0.5: half");
}

}  // namespace
}  // namespace agentd::tools::mcp
