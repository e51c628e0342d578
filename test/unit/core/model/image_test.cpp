#include "core/model/image.h"

#include <string>

#include <gtest/gtest.h>

#include "test/support/test_images.h"

namespace agentd::core::model {
namespace {

void expect_image(const std::string& bytes, std::string_view type, std::uint32_t width, std::uint32_t height) {
  auto info = sniff_image(bytes);
  ASSERT_TRUE(info) << type;
  EXPECT_EQ(info->media_type, type);
  EXPECT_EQ(info->width, width) << type;
  EXPECT_EQ(info->height, height) << type;
}

TEST(Image, TheBytesSayTheTypeAndTheSize) {
  expect_image(testing::png_image(640, 480), "image/png", 640, 480);
  expect_image(testing::jpeg_image(1024, 768), "image/jpeg", 1024, 768);
  expect_image(testing::gif_image(16, 9), "image/gif", 16, 9);
  expect_image(testing::webp_vp8x_image(3000, 2000), "image/webp", 3000, 2000);
  expect_image(testing::webp_vp8l_image(300, 200), "image/webp", 300, 200);
  expect_image(testing::webp_vp8_image(320, 240), "image/webp", 320, 240);
}

TEST(Image, WhatIsNotAnImageIsNone) {
  EXPECT_FALSE(sniff_image(""));
  EXPECT_FALSE(sniff_image("hello, world: not an image at all"));
  EXPECT_FALSE(sniff_image("<svg xmlns='http://www.w3.org/2000/svg'/>"));  // SVG is script, not pixels
  EXPECT_FALSE(sniff_image(testing::png_image(4, 4).substr(0, 20)));       // cut inside the header
  EXPECT_FALSE(sniff_image(testing::jpeg_image(4, 4).substr(0, 24)));      // no frame before the end
  EXPECT_FALSE(sniff_image(std::string("\xFF\xD8\xFF\xDA\0\x02", 6)));     // a scan before any frame
  EXPECT_FALSE(sniff_image("RIFF" + testing::le32(22) + "WAVEfmt " + std::string(22, '\0')));  // RIFF, but audio
}

TEST(Image, CheckSaysWhatIsWrong) {
  EXPECT_TRUE(check_image(testing::png_image(1, 1)));
  auto text = check_image("#!/bin/sh\nrm -rf /\n");
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message().find("not a PNG, JPEG, GIF or WebP"), std::string::npos);
  auto huge = check_image(testing::png_image(9000, 10));
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message().find("9000x10"), std::string::npos) << huge.error().message();
  EXPECT_FALSE(check_image(testing::gif_image(0, 10)));
  std::string big = testing::png_image(100, 100);
  big.resize(kMaxImageBytes + 1);
  auto too_large = check_image(big);
  ASSERT_FALSE(too_large);
  EXPECT_NE(too_large.error().message().find("at most 5 MiB"), std::string::npos) << too_large.error().message();
}

TEST(Image, TokensFollowTheScaledArea) {
  EXPECT_EQ(image_tokens(750, 1), 1U);
  EXPECT_EQ(image_tokens(640, 480), 410U);
  EXPECT_EQ(image_tokens(4000, 3000), 1600U);  // scaled to 1568 on the long side, then capped
  EXPECT_EQ(image_tokens(0, 0), 1600U);        // unknown: the most it can cost
}

}  // namespace
}  // namespace agentd::core::model
