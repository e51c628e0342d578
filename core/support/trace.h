// Trace spans: every step of a turn is a Span (id, parent, name, start/end, status, attributes).
// A Span ends when it goes out of scope and hands its record to the Tracer's sink (SQLite in the
// daemon, memory in tests). Parents are passed explicitly: coroutines hop threads, so no thread-locals.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/support/enum_names.h"
#include "core/support/json.h"

namespace agentd::support {

enum class SpanStatus { ok, error, cancelled };
std::string_view span_status_name(SpanStatus status) noexcept;
std::span<const support::EnumName<SpanStatus>> enum_names(SpanStatus) noexcept;

struct SpanRecord {
  std::uint64_t id = 0;
  std::uint64_t parent_id = 0;  // 0: a root span
  std::string name;
  std::int64_t start_us = 0;  // Unix epoch microseconds
  std::int64_t end_us = 0;
  SpanStatus status = SpanStatus::ok;
  std::string status_message;
  Json::Object attributes;
};

class SpanSink {
 public:
  virtual ~SpanSink() = default;
  // Called once per span when it ends, on the thread that ended it.
  virtual void record(SpanRecord span) = 0;
};

// Keeps every span in memory; for tests and for short-lived tools.
class MemorySpanSink final : public SpanSink {
 public:
  void record(SpanRecord span) override;
  std::vector<SpanRecord> spans() const;

 private:
  mutable std::mutex mutex_;
  std::vector<SpanRecord> spans_;
};

class Span;

class Tracer {
 public:
  // A null sink discards spans (ids are still handed out, so callers need no special case).
  explicit Tracer(SpanSink* sink) : sink_(sink) {}
  Span start(std::string name, std::uint64_t parent_id = 0);

 private:
  friend class Span;
  SpanSink* sink_;
  std::atomic<std::uint64_t> next_id_{1};
};

class [[nodiscard]] Span {
 public:
  Span() = default;  // an inert span: records nothing
  Span(Span&& other) noexcept;
  Span& operator=(Span&& other) noexcept;
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  ~Span() { end(); }

  std::uint64_t id() const noexcept { return record_.id; }
  bool active() const noexcept { return tracer_ != nullptr; }
  Span child(std::string name) const;

  void set_attribute(std::string_view key, Json value);
  void set_status(SpanStatus status, std::string message = {});
  // Takes spans that work on another thread recorded in a SpanBuffer: each gets an id of this span's
  // tracer, and those without a parent there become this span's children. Nothing on an inert span.
  void adopt(std::vector<SpanRecord> records) const;
  // Idempotent; stamps the end time and hands the record to the sink.
  void end();

 private:
  friend class Tracer;
  Span(Tracer* tracer, SpanRecord record) : tracer_(tracer), record_(std::move(record)) {}
  Tracer* tracer_ = nullptr;
  SpanRecord record_;
};

// Spans of work on another thread (off the event loop, where a turn's sink must not be called): the work
// starts its spans here (a buffer is thread-safe), and the turn's span adopts them once the work is back,
// so the tree shows where a step's time went without the step touching the turn's sink.
class SpanBuffer {
 public:
  SpanBuffer() = default;
  SpanBuffer(const SpanBuffer&) = delete;
  SpanBuffer& operator=(const SpanBuffer&) = delete;

  Span start(std::string name) { return tracer_.start(std::move(name)); }
  // The ended spans so far, in the order they ended.
  std::vector<SpanRecord> records() const { return sink_.spans(); }

 private:
  MemorySpanSink sink_;
  Tracer tracer_{&sink_};
};

}  // namespace agentd::support
