// Blocking work (disk I/O, a tree walk, hashing a large file) run on a thread of its own, so the one
// event-loop thread that every session's stream shares never waits for it.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <thread>
#include <utility>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "core/support/preempt.h"

namespace agentd::support {

// Runs `work` on a thread of its own and completes on the awaiting coroutine's executor with what it
// returned. Not a coroutine itself: `work` is moved straight into the operation (GCC 12 mishandles class
// temporaries passed to coroutines), so it must own everything it touches. The executor is kept busy (a
// work guard) until the result is posted back, so the loop cannot finish under the thread. A thread per
// call: the work this is for takes milliseconds at least, against tens of microseconds to start one.
// Name the work before the co_await (`auto work = [...] {...}; co_await run_off_loop(std::move(work));`):
// GCC 12 destroys a lambda temporary of a co_await expression twice (seen here as a double free).
// Linux nice values are per thread: the thread that calls this runs at nice +10 from here on, so on a
// machine with fewer cores than busy threads the event loop (nice 0) still gets the CPU when it wakes,
// and a session hashing 50 MB does not delay another session's stream. Best effort: a failure changes
// nothing else.
inline void lower_this_threads_priority() noexcept {
  constexpr int kOffLoopNice = 10;
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int current = ::getpriority(PRIO_PROCESS, tid);
  if (current == -1 && errno != 0) return;
  (void)::setpriority(PRIO_PROCESS, tid, std::min(current + kOffLoopNice, 19));
}

// Below this many bytes, reading, hashing or scanning takes microseconds: less than starting a thread
// (tens of µs of CPU, and a turn's read_file does several such steps), so call sites pass
// `off = bytes >= kOffLoopBytes` and small files stay on the loop.
inline constexpr std::size_t kOffLoopBytes = std::size_t{256} << 10;

template <class Work>
auto run_off_loop(Work work, bool off = true) {
  using Value = decltype(work());
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>, void(Value)>(
      [off](auto handler, Work w) {
        auto executor = boost::asio::get_associated_executor(handler);
        if (!off) {
          // Done here, and completed through the executor like any asynchronous operation.
          boost::asio::post(executor,
                            [handler = std::move(handler), result = w()]() mutable { handler(std::move(result)); });
          return;
        }
        auto guard = boost::asio::make_work_guard(executor);
        // Detached: the thread owns everything it touches, and the guard keeps the loop alive for it.
        std::thread([handler = std::move(handler), w = std::move(w), guard = std::move(guard)]() mutable {
          lower_this_threads_priority();
          mark_background_thread();
          auto result = w();
          auto target = guard.get_executor();
          boost::asio::post(target, [handler = std::move(handler), result = std::move(result)]() mutable {
            handler(std::move(result));
          });
          guard.reset();
        }).detach();
      },
      boost::asio::use_awaitable, std::move(work));
}

}  // namespace agentd::support
