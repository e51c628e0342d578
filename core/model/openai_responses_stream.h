// OpenAiResponsesStream: the OpenAI Responses API streaming format (POST /v1/responses, stream: true; what
// Codex uses) decoded into ModelEvents: named `response.*` events for output text, reasoning text and
// function_call items, ending in response.completed / response.incomplete, or error / response.failed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model_event.h"
#include "core/model/stream_decoder.h"
#include "core/support/json.h"

namespace agentd::core::model {

class OpenAiResponsesStream final : public StreamDecoder {
 protected:
  void on_event(const SseEvent& event, std::vector<ModelEvent>& out) override;
  void on_end(std::vector<ModelEvent>& out) override;

 private:
  struct Call {
    std::uint32_t index = 0;  // output_index
    std::string item_id;
    std::string call_id;
    std::string name;
    std::string arguments;
    bool done = false;
  };

  Call* find_call(const support::Json& data);
  void close_call(Call& call, const support::Json* item, std::vector<ModelEvent>& out);
  void finish_message(StopReason reason, std::string raw, const support::Json* response, std::vector<ModelEvent>& out);

  std::vector<Call> calls_;
};

// Usage from a Responses API `usage` object: input excludes input_tokens_details.cached_tokens.
Usage openai_responses_usage(const support::Json& usage);

}  // namespace agentd::core::model
