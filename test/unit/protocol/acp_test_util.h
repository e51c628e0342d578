// Helpers for the ACP type tests: write a value and parse it back, so tests compare whole JSON objects.
#pragma once

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "core/support/json_reader.h"
#include "core/support/json_writer.h"

namespace agentd::protocol::acp::testing {

template <class T>
support::Json written(const T& value) {
  std::string out;
  support::JsonWriter w(out);
  w.value(value);
  auto parsed = support::parse_json(out);
  EXPECT_TRUE(parsed) << "our writer produced invalid JSON: " << out;
  return parsed ? *parsed : support::Json();
}

inline support::Json json(std::string_view text) {
  auto parsed = support::parse_json(text);
  EXPECT_TRUE(parsed) << "bad JSON in the test itself: " << text;
  return parsed ? *parsed : support::Json();
}

// Reads `text` as T (asserting success is the caller's job: check the Result).
template <class T>
support::Result<T> read(std::string_view text, std::string_view root = "params") {
  return support::read_json<T>(json(text), root);
}

// The error message of reading `text` as T, or "" when it read fine.
template <class T>
std::string read_error(std::string_view text, std::string_view root = "params") {
  auto result = read<T>(text, root);
  return result ? std::string() : std::string(result.error().message());
}

// Reads `text` as T, writes it back, and returns what came out (for round-trip checks).
template <class T>
support::Json round_trip(const support::Json& value, std::string_view root = "params") {
  auto result = support::read_json<T>(value, root);
  EXPECT_TRUE(result) << result.error().message();
  return result ? written(*result) : support::Json();
}

}  // namespace agentd::protocol::acp::testing
