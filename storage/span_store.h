// A turn's trace spans in SQLite: the records support::Tracer hands its sink, stored with the turn so
// `/trace` and `_agentd/trace` can show a finished turn's steps after a restart.
#pragma once

#include <string_view>
#include <vector>

#include "core/support/trace.h"
#include "storage/sqlite.h"

namespace agentd::storage {

class SpanStore {
 public:
  explicit SpanStore(Connection& db) : db_(db) {}

  // Errc::not_found when the turn does not exist, Errc::conflict when it already has a span with this id.
  Result<void> append(std::string_view turn_id, const support::SpanRecord& span);
  // The turn's spans by start time, then id (a parent starts no later than its children).
  Result<std::vector<support::SpanRecord>> for_turn(std::string_view turn_id);

 private:
  Connection& db_;
};

}  // namespace agentd::storage
