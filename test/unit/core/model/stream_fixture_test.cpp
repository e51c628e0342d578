// Every SSE transcript of ours (test/fixtures/sse) decodes to its expected/*.json summary whether fed whole,
// one byte at a time, split at random points or cut once at every byte; and the event sequence never
// depends on how the body was split.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/model/stream_decoder.h"
#include "core/model/stream_summary.h"
#include "core/support/json.h"
#include "test/unit/core/model/stream_test_util.h"

namespace agentd::core::model {
namespace {

namespace fs = std::filesystem;
using testing::compare_summary;
using testing::decode_pieces;
using testing::describe_all;
using testing::split_bytes;
using testing::split_random;
using testing::summarize;
using testing::summary_json;

const fs::path kOwnDir = fs::path(AGENTD_SOURCE_DIR) / "test/fixtures/sse";

struct FixtureCase {
  fs::path dir;
  std::string name;  // file stem
};

std::vector<FixtureCase> list_cases(const fs::path& dir) {
  std::vector<FixtureCase> cases;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".sse") cases.push_back({dir, entry.path().stem().string()});
  }
  std::sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<FixtureCase>& info) {
  std::string name = info.param.name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

class StreamFixtureTest : public ::testing::TestWithParam<FixtureCase> {
 protected:
  void SetUp() override {
    const fs::path sse = GetParam().dir / (GetParam().name + ".sse");
    const fs::path expected_path = GetParam().dir / "expected" / (GetParam().name + ".json");
    ASSERT_TRUE(fs::exists(expected_path)) << "fixture without expected summary: " << expected_path;
    body_ = testing::read_file(sse);
    ASSERT_FALSE(body_.empty()) << sse;
    auto expected = support::parse_json(testing::read_file(expected_path));
    ASSERT_TRUE(expected) << expected_path << ": " << expected.error().message();
    expected_ = std::move(expected).value();
    const support::Json* protocol_name = expected_.find("protocol");
    ASSERT_TRUE(protocol_name != nullptr && protocol_name->is_string()) << expected_path << " lacks `protocol`";
    const auto protocol = parse_wire_protocol(protocol_name->as_string());
    ASSERT_TRUE(protocol.has_value()) << "unknown protocol " << protocol_name->as_string();
    protocol_ = *protocol;
  }

  // Decodes the body cut into `pieces` and checks the summary and the event sequence's shape.
  void check(const std::vector<std::string_view>& pieces, const std::string& how) {
    const auto events = decode_pieces(protocol_, pieces);
    ASSERT_FALSE(events.empty()) << how;
    for (std::size_t i = 0; i + 1 < events.size(); ++i) {
      ASSERT_FALSE(is_terminal(events[i])) << how << ": terminal event before the end, at " << i;
    }
    ASSERT_TRUE(is_terminal(events.back())) << how << ": no terminal event";
    const std::string diffs = compare_summary(expected_, summary_json(summarize(events)));
    EXPECT_EQ(diffs, "") << how;
    if (reference_events_.empty()) {
      reference_events_ = describe_all(events);
    } else {
      EXPECT_EQ(describe_all(events), reference_events_) << how << ": events differ from the whole-body decode";
    }
  }

  std::string body_;
  support::Json expected_;
  WireProtocol protocol_ = WireProtocol::anthropic_messages;
  std::vector<std::string> reference_events_;
};

TEST_P(StreamFixtureTest, WholeByteByByteAndRandomSplits) {
  check({body_}, "fed whole");
  check(split_bytes(body_), "fed one byte at a time");
  for (std::uint32_t seed = 1; seed <= 24; ++seed) {
    const std::size_t max_piece = 2 + (seed * 37) % 200;
    check(split_random(body_, seed, max_piece),
          "split at random, seed " + std::to_string(seed) + ", pieces up to " + std::to_string(max_piece));
  }
}

// The bodies are small enough to also cut once at every byte, which covers every boundary case (inside
// CRLF, inside a UTF-8 sequence, right before the blank line) exhaustively.
class OwnStreamFixtureTest : public StreamFixtureTest {};

TEST_P(OwnStreamFixtureTest, EverySplitIntoTwoPieces) {
  check({body_}, "fed whole");
  const std::string_view body = body_;
  for (std::size_t cut = 1; cut < body.size(); ++cut) {
    check({body.substr(0, cut), body.substr(cut)}, "cut at byte " + std::to_string(cut));
    if (HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(OwnFixtures, StreamFixtureTest, ::testing::ValuesIn(list_cases(kOwnDir)), case_name);
INSTANTIATE_TEST_SUITE_P(OwnFixtures, OwnStreamFixtureTest, ::testing::ValuesIn(list_cases(kOwnDir)), case_name);

TEST(StreamFixtureSet, OwnFixturesExistAndEachHasAnExpectedSummary) {
  const auto cases = list_cases(kOwnDir);
  ASSERT_GE(cases.size(), 10u);
  for (const auto& c : cases) {
    EXPECT_TRUE(fs::exists(kOwnDir / "expected" / (c.name + ".json"))) << c.name;
  }
  for (const auto& entry : fs::directory_iterator(kOwnDir / "expected")) {
    EXPECT_TRUE(fs::exists(kOwnDir / (entry.path().stem().string() + ".sse"))) << "orphan " << entry.path();
  }
}

}  // namespace
}  // namespace agentd::core::model
