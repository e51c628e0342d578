#include "core/support/task_group.h"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include "core/support/cancel.h"
#include "core/support/cancel_asio.h"

namespace agentd::support {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// Waits "forever" (an hour); only cancellation ends it early. Records how it ended.
asio::awaitable<void> wait_long(std::string& outcome) {
  asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::hours(1));
  try {
    co_await timer.async_wait(asio::use_awaitable);
    outcome = "expired";
  } catch (const boost::system::system_error& e) {
    outcome = e.code() == asio::error::operation_aborted ? "cancelled" : e.what();
  }
}

TEST(TaskGroup, CancelAllStopsChildrenAndJoinReturns) {
  asio::io_context io;
  TaskGroup group(io.get_executor());
  std::string a, b;
  group.spawn(wait_long(a));
  group.spawn(wait_long(b));
  io.poll();
  EXPECT_EQ(group.size(), 2u);
  bool joined = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        group.cancel_all();
        co_await group.join();
        joined = true;
      },
      asio::detached);
  io.run_for(5s);
  EXPECT_TRUE(joined);
  EXPECT_EQ(a, "cancelled");
  EXPECT_EQ(b, "cancelled");
  EXPECT_EQ(group.size(), 0u);
}

TEST(TaskGroup, TokenCancelsOnlyItsTask) {
  asio::io_context io;
  TaskGroup group(io.get_executor());
  CancelSource source;
  std::string a, b;
  group.spawn(wait_long(a), "a", source.token());
  group.spawn(wait_long(b), "b");
  io.poll();
  source.cancel();
  io.poll();
  EXPECT_EQ(a, "cancelled");
  EXPECT_EQ(b, "");
  EXPECT_EQ(group.size(), 1u);
  group.cancel_all();
  io.poll();
  EXPECT_EQ(b, "cancelled");
}

TEST(TaskGroup, AnEscapingExceptionIsContained) {
  asio::io_context io;
  TaskGroup group(io.get_executor());
  group.spawn([]() -> asio::awaitable<void> {
    throw std::runtime_error("boom");
    co_return;
  }());
  EXPECT_NO_THROW(io.run_for(1s));
  EXPECT_EQ(group.size(), 0u);
}

TEST(TaskGroup, JoinWithNoChildrenIsImmediate) {
  asio::io_context io;
  TaskGroup group(io.get_executor());
  bool joined = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await group.join();
        joined = true;
      },
      asio::detached);
  io.run_for(1s);
  EXPECT_TRUE(joined);
}

TEST(CancelBridge, TokenCancelsABoundAsioOperation) {
  asio::io_context io;
  CancelSource source;
  CancelBridge bridge(source.token(), io.get_executor());
  asio::steady_timer timer(io, std::chrono::hours(1));
  boost::system::error_code result;
  timer.async_wait(asio::bind_cancellation_slot(bridge.slot(), [&](boost::system::error_code ec) { result = ec; }));
  io.poll();
  source.cancel();
  io.run_for(1s);
  EXPECT_EQ(result, asio::error::operation_aborted);
}

}  // namespace
}  // namespace agentd::support
