#include "core/support/trace.h"

#include <map>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace agentd::support {
namespace {

TEST(Trace, SpansRecordParentsStatusAndAttributes) {
  MemorySpanSink sink;
  Tracer tracer(&sink);
  std::uint64_t root_id = 0;
  {
    Span root = tracer.start("turn.run");
    root_id = root.id();
    root.set_attribute("session", "s1");
    {
      Span child = root.child("model.call");
      child.set_attribute("retries", 2);
      child.set_attribute("retries", 3);  // overwrite, not duplicate
      child.set_status(SpanStatus::error, "overloaded");
    }
  }
  const auto spans = sink.spans();
  ASSERT_EQ(spans.size(), 2u);
  // Children end first.
  EXPECT_EQ(spans[0].name, "model.call");
  EXPECT_EQ(spans[0].parent_id, root_id);
  EXPECT_EQ(spans[0].status, SpanStatus::error);
  EXPECT_EQ(spans[0].status_message, "overloaded");
  ASSERT_EQ(spans[0].attributes.size(), 1u);
  EXPECT_EQ(spans[0].attributes[0].second, Json(3));
  EXPECT_EQ(spans[1].name, "turn.run");
  EXPECT_EQ(spans[1].parent_id, 0u);
  EXPECT_LE(spans[1].start_us, spans[0].start_us);
  EXPECT_GE(spans[1].end_us, spans[0].end_us);
  EXPECT_EQ(span_status_name(spans[1].status), "ok");
}

// Work on another thread records into a buffer; the turn's span adopts the records with ids of its own
// tracer, the buffer's roots under it and the rest under their own parents, times and attributes kept.
TEST(Trace, AdoptedSpansGetOurIdsAndHangUnderTheAdopter) {
  SpanBuffer buffer;
  std::thread worker([&] {
    Span step = buffer.start("context.workspace");
    {
      Span read = step.child("context.read");
      read.set_attribute("path", "a.cpp");
    }
    Span other = buffer.start("skill.select");
  });
  worker.join();
  const auto recorded = buffer.records();
  ASSERT_EQ(recorded.size(), 3u);

  MemorySpanSink sink;
  Tracer tracer(&sink);
  { Span unrelated = tracer.start("turn.run"); }  // takes id 1, which the buffer also used
  std::uint64_t adopter_id = 0;
  {
    Span adopter = tracer.start("context.retrieve");
    adopter_id = adopter.id();
    adopter.adopt(recorded);
  }
  const auto spans = sink.spans();
  ASSERT_EQ(spans.size(), 5u);
  std::map<std::string, SpanRecord> by_name;
  std::set<std::uint64_t> ids;
  for (const auto& s : spans) {
    by_name[s.name] = s;
    ids.insert(s.id);
  }
  EXPECT_EQ(ids.size(), 5u) << "every id unique in our tracer";
  EXPECT_EQ(by_name["context.workspace"].parent_id, adopter_id);
  EXPECT_EQ(by_name["skill.select"].parent_id, adopter_id);
  EXPECT_EQ(by_name["context.read"].parent_id, by_name["context.workspace"].id);
  ASSERT_EQ(by_name["context.read"].attributes.size(), 1u);
  EXPECT_EQ(by_name["context.read"].attributes[0].second, Json("a.cpp"));
  EXPECT_LE(by_name["context.workspace"].start_us, by_name["context.read"].start_us);

  Span inert;
  inert.adopt(recorded);  // nothing, no crash
}

TEST(Trace, EndIsIdempotentAndMovesTransferOwnership) {
  MemorySpanSink sink;
  Tracer tracer(&sink);
  Span a = tracer.start("a");
  Span b = std::move(a);
  b.end();
  b.end();
  EXPECT_EQ(sink.spans().size(), 1u);
  Span inert;
  inert.set_attribute("x", 1);
  inert.end();
  EXPECT_EQ(sink.spans().size(), 1u);
}

TEST(Trace, NullSinkStillHandsOutIds) {
  Tracer tracer(nullptr);
  Span a = tracer.start("a");
  Span b = a.child("b");
  EXPECT_NE(a.id(), b.id());
}

}  // namespace
}  // namespace agentd::support
