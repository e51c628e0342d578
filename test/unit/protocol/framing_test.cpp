#include "protocol/framing.h"

#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace agentd::protocol {
namespace {

using Kind = FrameEvent::Kind;

std::vector<FrameEvent> decode_in_chunks(std::string_view stream, const std::vector<std::size_t>& cuts,
                                         std::size_t max_frame = kDefaultMaxFrameBytes, bool finish = true) {
  FrameDecoder decoder(max_frame);
  std::vector<FrameEvent> out;
  std::size_t start = 0;
  auto drain = [&] {
    while (auto e = decoder.next()) out.push_back(std::move(*e));
  };
  for (std::size_t cut : cuts) {
    decoder.feed(stream.substr(start, cut - start));
    drain();
    start = cut;
  }
  decoder.feed(stream.substr(start));
  drain();
  if (finish) {
    if (auto e = decoder.finish()) out.push_back(std::move(*e));
  }
  return out;
}

std::vector<std::string> payloads(const std::vector<FrameEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back((e.kind == Kind::message ? "" : "!") + e.payload);
  return out;
}

TEST(Framing, SplitsNewlineDelimitedMessagesAndToleratesCrlf) {
  auto events = decode_in_chunks("{\"a\":1}\n{\"b\":2}\r\n\n   \n{\"c\":3}", {});
  EXPECT_EQ(payloads(events), (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
}

TEST(Framing, UnterminatedLastLineIsDeliveredOnlyAtFinish) {
  FrameDecoder decoder;
  decoder.feed("{\"a\":1}");
  EXPECT_FALSE(decoder.next());
  auto last = decoder.finish();
  ASSERT_TRUE(last);
  EXPECT_EQ(last->payload, "{\"a\":1}");
  EXPECT_FALSE(decoder.finish());
}

TEST(Framing, DetectsContentLengthFraming) {
  const std::string stream =
      "Content-Length: 7\r\n\r\n{\"a\":1}"
      "content-length: 7\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{\"b\":2}";
  auto events = decode_in_chunks(stream, {});
  EXPECT_EQ(payloads(events), (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
  FrameDecoder d;
  d.feed("Content-Length: 2\r\n\r\n{}");
  ASSERT_TRUE(d.next());
  EXPECT_EQ(d.framing(), Framing::content_length);
}

// The same stream, cut at every byte offset (and at every pair of offsets for the short one), must
// decode to the same frames: reads can end anywhere.
TEST(Framing, EverySplitPointGivesTheSameFrames) {
  const std::string ndjson = "{\"id\":1,\"s\":\"héllo\"}\r\n\n{\"id\":2}\n{\"id\":3}";
  const std::string lsp = "Content-Length: 8\r\n\r\n{\"id\":1}Content-Length: 8\r\n\r\n{\"id\":2}";
  for (const std::string& stream : {ndjson, lsp}) {
    const auto expected = payloads(decode_in_chunks(stream, {}));
    ASSERT_EQ(expected.size(), stream == ndjson ? 3u : 2u);
    for (std::size_t i = 0; i <= stream.size(); ++i) {
      EXPECT_EQ(payloads(decode_in_chunks(stream, {i})), expected) << "split at " << i;
      for (std::size_t j = i; j <= stream.size(); j += 3) {
        ASSERT_EQ(payloads(decode_in_chunks(stream, {i, j})), expected) << "split at " << i << "," << j;
      }
    }
    std::vector<std::size_t> bytewise;
    for (std::size_t i = 1; i < stream.size(); ++i) bytewise.push_back(i);
    EXPECT_EQ(payloads(decode_in_chunks(stream, bytewise)), expected);
  }
}

TEST(Framing, OversizeLineIsReportedOnceAndTheStreamRecovers) {
  const std::string big(5000, 'x');
  for (bool chunked : {false, true}) {
    std::vector<std::size_t> cuts;
    if (chunked) {
      for (std::size_t i = 100; i < 5100; i += 100) cuts.push_back(i);
    }
    auto events = decode_in_chunks("{\"a\":1}\n" + big + "\n{\"b\":2}\n", cuts, 1024);
    ASSERT_EQ(events.size(), 3u) << chunked;
    EXPECT_EQ(events[0].payload, "{\"a\":1}");
    EXPECT_EQ(events[1].kind, Kind::oversize);
    EXPECT_EQ(events[2].payload, "{\"b\":2}");
  }
}

TEST(Framing, OversizeContentLengthBodyIsSkipped) {
  const std::string big(3000, 'x');
  auto events =
      decode_in_chunks("Content-Length: 3000\r\n\r\n" + big + "Content-Length: 2\r\n\r\n{}", {10, 50, 2000}, 1024);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, Kind::oversize);
  EXPECT_EQ(events[1].payload, "{}");
}

TEST(Framing, BadHeadersAreReportedAndSkipped) {
  auto events = decode_in_chunks("Content-Length: abc\r\n\r\nContent-Type: x\r\n\r\nContent-Length: 2\r\n\r\n{}", {});
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, Kind::bad_header);
  EXPECT_NE(events[0].payload.find("invalid Content-Length"), std::string::npos);
  EXPECT_EQ(events[1].kind, Kind::bad_header);
  EXPECT_EQ(events[2].payload, "{}");
}

TEST(Framing, TruncatedContentLengthBodyIsReportedAtFinish) {
  auto events = decode_in_chunks("Content-Length: 20\r\n\r\n{\"a\":", {});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, Kind::bad_header);
}

TEST(Framing, RandomChunkingMatchesWholeInput) {
  std::string stream;
  for (int i = 0; i < 200; ++i)
    stream += "{\"id\":" + std::to_string(i) + ",\"pad\":\"" + std::string(i % 37, 'p') + "\"}\n";
  const auto expected = payloads(decode_in_chunks(stream, {}));
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::size_t> cuts;
    std::size_t at = 0;
    while (true) {
      at += std::uniform_int_distribution<std::size_t>(1, 200)(rng);
      if (at >= stream.size()) break;
      cuts.push_back(at);
    }
    ASSERT_EQ(payloads(decode_in_chunks(stream, cuts)), expected);
  }
}

TEST(Framing, EncodesInTheClientsFraming) {
  EXPECT_EQ(encode_frame(Framing::ndjson, "{}"), "{}\n");
  EXPECT_EQ(encode_frame(Framing::unknown, "{}"), "{}\n");
  EXPECT_EQ(encode_frame(Framing::content_length, "{}"), "Content-Length: 2\r\n\r\n{}");
}

}  // namespace
}  // namespace agentd::protocol
