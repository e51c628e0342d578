// Budgets against a call's worst case: spent ones stop, tight ones shorten the answer, and a dollar
// budget without a price is refused.
#include "core/engine/budget.h"

#include <cstdint>
#include <optional>

#include <gtest/gtest.h>

namespace agentd::core {
namespace {

// $3 per million input tokens, $15 per million output tokens.
const model::Price kPrice{3.0, 15.0, 3.75, 0.3};

TEST(Budgets, NoBudgetLeavesTheCallAlone) {
  std::uint64_t max_output = 64000;
  EXPECT_FALSE(check_budgets(Budgets{}, Spend{100, 50, 1'000'000}, kPrice, 200'000, max_output));
  EXPECT_EQ(max_output, 64000U);
  EXPECT_FALSE(check_budgets(Budgets{}, Spend{}, std::nullopt, 200'000, max_output));
}

TEST(Budgets, ATightDollarBudgetShortensTheAnswer) {
  Budgets budgets;
  budgets.turn_usd = 0.10;
  std::uint64_t max_output = 64000;
  // 10,000 input tokens cost $0.03; $0.07 left buys 4,666 output tokens.
  EXPECT_FALSE(check_budgets(budgets, Spend{0, 0, 0}, kPrice, 10'000, max_output));
  EXPECT_EQ(max_output, 4666U);
  // The session's budget is the tighter one here.
  budgets.session_usd = 1.00;
  max_output = 64000;
  EXPECT_FALSE(check_budgets(budgets, Spend{0.99, 0, 0}, kPrice, 1'000, max_output));
  EXPECT_EQ(max_output, 466U);  // $0.01 - $0.003 = $0.007 at $15/M
}

TEST(Budgets, ASpentBudgetStopsTheTurn) {
  Budgets budgets;
  budgets.session_usd = 0.30;
  std::uint64_t max_output = 64000;
  auto over = check_budgets(budgets, Spend{0.315, 0.315, 1000}, kPrice, 5'000, max_output);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->kind, BudgetKind::session_usd);
  EXPECT_DOUBLE_EQ(over->limit, 0.30);
  EXPECT_DOUBLE_EQ(over->spent, 0.315);
  EXPECT_EQ(over->message(), "the session's budget of $0.30 leaves no room for another model call (spent $0.3150)");
  // Room for fewer than kMinBudgetOutputTokens is no room.
  budgets = Budgets{};
  budgets.turn_output_tokens = 1000;
  max_output = 64000;
  over = check_budgets(budgets, Spend{0, 0, 900}, kPrice, 5'000, max_output);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->kind, BudgetKind::turn_output_tokens);
  EXPECT_EQ(budget_kind_name(over->kind), "turnOutputTokens");
  max_output = 64000;
  EXPECT_FALSE(check_budgets(budgets, Spend{0, 0, 500}, kPrice, 5'000, max_output));
  EXPECT_EQ(max_output, 500U);
}

TEST(Budgets, ADollarBudgetNeedsAPrice) {
  Budgets budgets;
  EXPECT_FALSE(refuse_unpriced(budgets, std::nullopt, "openai:my-model"));
  budgets.turn_output_tokens = 100;
  EXPECT_FALSE(refuse_unpriced(budgets, std::nullopt, "openai:my-model"));
  budgets.turn_usd = 1;
  EXPECT_FALSE(refuse_unpriced(budgets, kPrice, "anthropic:claude-sonnet-4-5"));
  auto refused = refuse_unpriced(budgets, std::nullopt, "openai:my-model");
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("openai:my-model"), std::string::npos) << *refused;
  EXPECT_NE(refused->find("turnOutputTokens"), std::string::npos) << *refused;
}

}  // namespace
}  // namespace agentd::core
