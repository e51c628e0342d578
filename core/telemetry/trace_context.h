// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` a caller passes in
// (the TRACEPARENT environment variable, `_meta.traceparent` of session/prompt) so agentd's spans join
// the caller's trace, and the ids of a turn's spans when they are exported (otlp_exporter.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/support/result.h"

namespace agentd::core::telemetry {

struct TraceParent {
  std::string trace_id;   // 32 lower-case hex digits, not all zero
  std::string parent_id;  // 16 lower-case hex digits, not all zero: the caller's span
  bool sampled = true;    // trace-flags bit 0
};

// "00-<trace id>-<parent id>-<flags>" (version 00; a later version's first four fields, as the spec
// asks). Upper-case hex, all-zero ids, version ff and a bad shape are Errc::invalid_argument.
support::Result<TraceParent> parse_traceparent(std::string_view text);
std::string format_traceparent(const TraceParent& parent);

// The trace of one turn: its trace id (the caller's, or a new random one) and the span ids of the
// turn's spans, derived from their per-turn numbers so a child can name its parent before the parent
// has ended. The root span's parent is the caller's span, if any.
class TurnTrace {
 public:
  explicit TurnTrace(const std::optional<TraceParent>& parent);

  const std::string& trace_id() const noexcept { return trace_id_; }
  // The span id of the turn's span number `n` (1, 2, ...); "" for 0, the root's parent when there is
  // no caller.
  std::string span_id(std::uint64_t n) const;
  std::string parent_of_root() const { return parent_id_; }

 private:
  std::string trace_id_;
  std::string parent_id_;
  std::uint64_t base_ = 0;
};

}  // namespace agentd::core::telemetry
