// The provider request bodies and the streaming call with its retry loop.
#include "core/model/model_client.h"

#include <cassert>
#include <chrono>
#include <memory>
#include <string_view>
#include <tuple>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/model/stream_decoder.h"
#include "core/support/cancel_asio.h"
#include "core/support/json_writer.h"
#include "core/support/log.h"

namespace agentd::core::model {
namespace {

namespace asio = boost::asio;
using support::Json;

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

Json object_or_empty(const Json& value) { return value.is_object() ? value : Json::object(); }

Json schema_or_empty(const Json& schema) {
  if (schema.is_object()) return schema;
  Json empty = Json::object();
  empty.set("type", "object");
  empty.set("properties", Json::object());
  return empty;
}

std::string trim_trailing_slashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// ---- Anthropic ----

// Anthropic rejects empty text blocks; they are left out.
bool anthropic_sendable(const ContentBlock& block) {
  const auto* text = std::get_if<TextBlock>(&block);
  return text == nullptr || !text->text.empty();
}

void write_ephemeral(support::JsonWriter& w) {
  w.key("cache_control").begin_object().member("type", "ephemeral").end_object();
}

void write_anthropic_block(support::JsonWriter& w, const ContentBlock& block, bool cache_breakpoint) {
  w.begin_object();
  std::visit(Overloaded{
                 [&](const TextBlock& text) { w.member("type", "text").member("text", text.text); },
                 [&](const ThinkingBlock& thinking) {
                   if (!thinking.redacted_data.empty()) {
                     w.member("type", "redacted_thinking").member("data", thinking.redacted_data);
                     return;
                   }
                   w.member("type", "thinking").member("thinking", thinking.text);
                   w.member("signature", thinking.signature);
                 },
                 [&](const ToolCallBlock& call) {
                   w.member("type", "tool_use").member("id", call.id).member("name", call.name);
                   w.key("input");
                   if (call.input.is_object()) {
                     w.value(call.input);
                   } else {
                     w.begin_object().end_object();
                   }
                 },
                 [&](const ToolResultBlock& result) {
                   w.member("type", "tool_result").member("tool_use_id", result.tool_call_id);
                   w.member("content", result.content).member("is_error", result.is_error);
                 },
                 [&](const ImageBlock& image) {
                   w.member("type", "image").key("source").begin_object().member("type", "base64");
                   w.member("media_type", image.media_type).member("data", image.data).end_object();
                 },
             },
             block);
  if (cache_breakpoint) write_ephemeral(w);
  w.end_object();
}

// The "messages" array. Written straight from the history, without building a JSON tree: a request
// carries the whole conversation, so this runs over every message twice per tool call.
void write_anthropic_messages(support::JsonWriter& w, const std::vector<Message>& messages) {
  // Anthropic wants strict user/assistant alternation: tool results and a following user text are one
  // user message. Group first (pointers only), then write.
  struct Entry {
    Role role;
    std::vector<const ContentBlock*> blocks;
  };
  std::vector<Entry> entries;
  entries.reserve(messages.size());
  for (const auto& message : messages) {
    const Role role = message.role == Role::assistant ? Role::assistant : Role::user;
    const bool merge = !entries.empty() && entries.back().role == role;
    bool started = merge;
    for (const auto& block : message.content) {
      if (!anthropic_sendable(block)) continue;
      if (!started) {
        entries.push_back(Entry{role, {}});
        started = true;
      }
      entries.back().blocks.push_back(&block);
    }
  }
  // The last block of the last user message is a cache breakpoint: the conversation so far is cached
  // for the next call.
  const Entry* breakpoint_entry = nullptr;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->role == Role::user) {
      breakpoint_entry = &*it;
      break;
    }
  }
  w.begin_array();
  for (const auto& entry : entries) {
    const bool has_breakpoint = &entry == breakpoint_entry;
    w.begin_object().member("role", entry.role == Role::assistant ? "assistant" : "user");
    w.key("content");
    // A user message that is one plain text block reads best as a string, as the API documents it.
    const auto* only_text = entry.blocks.size() == 1 ? std::get_if<TextBlock>(entry.blocks.front()) : nullptr;
    if (entry.role == Role::user && only_text != nullptr && !has_breakpoint) {
      w.value(only_text->text);
    } else {
      w.begin_array();
      for (std::size_t i = 0; i < entry.blocks.size(); ++i) {
        write_anthropic_block(w, *entry.blocks[i], has_breakpoint && i + 1 == entry.blocks.size());
      }
      w.end_array();
    }
    w.end_object();
  }
  w.end_array();
}

