// The versioned price table: USD per million tokens (input, output, cache write, cache read) and the
// context window / output limit of the Anthropic and OpenAI models we know. A model that is not here is
// "unpriced" (an empty optional), never $0, so the cost ledger can say it does not know.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/model/model_event.h"

namespace agentd::core::model {

// Bumped whenever a figure changes; stored beside every ledger row so old costs can be re-derived.
inline constexpr std::string_view kPriceTableVersion = "2026-12-02";

// USD per million tokens. For OpenAI, cache writes cost the normal input price (there is no write fee).
struct Price {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
  double cache_write_per_mtok = 0;  // Anthropic's 5-minute cache write (the ephemeral breakpoints we send)
  double cache_read_per_mtok = 0;
  friend bool operator==(const Price&, const Price&) = default;
};

struct ModelInfo {
  std::string_view id;  // the alias without a dated snapshot suffix
  Price price;
  std::uint64_t context_window = 0;
  std::uint32_t max_output_tokens = 0;
};

// Every entry, in table order.
std::span<const ModelInfo> model_table() noexcept;

// "claude-sonnet-4-5-20250929" -> "claude-sonnet-4-5", "gpt-4.1-2025-04-14" -> "gpt-4.1",
// "claude-3-5-haiku-latest" -> "claude-3-5-haiku"; other ids are returned as they are.
std::string_view strip_snapshot_suffix(std::string_view model_id) noexcept;

// Exact id first, then the id without its dated-snapshot suffix. Never a looser prefix match:
// "gpt-4o-mini" must not be priced as "gpt-4o".
const ModelInfo* find_model_info(std::string_view model_id) noexcept;
std::optional<Price> find_price(std::string_view model_id) noexcept;

// The cost of one call. Usage counts follow Anthropic's meaning (input excludes cached input), so each
// count is charged at exactly one rate.
double cost_usd(const Usage& usage, const Price& price) noexcept;

}  // namespace agentd::core::model
