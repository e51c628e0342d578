#include "tools/json_schema.h"

#include <gtest/gtest.h>

namespace agentd::tools {
namespace {

using support::Json;
using Violations = std::vector<std::string>;

Json json(std::string_view text) { return support::parse_json(text).value(); }

Violations check(std::string_view schema, std::string_view value) {
  return schema_violations(json(schema), json(value));
}

constexpr std::string_view kReadFile = R"({
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1},
    "offset": {"type": "integer", "minimum": 1},
    "limit": {"type": "integer", "minimum": 1, "maximum": 5000}
  },
  "required": ["path"],
  "additionalProperties": false
})";

TEST(JsonSchema, ValidInputHasNoViolations) {
  EXPECT_EQ(check(kReadFile, R"({"path": "a.txt"})"), Violations{});
  EXPECT_EQ(check(kReadFile, R"({"path": "a.txt", "offset": 3, "limit": 5000})"), Violations{});
  EXPECT_TRUE(validate_against_schema(json(kReadFile), json(R"({"path": "x"})")));
}

TEST(JsonSchema, CollectsEveryViolationInOneMessage) {
  EXPECT_EQ(check(kReadFile, R"({"offset": -3, "limit": "10", "extra": true})"),
            (Violations{
                "input: missing required field \"path\"",
                "input.offset: expected integer >= 1, got -3",
                "input.limit: expected integer from 1 to 5000, got string \"10\"",
                "input: unknown field \"extra\"; allowed fields: path, offset, limit",
            }));
  auto result = validate_against_schema(json(kReadFile), json(R"({"offset": 0})"));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), support::Errc::invalid_argument);
  EXPECT_EQ(result.error().message(),
            "input: missing required field \"path\"\ninput.offset: expected integer >= 1, got 0");
}

TEST(JsonSchema, IntegerAcceptsIntegralNumbersOnly) {
  constexpr std::string_view schema = R"({"type": "integer"})";
  EXPECT_EQ(check(schema, "7"), Violations{});
  EXPECT_EQ(check(schema, "7.0"), Violations{});  // JSON Schema: 7.0 is an integer
  EXPECT_EQ(check(schema, "18446744073709551615"), Violations{});
  EXPECT_EQ(check(schema, "7.5"), Violations{"input: expected integer, got number 7.5"});
  EXPECT_EQ(check(schema, "true"), Violations{"input: expected integer, got boolean true"});
  EXPECT_EQ(check(R"({"type": "number"})", "7.5"), Violations{});
  EXPECT_EQ(check(R"({"type": "number"})", "null"), Violations{"input: expected number, got null"});
}

TEST(JsonSchema, EveryTypeName) {
  EXPECT_EQ(check(R"({"type": "string"})", "1"), Violations{"input: expected string, got integer 1"});
  EXPECT_EQ(check(R"({"type": "boolean"})", R"("yes")"), Violations{"input: expected boolean, got string \"yes\""});
  EXPECT_EQ(check(R"({"type": "object"})", "[]"), Violations{"input: expected object, got array"});
  EXPECT_EQ(check(R"({"type": "array"})", "{}"), Violations{"input: expected array, got object"});
  EXPECT_EQ(check(R"({"type": "null"})", "0"), Violations{"input: expected null, got integer 0"});
  EXPECT_EQ(check(R"({"type": ["string", "null"]})", "null"), Violations{});
  EXPECT_EQ(check(R"({"type": ["string", "null"]})", "2"), Violations{"input: expected string or null, got integer 2"});
  EXPECT_EQ(check(R"({"type": "mystery"})", "2"), Violations{});  // the schema's problem, not the input's
}

TEST(JsonSchema, NumberBounds) {
  EXPECT_EQ(check(R"({"type": "integer", "maximum": 10})", "11"), Violations{"input: expected integer <= 10, got 11"});
  EXPECT_EQ(check(R"({"type": "number", "exclusiveMinimum": 0})", "0"),
            Violations{"input: expected number > 0, got 0"});
  EXPECT_EQ(check(R"({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1})", "1"),
            Violations{"input: expected number > 0 and < 1, got 1"});
  EXPECT_EQ(check(R"({"type": "number", "minimum": 0.5})", "0.25"),
            Violations{"input: expected number >= 0.5, got 0.25"});
  EXPECT_EQ(check(R"({"type": "integer", "minimum": -5})", "-5"), Violations{});
  // Integers beyond int64 and below zero compare exactly, not through double.
  EXPECT_EQ(check(R"({"type": "integer", "maximum": 9223372036854775807})", "9223372036854775808"),
            Violations{"input: expected integer <= 9223372036854775807, got 9223372036854775808"});
  EXPECT_EQ(check(R"({"type": "integer", "minimum": -1})", "18446744073709551615"), Violations{});
  EXPECT_EQ(check(R"({"minimum": 3})", "1"), Violations{"input: expected a different value, got 1"});
}

TEST(JsonSchema, StringLengthsCountCharactersNotBytes) {
  constexpr std::string_view schema = R"({"type": "string", "minLength": 2, "maxLength": 3})";
  EXPECT_EQ(check(schema, R"("żółw")"), Violations{"input: expected a string of 2 to 3 characters, got 4 characters"});
  EXPECT_EQ(check(schema, R"("żół")"), Violations{});
  EXPECT_EQ(check(R"({"type": "string", "minLength": 1})", R"("")"),
            Violations{"input: expected a non-empty string, got an empty string"});
  EXPECT_EQ(check(R"({"type": "string", "minLength": 1})", "5"),
            Violations{"input: expected non-empty string, got integer 5"});
  EXPECT_EQ(check(R"({"type": "string", "minLength": 3})", R"("ab")"),
            Violations{"input: expected a string of at least 3 characters, got 2 characters"});
  EXPECT_EQ(check(R"({"type": "string", "maxLength": 1})", R"("ab")"),
            Violations{"input: expected a string of at most 1 character, got 2 characters"});
}