// ---- OpenAI ----

void write_openai_messages(support::JsonWriter& w, const ModelRequest& request) {
  w.begin_array();
  if (!request.system.empty()) w.begin_object().member("role", "system").member("content", request.system).end_object();
  std::vector<const std::string*> texts;
  std::vector<const ToolCallBlock*> calls;
  std::vector<const ContentBlock*> parts;  // a user message's text and images, in order
  for (const auto& message : request.messages) {
    texts.clear();
    calls.clear();
    parts.clear();
    bool images = false;
    for (const auto& block : message.content) {
      if (const auto* text = std::get_if<TextBlock>(&block); text != nullptr && !text->text.empty()) {
        texts.push_back(&text->text);
        parts.push_back(&block);
      } else if (std::holds_alternative<ImageBlock>(block)) {
        images = true;
        parts.push_back(&block);
      } else if (const auto* call = std::get_if<ToolCallBlock>(&block)) {
        calls.push_back(call);
      } else if (const auto* result = std::get_if<ToolResultBlock>(&block)) {
        // Each result is a message of its own, before the rest of the message it came in.
        w.begin_object().member("role", "tool").member("tool_call_id", result->tool_call_id);
        w.member("content", result->content).end_object();
      }
    }
    if (message.role == Role::assistant) {
      if (texts.empty() && calls.empty()) continue;
      w.begin_object().member("role", "assistant").key("content");
      if (texts.empty()) {
        w.null();
      } else {
        std::string joined;
        for (const auto* text : texts) joined += (joined.empty() ? "" : "\n\n") + *text;
        w.value(joined);
      }
      if (!calls.empty()) {
        w.key("tool_calls").begin_array();
        for (const auto* call : calls) {
          w.begin_object().member("id", call->id).member("type", "function").key("function").begin_object();
          w.member("name", call->name);
          w.member("arguments",
                   call->arguments_json.empty() ? object_or_empty(call->input).dump() : call->arguments_json);
          w.end_object().end_object();
        }
        w.end_array();
      }
      w.end_object();
    } else if (!parts.empty()) {
      w.begin_object().member("role", "user").key("content");
      if (texts.size() == 1 && !images) {
        w.value(*texts.front());
      } else {
        w.begin_array();
        for (const auto* part : parts) {
          if (const auto* text = std::get_if<TextBlock>(part)) {
            w.begin_object().member("type", "text").member("text", text->text).end_object();
          } else if (const auto* image = std::get_if<ImageBlock>(part)) {
            w.begin_object().member("type", "image_url").key("image_url").begin_object();
            std::string url;
            url.reserve(image->media_type.size() + image->data.size() + 13);
            url.append("data:").append(image->media_type).append(";base64,").append(image->data);
            w.member("url", url).end_object();
            w.end_object();
          }
        }
        w.end_array();
      }
      w.end_object();
    }
  }
  w.end_array();
}

ModelError cancelled_error() {
  ModelError error;
  error.kind = ErrorKind::network;
  error.message = "the model call was cancelled";
  error.retryable = false;
  error.code = "cancelled";
  error.source = ErrorSource::transport;
  return error;
}

}  // namespace

std::string anthropic_request_json(const ModelConfig& config, const ModelRequest& request) {
  std::string out;
  out.reserve(4096);
  support::JsonWriter w(out);
  w.begin_object();
  w.member("model", config.model);
  w.member("max_tokens", request.max_tokens.value_or(config.max_output_tokens));
  w.member("stream", true);
  if (!request.system.empty()) {
    w.key("system").begin_array().begin_object().member("type", "text").member("text", request.system);
    write_ephemeral(w);
    w.end_object().end_array();
  }
  if (!request.tools.empty()) {
    w.key("tools").begin_array();
    for (std::size_t i = 0; i < request.tools.size(); ++i) {
      const auto& tool = request.tools[i];
      w.begin_object().member("name", tool.name).member("description", tool.description);
      w.key("input_schema");
      if (tool.input_schema.is_object()) {
        w.value(tool.input_schema);
      } else {
        w.value(schema_or_empty(tool.input_schema));
      }
      if (i + 1 == request.tools.size()) write_ephemeral(w);
      w.end_object();
    }
    w.end_array();
  }
  w.key("messages");
  write_anthropic_messages(w, request.messages);
  if (request.temperature) w.member("temperature", *request.temperature);
  w.end_object();
  return out;
}

