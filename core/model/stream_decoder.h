// StreamDecoder: the interface every provider's streaming format implements: response body bytes in,
// ModelEvents out. Each decoder owns one SseParser and one provider state machine, and guarantees exactly
// one terminal event (MessageDone or ModelError) per stream once finish() has been called.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model_event.h"
#include "core/net/sse_parser.h"
#include "core/support/enum_names.h"

namespace agentd::core::model {

// The wire formats we can decode. Names match the `protocol` field of the reference fixtures.
enum class WireProtocol { anthropic_messages, openai_chat };
std::string_view wire_protocol_name(WireProtocol protocol) noexcept;
std::span<const support::EnumName<WireProtocol>> enum_names(WireProtocol) noexcept;
std::optional<WireProtocol> parse_wire_protocol(std::string_view name) noexcept;

class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  StreamDecoder() = default;
  StreamDecoder(const StreamDecoder&) = delete;
  StreamDecoder& operator=(const StreamDecoder&) = delete;

  // Feeds response body bytes, split anywhere; appends the events they complete to `out`.
  void feed(std::string_view bytes, std::vector<ModelEvent>& out);
  // The body ended (the transfer completed or the connection closed). Appends what is left and, when the
  // provider's terminal event never came, a retryable stream_truncated error.
  void finish(std::vector<ModelEvent>& out);

  // A terminal event has been emitted; later bytes are ignored.
  bool done() const noexcept { return done_; }
  const net::SseParser& sse() const noexcept { return sse_; }

 protected:
  // One SSE event, only called before the terminal event.
  virtual void on_event(const net::SseEvent& event, std::vector<ModelEvent>& out) = 0;
  // The body ended before a terminal event: emit MessageDone when the provider's rules allow it, or an
  // error. Must emit a terminal event.
  virtual void on_end(std::vector<ModelEvent>& out) = 0;

  void emit_terminal(ModelEvent event, std::vector<ModelEvent>& out);

 private:
  void drain(std::vector<ModelEvent>& out);

  net::SseParser sse_;
  bool done_ = false;
};

std::unique_ptr<StreamDecoder> make_stream_decoder(WireProtocol protocol);

// ---- helpers shared by the provider decoders ----

// Fills `call.input` (or `call.input_error`) from `call.arguments_json`. Empty or blank input means the
// tool takes no arguments and reads as {}.
void parse_tool_input(ToolCallDone& call);

// A non-negative decimal ("17", "1.5") at the start of `text`; `consumed` gets the number of characters
// it used. Nothing when `text` does not start with a digit or the value is absurd (> 1e12).
std::optional<double> parse_decimal_prefix(std::string_view text, std::size_t& consumed) noexcept;

// "... Please try again in 3.45s." / "in 360ms" -> the delay, when a provider puts it only in the message.
std::optional<std::chrono::milliseconds> retry_after_from_message(std::string_view message) noexcept;

// True when `haystack` contains `lowercase_needle`, ASCII letters compared without case: error messages
// are the only place some servers say "context length exceeded".
bool contains_ignoring_case(std::string_view haystack, std::string_view lowercase_needle) noexcept;

// The body ended before the provider's terminal event.
ModelError truncated_error(std::string message);
// A data payload that is not what the protocol promises (bad JSON, wrong shape).
ModelError malformed_event_error(std::string message);

}  // namespace agentd::core::model
