// libFuzzer target for the streaming pipeline: SseParser plus the Anthropic Messages and OpenAI Chat
// Completions decoders. Every input is decoded by both, whole and split at points derived from the
// data, and the invariants below must hold. The .sse files in test/fixtures/sse make a good seed corpus as
// they are (scripts/test.sh seeds it with them): no header byte is needed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/stream_decoder.h"
#include "core/model/stream_summary.h"
#include "core/net/sse_parser.h"
#include "core/support/json.h"
#include "core/support/json_writer.h"

namespace {

using agentd::core::model::ModelEvent;
using agentd::core::model::StreamAccumulator;
using agentd::core::model::StreamSummary;
using agentd::core::model::ToolCallDone;
using agentd::core::model::WireProtocol;
using agentd::net::SseParser;

void check(bool condition) {
  if (!condition) std::abort();
}

// Pieces cut wherever the data says: before every CR and LF (so CRLF pairs get split), and after every
// byte whose value is a multiple of 7.
std::vector<std::string_view> split_on_data(std::string_view body) {
  std::vector<std::string_view> pieces;
  std::size_t start = 0;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const auto c = static_cast<unsigned char>(body[i]);
    if ((c == '\r' || c == '\n') && i > start) {
      pieces.push_back(body.substr(start, i - start));
      start = i;
    }
    if (c % 7 == 0) {
      pieces.push_back(body.substr(start, i + 1 - start));
      start = i + 1;
    }
  }
  if (start < body.size()) pieces.push_back(body.substr(start));
  return pieces;
}

// Pieces of pseudo-random length from a generator seeded with a hash of the data.
std::vector<std::string_view> split_on_hash(std::string_view body) {
  std::uint64_t state = 14695981039346656037ull;  // FNV-1a
  for (const char c : body) state = (state ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  state |= 1;
  const std::size_t max_piece = 1 + state % 97;
  std::vector<std::string_view> pieces;
  while (!body.empty()) {
    state ^= state << 13;  // xorshift64
    state ^= state >> 7;
    state ^= state << 17;
    const std::size_t n = std::min<std::size_t>(body.size(), 1 + state % max_piece);
    pieces.push_back(body.substr(0, n));
    body.remove_prefix(n);
  }
  return pieces;
}

std::vector<std::string_view> split_bytes(std::string_view body) {
  std::vector<std::string_view> pieces;
  for (std::size_t i = 0; i < body.size(); ++i) pieces.push_back(body.substr(i, 1));
  return pieces;
}

std::string summary_text(const StreamSummary& summary) {
  std::string out;
  agentd::support::JsonWriter writer(out);
  writer.value(summary);
  return out;
}

// Decodes, checks the invariants of one event stream, and returns the summary's JSON.
std::string decode(WireProtocol protocol, const std::vector<std::string_view>& pieces) {
  auto decoder = agentd::core::model::make_stream_decoder(protocol);
  std::vector<ModelEvent> events;
  for (const auto piece : pieces) decoder->feed(piece, events);
  decoder->finish(events);

  // Exactly one terminal event, and it is the last.
  check(!events.empty());
  check(decoder->done());
  for (std::size_t i = 0; i + 1 < events.size(); ++i) check(!agentd::core::model::is_terminal(events[i]));
  check(agentd::core::model::is_terminal(events.back()));

  StreamAccumulator acc;
  acc.add_all(events);
  const StreamSummary& summary = acc.summary();
  check(summary.complete != summary.error.has_value());
  // Text only ever comes out of parsed JSON strings, which are valid UTF-8.
  check(agentd::support::is_valid_utf8(summary.text));
  if (summary.thinking) check(agentd::support::is_valid_utf8(*summary.thinking));
  for (const ToolCallDone& call : summary.tool_calls) {
    check(call.input_error.has_value() == call.input.is_null());
  }
  const std::string json = summary_text(summary);
  check(agentd::support::parse_json(json).has_value());  // the summary is always valid JSON
  return json;
}

struct SseResult {
  std::vector<std::string> events;  // type, data and id joined with NULs
  bool dropped = false;
  bool unterminated = false;
  bool overflowed = false;
};

SseResult parse_sse(const std::vector<std::string_view>& pieces) {
  SseParser parser;
  SseResult result;
  auto drain = [&] {
    while (auto event = parser.next()) {
      std::string flat(event->type);
      flat += '\0';
      flat += event->data;
      flat += '\0';
      flat += event->last_event_id;
      result.events.push_back(std::move(flat));
    }
  };
  for (const auto piece : pieces) {
    parser.feed(piece);
    drain();
  }
  parser.finish();
  drain();
  result.dropped = parser.dropped_partial();
  result.unterminated = parser.unterminated_event_dispatched();
  result.overflowed = parser.overflowed();
  check(!(result.dropped && result.unterminated));
  return result;
}

bool same(const SseResult& a, const SseResult& b) {
  return a.events == b.events && a.dropped == b.dropped && a.unterminated == b.unterminated &&
         a.overflowed == b.overflowed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string_view> whole{body};
  const auto on_data = split_on_data(body);
  const auto on_hash = split_on_hash(body);
  // Byte-at-a-time is quadratic in nothing but slow in constant factors: keep it for small inputs.
  const bool bytewise = size <= 4096;

  const SseResult sse = parse_sse(whole);
  check(same(sse, parse_sse(on_data)));
  check(same(sse, parse_sse(on_hash)));
  if (bytewise) check(same(sse, parse_sse(split_bytes(body))));

  for (const auto protocol : {WireProtocol::anthropic_messages, WireProtocol::openai_chat}) {
    const std::string summary = decode(protocol, whole);
    check(decode(protocol, on_data) == summary);
    check(decode(protocol, on_hash) == summary);
    if (bytewise) check(decode(protocol, split_bytes(body)) == summary);
  }
  return 0;
}
