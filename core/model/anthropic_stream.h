// AnthropicStream: the Anthropic Messages API streaming format (POST /v1/messages, stream: true) decoded
// into ModelEvents: message_start -> content blocks (text, thinking, redacted_thinking, tool_use) with
// their deltas -> message_delta (stop reason, cumulative usage) -> message_stop, plus ping and error.
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

class AnthropicStream final : public StreamDecoder {
 protected:
  void on_event(const net::SseEvent& event, std::vector<ModelEvent>& out) override;
  void on_end(std::vector<ModelEvent>& out) override;

 private:
  enum class BlockKind { text, thinking, redacted_thinking, tool_use, other };
  struct Block {
    std::uint32_t index = 0;
    BlockKind kind = BlockKind::other;
    std::string id;
    std::string name;
    std::string input_json;   // concatenated input_json_delta fragments
    std::string start_input;  // a non-empty `input` given whole in content_block_start
  };

  void on_message_start(const support::Json& data);
  void on_block_start(const support::Json& data, std::vector<ModelEvent>& out);
  void on_block_delta(const support::Json& data, std::vector<ModelEvent>& out);
  void on_block_stop(const support::Json& data, std::vector<ModelEvent>& out);
  void close_block(std::vector<Block>::iterator it, std::vector<ModelEvent>& out);
  void on_message_delta(const support::Json& data);
  void merge_usage(const support::Json& usage);
  Block* find_block(std::uint32_t index);

  std::vector<Block> open_blocks_;
  std::optional<Usage> usage_;
  std::string stop_reason_raw_;
  bool saw_tool_use_ = false;
};

// Maps an Anthropic error object (`{"type": "overloaded_error", "message": ...}`, from an in-stream
// `error` event or an HTTP error body) onto a ModelError with source in_stream; the HTTP client adjusts
// source, status and retry_after.
ModelError anthropic_error(std::string_view type, std::string_view message);

// Normalises a stop_reason. Unknown values read as end_turn, or tool_use when the message has tool calls.
StopReason anthropic_stop_reason(std::string_view raw, bool has_tool_calls) noexcept;

}  // namespace agentd::core::model
