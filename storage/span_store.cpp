#include "storage/span_store.h"

#include <fmt/format.h>

#include "core/support/json.h"
#include "core/support/json_writer.h"

namespace agentd::storage {

using support::Errc;
using support::SpanRecord;
using support::SpanStatus;

namespace {

std::string attributes_json(const support::Json::Object& attributes) {
  std::string out;
  support::JsonWriter w(out);
  w.begin_object();
  for (const auto& [key, value] : attributes) w.key(key).value(value);
  w.end_object();
  return out;
}

std::optional<SpanStatus> parse_status(std::string_view name) { return support::enum_from_name<SpanStatus>(name); }

}  // namespace

Result<void> SpanStore::append(std::string_view turn_id, const SpanRecord& span) {
  auto stmt = db_.cached(
      "INSERT INTO spans (turn_id, id, parent_id, name, start_us, end_us, status, status_message, attributes) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!stmt) return std::move(stmt).error();
  // Span ids are uint64 but come from a counter starting at 1; storing the bits as int64 round-trips.
  (*stmt)->bind_all(turn_id, static_cast<std::int64_t>(span.id), static_cast<std::int64_t>(span.parent_id), span.name,
                    span.start_us, span.end_us, support::span_status_name(span.status), span.status_message,
                    attributes_json(span.attributes));
  auto r = (*stmt)->run();
  if (r) return r;
  switch (constraint_of(r.error())) {
    case Constraint::foreign_key:
      return Error(Errc::not_found, fmt::format("span {} ({}): no turn {}", span.id, span.name, turn_id));
    case Constraint::unique: return Error(Errc::conflict, fmt::format("turn {} already has span {}", turn_id, span.id));
    default: return r;
  }
}

Result<std::vector<SpanRecord>> SpanStore::for_turn(std::string_view turn_id) {
  auto stmt = db_.cached(
      "SELECT id, parent_id, name, start_us, end_us, status, status_message, attributes FROM spans "
      "WHERE turn_id = ? ORDER BY start_us, id");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, turn_id);
  std::vector<SpanRecord> out;
  while (AGENTD_TRY(s.step())) {
    SpanRecord span;
    span.id = static_cast<std::uint64_t>(s.column_int64(0));
    span.parent_id = static_cast<std::uint64_t>(s.column_int64(1));
    span.name = s.column_string(2);
    span.start_us = s.column_int64(3);
    span.end_us = s.column_int64(4);
    const auto status = parse_status(s.column_text(5));
    // The CHECK constraint admits only the three names, so anything else is a damaged database.
    if (!status) return Error(Errc::storage, fmt::format("span {} of turn {}: unknown status", span.id, turn_id));
    span.status = *status;
    span.status_message = s.column_string(6);
    auto attributes = support::parse_json(s.column_text(7));
    if (!attributes || !attributes->is_object()) {
      return Error(Errc::storage,
                   fmt::format("span {} of turn {}: attributes are not a JSON object", span.id, turn_id));
    }
    span.attributes = std::move(attributes->as_object());
    out.push_back(std::move(span));
  }
  return out;
}

}  // namespace agentd::storage
