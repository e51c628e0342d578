// SseParser: the one incremental parser for text/event-stream bodies (WHATWG HTML "event stream
// interpretation"). Pure: bytes in, events out, no I/O. Reads may split the stream at any byte, including
// between CR and LF and inside a UTF-8 sequence; bytes are only accumulated, never decoded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace agentd::net {

// One dispatched event. The views point into the parser and stay valid until the next call to
// feed(), next() or finish().
struct SseEvent {
  std::string_view type;           // the `event:` field, or "message" when there was none
  std::string_view data;           // the `data:` lines joined with '\n'
  std::string_view last_event_id;  // the last `id:` seen on the stream so far
};

class SseParser {
 public:
  // A line or event larger than this stops the parser (overflowed()): a server that never sends a
  // newline must not grow our memory without bound.
  static constexpr std::size_t kDefaultMaxEventBytes = std::size_t{64} << 20;

  explicit SseParser(std::size_t max_event_bytes = kDefaultMaxEventBytes) : max_event_bytes_(max_event_bytes) {}

  // Appends body bytes. Invalidates views from earlier events.
  void feed(std::string_view bytes);

  // The next complete event in the bytes fed so far, or nullopt when more bytes are needed. Call it until
  // it returns nullopt after every feed().
  std::optional<SseEvent> next();

  // Marks the end of the body and returns true when it ended inside a line: a truncated frame, which is
  // dropped together with the event it belongs to (dropped_partial() reports the same once drained).
  // Afterwards next() yields what is left: complete events, then, leniently, a last event whose lines
  // were all terminated but which lacked the closing blank line (llama.cpp ends with `data: [DONE]\n`;
  // unterminated_event_dispatched() then reports it).
  bool finish() noexcept;

  bool dropped_partial() const noexcept { return dropped_partial_; }
  bool unterminated_event_dispatched() const noexcept { return unterminated_dispatched_; }
  bool overflowed() const noexcept { return overflowed_; }
  // The reconnection time from the last valid `retry:` field.
  std::optional<std::uint64_t> retry_ms() const noexcept { return retry_ms_; }
  std::string_view last_event_id() const noexcept { return last_event_id_; }

 private:
  void process_line(std::string_view line);
  SseEvent make_event();
  bool check_bom();
  void fail_overflow();

  std::size_t max_event_bytes_;
  std::string buf_;              // unconsumed input: the current partial line and anything after it
  std::size_t pos_ = 0;          // start of the first unprocessed line in buf_
  std::size_t scan_ = 0;         // bytes in [pos_, scan_) are known to hold no line terminator
  std::size_t lf_free_end_ = 0;  // bytes in [scan_, lf_free_end_) are known to hold no '\n'
  bool skip_lf_ = false;         // the last line ended with CR: a LF right after it belongs to it
  bool bom_checked_ = false;

  std::string data_;  // data lines, each followed by '\n'
  std::string type_;
  std::string last_event_id_;
  bool dispatched_ = false;  // the previous next() returned views into data_/type_: reset them first
  std::optional<std::uint64_t> retry_ms_;

  bool eof_ = false;
  bool eof_done_ = false;
  bool dropped_partial_ = false;
  bool unterminated_dispatched_ = false;
  bool overflowed_ = false;
};

}  // namespace agentd::net
