// Message framing for JSON-RPC over a byte stream. Two framings are understood and told apart by the
// first bytes of the stream: newline-delimited JSON (ACP's framing; CRLF tolerated) and LSP-style
// `Content-Length:` headers. The decoder is pure (bytes in, frames out) so it can be tested and fuzzed
// at every split point; transports feed it whatever their reads return.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace agentd::protocol {

enum class Framing { unknown, ndjson, content_length };

struct FrameEvent {
  enum class Kind {
    message,     // payload: one JSON-RPC message (not yet parsed)
    oversize,    // a frame above the size limit was skipped; payload: a description
    bad_header,  // Content-Length framing with a header block we cannot use; payload: a description
  };
  Kind kind = Kind::message;
  std::string payload;
};

inline constexpr std::size_t kDefaultMaxFrameBytes = std::size_t{64} * 1024 * 1024;

class FrameDecoder {
 public:
  explicit FrameDecoder(std::size_t max_frame_bytes = kDefaultMaxFrameBytes) : max_frame_(max_frame_bytes) {}

  void feed(std::string_view bytes);
  // The next complete frame, or nothing until more bytes arrive.
  std::optional<FrameEvent> next();
  // Call at end of input, after next() returned nothing: an unterminated last line is still a message
  // (piped files often lack the final newline); a half-received Content-Length body is reported.
  std::optional<FrameEvent> finish();

  Framing framing() const noexcept { return framing_; }
  std::size_t buffered() const noexcept { return buf_.size() - pos_; }

 private:
  std::optional<FrameEvent> next_line();
  std::optional<FrameEvent> next_content_length();
  void compact();

  std::size_t max_frame_;
  Framing framing_ = Framing::unknown;
  std::string buf_;
  std::size_t pos_ = 0;              // start of unconsumed bytes
  std::size_t scan_ = 0;             // ndjson: where the search for '\n' resumes
  bool discarding_line_ = false;     // ndjson: inside an oversize line, dropping bytes up to '\n'
  std::size_t skip_body_bytes_ = 0;  // content-length: bytes of an oversize body still to drop
};

// Wraps one serialized message for the wire in the given framing (ndjson when unknown).
std::string encode_frame(Framing framing, std::string_view message);
void append_frame(std::string& out, Framing framing, std::string_view message);

}  // namespace agentd::protocol