TEST(JsonSchema, EnumAndConst) {
  constexpr std::string_view schema = R"({"type": "string", "enum": ["ask", "allow", "deny"]})";
  EXPECT_EQ(check(schema, R"("allow")"), Violations{});
  EXPECT_EQ(check(schema, R"("maybe")"), Violations{R"(input: expected one of "ask", "allow", "deny", got "maybe")"});
  EXPECT_EQ(check(schema, "1"), Violations{R"(input: expected one of "ask", "allow", "deny", got integer 1)"});
  EXPECT_EQ(check(R"({"const": 2})", "2.0"), Violations{});
  EXPECT_EQ(check(R"({"const": "x"})", R"("y")"), Violations{R"(input: expected "x", got "y")"});
}

TEST(JsonSchema, ArraysAndTheirItems) {
  constexpr std::string_view schema =
      R"({"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string", "minLength": 1}})";
  EXPECT_EQ(check(schema, R"(["a", "b"])"), Violations{});
  EXPECT_EQ(check(schema, "[]"), Violations{"input: expected at least 1 item, got 0"});
  EXPECT_EQ(check(schema, R"(["a", 2, "", "d"])"),
            (Violations{"input: expected at most 3 items, got 4", "input[1]: expected non-empty string, got integer 2",
                        "input[2]: expected a non-empty string, got an empty string"}));
  EXPECT_EQ(check(R"({"type": "array", "minItems": 2})", "[1]"), Violations{"input: expected at least 2 items, got 1"});
}

TEST(JsonSchema, NestedObjectsNameTheFullPath) {
  constexpr std::string_view schema = R"({
    "type": "object",
    "required": ["edits"],
    "properties": {
      "edits": {"type": "array", "items": {
        "type": "object",
        "required": ["old_text", "new_text"],
        "properties": {"old_text": {"type": "string"}, "new_text": {"type": "string"}},
        "additionalProperties": false
      }}
    }
  })";
  EXPECT_EQ(check(schema, R"({"edits": [{"old_text": "a", "new_text": "b"}, {"old_text": 1, "typo": ""}]})"),
            (Violations{"input.edits[1]: missing required field \"new_text\"",
                        "input.edits[1].old_text: expected string, got integer 1",
                        "input.edits[1]: unknown field \"typo\"; allowed fields: old_text, new_text"}));
}

TEST(JsonSchema, AdditionalPropertiesAsASchemaOrAbsent) {
  EXPECT_EQ(check(R"({"type": "object", "additionalProperties": {"type": "integer"}})", R"({"a": 1, "b": "x"})"),
            Violations{"input.b: expected integer, got string \"x\""});
  EXPECT_EQ(check(R"({"type": "object", "properties": {"a": {"type": "integer"}}})", R"({"a": 1, "b": "x"})"),
            Violations{});
  EXPECT_EQ(check(R"({"type": "object", "additionalProperties": false})", R"({"b": 1})"),
            Violations{"input: unknown field \"b\"; this object takes no fields"});
}

TEST(JsonSchema, BooleanSchemas) {
  EXPECT_EQ(check("true", R"({"anything": 1})"), Violations{});
  EXPECT_EQ(check(R"({"type": "object", "properties": {"gone": false}})", R"({"gone": 1})"),
            Violations{"input.gone: this field is not allowed here; remove it"});
}

TEST(JsonSchema, UnknownKeywordsAndMalformedSchemasAreIgnored) {
  EXPECT_EQ(check(R"({"type": "string", "pattern": "^a", "format": "uri"})", R"("zzz")"), Violations{});
  EXPECT_EQ(check(R"({"type": "string", "minLength": "two"})", R"("")"), Violations{});
  EXPECT_EQ(check(R"({"type": "object", "required": "path", "properties": []})", "{}"), Violations{});
  EXPECT_EQ(check("42", "{}"), Violations{});
}

TEST(JsonSchema, LongValuesAreCutInMessages) {
  const std::string long_text(100, 'x');
  const auto violations = check(R"({"type": "integer"})", "\"" + long_text + "\"");
  ASSERT_EQ(violations.size(), 1U);
  EXPECT_EQ(violations[0], "input: expected integer, got string \"" + std::string(59, 'x') + "...\"");
}

TEST(JsonSchema, ViolationsAreCapped) {
  std::string input = "[";
  for (int i = 0; i < 30; ++i) input += i == 0 ? "1" : ",1";
  input += "]";
  const auto violations = check(R"({"type": "array", "items": {"type": "string"}})", input);
  ASSERT_EQ(violations.size(), 21U);
  EXPECT_EQ(violations[19], "input[19]: expected string, got integer 1");
  EXPECT_EQ(violations[20], "(and 10 more problems not listed)");
}

TEST(JsonSchema, RootNameIsConfigurable) {
  EXPECT_EQ(schema_violations(json(R"({"type": "object", "required": ["a"]})"), json("{}"), "arguments"),
            Violations{"arguments: missing required field \"a\""});
}

}  // namespace
}  // namespace agentd::tools
