#include "core/support/result.h"

#include <memory>

#include <gtest/gtest.h>

namespace agentd::support {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return make_error(Errc::invalid_argument, "{} is not positive", v);
  return v;
}

Result<int> doubled(int v) {
  const int x = AGENTD_TRY(parse_positive(v));
  return x * 2;
}

Result<void> check(int v) {
  AGENTD_TRY_VOID(parse_positive(v));
  return ok();
}

TEST(Result, HoldsAValueOrAnError) {
  Result<int> good = 3;
  ASSERT_TRUE(good);
  EXPECT_EQ(*good, 3);
  Result<int> bad = Error(Errc::not_found, "gone", 2);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::not_found);
  EXPECT_EQ(bad.error().native_code(), 2);
  EXPECT_EQ(bad.value_or(9), 9);
}

TEST(Result, TryPropagatesErrors) {
  EXPECT_EQ(*doubled(4), 8);
  auto r = doubled(-1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "-1 is not positive");
  EXPECT_TRUE(check(1));
  EXPECT_FALSE(check(0));
}

TEST(Result, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r);
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 5);
}

TEST(Error, ContextIsPrepended) {
  Error e = Error(Errc::io, "disk full").context("saving session");
  EXPECT_EQ(e.message(), "saving session: disk full");
  EXPECT_EQ(errc_name(e.code()), "io");
}

}  // namespace
}  // namespace agentd::support