Json anthropic_request_body(const ModelConfig& config, const ModelRequest& request) {
  auto parsed = support::parse_json(anthropic_request_json(config, request));
  // The writer only emits valid JSON; a failure here is a bug in it.
  assert(parsed);
  return parsed ? std::move(*parsed) : Json();
}

std::string openai_chat_request_json(const ModelConfig& config, const ModelRequest& request) {
  std::string out;
  out.reserve(4096);
  support::JsonWriter w(out);
  w.begin_object();
  w.member("model", config.model).member("stream", true);
  w.key("stream_options").begin_object().member("include_usage", true).end_object();
  w.member("max_completion_tokens", request.max_tokens.value_or(config.max_output_tokens));
  if (!request.tools.empty()) {
    w.key("tools").begin_array();
    for (const auto& tool : request.tools) {
      w.begin_object().member("type", "function").key("function").begin_object();
      w.member("name", tool.name).member("description", tool.description).key("parameters");
      if (tool.input_schema.is_object()) {
        w.value(tool.input_schema);
      } else {
        w.value(schema_or_empty(tool.input_schema));
      }
      w.end_object().end_object();
    }
    w.end_array();
    w.member("parallel_tool_calls", true);
  }
  w.key("messages");
  write_openai_messages(w, request);
  if (request.temperature) w.member("temperature", *request.temperature);
  w.end_object();
  return out;
}

Json openai_chat_request_body(const ModelConfig& config, const ModelRequest& request) {
  auto parsed = support::parse_json(openai_chat_request_json(config, request));
  assert(parsed);  // the writer only emits valid JSON
  return parsed ? std::move(*parsed) : Json();
}

ModelClient::ModelClient(ModelConfig config, net::HttpClient& http, ModelClientOptions options)
    : config_(std::move(config)),
      http_(http),
      options_(std::move(options)),
      jitter_(options_.jitter_seed ? RetryJitter(*options_.jitter_seed) : RetryJitter()) {
  if (!options_.env) options_.env = process_env();
}

support::Result<net::HttpRequest> ModelClient::build_http_request(const ModelRequest& request) const {
  net::HttpRequest out;
  out.method = "POST";
  const bool anthropic = config_.provider == Provider::anthropic;
  const std::string base = trim_trailing_slashes(config_.base_url);
  out.url = base + (anthropic ? "/v1/messages" : "/chat/completions");
  std::string key;
  if (!config_.api_key_env.empty()) {
    const char* value = options_.env(config_.api_key_env.c_str());
    if (value == nullptr || *value == '\0') {
      return support::make_error(support::Errc::invalid_argument,
                                 "no API key: the environment variable {} (api_key_env of model {}) is not set",
                                 config_.api_key_env, config_.model);
    }
    key = value;
  }
  out.headers.push_back({"content-type", "application/json"});
  out.headers.push_back({"accept", "text/event-stream"});
  if (anthropic) {
    if (!key.empty()) out.headers.push_back({"x-api-key", key});
    out.headers.push_back({"anthropic-version", config_.anthropic_version});
    out.body = anthropic_request_json(config_, request);
  } else {
    if (!key.empty()) out.headers.push_back({"authorization", "Bearer " + key});
    out.body = openai_chat_request_json(config_, request);
  }
  for (const auto& header : config_.extra_headers) out.headers.push_back(header);
  return out;
}

