#include <gtest/gtest.h>

#include "protocol/acp/content.h"
#include "test/unit/protocol/acp_test_util.h"

namespace agentd::protocol::acp {
namespace {

using support::Json;
using testing::json;
using testing::read;
using testing::read_error;
using testing::round_trip;
using testing::written;

TEST(AcpContent, TextBlock) {
  EXPECT_EQ(written(ContentBlock{TextContent{.text = "hi"}}), json(R"({"type":"text","text":"hi"})"));
  auto block = read<ContentBlock>(R"({"type":"text","text":"hi","annotations":{"priority":1}})");
  ASSERT_TRUE(block) << block.error().message();
  const auto* text = std::get_if<TextContent>(&*block);
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(text->text, "hi");
  EXPECT_EQ(text->annotations, json(R"({"priority":1})"));
  EXPECT_EQ(content_type_name(*block), "text");
}

TEST(AcpContent, ResourceLinkWithEveryField) {
  const Json wire = json(R"({"type":"resource_link","uri":"file:///home/ada/calc/ops.py","name":"ops.py",
      "title":"ops","description":"the ops","mimeType":"text/x-python","size":42,
      "annotations":{"audience":["user"]},"_meta":{"k":1}})");
  EXPECT_EQ(round_trip<ContentBlock>(wire), wire);
  auto block = read<ContentBlock>(wire.dump());
  ASSERT_TRUE(block);
  const auto& link = std::get<ResourceLink>(*block);
  EXPECT_EQ(link.uri, "file:///home/ada/calc/ops.py");
  EXPECT_EQ(link.mime_type, "text/x-python");
  EXPECT_EQ(link.size, 42);
}

TEST(AcpContent, ResourceLinkDropsMalformedOptionalFields) {
  // The schema marks these "default on error": a bad size or mimeType must not sink the prompt.
  auto block = read<ContentBlock>(
      R"({"type":"resource_link","uri":"file:///a","name":"a","size":"big","mimeType":7,"annotations":"x","_meta":3})");
  ASSERT_TRUE(block) << block.error().message();
  EXPECT_EQ(written(*block), json(R"({"type":"resource_link","uri":"file:///a","name":"a"})"));
}

TEST(AcpContent, EmbeddedTextAndBlobResources) {
  const Json text = json(R"({"type":"resource","resource":{"uri":"file:///a.py","text":"x = 1\n",
      "mimeType":"text/x-python"}})");
  EXPECT_EQ(round_trip<ContentBlock>(text), text);
  const Json blob = json(R"({"type":"resource","resource":{"uri":"file:///a.png","blob":"iVBORw0K"}})");
  EXPECT_EQ(round_trip<ContentBlock>(blob), blob);
  auto block = read<ContentBlock>(text.dump());
  ASSERT_TRUE(block);
  const auto& contents = std::get<TextResourceContents>(std::get<EmbeddedResource>(*block).resource);
  EXPECT_EQ(contents.text, "x = 1\n");
}

TEST(AcpContent, ImageAndAudioAreReadSoTheyCanBeRefusedByName) {
  const Json image = json(R"({"type":"image","data":"iVBORw0K","mimeType":"image/png","uri":"file:///a.png"})");
  EXPECT_EQ(round_trip<ContentBlock>(image), image);
  const Json audio = json(R"({"type":"audio","data":"UklGR","mimeType":"audio/wav"})");
  EXPECT_EQ(round_trip<ContentBlock>(audio), audio);
  auto block = read<ContentBlock>(audio.dump());
  ASSERT_TRUE(block);
  EXPECT_EQ(content_type_name(*block), "audio");
}

TEST(AcpContent, BadBlocksNameTheField) {
  EXPECT_EQ(read_error<ContentBlock>(R"({"type":"video","data":""})"),
            R"(params.type: unknown content block type "video")");
  EXPECT_EQ(read_error<ContentBlock>(R"({"text":"hi"})"), "params.type: required field is missing");
  EXPECT_EQ(read_error<ContentBlock>(R"({"type":"text"})"), "params.text: required field is missing");
  EXPECT_EQ(read_error<ContentBlock>(R"({"type":"text","text":5})"), "params.text: expected string, got integer");
  EXPECT_EQ(read_error<ContentBlock>(R"({"type":"image","data":"x"})"), "params.mimeType: required field is missing");
  EXPECT_EQ(read_error<ContentBlock>(R"({"type":"resource_link","uri":"file:///a"})"),
            "params.name: required field is missing");
  EXPECT_EQ(read_error<ContentBlock>(R"({"type":"resource","resource":{"uri":"file:///a"}})"),
            R"(params.resource: expected a text resource (with "text") or a blob resource (with "blob"))");
  EXPECT_EQ(read_error<ContentBlock>(R"("hi")"), "params: expected object, got string");
}

}  // namespace
}  // namespace agentd::protocol::acp
