#include "core/model/stream_decoder.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/model/anthropic_stream.h"
#include "core/model/openai_stream.h"

namespace agentd::core::model {

constexpr support::EnumName<WireProtocol> kWireProtocolNames[] = {
    {WireProtocol::anthropic_messages, "anthropic-messages"},
    {WireProtocol::openai_chat, "openai-chat"},
};
static_assert(support::names_every_value(kWireProtocolNames, WireProtocol::openai_chat));

std::span<const support::EnumName<WireProtocol>> enum_names(WireProtocol) noexcept { return kWireProtocolNames; }

std::string_view wire_protocol_name(WireProtocol protocol) noexcept {
  return support::enum_name(protocol, "anthropic-messages");
}

std::optional<WireProtocol> parse_wire_protocol(std::string_view name) noexcept {
  return support::enum_from_name<WireProtocol>(name);
}

void StreamDecoder::feed(std::string_view bytes, std::vector<ModelEvent>& out) {
  if (done_) return;
  sse_.feed(bytes);
  drain(out);
}

void StreamDecoder::finish(std::vector<ModelEvent>& out) {
  if (done_) return;
  sse_.finish();
  drain(out);
  if (!done_) on_end(out);
}

void StreamDecoder::drain(std::vector<ModelEvent>& out) {
  while (!done_) {
    const auto event = sse_.next();
    if (!event) break;
    on_event(*event, out);
  }
  if (!done_ && sse_.overflowed()) {
    ModelError error = malformed_event_error("an SSE event exceeded the size limit");
    error.retryable = false;
    emit_terminal(std::move(error), out);
  }
}

void StreamDecoder::emit_terminal(ModelEvent event, std::vector<ModelEvent>& out) {
  out.push_back(std::move(event));
  done_ = true;
}

std::unique_ptr<StreamDecoder> make_stream_decoder(WireProtocol protocol) {
  switch (protocol) {
    case WireProtocol::anthropic_messages: return std::make_unique<AnthropicStream>();
    case WireProtocol::openai_chat: return std::make_unique<OpenAiChatStream>();
  }
  return nullptr;
}

void parse_tool_input(ToolCallDone& call) {
  const std::string_view text = call.arguments_json;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    call.input = support::Json::object();
    call.input_error.reset();
    return;
  }
  auto parsed = support::parse_json(text);
  if (!parsed) {
    call.input = support::Json();
    call.input_error = "tool input is not valid JSON: " + parsed.error().message();
    return;
  }
  call.input = std::move(parsed).value();
  call.input_error.reset();
}

std::optional<double> parse_decimal_prefix(std::string_view text, std::size_t& consumed) noexcept {
  double value = 0;
  double scale = 0.1;
  bool fraction = false;
  bool any_digit = false;
  std::size_t i = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      any_digit = true;
      if (!fraction) {
        value = value * 10 + (c - '0');
      } else {
        value += (c - '0') * scale;
        scale /= 10;
      }
      if (value > 1e12) return std::nullopt;
    } else if (c == '.' && !fraction) {
      fraction = true;
    } else {
      break;
    }
  }
  consumed = i;
  if (!any_digit) return std::nullopt;
  return value;
}

std::optional<std::chrono::milliseconds> retry_after_from_message(std::string_view message) noexcept {
  constexpr std::string_view kMarker = "try again in ";
  const std::size_t at = message.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = message.substr(at + kMarker.size());
  std::size_t used = 0;
  const auto parsed = parse_decimal_prefix(rest, used);
  if (!parsed || *parsed > 86400.0 * 1000) return std::nullopt;
  const double value = *parsed;
  rest = rest.substr(used);
  if (rest.starts_with("ms")) return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(value)));
  if (rest.starts_with("s")) return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(value * 1000)));
  return std::nullopt;
}

bool contains_ignoring_case(std::string_view haystack, std::string_view lowercase_needle) noexcept {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return std::search(haystack.begin(), haystack.end(), lowercase_needle.begin(), lowercase_needle.end(),
                     [&](char a, char b) { return lower(a) == b; }) != haystack.end();
}

ModelError truncated_error(std::string message) {
  ModelError error;
  error.kind = ErrorKind::stream_truncated;
  error.message = std::move(message);
  error.retryable = true;
  error.code = "incomplete_stream";
  error.source = ErrorSource::transport;
  return error;
}

ModelError malformed_event_error(std::string message) {
  ModelError error;
  error.kind = ErrorKind::server;
  error.message = std::move(message);
  error.retryable = true;
  error.code = "malformed_event";
  error.source = ErrorSource::in_stream;
  return error;
}

}  // namespace agentd::core::model
