// OpenAiChatStream: the OpenAI Chat Completions streaming format (POST /v1/chat/completions, stream: true)
// decoded into ModelEvents, including the variations of OpenAI-compatible local servers (Ollama,
// llama.cpp server, vLLM, LM Studio): missing or reused tool-call indexes and ids, whole arguments in one
// chunk or as a JSON object, reasoning deltas, errors inside a 200 stream, a final [DONE] with no blank line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model_event.h"
#include "core/model/stream_decoder.h"
#include "core/support/json.h"

namespace agentd::core::model {

class OpenAiChatStream final : public StreamDecoder {
 protected:
  void on_event(const net::SseEvent& event, std::vector<ModelEvent>& out) override;
  void on_end(std::vector<ModelEvent>& out) override;

 private:
  struct Call {
    std::optional<std::uint64_t> wire_index;  // the `index` the server gave, when it gave one
    std::string id;
    bool id_generated = false;
    std::string name;
    std::string arguments;
  };

  void on_choice(const support::Json& choice, std::vector<ModelEvent>& out);
  void on_tool_call(const support::Json& call, const support::Json* function, std::vector<ModelEvent>& out);
  Call* call_for(std::optional<std::uint64_t> wire_index, std::string_view id, std::string_view name);
  void close_calls(std::vector<ModelEvent>& out);
  void finish_message(std::vector<ModelEvent>& out);

  std::vector<Call> calls_;
  std::size_t closed_calls_ = 0;  // calls_[0, closed_calls_) have had their ToolCallDone
  std::optional<std::string> finish_reason_;
  std::optional<Usage> usage_;
};

// Maps the value of an `error` member (an object with message/type/code, or a bare string as some local
// servers send) onto a ModelError with source in_stream; the HTTP client reuses it for error bodies.
ModelError openai_error(const support::Json& error);

// Normalises a finish_reason. "stop" with tool calls reads as tool_use: some local servers say "stop" even
// when the message ends in tool calls, and the engine must still run them.
StopReason openai_finish_reason(std::string_view raw, bool has_tool_calls) noexcept;

// Usage from a Chat Completions `usage` object: input excludes prompt_tokens_details.cached_tokens.
Usage openai_chat_usage(const support::Json& usage);

}  // namespace agentd::core::model
