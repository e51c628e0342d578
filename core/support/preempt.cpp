#include "core/support/preempt.h"

#include <sched.h>

namespace agentd::support {

namespace {
thread_local bool t_background = false;
}  // namespace

void mark_background_thread() noexcept { t_background = true; }

bool on_background_thread() noexcept { return t_background; }

void preemption_point() noexcept {
  if (t_background) (void)::sched_yield();
}

}  // namespace agentd::support
