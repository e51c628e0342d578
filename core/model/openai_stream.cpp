#include "core/model/openai_stream.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "core/model/json_access.h"
#include "core/support/enum_names.h"
#include "core/support/text.h"

namespace agentd::core::model {

using detail::array_field;
using detail::object_field;
using detail::string_field;
using detail::string_or_empty;
using detail::uint_field;
using support::Json;

namespace {

// True when `text` is one whole JSON value: a call whose arguments are complete cannot take more.
bool is_complete_json(std::string_view text) {
  return !support::trim(text).empty() && support::parse_json(text).has_value();
}

}  // namespace

void OpenAiChatStream::on_event(const net::SseEvent& event, std::vector<ModelEvent>& out) {
  const std::string_view payload = support::trim(event.data);
  if (payload == "[DONE]") {
    finish_message(out);
    return;
  }
  auto parsed = support::parse_json(payload);
  if (!parsed || !parsed->is_object()) {
    emit_terminal(malformed_event_error(fmt::format("OpenAI stream: chunk is not a JSON object{}{}", parsed ? "" : ": ",
                                                    parsed ? "" : parsed.error().message())),
                  out);
    return;
  }
  const Json& chunk = *parsed;
  if (const Json* error = chunk.find("error"); error != nullptr && !error->is_null()) {
    emit_terminal(openai_error(*error), out);
    return;
  }
  if (event.type == "error") {  // a named error event whose body is the error object itself
    emit_terminal(openai_error(chunk), out);
    return;
  }
  if (const Json* choices = array_field(chunk, "choices")) {
    // We request one choice; with n > 1 the others are not ours to merge into this message.
    for (const Json& choice : choices->as_array()) {
      if (choice.is_object() && uint_field(choice, "index").value_or(0) == 0) {
        on_choice(choice, out);
        break;
      }
    }
  }
  // With stream_options.include_usage the usage arrives in its own chunk (choices: []); llama.cpp puts
  // it on the finish_reason chunk. Every other chunk carries usage: null.
  if (const Json* usage = object_field(chunk, "usage")) usage_ = openai_chat_usage(*usage);
}

void OpenAiChatStream::on_choice(const Json& choice, std::vector<ModelEvent>& out) {
  if (const Json* delta = object_field(choice, "delta")) {
    // llama.cpp and DeepSeek say reasoning_content, vLLM and OpenRouter say reasoning.
    for (const std::string_view key : {"reasoning_content", "reasoning"}) {
      if (const std::string* text = string_field(*delta, key); text != nullptr && !text->empty()) {
        out.push_back(ThinkingDelta{0, *text, {}, {}});
      }
    }
    if (const std::string* text = string_field(*delta, "content"); text != nullptr && !text->empty()) {
      out.push_back(TextDelta{0, *text});
    }
    if (const std::string* text = string_field(*delta, "refusal"); text != nullptr && !text->empty()) {
      out.push_back(TextDelta{0, *text});
    }
    if (const Json* tool_calls = array_field(*delta, "tool_calls")) {
      for (const Json& call : tool_calls->as_array()) {
        if (call.is_object()) on_tool_call(call, object_field(call, "function"), out);
      }
    }
    // The deprecated single function_call: a call without index or id.
    if (const Json* function_call = object_field(*delta, "function_call")) {
      on_tool_call(Json::object(), function_call, out);
    }
  }
  if (const std::string* reason = string_field(choice, "finish_reason"); reason != nullptr && !reason->empty()) {
    finish_reason_ = *reason;
    close_calls(out);
  }
}

OpenAiChatStream::Call* OpenAiChatStream::call_for(std::optional<std::uint64_t> wire_index, std::string_view id,
                                                   std::string_view name) {
  Call* target = nullptr;
  if (wire_index) {
    for (auto it = calls_.rbegin(); it != calls_.rend(); ++it) {
      if (it->wire_index == wire_index) {
        target = &*it;
        break;
      }
    }
    // vLLM-style reuse of index 0: a different id on the same index starts a new call. Without ids, a
    // delta that names a function while the call under that index already holds complete arguments does.
    if (target != nullptr && !id.empty() && !target->id_generated && target->id != id) target = nullptr;
    if (target != nullptr && id.empty() && !name.empty() && !target->name.empty() &&
        is_complete_json(target->arguments)) {
      target = nullptr;
    }
  } else if (!id.empty()) {
    for (auto& call : calls_) {
      if (!call.id_generated && call.id == id) target = &call;
    }
  } else if (name.empty() && !calls_.empty()) {
    target = &calls_.back();  // a bare argument fragment continues the latest call
  }
  // A call that already got its ToolCallDone cannot grow.
  if (target != nullptr && static_cast<std::size_t>(target - calls_.data()) < closed_calls_) target = nullptr;
  return target;
}

void OpenAiChatStream::on_tool_call(const Json& call, const Json* function, std::vector<ModelEvent>& out) {
  const std::optional<std::uint64_t> wire_index = uint_field(call, "index");
  const std::string_view id = string_or_empty(call, "id");
  const std::string_view name = function != nullptr ? string_or_empty(*function, "name") : std::string_view();
  std::string fragment;
  if (const Json* arguments = function != nullptr ? function->find("arguments") : nullptr) {
    if (arguments->is_string()) {
      fragment = arguments->as_string();
    } else if (arguments->is_object() || arguments->is_array()) {
      fragment = arguments->dump();  // Ollama-style arguments given as an object
    }
  }

  Call* target = call_for(wire_index, id, name);
  bool started = false;
  if (target == nullptr) {
    Call fresh;
    fresh.wire_index = wire_index;
    if (id.empty()) {
      // The reference fixtures name made-up ids after the call's position in the message.
      fresh.id = fmt::format("call_local_{}", calls_.size());
      fresh.id_generated = true;
    } else {
      fresh.id = id;
    }
    calls_.push_back(std::move(fresh));
    target = &calls_.back();
    started = true;
  }
  if (target->name.empty() && !name.empty()) target->name = name;
  target->arguments += fragment;
  if (started || !fragment.empty()) {
    const auto ordinal = static_cast<std::uint32_t>(target - calls_.data());
    out.push_back(ToolCallDelta{ordinal, target->id, target->name, std::move(fragment)});
  }
}

void OpenAiChatStream::close_calls(std::vector<ModelEvent>& out) {
  for (; closed_calls_ < calls_.size(); ++closed_calls_) {
    Call& call = calls_[closed_calls_];
    ToolCallDone done;
    done.index = static_cast<std::uint32_t>(closed_calls_);
    done.id = call.id;
    done.name = call.name;
    done.arguments_json = call.arguments;
    parse_tool_input(done);
    out.push_back(std::move(done));
  }
}

void OpenAiChatStream::finish_message(std::vector<ModelEvent>& out) {
  close_calls(out);
  MessageDone done;
  done.stop_reason_raw = finish_reason_.value_or("");
  done.stop_reason = openai_finish_reason(done.stop_reason_raw, !calls_.empty());
  done.usage = usage_;
  emit_terminal(std::move(done), out);
}

void OpenAiChatStream::on_end(std::vector<ModelEvent>& out) {
  // A server that said why it finished but closed without [DONE] still sent a whole message.
  if (finish_reason_) {
    finish_message(out);
    return;
  }
  emit_terminal(truncated_error("stream ended before [DONE]"), out);
}

ModelError openai_error(const Json& error) {
  ModelError out;
  out.source = ErrorSource::in_stream;
  std::string type;
  std::string code;
  if (error.is_string()) {
    out.message = error.as_string();
  } else if (error.is_object()) {
    out.message = string_or_empty(error, "message");
    type = string_or_empty(error, "type");
    if (const Json* c = error.find("code"); c != nullptr) {
      if (c->is_string()) {
        code = c->as_string();
      } else if (c->is_number()) {
        code = c->dump();
      }
    }
  }
  out.code = !code.empty() ? code : !type.empty() ? type : std::string("error");
  if (out.message.empty()) out.message = out.code;

  auto is = [&](std::string_view word) { return code == word || type == word; };
  const std::string_view message = out.message;
  if (is("insufficient_quota")) {
    out.kind = ErrorKind::rate_limited;  // a billing problem: waiting will not help
  } else if (is("rate_limit_exceeded") || is("rate_limit_error") || is("tokens") || is("requests")) {
    out.kind = ErrorKind::rate_limited;
    out.retryable = true;
    out.retry_after = retry_after_from_message(message);
  } else if (is("context_length_exceeded") || is("exceed_context_size_error") ||
             contains_ignoring_case(message, "maximum context length") ||
             contains_ignoring_case(message, "context size") || contains_ignoring_case(message, "context window")) {
    out.kind = ErrorKind::context_too_long;
  } else if (is("server_error") || is("api_error") || is("internal_error")) {
    out.kind = ErrorKind::server;
    out.retryable = true;
  } else if (is("overloaded_error") || is("engine_overloaded") || is("server_overloaded") ||
             is("service_unavailable")) {
    out.kind = ErrorKind::overloaded;
    out.retryable = true;
  } else if (is("invalid_api_key") || is("authentication_error") || is("permission_error") || is("unauthorized")) {
    out.kind = ErrorKind::auth;
  } else if (is("invalid_request_error") || is("invalid_request") || is("not_found_error") || is("model_not_found")) {
    out.kind = ErrorKind::invalid_request;
  } else {
    // Unknown: report it as the server's failure, but do not pay for a blind retry.
    out.kind = ErrorKind::server;
  }
  return out;
}

// OpenAI's finish_reason words; "stop" and anything unknown end the turn (or ask for tools).
constexpr support::EnumName<StopReason> kFinishReasons[] = {
    {StopReason::tool_use, "tool_calls"},
    {StopReason::tool_use, "function_call"},
    {StopReason::max_tokens, "length"},
    {StopReason::refusal, "content_filter"},
};

StopReason openai_finish_reason(std::string_view raw, bool has_tool_calls) noexcept {
  return support::enum_from_name<StopReason>(kFinishReasons, raw)
      .value_or(has_tool_calls ? StopReason::tool_use : StopReason::end_turn);
}

Usage openai_chat_usage(const Json& usage) {
  Usage out;
  const std::uint64_t input = uint_field(usage, "prompt_tokens").value_or(0);
  std::uint64_t cached = 0;
  if (const Json* details = object_field(usage, "prompt_tokens_details")) {
    cached = std::min(uint_field(*details, "cached_tokens").value_or(0), input);
  }
  out.input_tokens = input - cached;
  out.cache_read_tokens = cached;
  out.output_tokens = uint_field(usage, "completion_tokens").value_or(0);
  if (const Json* details = object_field(usage, "completion_tokens_details")) {
    out.reasoning_output_tokens = uint_field(*details, "reasoning_tokens");
  }
  return out;
}

}  // namespace agentd::core::model
