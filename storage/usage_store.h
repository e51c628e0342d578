// The cost ledger: one row per model call with its token counts and cost. A call to a model missing
// from the price table has no cost (unpriced), and every total that includes one says so rather than
// presenting a partial sum as the whole.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sqlite.h"

namespace agentd::storage {

struct UsageRecord {
  std::int64_t id = 0;  // assigned by append
  std::string session_id;
  std::optional<std::string> turn_id;  // empty for calls outside a turn (compaction, titles)
  std::string provider;
  std::string model;
  std::uint64_t input_tokens = 0;  // counts with Anthropic's meaning, as in core::model::Usage
  std::uint64_t output_tokens = 0;
  std::uint64_t cache_write_tokens = 0;
  std::uint64_t cache_read_tokens = 0;
  std::optional<double> cost_usd;  // empty: unpriced (never 0 for "unknown")
  std::optional<std::string> price_table_version;
  std::int64_t created_at_ms = 0;
};

struct UsageTotals {
  std::uint64_t calls = 0;
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
  std::uint64_t cache_write_tokens = 0;
  std::uint64_t cache_read_tokens = 0;
  // The sum over priced calls only.
  double priced_cost_usd = 0;
  std::uint64_t unpriced_calls = 0;
  // The whole cost: empty when any call was unpriced, since then nobody knows it. 0 for no calls.
  std::optional<double> cost_usd = 0.0;
};

class UsageStore {
 public:
  explicit UsageStore(Connection& db) : db_(db) {}

  // Returns the row id. Errc::not_found when the session does not exist, Errc::invalid_argument for a
  // count above INT64_MAX (SQLite's integers are signed).
  Result<std::int64_t> append(const UsageRecord& usage);
  Result<UsageTotals> totals(std::string_view session_id);
  Result<UsageTotals> totals_for_turn(std::string_view turn_id);
  // The session's calls, oldest first.
  Result<std::vector<UsageRecord>> for_session(std::string_view session_id);

 private:
  // Totals over the rows matching `where` ("WHERE column = ?"), bound to `key`.
  Result<UsageTotals> sum(std::string_view where, std::string_view key);
  Connection& db_;
};

}  // namespace agentd::storage
