// The mock model server's script: an ordered list of exchanges, each an optional expectation on the
// request and the response to play back. Parsing, expectation checks and body preparation live here,
// apart from the sockets, so they can be tested (and read) without a server. Format: README.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/support/json.h"
#include "core/support/result.h"

namespace agentd::mock_model {

using support::Result;

// What the server saw, as far as expectations and generation care.
struct ReceivedRequest {
  std::string method;
  std::string path;  // target without the query string
  std::string body;
  std::optional<support::Json> body_json;  // present when the body parsed as JSON
};

struct Expectation {
  std::optional<std::string> method;
  std::optional<std::string> path;
  std::optional<std::string> model;                                 // the request body's "model"
  std::vector<std::string> body_contains;                           // substrings of the raw body
  std::vector<std::pair<std::string, support::Json>> body_matches;  // JSON pointer -> expected value
  support::Json source;  // the expectation as written, echoed in the 400 answer
};

// Failures of one request against an expectation: one line each, empty when the request matched.
std::vector<std::string> check_expectation(const Expectation& expect, const ReceivedRequest& request);

// RFC 6901 JSON pointer ("" is the whole document); null when it names nothing.
const support::Json* resolve_json_pointer(const support::Json& root, std::string_view pointer);

struct GeneratedToolCall {
  std::string id;  // made up from the exchange number when empty
  std::string name;
  support::Json input = support::Json::object();
};

// Token counts with Anthropic's meaning (input excludes cached input); the OpenAI stream reports
// prompt_tokens = input + cache_read so a decoder recovers the same numbers.
struct GeneratedUsage {
  std::uint64_t input_tokens = 10;
  std::uint64_t output_tokens = 10;
  std::uint64_t cache_creation_input_tokens = 0;
  std::uint64_t cache_read_input_tokens = 0;
};

// The convenience form: a short description the server turns into a byte-correct stream.
struct GenerateSpec {
  std::optional<std::string> provider;  // "anthropic" or "openai"; else chosen by the request path
  std::string text;
  std::optional<std::string> thinking;
  std::string signature = "mock-signature";
  std::vector<GeneratedToolCall> tool_calls;
  GeneratedUsage usage;
  std::optional<std::string> stop_reason;  // provider's word; default end_turn/stop or tool_use/tool_calls
  std::optional<std::string> model;        // default: the request's "model", else "mock-model"
  std::size_t text_piece_bytes = 0;        // 0: text arrives in three pieces
};

struct RandomChunks {
  std::uint32_t seed = 1;
  std::size_t max_bytes = 16;
};

struct Response {
  enum class BodyKind { none, inline_body, events, sse_file, http_file, generate };

  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // names as written; override defaults
  BodyKind kind = BodyKind::none;
  std::string body;                 // inline body or file contents
  std::vector<std::string> events;  // framed SSE events, one write each by default
  std::optional<GenerateSpec> generate;
  bool body_is_json = false;                  // inline body given as a JSON value
  std::optional<bool> chunked;                // default: chunked for streams, content-length otherwise
  std::optional<std::size_t> chunk_size;      // split the body into writes of this many bytes
  std::optional<RandomChunks> random_chunks;  // or into seeded random sizes
  std::uint64_t headers_delay_ms = 0;         // before the status line
  std::uint64_t chunk_delay_ms = 0;           // between writes
  std::uint64_t end_delay_ms = 0;             // after the last write, before the body's end (chunked: the 0 chunk)
  bool disconnect_before_headers = false;
  std::optional<std::uint64_t> disconnect_after_bytes;  // body bytes (whole response for http_file)
  std::optional<std::uint64_t> stall_after_bytes;
};

struct Exchange {
  std::string name;  // for logs and errors; "exchange N" when not given
  std::optional<Expectation> expect;
  Response response;
};

struct Script {
  std::vector<Exchange> exchanges;
  bool loop = false;  // start again from the first exchange when the last has been used (benchmarks)
};

// Reads a script; file references are resolved against `base_dir` and read now, so a bad script fails
// at load time with the path of the offending field.
Result<Script> parse_script(const support::Json& json, const std::filesystem::path& base_dir);
Result<Script> load_script_file(const std::filesystem::path& path);

// The body of one response, already cut into the writes the server will make. For http_file the
// pieces are the whole raw response.
struct PreparedBody {
  std::vector<std::string> pieces;
  std::string content_type;  // default content-type; empty for http_file
  bool stream = false;       // an event stream (chunked by default)
};
PreparedBody prepare_body(const Response& response, const ReceivedRequest& request, std::size_t exchange_number);

// Frames one SSE event: `event: NAME\n` (when given) and one `data:` line per line of `data`, then a
// blank line.
std::string frame_sse_event(std::string_view event, std::string_view data);

// The generated streams, one SSE event per element.
std::vector<std::string> generate_anthropic_stream(const GenerateSpec& spec, std::string_view model,
                                                   std::size_t exchange_number);
std::vector<std::string> generate_openai_stream(const GenerateSpec& spec, std::string_view model,
                                                std::size_t exchange_number);

}  // namespace agentd::mock_model
