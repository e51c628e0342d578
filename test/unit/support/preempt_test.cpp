// Preemption points: slices cover the bytes exactly, in order; only threads marked as background yield;
// run_off_loop's threads are marked; UTF-8 validation (now a word at a time) still tells good from bad
// across slice boundaries.
#include "core/support/preempt.h"

#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/support/text.h"

namespace agentd::support {
namespace {

TEST(Preempt, SlicesCoverTheBytesInOrder) {
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, kPreemptSliceBytes - 1, kPreemptSliceBytes,
                           kPreemptSliceBytes + 1, 3 * kPreemptSliceBytes + 17}) {
    std::string bytes(size, 'x');
    for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    std::string seen;
    int calls = 0;
    for_each_slice(bytes, [&](std::string_view slice) {
      EXPECT_LE(slice.size(), kPreemptSliceBytes);
      seen += slice;
      ++calls;
    });
    EXPECT_EQ(seen, bytes);
    EXPECT_EQ(calls, size == 0 ? 1 : static_cast<int>((size + kPreemptSliceBytes - 1) / kPreemptSliceBytes));
  }
}

TEST(Preempt, OnlyMarkedThreadsAreBackground) {
  EXPECT_FALSE(on_background_thread());
  preemption_point();  // a no-op here
  bool marked = false;
  std::thread([&marked] {
    mark_background_thread();
    preemption_point();
    marked = on_background_thread();
  }).join();
  EXPECT_TRUE(marked);
  EXPECT_FALSE(on_background_thread());
}

TEST(Preempt, Utf8ValidationHoldsAcrossWordsAndSlices) {
  std::string text(2 * kPreemptSliceBytes + 5, 'a');
  EXPECT_TRUE(is_valid_utf8(text));
  // A two-byte character straddling a slice boundary, and one at every offset within a word.
  for (std::size_t at : {kPreemptSliceBytes - 1, kPreemptSliceBytes, std::size_t{3}, std::size_t{7}}) {
    std::string t = text;
    t.replace(at, 2, "\xc3\xa9");
    EXPECT_TRUE(is_valid_utf8(t)) << at;
    t[at + 1] = 'b';  // a lead byte without its continuation
    EXPECT_FALSE(is_valid_utf8(t)) << at;
  }
  std::string late = text;
  late.back() = '\xff';
  EXPECT_FALSE(is_valid_utf8(late));
  EXPECT_FALSE(is_valid_utf8(std::string("abcdefg\xed\xa0\x80", 10)));  // a surrogate after a word
}

}  // namespace
}  // namespace agentd::support
