#include "core/support/json_writer.h"

#include <random>

#include <gtest/gtest.h>

#include "core/support/json.h"

namespace agentd::support {
namespace {

std::string write_string(std::string_view s) {
  std::string out;
  JsonWriter(out).value(s);
  return out;
}

// Every string the writer emits must parse back (simdjson is the oracle), contain no raw control
// characters, and, for valid UTF-8 input, give back exactly the input.
void expect_round_trip(const std::string& input) {
  const std::string written = write_string(input);
  for (unsigned char c : written) ASSERT_GE(c, 0x20) << "raw control character in " << written;
  auto parsed = parse_json(written);
  ASSERT_TRUE(parsed) << parsed.error().message() << " for " << written;
  ASSERT_TRUE(parsed->is_string());
  if (is_valid_utf8(input)) {
    EXPECT_EQ(parsed->as_string(), input);
  } else {
    EXPECT_TRUE(is_valid_utf8(parsed->as_string()));
    EXPECT_NE(parsed->as_string().find("\xEF\xBF\xBD"), std::string::npos);
  }
}

TEST(JsonWriter, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(write_string("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(write_string("\n\r\t\b\f"), R"("\n\r\t\b\f")");
  EXPECT_EQ(write_string(std::string("\x00\x01\x1f", 3)), R"("\u0000\u0001\u001f")");
  EXPECT_EQ(write_string("\x7f"), "\"\x7f\"");  // DEL is allowed raw in JSON
  EXPECT_EQ(write_string("</script>"), R"("</script>")");
}

TEST(JsonWriter, KeepsValidUtf8AndReplacesInvalid) {
  EXPECT_EQ(write_string("héllo 世界 🙂"), "\"héllo 世界 🙂\"");
  EXPECT_EQ(write_string("a\xff"
                         "b"),
            "\"a\xEF\xBF\xBD"
            "b\"");
  EXPECT_EQ(write_string("\xC0\xAF"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");                  // overlong '/'
  EXPECT_EQ(write_string("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // a surrogate
  EXPECT_EQ(write_string("\xF4\x90\x80\x80").find("\xF4"), std::string::npos);          // above U+10FFFF
  EXPECT_EQ(write_string("\xE4\xB8"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");                  // truncated sequence
}

TEST(JsonWriter, HostileStringsRoundTripThroughSimdjson) {
  for (int c = 0; c < 256; ++c) expect_round_trip(std::string(1, static_cast<char>(c)));
  expect_round_trip(std::string("\0\0\0", 3));
  expect_round_trip("\"\\\"\\\\\"");
  expect_round_trip("\u2028\u2029");
  expect_round_trip(std::string(100000, '\n'));
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 64);
  for (int i = 0; i < 5000; ++i) {
    std::string s(static_cast<std::size_t>(length(rng)), '\0');
    for (auto& ch : s) ch = static_cast<char>(byte(rng));
    expect_round_trip(s);
  }
}

TEST(JsonWriter, WritesNestedStructuresWithCommasInPlace) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.member("a", 1).member("b", "two");
  w.key("c").begin_array().value(true).null().value(2.5).begin_object().end_object().end_array();
  w.key("d").begin_array().end_array();
  w.optional_member("absent", std::optional<int>());
  w.optional_member("present", std::optional<int>(7));
  w.end_object();
  EXPECT_EQ(out, R"({"a":1,"b":"two","c":[true,null,2.5,{}],"d":[],"present":7})");
  EXPECT_TRUE(parse_json(out));
}

TEST(JsonWriter, NonFiniteNumbersBecomeNull) {
  std::string out;
  JsonWriter(out).begin_array().value(std::numeric_limits<double>::infinity()).value(std::nan("")).end_array();
  EXPECT_EQ(out, "[null,null]");
}

// Found by json_fuzz: -0.0 was written "-0", which parses as the integer 0, so writing what was parsed and
// parsing it again was not a fixed point ([-0e-3] -> [-0] -> [0]).
TEST(JsonWriter, NegativeZeroIsWrittenAsZero) {
  std::string out;
  JsonWriter(out).begin_array().value(-0.0).value(0.0).value(-0.5).end_array();
  EXPECT_EQ(out, "[0,0,-0.5]");
  auto parsed = parse_json("[0e-3,-0e-3,-0,1.56854,180]");
  ASSERT_TRUE(parsed);
  const std::string once = parsed->dump();
  auto again = parse_json(once);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->dump(), once);
}

TEST(JsonWriter, KeysAreEscapedToo) {
  Json j;
  j["we\"ird\nkey"] = 1;
  EXPECT_EQ(j.dump(), R"({"we\"ird\nkey":1})");
  auto back = parse_json(j.dump());
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, j);
}

}  // namespace
}  // namespace agentd::support
