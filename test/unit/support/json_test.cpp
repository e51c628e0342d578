#include "core/support/json.h"

#include <gtest/gtest.h>

namespace agentd::support {
namespace {

TEST(Json, ParsesEveryTypeAndDumpsCompactly) {
  auto parsed = parse_json(R"( {"a": [1, -2, 3.5, true, false, null], "b": {"c": "d"}, "e": 18446744073709551615} )");
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->dump(), R"({"a":[1,-2,3.5,true,false,null],"b":{"c":"d"},"e":18446744073709551615})");
  EXPECT_EQ((*parsed)["e"].as_uint64(), 18446744073709551615ULL);
  EXPECT_TRUE(parsed->find("a")->is_array());
  EXPECT_EQ(parsed->find("missing"), nullptr);
}

TEST(Json, KeepsMemberOrder) {
  Json j;
  j["zeta"] = 1;
  j["alpha"] = 2;
  j["mid"] = 3;
  EXPECT_EQ(j.dump(), R"({"zeta":1,"alpha":2,"mid":3})");
  j.set("alpha", "replaced");
  EXPECT_EQ(j.dump(), R"({"zeta":1,"alpha":"replaced","mid":3})");
}

TEST(Json, EqualityIsStructural) {
  EXPECT_EQ(*parse_json(R"({"a":1,"b":[1,2]})"), *parse_json(R"({"b":[1,2],"a":1.0})"));
  EXPECT_NE(*parse_json(R"({"a":1})"), *parse_json(R"({"a":1,"b":2})"));
  EXPECT_NE(*parse_json(R"([1,2])"), *parse_json(R"([2,1])"));
  EXPECT_NE(Json(-1), Json(static_cast<std::uint64_t>(18446744073709551615ULL)));
  EXPECT_NE(Json("1"), Json(1));
  EXPECT_EQ(Json(), Json(nullptr));
}

TEST(Json, RejectsMalformedInputWithAReason) {
  struct Case {
    std::string text;
    std::string reason;
  };
  const Case cases[] = {
      {"", "empty input"},
      {"{", "malformed JSON"},
      {R"({"a":1} x)", "malformed JSON"},
      {"{\"a\":\"\xff\"}", "invalid UTF-8"},
      {"\"unterminated", "unclosed string"},
      {"tru", "malformed literal"},
      {"{\"a\":\"line\nbreak\"}", "unescaped control character in string"},
  };
  for (const auto& c : cases) {
    auto r = parse_json(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().code(), Errc::parse_error);
    EXPECT_EQ(r.error().message(), c.reason) << c.text;
  }
}

TEST(Json, LimitsNestingDepth) {
  const std::string deep = std::string(300, '[') + std::string(300, ']');
  auto r = parse_json(deep);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "nesting too deep");
  EXPECT_TRUE(parse_json(std::string(100, '[') + std::string(100, ']')));
  // The depth limit is per call: a later default call is not stuck with a smaller one.
  EXPECT_FALSE(parse_json("[[[1]]]", 2));
  EXPECT_TRUE(parse_json("[[[1]]]"));
}

TEST(Json, BuildsArraysAndNestedObjects) {
  Json j;
  j["list"].push_back(1);
  j["list"].push_back("two");
  j["nested"]["deep"]["er"] = true;
  EXPECT_EQ(j.dump(), R"({"list":[1,"two"],"nested":{"deep":{"er":true}}})");
  EXPECT_EQ(j.size(), 2u);
  EXPECT_EQ(j["list"].size(), 2u);
}

TEST(Json, DoublesRoundTripExactly) {
  for (double d : {0.1, 1e300, -2.5e-300, 3.141592653589793, 1.0 / 3.0}) {
    auto back = parse_json(Json(d).dump());
    ASSERT_TRUE(back);
    EXPECT_EQ(back->as_double(), d);
  }
}

}  // namespace
}  // namespace agentd::support
