// ModelEvent: the engine's one stream of model output, whatever provider produced it. Each provider's
// decoder (anthropic_stream, openai_stream) maps its wire format onto these plain
// structs; the engine, the ACP binding and the stream summary only ever see this file's types.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/support/enum_names.h"
#include "core/support/json.h"

namespace agentd::core::model {

// Why the model stopped, normalised to Anthropic's vocabulary. The provider's own word is kept beside it.
enum class StopReason { end_turn, tool_use, max_tokens, stop_sequence, refusal, pause_turn };
std::string_view stop_reason_name(StopReason reason) noexcept;
std::span<const support::EnumName<StopReason>> enum_names(StopReason) noexcept;

// Token counts with Anthropic's meaning: `input_tokens` excludes cached input, so the four counts add up
// to what the price table charges for.
struct Usage {
  std::uint64_t input_tokens = 0;                        // uncached input
  std::uint64_t output_tokens = 0;                       // includes reasoning tokens where the provider counts them
  std::uint64_t cache_write_tokens = 0;                  // Anthropic cache_creation_input_tokens
  std::uint64_t cache_read_tokens = 0;                   // Anthropic cache_read_input_tokens, OpenAI cached_tokens
  std::optional<std::uint64_t> reasoning_output_tokens;  // only where the provider reports it

  std::uint64_t total_input_tokens() const noexcept { return input_tokens + cache_write_tokens + cache_read_tokens; }
  friend bool operator==(const Usage&, const Usage&) = default;
};

// What failed. Callers (retry policy, the ACP binding) branch on the kind, never on the message.
enum class ErrorKind {
  rate_limited,      // 429 or an in-stream rate-limit error; see retry_after
  overloaded,        // Anthropic 529 / overloaded_error
  auth,              // bad or missing key, no permission
  invalid_request,   // our request is wrong; retrying the same request cannot help
  context_too_long,  // the prompt does not fit the model's context window
  network,           // connect/TLS/read failures and timeouts
  stream_truncated,  // the body ended before the provider's terminal event
  server,            // the provider failed (5xx, api_error, server_error, a malformed stream)
};
std::string_view error_kind_name(ErrorKind kind) noexcept;
std::span<const support::EnumName<ErrorKind>> enum_names(ErrorKind) noexcept;

// Where the error was observed: inside a 200 stream, as an HTTP error status, or below HTTP.
enum class ErrorSource { in_stream, http, transport };
std::string_view error_source_name(ErrorSource source) noexcept;
std::span<const support::EnumName<ErrorSource>> enum_names(ErrorSource) noexcept;

// ---- the events ----

// A piece of visible answer text. `index` is the content block it belongs to (Anthropic's block index;
// 0 for OpenAI), so consecutive deltas with the same index form one block.
struct TextDelta {
  std::uint32_t index = 0;
  std::string text;
};

// A piece of the model's reasoning. Anthropic's signature (signature_delta) and redacted thinking
// (redacted_thinking blocks) arrive here too and must go back verbatim in the next request.
struct ThinkingDelta {
  std::uint32_t index = 0;
  std::string text;
  std::string signature;      // a signature fragment, usually the whole signature in one event
  std::string redacted_data;  // the opaque `data` of a redacted_thinking block
};

// A tool call being streamed: the first delta of a call carries its id and name, later ones carry input
// JSON fragments (which are not valid JSON on their own). `index` is stable for the call: Anthropic's
// block index, or the call's position in the message for OpenAI.
struct ToolCallDelta {
  std::uint32_t index = 0;
  std::string id;
  std::string name;
  std::string input_json;  // fragment; may be empty on the first delta
};

// A tool call whose input is complete. `arguments_json` is the raw concatenation of the fragments;
// `input` its parse ({} when the model sent nothing). When the model sent invalid JSON, `input` is null
// and `input_error` says why, so the engine can hand the model a result it can recover from.
struct ToolCallDone {
  std::uint32_t index = 0;
  std::string id;
  std::string name;
  std::string arguments_json;
  support::Json input;
  std::optional<std::string> input_error;
};

// The model finished its message. This is the success terminal event: nothing follows it.
struct MessageDone {
  StopReason stop_reason = StopReason::end_turn;
  std::string stop_reason_raw;  // the provider's word, empty when it gave none
  std::optional<Usage> usage;   // absent when the provider reported none
};

// The call failed. Also a terminal event: nothing follows it. The HTTP client reuses this type for error
// statuses, so the retry policy sees one shape whatever failed.
struct ModelError {
  ErrorKind kind = ErrorKind::server;
  std::string message;
  bool retryable = false;
  std::optional<std::chrono::milliseconds> retry_after;
  std::string code;  // the provider's error type/code ("overloaded_error"), or ours ("incomplete_stream")
  ErrorSource source = ErrorSource::in_stream;
  int http_status = 0;  // 0 when not from an HTTP status
};

using ModelEvent = std::variant<TextDelta, ThinkingDelta, ToolCallDelta, ToolCallDone, MessageDone, ModelError>;

inline bool is_terminal(const ModelEvent& event) noexcept {
  return std::holds_alternative<MessageDone>(event) || std::holds_alternative<ModelError>(event);
}

}  // namespace agentd::core::model
