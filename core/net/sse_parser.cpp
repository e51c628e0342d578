#include "core/net/sse_parser.h"

#include <algorithm>
#include <cstring>

namespace agentd::net {

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";
constexpr std::size_t kNpos = std::string::npos;

}  // namespace

void SseParser::feed(std::string_view bytes) {
  if (overflowed_ || eof_) return;
  if (dispatched_) {
    data_.clear();
    type_.clear();
    dispatched_ = false;
  }
  // Drop consumed lines so the buffer only ever holds the unfinished tail plus the new bytes.
  if (pos_ > 0) {
    buf_.erase(0, pos_);
    scan_ -= pos_;
    lf_free_end_ -= pos_;
    pos_ = 0;
  }
  buf_.append(bytes);
}

bool SseParser::finish() noexcept {
  eof_ = true;
  if (overflowed_) return true;
  // Whatever follows the last line terminator is an unfinished line (or the start of a BOM).
  if (pos_ == buf_.size()) return false;
  const char last = buf_.back();
  return last != '\n' && last != '\r';
}

bool SseParser::check_bom() {
  const std::string_view head = std::string_view(buf_).substr(pos_, kBom.size());
  if (head.size() < kBom.size() && kBom.starts_with(head)) return false;  // could still become a BOM
  if (head == kBom) {
    pos_ += kBom.size();
    scan_ = std::max(scan_, pos_);
    lf_free_end_ = std::max(lf_free_end_, scan_);
  }
  bom_checked_ = true;
  return true;
}

void SseParser::fail_overflow() {
  overflowed_ = true;
  buf_.clear();
  buf_.shrink_to_fit();
  data_.clear();
  type_.clear();
  pos_ = scan_ = lf_free_end_ = 0;
}

std::optional<SseEvent> SseParser::next() {
  if (dispatched_) {
    data_.clear();
    type_.clear();
    dispatched_ = false;
  }
  if (overflowed_ || eof_done_) return std::nullopt;
  if (!bom_checked_ && !check_bom() && !eof_) return std::nullopt;

  for (;;) {
    const char* base = buf_.data();
    const std::size_t end = buf_.size();
    if (skip_lf_ && pos_ < end) {
      if (base[pos_] == '\n') ++pos_;
      skip_lf_ = false;
      scan_ = std::max(scan_, pos_);
      lf_free_end_ = std::max(lf_free_end_, scan_);
    }

    // Find the first CR or LF at or after scan_. memchr for LF (the common terminator) remembers how far
    // the buffer is known to be LF-free, so a CR-only stream does not rescan the tail for every line.
    std::size_t term = kNpos;
    if (!skip_lf_) {
      const std::size_t lf_from = std::max(scan_, lf_free_end_);
      const void* lf = std::memchr(base + lf_from, '\n', end - lf_from);
      const std::size_t lf_pos = lf != nullptr ? static_cast<std::size_t>(static_cast<const char*>(lf) - base) : end;
      lf_free_end_ = lf_pos;
      const void* cr = std::memchr(base + scan_, '\r', lf_pos - scan_);
      if (cr != nullptr) {
        term = static_cast<std::size_t>(static_cast<const char*>(cr) - base);
      } else if (lf != nullptr) {
        term = lf_pos;
      }
    }

    if (term == kNpos) {
      scan_ = end;
      lf_free_end_ = std::max(lf_free_end_, scan_);
      if ((end - pos_) + data_.size() > max_event_bytes_) {
        fail_overflow();
        return std::nullopt;
      }
      if (!eof_) return std::nullopt;
      eof_done_ = true;
      if (pos_ < end) {
        // An unfinished line: the connection dropped mid-frame. Nothing of this event may be used.
        dropped_partial_ = true;
        data_.clear();
        type_.clear();
        return std::nullopt;
      }
      if (data_.empty()) return std::nullopt;
      unterminated_dispatched_ = true;
      return make_event();
    }

    const std::string_view line(base + pos_, term - pos_);
    skip_lf_ = base[term] == '\r';
    pos_ = scan_ = term + 1;
    lf_free_end_ = std::max(lf_free_end_, scan_);
    if (line.empty()) {
      if (!data_.empty()) return make_event();
      type_.clear();  // an event with no data is not dispatched, and its type is forgotten
      continue;
    }
    process_line(line);
    if (data_.size() > max_event_bytes_) {
      fail_overflow();
      return std::nullopt;
    }
  }
}

void SseParser::process_line(std::string_view line) {
  if (line.front() == ':') return;  // comment or keep-alive
  std::string_view field = line;
  std::string_view value;
  if (const std::size_t colon = line.find(':'); colon != kNpos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    data_.append(value);
    data_.push_back('\n');
  } else if (field == "event") {
    type_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == kNpos) last_event_id_.assign(value);
  } else if (field == "retry") {
    if (value.empty() || !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return;
    }
    std::uint64_t ms = 0;
    for (const char c : value) {
      const auto digit = static_cast<std::uint64_t>(c - '0');
      if (ms > (UINT64_MAX - digit) / 10) return;  // absurdly large: ignore like any invalid value
      ms = ms * 10 + digit;
    }
    retry_ms_ = ms;
  }
  // Any other field is ignored, as the spec requires.
}

SseEvent SseParser::make_event() {
  dispatched_ = true;
  SseEvent event;
  event.type = type_.empty() ? std::string_view("message") : std::string_view(type_);
  event.data = std::string_view(data_).substr(0, data_.size() - 1);  // without the last line's '\n'
  event.last_event_id = last_event_id_;
  return event;
}

}  // namespace agentd::net
