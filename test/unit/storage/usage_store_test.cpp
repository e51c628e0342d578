#include "storage/usage_store.h"

#include <cstdint>

#include <gtest/gtest.h>

#include "test/unit/storage/storage_fixture.h"

namespace agentd::storage {
namespace {

using support::Errc;

class UsageStoreTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    add_session("s1");
    add_session("s2");
  }
  static UsageRecord call(std::string session, std::optional<std::string> turn, std::optional<double> cost,
                          std::string model = "claude-sonnet-4-5") {
    UsageRecord u;
    u.session_id = std::move(session);
    u.turn_id = std::move(turn);
    u.provider = "anthropic";
    u.model = std::move(model);
    u.input_tokens = 100;
    u.output_tokens = 20;
    u.cache_write_tokens = 3;
    u.cache_read_tokens = 400;
    u.cost_usd = cost;
    if (cost) u.price_table_version = "2026-12-02";
    u.created_at_ms = 5;
    return u;
  }
};

TEST_F(UsageStoreTest, TotalsOfPricedCallsHaveACost) {
  UsageStore usage(db());
  ASSERT_TRUE(usage.append(call("s1", "t1", 0.25)));
  ASSERT_TRUE(usage.append(call("s1", "t2", 0.5)));
  ASSERT_TRUE(usage.append(call("s2", "x1", 9.0)));
  auto totals = usage.totals("s1");
  ASSERT_TRUE(totals) << totals.error().message();
  EXPECT_EQ(totals->calls, 2u);
  EXPECT_EQ(totals->input_tokens, 200u);
  EXPECT_EQ(totals->output_tokens, 40u);
  EXPECT_EQ(totals->cache_write_tokens, 6u);
  EXPECT_EQ(totals->cache_read_tokens, 800u);
  EXPECT_DOUBLE_EQ(totals->priced_cost_usd, 0.75);
  EXPECT_EQ(totals->unpriced_calls, 0u);
  ASSERT_TRUE(totals->cost_usd);
  EXPECT_DOUBLE_EQ(*totals->cost_usd, 0.75);

  auto turn = usage.totals_for_turn("t2");
  ASSERT_TRUE(turn);
  EXPECT_EQ(turn->calls, 1u);
  EXPECT_DOUBLE_EQ(turn->cost_usd.value_or(-1), 0.5);
}

TEST_F(UsageStoreTest, ATotalOverAnUnpricedCallSaysSo) {
  UsageStore usage(db());
  ASSERT_TRUE(usage.append(call("s1", "t1", 0.25)));
  ASSERT_TRUE(usage.append(call("s1", "t1", std::nullopt, "my-local-llama")));
  ASSERT_TRUE(usage.append(call("s1", "t2", 0.0)));  // a free call is priced at 0, which is not unpriced
  auto totals = usage.totals("s1");
  ASSERT_TRUE(totals);
  EXPECT_EQ(totals->calls, 3u);
  EXPECT_EQ(totals->input_tokens, 300u);
  EXPECT_EQ(totals->unpriced_calls, 1u);
  EXPECT_DOUBLE_EQ(totals->priced_cost_usd, 0.25);
  EXPECT_FALSE(totals->cost_usd);

  EXPECT_FALSE(usage.totals_for_turn("t1")->cost_usd);
  auto free_turn = usage.totals_for_turn("t2");
  ASSERT_TRUE(free_turn->cost_usd);
  EXPECT_EQ(*free_turn->cost_usd, 0.0);

  auto rows = usage.for_session("s1");
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].cost_usd, 0.25);
  EXPECT_EQ((*rows)[0].price_table_version, "2026-12-02");
  EXPECT_FALSE((*rows)[1].cost_usd);
  EXPECT_FALSE((*rows)[1].price_table_version);
  EXPECT_EQ((*rows)[1].model, "my-local-llama");
  EXPECT_EQ((*rows)[1].turn_id, "t1");
  EXPECT_EQ((*rows)[1].cache_read_tokens, 400u);
  EXPECT_LT((*rows)[0].id, (*rows)[1].id);
}

TEST_F(UsageStoreTest, NoCallsCostNothing) {
  UsageStore usage(db());
  auto totals = usage.totals("s1");
  ASSERT_TRUE(totals);
  EXPECT_EQ(totals->calls, 0u);
  EXPECT_EQ(totals->unpriced_calls, 0u);
  EXPECT_EQ(totals->cost_usd, 0.0);
}

TEST_F(UsageStoreTest, RefusesMissingSessionsAndOutOfRangeCounts) {
  UsageStore usage(db());
  EXPECT_EQ(usage.append(call("missing", std::nullopt, 1.0)).error().code(), Errc::not_found);
  UsageRecord huge = call("s1", std::nullopt, 1.0);
  huge.output_tokens = UINT64_MAX;
  EXPECT_EQ(usage.append(huge).error().code(), Errc::invalid_argument);
  EXPECT_EQ(count("SELECT count(*) FROM usage"), 0);
}

}  // namespace
}  // namespace agentd::storage
