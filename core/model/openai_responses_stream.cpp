#include "core/model/openai_responses_stream.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "core/model/json_access.h"
#include "core/model/openai_stream.h"

namespace agentd::core::model {

using detail::object_field;
using detail::string_field;
using detail::string_or_empty;
using detail::uint_field;
using support::Json;

namespace {

std::uint32_t output_index(const Json& data) { return detail::index_field(data, "output_index"); }

}  // namespace

void OpenAiResponsesStream::on_event(const SseEvent& event, std::vector<ModelEvent>& out) {
  auto parsed = support::parse_json(event.data);
  if (!parsed || !parsed->is_object()) {
    emit_terminal(
        malformed_event_error(fmt::format("OpenAI Responses stream: `{}` event data is not a JSON object", event.type)),
        out);
    return;
  }
  const Json& data = *parsed;
  std::string_view type = string_or_empty(data, "type");
  if (type.empty()) type = event.type;

  if (type == "response.output_text.delta" || type == "response.refusal.delta") {
    if (const std::string* text = string_field(data, "delta"); text != nullptr && !text->empty()) {
      out.push_back(TextDelta{output_index(data), *text});
    }
  } else if (type == "response.reasoning_summary_text.delta" || type == "response.reasoning_text.delta") {
    if (const std::string* text = string_field(data, "delta"); text != nullptr && !text->empty()) {
      out.push_back(ThinkingDelta{output_index(data), *text, {}, {}});
    }
  } else if (type == "response.function_call_arguments.delta") {
    Call* call = find_call(data);
    const std::string* fragment = string_field(data, "delta");
    if (call == nullptr || call->done || fragment == nullptr || fragment->empty()) return;
    call->arguments += *fragment;
    out.push_back(ToolCallDelta{call->index, call->call_id, call->name, *fragment});
  } else if (type == "response.output_item.added") {
    const Json* item = object_field(data, "item");
    if (item == nullptr || string_or_empty(*item, "type") != "function_call") return;
    Call call;
    call.index = output_index(data);
    call.item_id = string_or_empty(*item, "id");
    call.call_id = string_or_empty(*item, "call_id");
    call.name = string_or_empty(*item, "name");
    call.arguments = string_or_empty(*item, "arguments");
    out.push_back(ToolCallDelta{call.index, call.call_id, call.name, call.arguments});
    calls_.push_back(std::move(call));
  } else if (type == "response.output_item.done") {
    const Json* item = object_field(data, "item");
    if (item == nullptr || string_or_empty(*item, "type") != "function_call") return;
    if (Call* call = find_call(data); call != nullptr && !call->done) close_call(*call, item, out);
  } else if (type == "response.completed") {
    const bool has_calls = !calls_.empty();
    const StopReason reason = has_calls ? StopReason::tool_use : StopReason::end_turn;
    // The Responses API has no stop reason, only a status; the normalised word stands in for it.
    finish_message(reason, std::string(stop_reason_name(reason)), object_field(data, "response"), out);
  } else if (type == "response.incomplete") {
    const Json* response = object_field(data, "response");
    std::string raw = "incomplete";
    if (const Json* details = response != nullptr ? object_field(*response, "incomplete_details") : nullptr) {
      if (const std::string* reason = string_field(*details, "reason")) raw = *reason;
    }
    const StopReason reason = raw == "content_filter" ? StopReason::refusal : StopReason::max_tokens;
    finish_message(reason, std::move(raw), response, out);
  } else if (type == "error") {
    emit_terminal(openai_error(data), out);
  } else if (type == "response.failed") {
    const Json* response = object_field(data, "response");
    const Json* error = response != nullptr ? object_field(*response, "error") : nullptr;
    emit_terminal(openai_error(error != nullptr ? *error : Json("response failed")), out);
  }
  // Other events (created, in_progress, content_part.*, *.done summaries) repeat what the deltas said.
}

void OpenAiResponsesStream::on_end(std::vector<ModelEvent>& out) {
  emit_terminal(truncated_error("stream ended before response.completed"), out);
}

OpenAiResponsesStream::Call* OpenAiResponsesStream::find_call(const Json& data) {
  const std::string_view item_id = string_or_empty(data, "item_id");
  const Json* item = object_field(data, "item");
  const std::string_view id = !item_id.empty() ? item_id : item != nullptr ? string_or_empty(*item, "id") : "";
  const std::uint32_t index = output_index(data);
  for (auto& call : calls_) {
    if (!id.empty() ? call.item_id == id : call.index == index) return &call;
  }
  return nullptr;
}

void OpenAiResponsesStream::close_call(Call& call, const Json* item, std::vector<ModelEvent>& out) {
  call.done = true;
  ToolCallDone done;
  done.index = call.index;
  done.id = call.call_id;
  done.name = call.name;
  done.arguments_json = call.arguments;
  // The final item repeats the whole arguments; trust it only when no fragments arrived.
  if (done.arguments_json.empty() && item != nullptr) done.arguments_json = string_or_empty(*item, "arguments");
  parse_tool_input(done);
  out.push_back(std::move(done));
}

void OpenAiResponsesStream::finish_message(StopReason reason, std::string raw, const Json* response,
                                           std::vector<ModelEvent>& out) {
  for (auto& call : calls_) {
    if (!call.done) close_call(call, nullptr, out);
  }
  MessageDone done;
  done.stop_reason = reason;
  done.stop_reason_raw = std::move(raw);
  if (const Json* usage = response != nullptr ? object_field(*response, "usage") : nullptr) {
    done.usage = openai_responses_usage(*usage);
  }
  emit_terminal(std::move(done), out);
}

Usage openai_responses_usage(const Json& usage) {
  return openai_usage(usage, {"input_tokens", "input_tokens_details", "output_tokens", "output_tokens_details"});
}

}  // namespace agentd::core::model
