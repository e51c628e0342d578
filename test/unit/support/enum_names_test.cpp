#include "core/support/enum_names.h"

#include <gtest/gtest.h>

#include "core/support/result.h"
#include "core/support/trace.h"

namespace agentd::test_enum {

// A table of its own, as an enum's .cpp file would have it; "colour" is an accepted alias.
enum class Colour { red, green, blue };
constexpr support::EnumName<Colour> kColourNames[] = {
    {Colour::red, "red"}, {Colour::green, "green"}, {Colour::blue, "blue"}, {Colour::blue, "azure"}};
std::span<const support::EnumName<Colour>> enum_names(Colour) noexcept { return kColourNames; }

static_assert(support::names_every_value(kColourNames, Colour::blue));
constexpr support::EnumName<Colour> kMissingGreen[] = {{Colour::red, "red"}, {Colour::blue, "blue"}};
static_assert(!support::names_every_value(kMissingGreen, Colour::blue));
// The table-taking forms work at compile time.
static_assert(support::enum_name<Colour>(kColourNames, Colour::green) == "green");
static_assert(support::enum_from_name<Colour>(kColourNames, "azure") == Colour::blue);

namespace {

TEST(EnumNames, RoundTrip) {
  for (const Colour c : {Colour::red, Colour::green, Colour::blue}) {
    EXPECT_EQ(support::enum_from_name<Colour>(support::enum_name(c)), c) << support::enum_name(c);
  }
  EXPECT_EQ(support::enum_name(Colour::green), "green");
}

TEST(EnumNames, AnAliasReadsButTheFirstNameIsWritten) {
  EXPECT_EQ(support::enum_from_name<Colour>("azure"), Colour::blue);
  EXPECT_EQ(support::enum_name(Colour::blue), "blue");
}

TEST(EnumNames, UnknownNameIsNulloptAndUnknownValueTheFallback) {
  EXPECT_EQ(support::enum_from_name<Colour>("purple"), std::nullopt);
  EXPECT_EQ(support::enum_from_name<Colour>("Red"), std::nullopt) << "names are case-sensitive";
  EXPECT_EQ(support::enum_from_name<Colour>(""), std::nullopt);
  const auto stray = static_cast<Colour>(7);
  EXPECT_EQ(support::enum_name(stray), "unknown");
  EXPECT_EQ(support::enum_name(stray, "?"), "?");
}

TEST(EnumNames, AnotherTableForTheSameEnum) {
  // e.g. log levels: upper case in the log, lower case in AGENTD_LOG.
  constexpr support::EnumName<Colour> kShort[] = {{Colour::red, "r"}, {Colour::green, "g"}, {Colour::blue, "b"}};
  EXPECT_EQ(support::enum_name<Colour>(kShort, Colour::red), "r");
  EXPECT_EQ(support::enum_from_name<Colour>(kShort, "b"), Colour::blue);
  EXPECT_EQ(support::enum_from_name<Colour>(kShort, "blue"), std::nullopt);
}

// Two of the tree's own tables, through the generic functions and the old named ones.
TEST(EnumNames, ErrcAndSpanStatusKeepTheirNames) {
  EXPECT_EQ(support::errc_name(support::Errc::limit_exceeded), "limit_exceeded");
  EXPECT_EQ(support::enum_name(support::Errc::invalid_argument), "invalid_argument");
  for (int i = 0; i <= static_cast<int>(support::Errc::internal); ++i) {
    const auto code = static_cast<support::Errc>(i);
    EXPECT_EQ(support::enum_from_name<support::Errc>(support::errc_name(code)), code) << i;
  }
  EXPECT_EQ(support::span_status_name(support::SpanStatus::cancelled), "cancelled");
  EXPECT_EQ(support::enum_from_name<support::SpanStatus>("error"), support::SpanStatus::error);
  EXPECT_EQ(support::enum_from_name<support::SpanStatus>("failed"), std::nullopt);
}

}  // namespace
}  // namespace agentd::test_enum
