// The price table: lookup by exact id and by dated snapshot, "unpriced" for unknown models, and the cost
// arithmetic charging each kind of token at its own rate.
#include "core/model/price_table.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace agentd::core::model {
namespace {

TEST(PriceTable, VersionIsADate) {
  ASSERT_EQ(kPriceTableVersion.size(), 10U);
  EXPECT_EQ(kPriceTableVersion[4], '-');
  EXPECT_EQ(kPriceTableVersion[7], '-');
}

TEST(PriceTable, EntriesAreUniqueAndPositive) {
  std::set<std::string> ids;
  for (const auto& info : model_table()) {
    EXPECT_TRUE(ids.insert(std::string(info.id)).second) << info.id;
    EXPECT_GT(info.price.input_per_mtok, 0) << info.id;
    EXPECT_GT(info.price.output_per_mtok, info.price.input_per_mtok) << info.id;
    EXPECT_GT(info.price.cache_read_per_mtok, 0) << info.id;
    EXPECT_LT(info.price.cache_read_per_mtok, info.price.input_per_mtok) << info.id;
    EXPECT_GE(info.price.cache_write_per_mtok, info.price.input_per_mtok) << info.id;
    EXPECT_GT(info.context_window, info.max_output_tokens) << info.id;
  }
  for (const char* required : {"claude-opus-4-5", "claude-opus-4-1", "claude-sonnet-4-5", "claude-sonnet-4",
                               "claude-haiku-4-5", "claude-3-5-haiku", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano",
                               "gpt-4o", "gpt-4o-mini", "o3", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano"}) {
    EXPECT_TRUE(ids.contains(required)) << required;
  }
}

TEST(PriceTable, ExactAndSnapshotLookup) {
  auto sonnet = find_price("claude-sonnet-4-5");
  ASSERT_TRUE(sonnet);
  EXPECT_EQ(*sonnet, (Price{3.0, 15.0, 3.75, 0.30}));
  EXPECT_EQ(find_price("claude-sonnet-4-5-20250929"), sonnet);
  EXPECT_EQ(find_price("claude-sonnet-4-20250514"), find_price("claude-sonnet-4"));
  EXPECT_EQ(find_price("claude-3-5-haiku-latest"), find_price("claude-3-5-haiku"));
  auto gpt41 = find_price("gpt-4.1-2025-04-14");
  ASSERT_TRUE(gpt41);
  EXPECT_EQ(gpt41->input_per_mtok, 2.0);
  // gpt-4o-mini is its own entry, never gpt-4o by prefix.
  ASSERT_TRUE(find_price("gpt-4o-mini-2024-07-18"));
  EXPECT_EQ(find_price("gpt-4o-mini-2024-07-18")->input_per_mtok, 0.15);
}

TEST(PriceTable, UnknownModelsAreUnpriced) {
  EXPECT_FALSE(find_price("llama3.1:8b"));
  EXPECT_FALSE(find_price("claude-sonnet-4-5x"));
  EXPECT_FALSE(find_price("gpt-4o-mini-tts"));  // no looser prefix match
  EXPECT_FALSE(find_price(""));
  EXPECT_EQ(find_model_info("mock-model"), nullptr);
}

TEST(PriceTable, StripSnapshotSuffix) {
  EXPECT_EQ(strip_snapshot_suffix("claude-opus-4-1-20250805"), "claude-opus-4-1");
  EXPECT_EQ(strip_snapshot_suffix("gpt-4o-2024-08-06"), "gpt-4o");
  EXPECT_EQ(strip_snapshot_suffix("claude-3-7-sonnet-latest"), "claude-3-7-sonnet");
  EXPECT_EQ(strip_snapshot_suffix("o3"), "o3");
  EXPECT_EQ(strip_snapshot_suffix("model-1234567x"), "model-1234567x");
}

TEST(PriceTable, CostChargesEachTokenKindAtItsRate) {
  const Price price{3.0, 15.0, 3.75, 0.30};
  Usage usage;
  usage.input_tokens = 1'000'000;
  EXPECT_DOUBLE_EQ(cost_usd(usage, price), 3.0);
  usage = Usage{};
  usage.output_tokens = 2'000'000;
  EXPECT_DOUBLE_EQ(cost_usd(usage, price), 30.0);
  usage = Usage{};
  usage.cache_write_tokens = 1'000'000;
  usage.cache_read_tokens = 10'000'000;
  EXPECT_DOUBLE_EQ(cost_usd(usage, price), 3.75 + 3.0);
  usage = Usage{100, 50, 200, 1000, std::nullopt};
  EXPECT_NEAR(cost_usd(usage, price), (100 * 3.0 + 50 * 15.0 + 200 * 3.75 + 1000 * 0.30) / 1e6, 1e-12);
  EXPECT_EQ(cost_usd(Usage{}, price), 0.0);
}

}  // namespace
}  // namespace agentd::core::model
