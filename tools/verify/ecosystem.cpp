// The registry of ecosystems: the one list a new ecosystem file is added to.
#include "tools/verify/ecosystem.h"

#include <algorithm>

namespace agentd::tools::verify {

bool Ecosystem::owns(RunnerKind kind) const noexcept {
  return std::any_of(runners.begin(), runners.end(), [kind](const Runner& r) { return r.kind == kind; });
}

const std::vector<const Ecosystem*>& ecosystems() {
  static const std::vector<const Ecosystem*> kAll{&node_ecosystem(),  &python_ecosystem(), &rust_ecosystem(),
                                                  &go_ecosystem(),    &cpp_ecosystem(),    &make_ecosystem(),
                                                  &readme_ecosystem()};
  return kAll;
}

const Runner* find_runner(RunnerKind kind) noexcept {
  for (const Ecosystem* ecosystem : ecosystems()) {
    for (const Runner& runner : ecosystem->runners) {
      if (runner.kind == kind) return &runner;
    }
  }
  return nullptr;
}

std::vector<const Runner*> runners_by(int Runner::*order) {
  std::vector<const Runner*> out;
  for (const Ecosystem* ecosystem : ecosystems()) {
    for (const Runner& runner : ecosystem->runners) out.push_back(&runner);
  }
  std::stable_sort(out.begin(), out.end(), [order](const Runner* a, const Runner* b) { return a->*order < b->*order; });
  return out;
}

}  // namespace agentd::tools::verify
