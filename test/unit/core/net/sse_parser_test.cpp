// SseParser against each rule of the WHATWG event-stream grammar, and against every way a read can split
// the bytes: inside CRLF, inside a UTF-8 sequence, inside a field name, before the blank line.
#include "core/net/sse_parser.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace agentd::net {
namespace {

using namespace std::string_literals;

struct Got {
  std::string type;
  std::string data;
  std::string id;
  friend bool operator==(const Got&, const Got&) = default;
};

void PrintTo(const Got& g, std::ostream* os) {
  *os << "{type=" << g.type << " data=" << g.data << " id=" << g.id << "}";
}

std::vector<Got> drain(SseParser& parser) {
  std::vector<Got> out;
  while (auto event = parser.next()) {
    out.push_back({std::string(event->type), std::string(event->data), std::string(event->last_event_id)});
  }
  return out;
}

// Feeds each piece, draining after each, then finishes (unless told not to) and drains again.
std::vector<Got> parse(const std::vector<std::string>& pieces, SseParser& parser, bool finish = true) {
  std::vector<Got> out;
  for (const auto& piece : pieces) {
    parser.feed(piece);
    for (auto& g : drain(parser)) out.push_back(std::move(g));
  }
  if (finish) {
    parser.finish();
    for (auto& g : drain(parser)) out.push_back(std::move(g));
  }
  return out;
}

std::vector<Got> parse(const std::vector<std::string>& pieces, bool finish = true) {
  SseParser parser;
  return parse(pieces, parser, finish);
}

Got msg(std::string data, std::string type = "message", std::string id = "") {
  return {std::move(type), std::move(data), std::move(id)};
}

TEST(SseParser, DispatchesOnBlankLine) {
  SseParser parser;
  parser.feed("data: hello\n");
  EXPECT_TRUE(drain(parser).empty()) << "no event before the blank line";
  parser.feed("\n");
  EXPECT_EQ(drain(parser), std::vector<Got>{msg("hello")});
}

TEST(SseParser, EventFieldSetsTypeForOneEventOnly) {
  EXPECT_EQ(parse({"event: ping\ndata: {}\n\ndata: x\n\n"}), (std::vector<Got>{msg("{}", "ping"), msg("x")}));
}

TEST(SseParser, MultiLineDataIsJoinedWithNewline) {
  EXPECT_EQ(parse({"data: one\ndata: two\ndata:\ndata: four\n\n"}), std::vector<Got>{msg("one\ntwo\n\nfour")});
}

TEST(SseParser, CommentsAndKeepAlivesAreIgnored) {
  EXPECT_EQ(parse({": keep-alive\n\n:\n\ndata: a\n: inside an event\n\n"}), std::vector<Got>{msg("a")});
}

TEST(SseParser, OnlyOneLeadingSpaceIsStripped) {
  EXPECT_EQ(parse({"data:x\n\ndata: x\n\ndata:  x\n\ndata:x \n\n"}),
            (std::vector<Got>{msg("x"), msg("x"), msg(" x"), msg("x ")}));
}

TEST(SseParser, ValueKeepsColonsAfterTheFirst) {
  EXPECT_EQ(parse({"data: a:b: c\n\n"}), std::vector<Got>{msg("a:b: c")});
}

TEST(SseParser, FieldWithNoColonHasEmptyValue) {
  // A bare `data` appends an empty line; a bare `event` resets the type to the default.
  EXPECT_EQ(parse({"data\n\n"}), std::vector<Got>{msg("")});
  EXPECT_EQ(parse({"data: a\ndata\n\n"}), std::vector<Got>{msg("a\n")});
  EXPECT_EQ(parse({"event: x\nevent\ndata: a\n\n"}), std::vector<Got>{msg("a")});
}

TEST(SseParser, UnknownFieldsAreIgnored) {
  EXPECT_EQ(parse({"x-custom: 1\nDATA: upper case is another field\nevent : spaced\ndata: a\n\n"}),
            std::vector<Got>{msg("a")});
}

TEST(SseParser, EmptyDataBufferDispatchesNothingAndForgetsTheType) {
  EXPECT_EQ(parse({"event: lonely\n\ndata: a\n\n"}), std::vector<Got>{msg("a")});
  EXPECT_EQ(parse({"\n\n\n"}), std::vector<Got>{});
  EXPECT_EQ(parse({"id: 1\nretry: 10\n\n"}), std::vector<Got>{});
}

TEST(SseParser, EmptyDataFieldStillDispatches) { EXPECT_EQ(parse({"data:\n\n"}), std::vector<Got>{msg("")}); }

TEST(SseParser, IdPersistsAcrossEventsAndIgnoresNul) {
  SseParser parser;
  const auto got = parse({"id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 9", "\0x\ndata: d\n\n"s}, parser);
  EXPECT_EQ(got, (std::vector<Got>{msg("a", "message", "7"), msg("b", "message", "7"), msg("c"), msg("d")}));
  EXPECT_EQ(parser.last_event_id(), "");
}

TEST(SseParser, RetryTakesOnlyDigits) {
  SseParser parser;
  parse({"retry: 1500\n\n"}, parser);
  EXPECT_EQ(parser.retry_ms(), 1500u);
  SseParser bad;
  parse({"retry: 15s\nretry: -1\nretry:\nretry: 99999999999999999999999\n\n"}, bad);
  EXPECT_FALSE(bad.retry_ms().has_value());
}

TEST(SseParser, LineEndingsLfCrlfAndCrAreAllAccepted) {
  const std::vector<Got> want{msg("a\nb", "t"), msg("c")};
  EXPECT_EQ(parse({"event: t\ndata: a\ndata: b\n\ndata: c\n\n"}), want);
  EXPECT_EQ(parse({"event: t\r\ndata: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n"}), want);
  EXPECT_EQ(parse({"event: t\rdata: a\rdata: b\r\rdata: c\r\r"}), want);
  EXPECT_EQ(parse({"event: t\r\ndata: a\rdata: b\n\r\ndata: c\r\r\n"}), want);
}

TEST(SseParser, CrAtEndOfChunkThenLfIsOneLineEnding) {
  // Treating the LF as a second line ending would dispatch "a" early, as an event of its own.
  EXPECT_EQ(parse({"data: a\r", "\ndata: b\r\n\r\n"}), std::vector<Got>{msg("a\nb")});
  EXPECT_EQ(parse({"data: a\r", "\n", "\r", "\n"}), std::vector<Got>{msg("a")});
  EXPECT_EQ(parse({"data: a\r\n\r", "\ndata: b\r\n\r\n"}), (std::vector<Got>{msg("a"), msg("b")}));
}

TEST(SseParser, CrAtEndOfChunkThenOtherByteEndsTheLine) {
  EXPECT_EQ(parse({"data: a\r", "data: b\r", "\r"}), std::vector<Got>{msg("a\nb")});
  // CR then CR: two line endings, so a blank line.
  EXPECT_EQ(parse({"data: a\r", "\rdata: b\r\r"}), (std::vector<Got>{msg("a"), msg("b")}));
}

TEST(SseParser, CrWaitsForTheNextByteWithoutLosingTheEvent) {
  SseParser parser;
  parser.feed("data: a\n\r");
  EXPECT_EQ(drain(parser), std::vector<Got>{msg("a")}) << "CR alone is a complete blank line";
  parser.feed("\n");
  EXPECT_TRUE(drain(parser).empty()) << "the LF belongs to that CR";
  parser.feed("data: b\n\n");
  EXPECT_EQ(drain(parser), std::vector<Got>{msg("b")});
}

TEST(SseParser, Utf8SequencesSplitAcrossChunksArriveWhole) {
  const std::string text = "Grüße 東京 🚀";
  const std::string body = "data: " + text + "\n\n";
  for (std::size_t cut = 1; cut < body.size(); ++cut) {
    EXPECT_EQ(parse({body.substr(0, cut), body.substr(cut)}), std::vector<Got>{msg(text)}) << "cut at " << cut;
  }
  // The four bytes of the emoji in four reads.
  const std::size_t at = body.find("🚀");
  EXPECT_EQ(parse({body.substr(0, at + 1), body.substr(at + 1, 1), body.substr(at + 2, 1), body.substr(at + 3)}),
            std::vector<Got>{msg(text)});
}

TEST(SseParser, EverySplitGivesTheSameEvents) {
  const std::string body =
      ": c\r\nevent: a\r\nid: 3\r\ndata: x\r\ndata:y\r\n\r\nretry: 5\rdata: é\r\rx-y: z\ndata\n\nevent: b\ndata: "
      "🙂\n\n";
  SseParser reference_parser;
  const auto want = parse({body}, reference_parser);
  ASSERT_EQ(want.size(), 4u);
  for (std::size_t i = 1; i < body.size(); ++i) {
    for (std::size_t j = i; j < body.size(); j += 7) {
      EXPECT_EQ(parse({body.substr(0, i), body.substr(i, j - i), body.substr(j)}), want) << i << "," << j;
    }
  }
  std::vector<std::string> bytes;
  for (const char c : body) bytes.emplace_back(1, c);
  EXPECT_EQ(parse(bytes), want);
}

TEST(SseParser, ManyEventsInOneRead) {
  std::string body;
  for (int i = 0; i < 1000; ++i) body += "data: " + std::to_string(i) + "\n\n";
  const auto got = parse({body});
  ASSERT_EQ(got.size(), 1000u);
  EXPECT_EQ(got[999].data, "999");
}

TEST(SseParser, FinishDropsAnUnterminatedLineAndItsEvent) {
  SseParser parser;
  const auto got = parse({"data: whole\n\nevent: x\ndata: {\"partial\":"}, parser);
  EXPECT_EQ(got, std::vector<Got>{msg("whole")});
  EXPECT_TRUE(parser.dropped_partial());
  EXPECT_FALSE(parser.unterminated_event_dispatched());
}

TEST(SseParser, FinishDropsAnEventWhoseLastLineIsCutEvenIfEarlierLinesAreWhole) {
  SseParser parser;
  EXPECT_EQ(parse({"data: first line\ndata: sec"}, parser), std::vector<Got>{});
  EXPECT_TRUE(parser.dropped_partial());
}

TEST(SseParser, FinishDispatchesAnEventWhoseLinesAreCompleteButLacksTheBlankLine) {
  SseParser parser;
  EXPECT_EQ(parse({"data: a\n\ndata: [DONE]\n"}, parser), (std::vector<Got>{msg("a"), msg("[DONE]")}));
  EXPECT_TRUE(parser.unterminated_event_dispatched());
  EXPECT_FALSE(parser.dropped_partial());

  SseParser cr;
  EXPECT_EQ(parse({"data: [DONE]\r"}, cr), std::vector<Got>{msg("[DONE]")});
  EXPECT_TRUE(cr.unterminated_event_dispatched());
}

TEST(SseParser, FinishTellsWhetherTheBodyEndedInsideALine) {
  SseParser cut;
  cut.feed("data: a\n\ndata: b");
  EXPECT_TRUE(cut.finish()) << "known before draining";
  EXPECT_EQ(drain(cut), std::vector<Got>{msg("a")});
  EXPECT_TRUE(cut.dropped_partial());

  SseParser whole;
  whole.feed("data: a\n\ndata: b\n");
  EXPECT_FALSE(whole.finish());
  EXPECT_EQ(drain(whole), (std::vector<Got>{msg("a"), msg("b")}));

  SseParser cr;
  cr.feed("data: a\r");
  EXPECT_FALSE(cr.finish());

  SseParser empty;
  EXPECT_FALSE(empty.finish());
  EXPECT_TRUE(drain(empty).empty());
}

TEST(SseParser, WithoutFinishNothingPartialIsDispatched) {
  EXPECT_EQ(parse({"data: a\n"}, /*finish=*/false), std::vector<Got>{});
}

TEST(SseParser, CleanEndReportsNothing) {
  SseParser parser;
  EXPECT_EQ(parse({"data: a\n\n"}, parser), std::vector<Got>{msg("a")});
  EXPECT_FALSE(parser.dropped_partial());
  EXPECT_FALSE(parser.unterminated_event_dispatched());
}

TEST(SseParser, LeadingByteOrderMarkIsSkippedEvenWhenSplit) {
  const std::string bom = "\xEF\xBB\xBF";
  EXPECT_EQ(parse({bom + "data: a\n\n"}), std::vector<Got>{msg("a")});
  EXPECT_EQ(parse({"\xEF", "\xBB",
                   "\xBF"
                   "data: a\n\n"}),
            std::vector<Got>{msg("a")});
  // Only at the very start: later it is part of a field name, an unknown field.
  EXPECT_EQ(parse({"data: a\n\n" + bom + "data: b\n\n"}), std::vector<Got>{msg("a")});
  // Bytes that merely start like a BOM are kept.
  EXPECT_EQ(parse({"\xEF", "data: x\n\n"}), std::vector<Got>{});
}

TEST(SseParser, OversizedEventStopsTheParser) {
  SseParser parser(64);
  parser.feed("data: " + std::string(100, 'x'));
  EXPECT_TRUE(drain(parser).empty());
  EXPECT_TRUE(parser.overflowed());
  parser.feed("\n\n");
  EXPECT_TRUE(drain(parser).empty()) << "an overflowed parser yields nothing more";

  SseParser by_lines(64);
  std::string many;
  for (int i = 0; i < 10; ++i) many += "data: 0123456789\n";
  by_lines.feed(many);
  EXPECT_TRUE(drain(by_lines).empty());
  EXPECT_TRUE(by_lines.overflowed()) << "many small data lines add up";
}

TEST(SseParser, ViewsStayValidUntilTheNextCall) {
  SseParser parser;
  parser.feed("event: e\ndata: payload\n\ndata: second\n\n");
  const auto first = parser.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->type, "e");
  EXPECT_EQ(first->data, "payload");
  const auto second = parser.next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->type, "message");
  EXPECT_EQ(second->data, "second");
}

}  // namespace
}  // namespace agentd::net
