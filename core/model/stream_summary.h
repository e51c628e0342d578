// StreamAccumulator folds a ModelEvent stream into a StreamSummary: the whole assistant message (text,
// thinking with signatures, tool calls, content blocks in order), how it ended, and its usage. The engine
// builds the assistant message from it; tests compare its JSON form with the reference expected/*.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model_event.h"

namespace agentd::support {
class JsonWriter;
}

namespace agentd::core::model {

// One block of the assistant message, in the order the model produced it.
struct StreamBlock {
  enum class Kind { text, thinking, redacted_thinking, tool_call };
  Kind kind = Kind::text;
  std::uint32_t index = 0;    // the provider's block index (see the events)
  std::string text;           // text, or thinking text
  std::string signature;      // thinking: sent back verbatim with the block
  std::string redacted_data;  // redacted_thinking: sent back verbatim
  std::size_t tool_call = 0;  // tool_call: position in StreamSummary::tool_calls
};

struct StreamSummary {
  bool complete = false;                // MessageDone arrived; false after an error or while still streaming
  std::string text;                     // all text blocks concatenated
  std::optional<std::string> thinking;  // all thinking text concatenated; absent when there was none
  std::vector<ToolCallDone> tool_calls;
  std::vector<StreamBlock> blocks;
  std::optional<StopReason> stop_reason;
  std::string stop_reason_raw;
  std::optional<Usage> usage;
  std::optional<ModelError> error;
};

class StreamAccumulator {
 public:
  void add(const ModelEvent& event);
  template <class Events>
  void add_all(const Events& events) {
    for (const auto& event : events) add(event);
  }

  // A terminal event (MessageDone or ModelError) has been added.
  bool finished() const noexcept { return summary_.complete || summary_.error.has_value(); }
  const StreamSummary& summary() const noexcept { return summary_; }
  StreamSummary take() && { return std::move(summary_); }

 private:
  StreamBlock& block_for(StreamBlock::Kind kind, std::uint32_t index);

  StreamSummary summary_;
};

// JSON in the shape of the reference fixtures' expected/*.json summary fields: complete, text, thinking,
// tool_calls [{id, name, arguments_json, input}], stop_reason, stop_reason_raw, usage, error. The error
// carries our `kind` and the provider's `code`; tool calls with bad JSON carry `input_error`.
void to_json(support::JsonWriter& writer, const StreamSummary& summary);
void to_json(support::JsonWriter& writer, const Usage& usage);
void to_json(support::JsonWriter& writer, const ModelError& error);
void to_json(support::JsonWriter& writer, const ToolCallDone& call);

}  // namespace agentd::core::model
