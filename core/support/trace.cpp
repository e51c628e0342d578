#include "core/support/trace.h"

#include <utility>
#include <vector>

#include "core/support/clock.h"

namespace agentd::support {

constexpr support::EnumName<SpanStatus> kSpanStatusNames[] = {
    {SpanStatus::ok, "ok"},
    {SpanStatus::error, "error"},
    {SpanStatus::cancelled, "cancelled"},
};
static_assert(support::names_every_value(kSpanStatusNames, SpanStatus::cancelled));

std::span<const support::EnumName<SpanStatus>> enum_names(SpanStatus) noexcept { return kSpanStatusNames; }

std::string_view span_status_name(SpanStatus status) noexcept { return support::enum_name(status, "unknown"); }

void MemorySpanSink::record(SpanRecord span) {
  std::lock_guard lock(mutex_);
  spans_.push_back(std::move(span));
}

std::vector<SpanRecord> MemorySpanSink::spans() const {
  std::lock_guard lock(mutex_);
  return spans_;
}

Span Tracer::start(std::string name, std::uint64_t parent_id) {
  SpanRecord record;
  record.id = next_id_.fetch_add(1, std::memory_order_relaxed);
  record.parent_id = parent_id;
  record.name = std::move(name);
  record.start_us = unix_micros_now();
  return Span(this, std::move(record));
}

Span::Span(Span&& other) noexcept : tracer_(std::exchange(other.tracer_, nullptr)), record_(std::move(other.record_)) {}

Span& Span::operator=(Span&& other) noexcept {
  if (this != &other) {
    end();
    tracer_ = std::exchange(other.tracer_, nullptr);
    record_ = std::move(other.record_);
  }
  return *this;
}

Span Span::child(std::string name) const {
  if (tracer_ == nullptr) return Span();
  return tracer_->start(std::move(name), record_.id);
}

void Span::adopt(std::vector<SpanRecord> records) const {
  if (tracer_ == nullptr || tracer_->sink_ == nullptr) return;
  // Ids of the buffer's tracer -> ids of ours; a parent may end after its children, so map every id first.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ids;
  ids.reserve(records.size());
  for (const auto& r : records) ids.emplace_back(r.id, tracer_->next_id_.fetch_add(1, std::memory_order_relaxed));
  const auto ours = [&](std::uint64_t theirs) -> std::uint64_t {
    for (const auto& [from, to] : ids) {
      if (from == theirs) return to;
    }
    return record_.id;  // no parent in the buffer: a child of this span
  };
  for (auto& r : records) {
    r.parent_id = r.parent_id == 0 ? record_.id : ours(r.parent_id);
    r.id = ours(r.id);
    tracer_->sink_->record(std::move(r));
  }
}

void Span::set_attribute(std::string_view key, Json value) {
  if (tracer_ == nullptr) return;
  for (auto& [k, v] : record_.attributes) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  record_.attributes.emplace_back(std::string(key), std::move(value));
}

void Span::set_status(SpanStatus status, std::string message) {
  record_.status = status;
  record_.status_message = std::move(message);
}

void Span::end() {
  Tracer* tracer = std::exchange(tracer_, nullptr);
  if (tracer == nullptr) return;
  record_.end_us = unix_micros_now();
  if (tracer->sink_ != nullptr) tracer->sink_->record(std::move(record_));
}

}  // namespace agentd::support
