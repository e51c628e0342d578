// Helpers for the streaming tests: read a fixture, feed a body to a decoder whole, byte by byte or in
// random pieces, and compare the resulting summary with an expected/*.json file field by field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/model/stream_decoder.h"
#include "core/model/stream_summary.h"
#include "core/support/json.h"
#include "core/support/json_writer.h"

namespace agentd::core::model::testing {

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Cuts `body` into pieces of 1..max_piece bytes at points chosen by a seeded generator (mt19937's output
// is fixed by the standard, so a seed names the same split everywhere).
inline std::vector<std::string_view> split_random(std::string_view body, std::uint32_t seed, std::size_t max_piece) {
  std::mt19937 rng(seed);
  std::vector<std::string_view> pieces;
  while (!body.empty()) {
    const std::size_t n = std::min<std::size_t>(body.size(), 1 + rng() % max_piece);
    pieces.push_back(body.substr(0, n));
    body.remove_prefix(n);
  }
  return pieces;
}

inline std::vector<std::string_view> split_bytes(std::string_view body) {
  std::vector<std::string_view> pieces;
  for (std::size_t i = 0; i < body.size(); ++i) pieces.push_back(body.substr(i, 1));
  return pieces;
}

inline std::vector<ModelEvent> decode_pieces(WireProtocol protocol, const std::vector<std::string_view>& pieces) {
  auto decoder = make_stream_decoder(protocol);
  std::vector<ModelEvent> events;
  for (const auto piece : pieces) decoder->feed(piece, events);
  decoder->finish(events);
  return events;
}

inline std::vector<ModelEvent> decode_whole(WireProtocol protocol, std::string_view body) {
  return decode_pieces(protocol, {body});
}

inline StreamSummary summarize(const std::vector<ModelEvent>& events) {
  StreamAccumulator acc;
  acc.add_all(events);
  return std::move(acc).take();
}

inline support::Json summary_json(const StreamSummary& summary) {
  std::string text;
  support::JsonWriter writer(text);
  writer.value(summary);
  auto parsed = support::parse_json(text);
  return parsed ? std::move(parsed).value() : support::Json("unparseable summary: " + text);
}

// One line per event, for comparing event sequences and for readable failure messages.
inline std::string describe(const ModelEvent& event) {
  return std::visit(
      [](const auto& e) -> std::string {
        using E = std::decay_t<decltype(e)>;
        std::string out;
        support::JsonWriter w(out);
        w.begin_object();
        if constexpr (std::is_same_v<E, TextDelta>) {
          w.member("type", "text_delta").member("index", e.index).member("text", e.text);
        } else if constexpr (std::is_same_v<E, ThinkingDelta>) {
          w.member("type", "thinking_delta").member("index", e.index).member("text", e.text);
          w.member("signature", e.signature).member("redacted_data", e.redacted_data);
        } else if constexpr (std::is_same_v<E, ToolCallDelta>) {
          w.member("type", "tool_call_delta").member("index", e.index).member("id", e.id).member("name", e.name);
          w.member("input_json", e.input_json);
        } else if constexpr (std::is_same_v<E, ToolCallDone>) {
          w.member("type", "tool_call_done").member("index", e.index).member("call", e);
        } else if constexpr (std::is_same_v<E, MessageDone>) {
          w.member("type", "message_done").member("stop_reason", stop_reason_name(e.stop_reason));
          w.member("stop_reason_raw", e.stop_reason_raw).member("usage", e.usage);
        } else {
          w.member("type", "error").member("error", e);
        }
        w.end_object();
        return out;
      },
      event);
}

inline std::vector<std::string> describe_all(const std::vector<ModelEvent>& events) {
  std::vector<std::string> out;
  for (const auto& event : events) out.push_back(describe(event));
  return out;
}

// The reference fixtures name an error by the provider's code ("overloaded_error"); we keep that code and
// add our own kind. This table says which kind each code must map to.
inline std::string_view expected_kind_for_code(std::string_view code) {
  if (code == "overloaded_error") return "overloaded";
  if (code == "incomplete_stream") return "stream_truncated";
  if (code == "server_error" || code == "api_error") return "server";
  if (code == "rate_limit_exceeded" || code == "rate_limit_error") return "rate_limited";
  if (code == "invalid_request_error") return "invalid_request";
  if (code == "context_length_exceeded") return "context_too_long";
  if (code == "authentication_error") return "auth";
  return "(no kind known for this code: add it to expected_kind_for_code)";
}

// Compares the summary fields of an expected/*.json with ours. Returns "" when they match, else a list of
// the differences.
inline std::string compare_summary(const support::Json& expected, const support::Json& got) {
  std::string diffs;
  auto differ = [&](std::string_view field, const support::Json& want, const support::Json& have) {
    diffs += std::string(field) + ":\n  expected " + want.dump() + "\n  got      " + have.dump() + "\n";
  };
  auto field = [](const support::Json& j, std::string_view key) {
    const support::Json* v = j.find(key);
    return v != nullptr ? *v : support::Json();
  };
  for (const std::string_view key : {"complete", "text", "thinking", "stop_reason", "stop_reason_raw", "usage"}) {
    if (!(field(expected, key) == field(got, key))) differ(key, field(expected, key), field(got, key));
  }
  // Tool calls: the four contract fields of each call, in order.
  auto project_calls = [&](const support::Json& calls) {
    if (!calls.is_array()) return calls;
    support::Json out = support::Json::array();
    for (const auto& call : calls.as_array()) {
      support::Json projected = support::Json::object();
      for (const std::string_view key : {"id", "name", "arguments_json", "input"}) projected.set(key, field(call, key));
      out.push_back(std::move(projected));
    }
    return out;
  };
  const support::Json want_calls = project_calls(field(expected, "tool_calls"));
  const support::Json have_calls = project_calls(field(got, "tool_calls"));
  if (!(want_calls == have_calls)) differ("tool_calls", want_calls, have_calls);
  // Error: the provider code, message, retryability and source, plus our kind for that code.
  const support::Json want_error = field(expected, "error");
  const support::Json have_error = field(got, "error");
  if (want_error.is_null() || have_error.is_null()) {
    if (!(want_error == have_error)) differ("error", want_error, have_error);
  } else {
    support::Json want = support::Json::object();
    support::Json have = support::Json::object();
    want.set("code", field(want_error, "kind"));
    have.set("code", field(have_error, "code"));
    if (want_error.find("kind") != nullptr && want_error.find("kind")->is_string()) {
      want.set("kind", expected_kind_for_code(want_error.find("kind")->as_string()));
    }
    have.set("kind", field(have_error, "kind"));
    for (const std::string_view key : {"message", "retryable", "source"}) {
      want.set(key, field(want_error, key));
      have.set(key, field(have_error, key));
    }
    if (const support::Json* retry = want_error.find("retry_after_ms")) {
      want.set("retry_after_ms", *retry);
      have.set("retry_after_ms", field(have_error, "retry_after_ms"));
    }
    if (!(want == have)) differ("error", want, have);
  }
  return diffs;
}

}  // namespace agentd::core::model::testing
