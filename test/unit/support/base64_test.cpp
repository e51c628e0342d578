#include "core/support/base64.h"

#include <string>

#include <gtest/gtest.h>

namespace agentd::support {
namespace {

TEST(Base64, EncodesTheRfcVectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
}

TEST(Base64, DecodesWhatItEncodesForEveryByte) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (std::size_t n = 0; n <= all.size(); n += 37) {
    const std::string part = all.substr(0, n);
    auto back = base64_decode(base64_encode(part));
    ASSERT_TRUE(back) << n;
    EXPECT_EQ(*back, part) << n;
  }
}

TEST(Base64, AcceptsMissingPaddingAndLineBreaks) {
  EXPECT_EQ(base64_decode("Zm9vYg"), "foob");
  EXPECT_EQ(base64_decode("Zm9vYmE"), "fooba");
  EXPECT_EQ(base64_decode("Zm9v\r\nYmFy\n"), "foobar");
}

TEST(Base64, RefusesWhatIsNotBase64) {
  EXPECT_FALSE(base64_decode("Zm9v!"));     // outside the alphabet
  EXPECT_FALSE(base64_decode("Zm9vY"));     // five sextets are not whole bytes
  EXPECT_FALSE(base64_decode("Zg==Zg=="));  // padding in the middle
  EXPECT_FALSE(base64_decode("Zm8==="));    // more padding than the group lacks
  EXPECT_FALSE(base64_decode("Zh=="));      // bits set past the last byte
  EXPECT_FALSE(base64_decode("===="));
  EXPECT_FALSE(base64_decode("Zm9v-_"));  // the URL-safe alphabet is another encoding
}

TEST(Base64, CountsDecodedBytesWithoutDecoding) {
  EXPECT_EQ(base64_decoded_size(""), 0U);
  EXPECT_EQ(base64_decoded_size("AAAA"), 3U);
  EXPECT_EQ(base64_decoded_size("AAA="), 2U);
  EXPECT_EQ(base64_decoded_size("AA=="), 1U);
  EXPECT_EQ(base64_decoded_size("AAAA\nAAAA"), 6U);
}

}  // namespace
}  // namespace agentd::support
