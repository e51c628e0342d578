// ModelClient: one streamed model call, start to finish. Turns the engine's ModelRequest into the
// provider's JSON body (Anthropic Messages or OpenAI Chat Completions), POSTs it through HttpClient,
// decodes the stream into ModelEvents as bytes arrive, and retries failures that happen before any output.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/model/model_config.h"
#include "core/model/model_event.h"
#include "core/model/retry.h"
#include "core/net/http_client.h"
#include "core/support/cancel.h"
#include "core/support/json.h"
#include "core/support/result.h"
#include "core/support/trace.h"

namespace agentd::core::model {

// ---- the engine's request, provider-neutral ----

struct TextBlock {
  std::string text;
};
// Thinking goes back to Anthropic verbatim, signature included, or the API rejects the turn.
struct ThinkingBlock {
  std::string text;
  std::string signature;
  std::string redacted_data;  // set for a redacted_thinking block (text and signature then empty)
};
struct ToolCallBlock {
  std::string id;
  std::string name;
  support::Json input;         // the parsed input (an object)
  std::string arguments_json;  // the raw arguments as the model sent them; OpenAI gets these when set
};
struct ToolResultBlock {
  std::string tool_call_id;
  std::string content;
  bool is_error = false;
};
// An image the user attached (core/model/image.h checked it). `data` is the base64 the providers take;
// `hash` the SHA-256 of the decoded bytes, under which the session stores them: the stored history keeps
// the hash, not the bytes.
struct ImageBlock {
  std::string media_type;
  std::string data;
  std::string hash;
  std::uint64_t bytes = 0;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};
using ContentBlock = std::variant<TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock, ImageBlock>;

// `tool` messages carry ToolResultBlocks; Anthropic receives them as a user message, OpenAI as one
// role "tool" message per result.
enum class Role { user, assistant, tool };

struct Message {
  Role role = Role::user;
  std::vector<ContentBlock> content;
};

struct ToolDefinition {
  std::string name;
  std::string description;
  support::Json input_schema;
};

struct ModelRequest {
  std::string system;
  std::vector<Message> messages;
  std::vector<ToolDefinition> tools;
  std::optional<std::uint32_t> max_tokens;  // default: the config's max_output_tokens
  std::optional<double> temperature;
};

// ---- provider bodies (pure, for tests and for the recorder) ----

// Anthropic Messages body (images as base64 `image` blocks) with stream: true and cache_control breakpoints on the
// stable prefix (the system prompt and the last tool definition) plus the last block of the last user/tool message, so
// the conversation so far is cached for the next turn: three of the four breakpoints Anthropic allows. Written straight
// to text (what is sent); the Json form parses that text back, for tests and tools.
std::string anthropic_request_json(const ModelConfig& config, const ModelRequest& request);
support::Json anthropic_request_body(const ModelConfig& config, const ModelRequest& request);
// OpenAI Chat Completions body with stream: true and stream_options.include_usage. Thinking blocks are
// dropped: Chat Completions has no way to take them back. Images go as `image_url` parts with a data URL.
std::string openai_chat_request_json(const ModelConfig& config, const ModelRequest& request);
support::Json openai_chat_request_body(const ModelConfig& config, const ModelRequest& request);

// ---- the client ----

struct ModelClientOptions {
  RetryPolicy retry;
  EnvLookup env;  // reads the API key at call time; null means the process environment
  std::optional<std::uint64_t> jitter_seed;
};

// What a stream() call did. The events themselves went to the callback.
struct StreamResult {
  int attempts = 0;
  bool ok = false;                  // the terminal event was MessageDone
  std::optional<MessageDone> done;  // the terminal event, when it was a success
  std::optional<ModelError> error;  // the terminal event, when it was an error
  bool output_delivered = false;    // some non-terminal event reached the callback
};

class ModelClient {
 public:
  using EventCallback = std::function<void(const ModelEvent&)>;

  // `http` must outlive the client; stream() runs on the HttpClient's executor.
  ModelClient(ModelConfig config, net::HttpClient& http, ModelClientOptions options = {});

  const ModelConfig& config() const noexcept { return config_; }

  // The HTTP request for `request`: URL, headers (with the key read from the environment now), body.
  // Fails (Errc::invalid_argument) when api_key_env names an unset variable.
  support::Result<net::HttpRequest> build_http_request(const ModelRequest& request) const;

  // Streams one model call. Every decoded event reaches `on_event` as soon as its bytes arrive, and
  // exactly one terminal event (MessageDone or ModelError) ends the sequence. Failures before any output
  // are retried per options.retry (each retry logged at warn and counted in the span attribute
  // `retries`); after output, never. Cancellation ends the call promptly with ModelError{network,
  // code "cancelled", retryable false}. With `parent`, a "model.call" child span records provider, model,
  // attempts and retries, and each attempt gets its own "model.attempt" span under it.
  boost::asio::awaitable<StreamResult> stream(ModelRequest request, EventCallback on_event,
                                              support::CancelToken cancel = {}, support::Span* parent = nullptr);

 private:
  ModelConfig config_;
  net::HttpClient& http_;
  ModelClientOptions options_;
  RetryJitter jitter_;
};

}  // namespace agentd::core::model
