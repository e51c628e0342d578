// Budgets (the seed's): how much a session may spend, in dollars for the session and for one turn, and in
// output tokens for one turn. Checked before each model call of a turn against that call's worst case:
// a budget already spent stops the turn; one the call could pass makes the call smaller (its max_tokens
// cut to what the budget leaves), and one that leaves less than kMinBudgetOutputTokens stops the turn.
// With a dollar budget and a model the price table does not know, a turn is refused rather than guessed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/model/price_table.h"
#include "core/support/enum_names.h"

namespace agentd::core {

struct Budgets {
  std::optional<double> session_usd;                // everything the session's model calls cost
  std::optional<double> turn_usd;                   // one turn's
  std::optional<std::uint64_t> turn_output_tokens;  // the output tokens of one turn
  bool any_usd() const noexcept { return session_usd.has_value() || turn_usd.has_value(); }
  friend bool operator==(const Budgets&, const Budgets&) = default;
};

// A call with less room than this for its answer is not worth making: the turn stops instead.
inline constexpr std::uint64_t kMinBudgetOutputTokens = 256;

enum class BudgetKind { session_usd, turn_usd, turn_output_tokens };
std::string_view budget_kind_name(BudgetKind kind) noexcept;  // "sessionUsd", "turnUsd", "turnOutputTokens"
std::span<const support::EnumName<BudgetKind>> enum_names(BudgetKind) noexcept;

// What was spent so far.
struct Spend {
  double session_usd = 0;
  double turn_usd = 0;
  std::uint64_t turn_output_tokens = 0;
};

// The budget that stopped a turn.
struct BudgetStop {
  BudgetKind kind = BudgetKind::session_usd;
  double limit = 0;
  double spent = 0;  // dollars or tokens, as the budget counts
  // "the session's budget of $5.00 is spent ($5.02)"; for the user and the turn's last words.
  std::string message() const;
};

// Before a model call: nullopt and `max_output_tokens` lowered to what every budget leaves room for, or
// the budget that stops the turn. `input_tokens` is the request's estimate, `price` the model's (nullopt:
// unpriced, which only a dollar budget minds, and refuse_unpriced says so first).
std::optional<BudgetStop> check_budgets(const Budgets& budgets, const Spend& spend,
                                        const std::optional<model::Price>& price, std::uint64_t input_tokens,
                                        std::uint64_t& max_output_tokens);

// The message refusing a turn when a dollar budget is set and `model` has no price; nullopt otherwise.
std::optional<std::string> refuse_unpriced(const Budgets& budgets, const std::optional<model::Price>& price,
                                           std::string_view model);

}  // namespace agentd::core
