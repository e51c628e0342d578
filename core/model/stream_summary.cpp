#include "core/model/stream_summary.h"

#include <type_traits>

#include "core/support/json_writer.h"

namespace agentd::core::model {

StreamBlock& StreamAccumulator::block_for(StreamBlock::Kind kind, std::uint32_t index) {
  auto& blocks = summary_.blocks;
  if (blocks.empty() || blocks.back().kind != kind || blocks.back().index != index) {
    StreamBlock block;
    block.kind = kind;
    block.index = index;
    blocks.push_back(std::move(block));
  }
  return blocks.back();
}

void StreamAccumulator::add(const ModelEvent& event) {
  if (finished()) return;  // nothing follows a terminal event
  std::visit(
      [this](const auto& e) {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, TextDelta>) {
          summary_.text += e.text;
          block_for(StreamBlock::Kind::text, e.index).text += e.text;
        } else if constexpr (std::is_same_v<E, ThinkingDelta>) {
          if (!e.redacted_data.empty()) {
            block_for(StreamBlock::Kind::redacted_thinking, e.index).redacted_data += e.redacted_data;
          }
          if (!e.text.empty() || !e.signature.empty()) {
            StreamBlock& block = block_for(StreamBlock::Kind::thinking, e.index);
            block.text += e.text;
            block.signature += e.signature;
          }
          if (!e.text.empty()) {
            if (!summary_.thinking) summary_.thinking.emplace();
            *summary_.thinking += e.text;
          }
        } else if constexpr (std::is_same_v<E, ToolCallDelta>) {
          // Deltas are for live display; the call counts once ToolCallDone makes it whole.
        } else if constexpr (std::is_same_v<E, ToolCallDone>) {
          StreamBlock block;
          block.kind = StreamBlock::Kind::tool_call;
          block.index = e.index;
          block.tool_call = summary_.tool_calls.size();
          summary_.blocks.push_back(std::move(block));
          summary_.tool_calls.push_back(e);
        } else if constexpr (std::is_same_v<E, MessageDone>) {
          summary_.complete = true;
          summary_.stop_reason = e.stop_reason;
          summary_.stop_reason_raw = e.stop_reason_raw;
          summary_.usage = e.usage;
        } else if constexpr (std::is_same_v<E, ModelError>) {
          summary_.error = e;
        }
      },
      event);
}

void to_json(support::JsonWriter& w, const Usage& usage) {
  w.begin_object();
  w.member("input_tokens", usage.input_tokens);
  w.member("output_tokens", usage.output_tokens);
  w.member("cache_read_input_tokens", usage.cache_read_tokens);
  w.member("cache_creation_input_tokens", usage.cache_write_tokens);
  w.optional_member("reasoning_output_tokens", usage.reasoning_output_tokens);
  w.member("total_input_tokens", usage.total_input_tokens());
  w.end_object();
}

void to_json(support::JsonWriter& w, const ModelError& error) {
  w.begin_object();
  w.member("kind", error_kind_name(error.kind));
  w.member("code", error.code);
  w.member("message", error.message);
  w.member("retryable", error.retryable);
  w.member("source", error_source_name(error.source));
  if (error.retry_after) w.member("retry_after_ms", static_cast<std::int64_t>(error.retry_after->count()));
  if (error.http_status != 0) w.member("http_status", error.http_status);
  w.end_object();
}

void to_json(support::JsonWriter& w, const ToolCallDone& call) {
  w.begin_object();
  w.member("id", call.id);
  w.member("name", call.name);
  w.member("arguments_json", call.arguments_json);
  w.member("input", call.input);
  w.optional_member("input_error", call.input_error);
  w.end_object();
}

void to_json(support::JsonWriter& w, const StreamSummary& summary) {
  w.begin_object();
  w.member("complete", summary.complete);
  w.member("text", summary.text);
  w.member("thinking", summary.thinking);
  w.member("tool_calls", summary.tool_calls);
  if (summary.stop_reason) {
    w.member("stop_reason", stop_reason_name(*summary.stop_reason));
  } else {
    w.key("stop_reason").null();
  }
  if (summary.stop_reason_raw.empty()) {
    w.key("stop_reason_raw").null();
  } else {
    w.member("stop_reason_raw", summary.stop_reason_raw);
  }
  w.member("usage", summary.usage);
  w.member("error", summary.error);
  w.end_object();
}

}  // namespace agentd::core::model
