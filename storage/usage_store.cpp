#include "storage/usage_store.h"

#include <cstdint>

#include <fmt/format.h>

namespace agentd::storage {

using support::Errc;

namespace {

constexpr std::string_view kTotals =
    "SELECT count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0), "
    "coalesce(sum(cache_write_tokens), 0), coalesce(sum(cache_read_tokens), 0), total(cost_usd), "
    "count(*) - count(cost_usd) FROM usage";

constexpr std::string_view kUsageColumns =
    "id, session_id, turn_id, provider, model, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, "
    "cost_usd, price_table_version, created_at";

std::uint64_t as_count(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

}  // namespace

Result<std::int64_t> UsageStore::append(const UsageRecord& usage) {
  for (const std::uint64_t count :
       {usage.input_tokens, usage.output_tokens, usage.cache_write_tokens, usage.cache_read_tokens}) {
    if (count > static_cast<std::uint64_t>(INT64_MAX)) {
      return Error(Errc::invalid_argument,
                   fmt::format("token count {} of a {} call is out of range", count, usage.model));
    }
  }
  auto stmt = db_.cached(
      "INSERT INTO usage (session_id, turn_id, provider, model, input_tokens, output_tokens, cache_write_tokens, "
      "cache_read_tokens, cost_usd, price_table_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, usage.session_id);
  if (usage.turn_id) {
    s.bind(2, *usage.turn_id);
  } else {
    s.bind_null(2);
  }
  s.bind(3, usage.provider).bind(4, usage.model);
  s.bind(5, static_cast<std::int64_t>(usage.input_tokens)).bind(6, static_cast<std::int64_t>(usage.output_tokens));
  s.bind(7, static_cast<std::int64_t>(usage.cache_write_tokens))
      .bind(8, static_cast<std::int64_t>(usage.cache_read_tokens));
  if (usage.cost_usd) {
    s.bind(9, *usage.cost_usd);
  } else {
    s.bind_null(9);
  }
  if (usage.price_table_version) {
    s.bind(10, *usage.price_table_version);
  } else {
    s.bind_null(10);
  }
  s.bind(11, usage.created_at_ms);
  if (auto r = s.run(); !r) {
    if (constraint_of(r.error()) == Constraint::foreign_key) {
      return Error(Errc::not_found, fmt::format("usage of {}: no session {}", usage.model, usage.session_id));
    }
    return std::move(r).error();
  }
  return db_.last_insert_rowid();
}

Result<UsageTotals> UsageStore::totals(std::string_view session_id) { return sum("WHERE session_id = ?", session_id); }

Result<UsageTotals> UsageStore::totals_for_turn(std::string_view turn_id) { return sum("WHERE turn_id = ?", turn_id); }

Result<UsageTotals> UsageStore::sum(std::string_view where, std::string_view key) {
  auto stmt = db_.cached(fmt::format("{} {}", kTotals, where));
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, key);
  if (!AGENTD_TRY(s.step())) return Error(Errc::internal, "an aggregate query gave no row");
  UsageTotals t;
  t.calls = as_count(s.column_int64(0));
  t.input_tokens = as_count(s.column_int64(1));
  t.output_tokens = as_count(s.column_int64(2));
  t.cache_write_tokens = as_count(s.column_int64(3));
  t.cache_read_tokens = as_count(s.column_int64(4));
  t.priced_cost_usd = s.column_double(5);
  t.unpriced_calls = as_count(s.column_int64(6));
  t.cost_usd = t.unpriced_calls == 0 ? std::optional<double>(t.priced_cost_usd) : std::nullopt;
  return t;
}

Result<std::vector<UsageRecord>> UsageStore::for_session(std::string_view session_id) {
  auto stmt = db_.cached(fmt::format("SELECT {} FROM usage WHERE session_id = ? ORDER BY id", kUsageColumns));
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, session_id);
  std::vector<UsageRecord> out;
  while (AGENTD_TRY(s.step())) {
    UsageRecord u;
    u.id = s.column_int64(0);
    u.session_id = s.column_string(1);
    if (!s.is_null(2)) u.turn_id = s.column_string(2);
    u.provider = s.column_string(3);
    u.model = s.column_string(4);
    u.input_tokens = as_count(s.column_int64(5));
    u.output_tokens = as_count(s.column_int64(6));
    u.cache_write_tokens = as_count(s.column_int64(7));
    u.cache_read_tokens = as_count(s.column_int64(8));
    if (!s.is_null(9)) u.cost_usd = s.column_double(9);
    if (!s.is_null(10)) u.price_table_version = s.column_string(10);
    u.created_at_ms = s.column_int64(11);
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace agentd::storage
