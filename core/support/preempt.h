// Preemption points for long CPU work on a background thread (support::run_off_loop's). Linux 6.13 and
// later, in their default non-preemptive model (and any kernel without full preemption), let a
// CPU-bound thread keep its CPU until the next tick (4 ms at HZ=250) when a thread of normal priority
// wakes on the same core: the woken thread is marked to run, but the running one is switched out only
// when it enters the kernel or the tick comes. agentd's event loop and database thread are such woken
// threads, so 16 MB of hashing on a worker added up to one tick to another session's stream. A
// preemption point enters the kernel (sched_yield), where a pending switch happens at once; so work
// done slice by slice with a point between slices holds a core for one slice at most.
#pragma once

#include <cstddef>
#include <string_view>

namespace agentd::support {

// How much a background thread handles between two preemption points: hashing, scanning or copying this
// takes tens to a few hundred microseconds; a point costs well under one.
inline constexpr std::size_t kPreemptSliceBytes = std::size_t{256} << 10;

// Marks the calling thread as a background worker (support::run_off_loop does, for its threads).
void mark_background_thread() noexcept;
bool on_background_thread() noexcept;
// On a background thread, gives the CPU to a thread waiting for it, if any; elsewhere (the event loop,
// the database thread), nothing.
void preemption_point() noexcept;

// Calls `f(slice)` for consecutive slices of `bytes` of at most kPreemptSliceBytes, with a preemption
// point between two slices. A slice may cut a multi-byte character or a line: `f` must not care.
template <class F>
void for_each_slice(std::string_view bytes, F&& f) {
  while (bytes.size() > kPreemptSliceBytes) {
    f(bytes.substr(0, kPreemptSliceBytes));
    bytes.remove_prefix(kPreemptSliceBytes);
    preemption_point();
  }
  f(bytes);
}

}  // namespace agentd::support
