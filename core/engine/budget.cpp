#include "core/engine/budget.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace agentd::core {

constexpr support::EnumName<BudgetKind> kBudgetKindNames[] = {
    {BudgetKind::session_usd, "sessionUsd"},
    {BudgetKind::turn_usd, "turnUsd"},
    {BudgetKind::turn_output_tokens, "turnOutputTokens"},
};
static_assert(support::names_every_value(kBudgetKindNames, BudgetKind::turn_output_tokens));
std::span<const support::EnumName<BudgetKind>> enum_names(BudgetKind) noexcept { return kBudgetKindNames; }

std::string_view budget_kind_name(BudgetKind kind) noexcept { return support::enum_name(kind, "sessionUsd"); }

std::string BudgetStop::message() const {
  switch (kind) {
    case BudgetKind::session_usd:
      return fmt::format("the session's budget of ${:.2f} leaves no room for another model call (spent ${:.4f})", limit,
                         spent);
    case BudgetKind::turn_usd:
      return fmt::format("this turn's budget of ${:.2f} leaves no room for another model call (spent ${:.4f})", limit,
                         spent);
    case BudgetKind::turn_output_tokens:
      return fmt::format("this turn's budget of {} output tokens leaves no room for another model call (used {})",
                         static_cast<std::uint64_t>(limit), static_cast<std::uint64_t>(spent));
  }
  return {};
}

namespace {

// Output tokens a dollar budget leaves for the call, after the input's cost; nullopt: no limit from it.
std::optional<std::uint64_t> output_room_usd(std::optional<double> limit, double spent, const model::Price& price,
                                             std::uint64_t input_tokens) {
  if (!limit) return std::nullopt;
  const double left = *limit - spent - static_cast<double>(input_tokens) * price.input_per_mtok / 1e6;
  if (left <= 0) return 0;
  if (price.output_per_mtok <= 0) return std::nullopt;
  return static_cast<std::uint64_t>(std::floor(left / price.output_per_mtok * 1e6));
}

}  // namespace

std::optional<BudgetStop> check_budgets(const Budgets& budgets, const Spend& spend,
                                        const std::optional<model::Price>& price, std::uint64_t input_tokens,
                                        std::uint64_t& max_output_tokens) {
  struct Room {
    BudgetKind kind;
    double limit;
    double spent;
    std::optional<std::uint64_t> tokens;
  };
  std::vector<Room> rooms;
  if (price) {
    if (budgets.session_usd) {
      rooms.push_back({BudgetKind::session_usd, *budgets.session_usd, spend.session_usd,
                       output_room_usd(budgets.session_usd, spend.session_usd, *price, input_tokens)});
    }
    if (budgets.turn_usd) {
      rooms.push_back({BudgetKind::turn_usd, *budgets.turn_usd, spend.turn_usd,
                       output_room_usd(budgets.turn_usd, spend.turn_usd, *price, input_tokens)});
    }
  }
  if (budgets.turn_output_tokens) {
    const std::uint64_t limit = *budgets.turn_output_tokens;
    rooms.push_back({BudgetKind::turn_output_tokens, static_cast<double>(limit),
                     static_cast<double>(spend.turn_output_tokens),
                     limit > spend.turn_output_tokens ? limit - spend.turn_output_tokens : 0});
  }
  std::uint64_t room = max_output_tokens;
  for (const auto& r : rooms) {
    if (!r.tokens) continue;
    if (*r.tokens < kMinBudgetOutputTokens) return BudgetStop{r.kind, r.limit, r.spent};
    room = std::min(room, *r.tokens);
  }
  max_output_tokens = room;
  return std::nullopt;
}

std::optional<std::string> refuse_unpriced(const Budgets& budgets, const std::optional<model::Price>& price,
                                           std::string_view model) {
  if (!budgets.any_usd() || price) return std::nullopt;
  return fmt::format(
      "a dollar budget is set, but the price of model {} is not known (it is not in agentd's price table), so "
      "what a turn would cost cannot be checked; use a priced model, or a token budget (turnOutputTokens) "
      "instead of a dollar one",
      model);
}

}  // namespace agentd::core
