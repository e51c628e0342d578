#include "core/support/json_reader.h"

#include <gtest/gtest.h>

namespace agentd::support {
namespace {

struct Fs {
  bool read = false;
};
struct Caps {
  Fs fs;
  std::vector<std::string> tags;
  std::optional<std::int64_t> limit;
};
struct Params {
  std::int32_t version = 0;
  Caps caps;
  std::string name = "default";
};

bool from_json(const JsonIn& in, Fs& out) { return in.required("readTextFile", out.read); }
bool from_json(const JsonIn& in, Caps& out) {
  return in.required("fs", out.fs) && in.optional("tags", out.tags) && in.optional("limit", out.limit);
}
bool from_json(const JsonIn& in, Params& out) {
  return in.required("protocolVersion", out.version) && in.optional("caps", out.caps) && in.optional("name", out.name);
}

Result<Params> read(std::string_view text) { return read_json<Params>(*parse_json(text), "params"); }

TEST(JsonReader, ReadsNestedStructs) {
  auto p = read(R"({"protocolVersion":1,"caps":{"fs":{"readTextFile":true},"tags":["a","b"],"limit":5}})");
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->version, 1);
  EXPECT_TRUE(p->caps.fs.read);
  EXPECT_EQ(p->caps.tags, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p->caps.limit, 5);
  EXPECT_EQ(p->name, "default");  // absent optional keeps its default
}

TEST(JsonReader, ErrorsNameThePathOfTheBadField) {
  struct Case {
    std::string input;
    std::string message;
  };
  const Case cases[] = {
      {R"({})", "params.protocolVersion: required field is missing"},
      {R"({"protocolVersion":null})", "params.protocolVersion: required field is null"},
      {R"({"protocolVersion":"1"})", "params.protocolVersion: expected 32-bit integer, got string"},
      {R"({"protocolVersion":1.5})", "params.protocolVersion: expected 32-bit integer, got number"},
      {R"({"protocolVersion":4294967296})",
       "params.protocolVersion: integer 4294967296 is out of range for 32-bit integer"},
      {R"({"protocolVersion":1,"caps":{"fs":{"readTextFile":"yes"}}})",
       "params.caps.fs.readTextFile: expected boolean, got string"},
      {R"({"protocolVersion":1,"caps":{"fs":{"readTextFile":true},"tags":["a",2]}})",
       "params.caps.tags[1]: expected string, got integer"},
      {R"({"protocolVersion":1,"caps":[]})", "params.caps: expected object, got array"},
      {R"([])", "params: expected object, got array"},
  };
  for (const auto& c : cases) {
    auto p = read(c.input);
    ASSERT_FALSE(p) << c.input;
    EXPECT_EQ(p.error().code(), Errc::invalid_argument);
    EXPECT_EQ(p.error().message(), c.message) << c.input;
  }
}

TEST(JsonReader, WholeDoublesReadAsIntegers) {
  auto p = read(R"({"protocolVersion":1.0})");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->version, 1);
}

TEST(JsonReader, UnusualKeysAreQuotedInPaths) {
  Json j = *parse_json(R"({"a b":{"c":1}})");
  JsonIn in(j, "root");
  std::string out;
  EXPECT_FALSE(in["a b"].required("c", out));
  EXPECT_EQ(in.error().message(), R"(root["a b"].c: expected string, got integer)");
}

TEST(JsonReader, UnsignedRejectsNegatives) {
  Json j = *parse_json(R"({"n":-1})");
  JsonIn in(j, "p");
  std::uint64_t n = 0;
  EXPECT_FALSE(in.required("n", n));
  EXPECT_EQ(in.error().message(), "p.n: integer -1 is out of range for non-negative integer");
}

TEST(JsonReader, MapsReadEveryMember) {
  Json j = *parse_json(R"({"x":1,"y":2})");
  auto m = read_json<std::map<std::string, std::int64_t>>(j);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->at("y"), 2);
}

}  // namespace
}  // namespace agentd::support