asio::awaitable<StreamResult> ModelClient::stream(ModelRequest request, EventCallback on_event,
                                                  support::CancelToken cancel, support::Span* parent) {
  StreamResult result;
  support::Span call_span = parent != nullptr ? parent->child("model.call") : support::Span();
  call_span.set_attribute("provider", Json(provider_name(config_.provider)));
  call_span.set_attribute("model", Json(config_.model));
  int retries = 0;

  auto finish = [&](ModelEvent terminal) {
    if (auto* error = std::get_if<ModelError>(&terminal)) {
      result.error = *error;
      call_span.set_status(error->code == "cancelled" ? support::SpanStatus::cancelled : support::SpanStatus::error,
                           error->message);
    } else {
      result.ok = true;
      result.done = std::get<MessageDone>(terminal);
      // What the call cost and why it ended, for the trace (and the GenAI attributes of an export).
      if (const auto& usage = result.done->usage) {
        call_span.set_attribute("input_tokens", Json(usage->total_input_tokens()));
        call_span.set_attribute("output_tokens", Json(usage->output_tokens));
      }
      if (!result.done->stop_reason_raw.empty())
        call_span.set_attribute("stop_reason", Json(result.done->stop_reason_raw));
    }
    call_span.set_attribute("attempts", Json(result.attempts));
    call_span.set_attribute("retries", Json(retries));
    on_event(terminal);
  };

  auto built = build_http_request(request);
  if (!built) {
    ModelError error;
    error.kind = ErrorKind::auth;
    error.message = built.error().message();
    error.code = "missing_api_key";
    error.source = ErrorSource::transport;
    finish(std::move(error));
    co_return result;
  }
  const WireProtocol protocol =
      config_.provider == Provider::anthropic ? WireProtocol::anthropic_messages : WireProtocol::openai_chat;

  for (int attempt = 1;; ++attempt) {
    result.attempts = attempt;
    if (cancel.cancelled()) {
      finish(cancelled_error());
      co_return result;
    }
    support::Span attempt_span = call_span.active() ? call_span.child("model.attempt") : support::Span();
    attempt_span.set_attribute("attempt", Json(attempt));

    auto decoder = make_stream_decoder(protocol);
    std::vector<ModelEvent> pending;
    std::optional<ModelEvent> terminal;
    bool delivered = false;
    // Non-terminal events go out at once; the terminal one is held until we know whether this attempt is
    // retried (an in-stream error before any output is retryable, and must then not reach the caller).
    auto drain = [&] {
      for (auto& event : pending) {
        if (is_terminal(event)) {
          if (!terminal) terminal = std::move(event);
          continue;
        }
        delivered = true;
        result.output_delivered = true;
        on_event(event);
      }
      pending.clear();
    };
    net::HttpBodyCallback on_body = [&](std::string_view chunk) {
      decoder->feed(chunk, pending);
      drain();
      // After the terminal event only the body's framing is left: HttpClient reads it in the background
      // so the connection is reused, and this call returns now.
      return decoder->done() ? net::BodyAction::finish : net::BodyAction::more;
    };

    net::HttpRequest http_request = *built;
    auto sent = co_await http_.send(std::move(http_request), std::move(on_body), cancel);

    std::optional<ModelError> error;
    if (!sent) {
      error = model_error_from_transport(sent.error());
    } else {
      attempt_span.set_attribute("http_status", Json(sent->status));
      if (!sent->ok_status()) {
        error = model_error_from_http(sent->status, sent->headers, sent->error_body);
      } else {
        if (!decoder->done()) {
          const net::HttpFailure failure =
              sent->body_error ? net::http_failure_of(*sent->body_error) : net::HttpFailure::none;
          // A stall or a cancellation says more than "the stream ended early"; other endings (a reset,
          // a cut chunk, a clean close) are the decoder's stream_truncated.
          if (failure == net::HttpFailure::idle_timeout || failure == net::HttpFailure::cancelled) {
            error = model_error_from_transport(*sent->body_error);
          } else {
            decoder->finish(pending);
            drain();
          }
        }
        if (!error && terminal) {
          if (auto* in_stream = std::get_if<ModelError>(&*terminal)) error = *in_stream;
        }
      }
    }
    const bool succeeded = !error && terminal && std::holds_alternative<MessageDone>(*terminal);
    if (!succeeded && cancel.cancelled()) error = cancelled_error();
    if (succeeded) {
      attempt_span.set_status(support::SpanStatus::ok);
      attempt_span.end();
      finish(std::move(*terminal));
      co_return result;
    }
    if (!error) error = truncated_error("the stream ended without a terminal event");

    attempt_span.set_attribute("error_kind", Json(error_kind_name(error->kind)));
    attempt_span.set_status(error->code == "cancelled" ? support::SpanStatus::cancelled : support::SpanStatus::error,
                            error->message);
    attempt_span.end();
    const RetryDecision decision = decide_retry(options_.retry, attempt, *error, delivered, jitter_.next());
    if (!decision.retry || error->code == "cancelled") {
      finish(std::move(*error));
      co_return result;
    }

    ++retries;
    call_span.set_attribute("retries", Json(retries));
    support::log::warn("model {}:{}: attempt {} failed ({}, {}: {}); retrying in {} ms ({})",
                       provider_name(config_.provider), config_.model, attempt, error_kind_name(error->kind),
                       error->code, error->message, decision.delay.count(), decision.reason);
    asio::steady_timer timer(co_await asio::this_coro::executor, decision.delay);
    support::CancelBridge bridge(cancel, timer.get_executor());
    std::ignore =
        co_await timer.async_wait(asio::bind_cancellation_slot(bridge.slot(), asio::as_tuple(asio::use_awaitable)));
    if (cancel.cancelled()) {
      finish(cancelled_error());
      co_return result;
    }
  }
}

}  // namespace agentd::core::model
