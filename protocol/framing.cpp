#include "protocol/framing.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "core/support/text.h"

namespace agentd::protocol {

namespace {

constexpr std::string_view kHeaderPrefix = "content-";  // Content-Length or Content-Type starts a header
constexpr std::size_t kMaxHeaderBlock = std::size_t{8} * 1024;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool iequals_prefix(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

}  // namespace

void FrameDecoder::feed(std::string_view bytes) {
  compact();
  buf_.append(bytes);
}

void FrameDecoder::compact() {
  // Drop consumed bytes once they dominate the buffer, so it never grows past ~2 frames.
  if (pos_ > 0 && (pos_ == buf_.size() || pos_ >= buf_.size() / 2)) {
    buf_.erase(0, pos_);
    scan_ -= std::min(scan_, pos_);
    pos_ = 0;
  }
}

std::optional<FrameEvent> FrameDecoder::next() {
  if (framing_ == Framing::unknown) {
    // Decide from the first non-blank bytes; wait while they could still be a header prefix.
    std::size_t i = pos_;
    while (i < buf_.size() && is_space(buf_[i])) ++i;
    const std::string_view head(buf_.data() + i, buf_.size() - i);
    if (head.empty()) return std::nullopt;
    const std::size_t n = std::min(head.size(), kHeaderPrefix.size());
    if (iequals_prefix(head.substr(0, n), kHeaderPrefix.substr(0, n))) {
      if (n < kHeaderPrefix.size()) return std::nullopt;
      framing_ = Framing::content_length;
      pos_ = i;
    } else {
      framing_ = Framing::ndjson;
    }
  }
  return framing_ == Framing::ndjson ? next_line() : next_content_length();
}

std::optional<FrameEvent> FrameDecoder::next_line() {
  while (true) {
    scan_ = std::max(scan_, pos_);
    const std::size_t nl = buf_.find('\n', scan_);
    if (nl == std::string::npos) {
      scan_ = buf_.size();
      const std::size_t pending = buf_.size() - pos_;
      if (!discarding_line_ && pending > max_frame_) {
        discarding_line_ = true;
        pos_ = scan_ = buf_.size();
        return FrameEvent{FrameEvent::Kind::oversize,
                          fmt::format("message exceeds the maximum frame size of {} bytes", max_frame_)};
      }
      if (discarding_line_) pos_ = scan_ = buf_.size();
      return std::nullopt;
    }
    std::string_view line(buf_.data() + pos_, nl - pos_);
    pos_ = scan_ = nl + 1;
    if (discarding_line_) {
      discarding_line_ = false;
      continue;  // the tail of an oversize line, already reported
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > max_frame_) {
      return FrameEvent{FrameEvent::Kind::oversize,
                        fmt::format("message exceeds the maximum frame size of {} bytes", max_frame_)};
    }
    // Blank lines separate nothing and say nothing: skip them rather than answer with an error.
    if (support::trim(line).empty()) continue;
    return FrameEvent{FrameEvent::Kind::message, std::string(line)};
  }
}

std::optional<FrameEvent> FrameDecoder::next_content_length() {
  while (true) {
    if (skip_body_bytes_ > 0) {
      const std::size_t n = std::min(skip_body_bytes_, buf_.size() - pos_);
      pos_ += n;
      skip_body_bytes_ -= n;
      if (skip_body_bytes_ > 0) return std::nullopt;
    }
    // Skip blank bytes between messages (some clients send a trailing newline).
    while (pos_ < buf_.size() && is_space(buf_[pos_])) ++pos_;
    if (pos_ == buf_.size()) return std::nullopt;

    const std::string_view rest(buf_.data() + pos_, buf_.size() - pos_);
    std::size_t header_end = rest.find("\r\n\r\n");
    std::size_t sep = 4;
    if (const std::size_t lf = rest.find("\n\n"); lf != std::string_view::npos && lf < header_end) {
      header_end = lf;
      sep = 2;
    }
    if (header_end == std::string_view::npos) {
      if (rest.size() > kMaxHeaderBlock) {
        pos_ = buf_.size();
        return FrameEvent{FrameEvent::Kind::bad_header, "header block too long or not terminated by a blank line"};
      }
      return std::nullopt;
    }
    const std::string_view headers = rest.substr(0, header_end);
    std::optional<std::size_t> length;
    std::string problem;
    std::size_t line_start = 0;
    while (line_start <= headers.size()) {
      std::size_t line_end = headers.find('\n', line_start);
      if (line_end == std::string_view::npos) line_end = headers.size();
      const std::string_view line = support::trim(headers.substr(line_start, line_end - line_start));
      line_start = line_end + 1;
      if (line.empty()) continue;
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos) {
        problem = fmt::format("malformed header line '{}'", line.substr(0, 80));
        break;
      }
      if (iequals_prefix(line.substr(0, colon), "content-length") && colon == 14) {
        const std::string_view value = support::trim(line.substr(colon + 1));
        std::size_t parsed = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
        if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
          problem = fmt::format("invalid Content-Length '{}'", value.substr(0, 40));
          break;
        }
        length = parsed;
      }
    }
    pos_ += header_end + sep;
    if (problem.empty() && !length) problem = "header block without Content-Length";
    if (!problem.empty()) return FrameEvent{FrameEvent::Kind::bad_header, problem};
    if (*length > max_frame_) {
      skip_body_bytes_ = *length;
      return FrameEvent{
          FrameEvent::Kind::oversize,
          fmt::format("message of {} bytes exceeds the maximum frame size of {} bytes", *length, max_frame_)};
    }
    if (buf_.size() - pos_ < *length) {
      // Body not complete yet: rewind to the header so the next call re-reads it.
      pos_ -= header_end + sep;
      return std::nullopt;
    }
    FrameEvent event{FrameEvent::Kind::message, buf_.substr(pos_, *length)};
    pos_ += *length;
    return event;
  }
}

std::optional<FrameEvent> FrameDecoder::finish() {
  if (framing_ == Framing::content_length) {
    while (pos_ < buf_.size() && is_space(buf_[pos_])) ++pos_;
    if (pos_ == buf_.size() || skip_body_bytes_ > 0) return std::nullopt;
    pos_ = buf_.size();
    return FrameEvent{FrameEvent::Kind::bad_header, "input ended inside a message"};
  }
  if (discarding_line_) {
    discarding_line_ = false;
    pos_ = scan_ = buf_.size();
    return std::nullopt;
  }
  std::string_view line(buf_.data() + pos_, buf_.size() - pos_);
  pos_ = scan_ = buf_.size();
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (support::trim(line).empty()) return std::nullopt;
  return FrameEvent{FrameEvent::Kind::message, std::string(line)};
}

void append_frame(std::string& out, Framing framing, std::string_view message) {
  if (framing == Framing::content_length) {
    fmt::format_to(std::back_inserter(out), "Content-Length: {}\r\n\r\n", message.size());
    out.append(message);
  } else {
    out.append(message);
    out += '\n';
  }
}

std::string encode_frame(Framing framing, std::string_view message) {
  std::string out;
  append_frame(out, framing, message);
  return out;
}

}  // namespace agentd::protocol
