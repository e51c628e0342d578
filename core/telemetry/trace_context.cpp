#include "core/telemetry/trace_context.h"

#include <mutex>
#include <random>

#include <fmt/format.h>

namespace agentd::core::telemetry {

using support::Errc;
using support::Error;

namespace {

bool lower_hex(std::string_view s) {
  for (const char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool all_zero(std::string_view s) { return s.find_first_not_of('0') == std::string_view::npos; }

std::uint64_t random64() {
  static std::mutex mutex;
  static std::mt19937_64 rng{std::random_device{}()};
  const std::lock_guard lock(mutex);
  return rng();
}

}  // namespace

support::Result<TraceParent> parse_traceparent(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Error(Errc::invalid_argument, fmt::format("traceparent \"{}\": {} (expected 00-<32 hex>-<16 hex>-<2 hex>)",
                                                     text.substr(0, 80), why));
  };
  // version-traceid-parentid-flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55 characters; a later version may
  // append "-..." fields.
  if (text.size() < 55) return bad("too short");
  const std::string_view version = text.substr(0, 2);
  if (!lower_hex(version) || version == "ff") return bad("bad version");
  if (version == "00" && text.size() != 55) return bad("version 00 has four fields");
  if (text.size() > 55 && text[55] != '-') return bad("bad shape");
  if (text[2] != '-' || text[35] != '-' || text[52] != '-') return bad("bad shape");
  TraceParent out;
  out.trace_id = std::string(text.substr(3, 32));
  out.parent_id = std::string(text.substr(36, 16));
  const std::string_view flags = text.substr(53, 2);
  if (!lower_hex(out.trace_id) || all_zero(out.trace_id)) return bad("bad trace id");
  if (!lower_hex(out.parent_id) || all_zero(out.parent_id)) return bad("bad parent id");
  if (!lower_hex(flags)) return bad("bad flags");
  out.sampled = (std::stoi(std::string(flags), nullptr, 16) & 1) != 0;
  return out;
}

std::string format_traceparent(const TraceParent& parent) {
  return fmt::format("00-{}-{}-{}", parent.trace_id, parent.parent_id, parent.sampled ? "01" : "00");
}

TurnTrace::TurnTrace(const std::optional<TraceParent>& parent) : base_(random64()) {
  if (parent) {
    trace_id_ = parent->trace_id;
    parent_id_ = parent->parent_id;
  } else {
    std::uint64_t high = 0;
    std::uint64_t low = 0;
    while (high == 0 && low == 0) {
      high = random64();
      low = random64();
    }
    trace_id_ = fmt::format("{:016x}{:016x}", high, low);
  }
}

std::string TurnTrace::span_id(std::uint64_t n) const {
  if (n == 0) return parent_id_;
  std::uint64_t id = base_ + n;
  if (id == 0) id = 1;  // all-zero span ids are invalid
  return fmt::format("{:016x}", id);
}

}  // namespace agentd::core::telemetry
