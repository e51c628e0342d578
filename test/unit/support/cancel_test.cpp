#include "core/support/cancel.h"

#include <thread>

#include <gtest/gtest.h>

namespace agentd::support {
namespace {

TEST(Cancel, DefaultTokenIsNeverCancelled) {
  CancelToken token;
  EXPECT_FALSE(token.cancelled());
  int calls = 0;
  auto reg = token.on_cancel([&] { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(Cancel, CallbacksRunOnceOnCancel) {
  CancelSource source;
  int calls = 0;
  auto reg = source.token().on_cancel([&] { ++calls; });
  EXPECT_FALSE(source.token().cancelled());
  source.cancel();
  source.cancel();
  EXPECT_TRUE(source.token().cancelled());
  EXPECT_EQ(calls, 1);
}

TEST(Cancel, RegistrationAfterCancelRunsImmediately) {
  CancelSource source;
  source.cancel();
  int calls = 0;
  auto reg = source.token().on_cancel([&] { ++calls; });
  EXPECT_EQ(calls, 1);
}

TEST(Cancel, DroppedRegistrationDoesNotRun) {
  CancelSource source;
  int calls = 0;
  {
    auto reg = source.token().on_cancel([&] { ++calls; });
  }
  source.cancel();
  EXPECT_EQ(calls, 0);
}

TEST(Cancel, LinkedSourceFollowsItsParent) {
  CancelSource parent;
  CancelSource child(parent.token());
  CancelSource unrelated;
  parent.cancel();
  EXPECT_TRUE(child.cancelled());
  EXPECT_FALSE(unrelated.cancelled());
  // Cancelling a child leaves the parent alone.
  CancelSource parent2;
  CancelSource child2(parent2.token());
  child2.cancel();
  EXPECT_FALSE(parent2.cancelled());
}

TEST(Cancel, CancelFromAnotherThreadIsSeen) {
  CancelSource source;
  std::atomic<int> calls{0};
  auto reg = source.token().on_cancel([&] { calls++; });
  std::thread t([&] { source.cancel(); });
  t.join();
  EXPECT_TRUE(source.cancelled());
  EXPECT_EQ(calls.load(), 1);
}

}  // namespace
}  // namespace agentd::support
