#include "core/model/anthropic_stream.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "core/model/json_access.h"

namespace agentd::core::model {

using detail::object_field;
using detail::string_field;
using detail::string_or_empty;
using detail::uint_field;
using support::Json;

namespace {

std::uint32_t block_index(const Json& data) { return detail::index_field(data, "index"); }

}  // namespace

void AnthropicStream::on_event(const net::SseEvent& event, std::vector<ModelEvent>& out) {
  auto parsed = support::parse_json(event.data);
  if (!parsed || !parsed->is_object()) {
    emit_terminal(
        malformed_event_error(fmt::format("Anthropic stream: `{}` event data is not a JSON object{}{}", event.type,
                                          parsed ? "" : ": ", parsed ? "" : parsed.error().message())),
        out);
    return;
  }
  const Json& data = *parsed;
  // The data's own `type` is authoritative; the SSE event name is only a fallback.
  std::string_view type = string_or_empty(data, "type");
  if (type.empty()) type = event.type;

  if (type == "content_block_delta") {
    on_block_delta(data, out);
  } else if (type == "ping") {
    // keep-alive
  } else if (type == "content_block_start") {
    on_block_start(data, out);
  } else if (type == "content_block_stop") {
    on_block_stop(data, out);
  } else if (type == "message_start") {
    on_message_start(data);
  } else if (type == "message_delta") {
    on_message_delta(data);
  } else if (type == "message_stop") {
    // A tool_use block never closed is still a complete call once the message itself is complete.
    while (!open_blocks_.empty()) close_block(open_blocks_.begin(), out);
    MessageDone done;
    done.stop_reason = anthropic_stop_reason(stop_reason_raw_, saw_tool_use_);
    done.stop_reason_raw = stop_reason_raw_;
    done.usage = usage_;
    emit_terminal(std::move(done), out);
  } else if (type == "error") {
    const Json* error = object_field(data, "error");
    const std::string_view error_type = error != nullptr ? string_or_empty(*error, "type") : std::string_view();
    const std::string_view message = error != nullptr ? string_or_empty(*error, "message") : std::string_view();
    emit_terminal(anthropic_error(error_type, message), out);
  }
  // Other event types are ignored: the API documents that new ones may appear.
}

void AnthropicStream::on_end(std::vector<ModelEvent>& out) {
  emit_terminal(truncated_error("stream ended before message_stop"), out);
}

void AnthropicStream::on_message_start(const Json& data) {
  const Json* message = object_field(data, "message");
  if (message == nullptr) return;
  if (const Json* usage = object_field(*message, "usage")) merge_usage(*usage);
}

void AnthropicStream::merge_usage(const Json& usage) {
  // Usage in message_delta is cumulative: fields present replace what we have, absent ones stay.
  if (!usage_) usage_.emplace();
  if (auto v = uint_field(usage, "input_tokens")) usage_->input_tokens = *v;
  if (auto v = uint_field(usage, "output_tokens")) usage_->output_tokens = *v;
  if (auto v = uint_field(usage, "cache_creation_input_tokens")) usage_->cache_write_tokens = *v;
  if (auto v = uint_field(usage, "cache_read_input_tokens")) usage_->cache_read_tokens = *v;
}

AnthropicStream::Block* AnthropicStream::find_block(std::uint32_t index) {
  for (auto& block : open_blocks_) {
    if (block.index == index) return &block;
  }
  return nullptr;
}

void AnthropicStream::on_block_start(const Json& data, std::vector<ModelEvent>& out) {
  const Json* content = object_field(data, "content_block");
  if (content == nullptr) return;
  const std::uint32_t index = block_index(data);

  Block block;
  block.index = index;
  const std::string_view type = string_or_empty(*content, "type");
  if (type == "text") {
    block.kind = BlockKind::text;
    if (const std::string* text = string_field(*content, "text"); text != nullptr && !text->empty()) {
      out.push_back(TextDelta{index, *text});
    }
  } else if (type == "thinking") {
    block.kind = BlockKind::thinking;
    const std::string_view text = string_or_empty(*content, "thinking");
    const std::string_view signature = string_or_empty(*content, "signature");
    if (!text.empty() || !signature.empty()) {
      out.push_back(ThinkingDelta{index, std::string(text), std::string(signature), {}});
    }
  } else if (type == "redacted_thinking") {
    block.kind = BlockKind::redacted_thinking;
    out.push_back(ThinkingDelta{index, {}, {}, std::string(string_or_empty(*content, "data"))});
  } else if (type == "tool_use") {
    block.kind = BlockKind::tool_use;
    block.id = string_or_empty(*content, "id");
    block.name = string_or_empty(*content, "name");
    if (const Json* input = object_field(*content, "input"); input != nullptr && input->size() > 0) {
      block.start_input = input->dump();
    }
    saw_tool_use_ = true;
    out.push_back(ToolCallDelta{index, block.id, block.name, {}});
  }
  if (Block* existing = find_block(index)) {
    *existing = std::move(block);  // a restarted index replaces the old block
  } else {
    open_blocks_.push_back(std::move(block));
  }
}

void AnthropicStream::on_block_delta(const Json& data, std::vector<ModelEvent>& out) {
  const Json* delta = object_field(data, "delta");
  if (delta == nullptr) return;
  const std::uint32_t index = block_index(data);
  const std::string_view type = string_or_empty(*delta, "type");
  if (type == "text_delta") {
    if (const std::string* text = string_field(*delta, "text"); text != nullptr && !text->empty()) {
      out.push_back(TextDelta{index, *text});
    }
  } else if (type == "input_json_delta") {
    Block* block = find_block(index);
    const std::string* fragment = string_field(*delta, "partial_json");
    if (block == nullptr || block->kind != BlockKind::tool_use || fragment == nullptr || fragment->empty()) return;
    block->input_json += *fragment;
    out.push_back(ToolCallDelta{index, block->id, block->name, *fragment});
  } else if (type == "thinking_delta") {
    if (const std::string* text = string_field(*delta, "thinking"); text != nullptr && !text->empty()) {
      out.push_back(ThinkingDelta{index, *text, {}, {}});
    }
  } else if (type == "signature_delta") {
    if (const std::string* signature = string_field(*delta, "signature"); signature != nullptr && !signature->empty()) {
      out.push_back(ThinkingDelta{index, {}, *signature, {}});
    }
  }
  // citations_delta and future delta types carry nothing the engine uses yet.
}

void AnthropicStream::on_block_stop(const Json& data, std::vector<ModelEvent>& out) {
  const std::uint32_t index = block_index(data);
  const auto it =
      std::find_if(open_blocks_.begin(), open_blocks_.end(), [&](const Block& b) { return b.index == index; });
  if (it != open_blocks_.end()) close_block(it, out);
}

void AnthropicStream::close_block(std::vector<Block>::iterator it, std::vector<ModelEvent>& out) {
  Block block = std::move(*it);
  open_blocks_.erase(it);
  if (block.kind != BlockKind::tool_use) return;
  ToolCallDone done;
  done.index = block.index;
  done.id = std::move(block.id);
  done.name = std::move(block.name);
  done.arguments_json = block.input_json.empty() ? std::move(block.start_input) : std::move(block.input_json);
  parse_tool_input(done);
  out.push_back(std::move(done));
}

void AnthropicStream::on_message_delta(const Json& data) {
  if (const Json* delta = object_field(data, "delta")) {
    if (const std::string* reason = string_field(*delta, "stop_reason")) stop_reason_raw_ = *reason;
  }
  if (const Json* usage = object_field(data, "usage")) merge_usage(*usage);
}

ModelError anthropic_error(std::string_view type, std::string_view message) {
  ModelError error;
  error.code = type.empty() ? "unknown_error" : std::string(type);
  error.message = message.empty() ? error.code : std::string(message);
  error.source = ErrorSource::in_stream;
  if (type == "overloaded_error") {
    error.kind = ErrorKind::overloaded;
    error.retryable = true;
  } else if (type == "rate_limit_error") {
    error.kind = ErrorKind::rate_limited;
    error.retryable = true;
    error.retry_after = retry_after_from_message(message);
  } else if (type == "api_error" || type == "timeout_error") {
    error.kind = ErrorKind::server;
    error.retryable = true;
  } else if (type == "authentication_error" || type == "permission_error" || type == "billing_error") {
    error.kind = ErrorKind::auth;
  } else if (type == "invalid_request_error" || type == "request_too_large" || type == "not_found_error") {
    const bool too_long = contains_ignoring_case(message, "prompt is too long") ||
                          contains_ignoring_case(message, "context window") ||
                          contains_ignoring_case(message, "context length");
    error.kind = too_long ? ErrorKind::context_too_long : ErrorKind::invalid_request;
  } else {
    // An error type we do not know: report it, but do not pay for a blind retry.
    error.kind = ErrorKind::server;
  }
  return error;
}

StopReason anthropic_stop_reason(std::string_view raw, bool has_tool_calls) noexcept {
  // StopReason's names are Anthropic's words; a full context window is a max_tokens stop for us.
  if (raw == "model_context_window_exceeded") return StopReason::max_tokens;
  return support::enum_from_name<StopReason>(raw).value_or(has_tool_calls ? StopReason::tool_use
                                                                          : StopReason::end_turn);
}

}  // namespace agentd::core::model
