#include "core/support/cancel.h"

#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

namespace agentd::support {

namespace detail {

struct CancelState {
  std::atomic<bool> cancelled{false};
  std::mutex mutex;
  std::uint64_t next_id = 1;
  std::vector<std::pair<std::uint64_t, std::function<void()>>> callbacks;

  void cancel() {
    std::vector<std::pair<std::uint64_t, std::function<void()>>> to_run;
    {
      std::lock_guard lock(mutex);
      if (cancelled.exchange(true)) return;
      to_run.swap(callbacks);
    }
    for (auto& [id, fn] : to_run) fn();
  }
};

}  // namespace detail

CancelRegistration::CancelRegistration(CancelRegistration&& other) noexcept
    : state_(std::move(other.state_)), id_(std::exchange(other.id_, 0)) {}

CancelRegistration& CancelRegistration::operator=(CancelRegistration&& other) noexcept {
  if (this != &other) {
    reset();
    state_ = std::move(other.state_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

CancelRegistration::~CancelRegistration() { reset(); }

void CancelRegistration::reset() {
  if (!state_) return;
  {
    std::lock_guard lock(state_->mutex);
    auto& cbs = state_->callbacks;
    for (auto it = cbs.begin(); it != cbs.end(); ++it) {
      if (it->first == id_) {
        cbs.erase(it);
        break;
      }
    }
  }
  state_.reset();
  id_ = 0;
}

bool CancelToken::cancelled() const noexcept { return state_ && state_->cancelled.load(std::memory_order_acquire); }

CancelRegistration CancelToken::on_cancel(std::function<void()> callback) const {
  if (!state_) return {};
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->cancelled.load(std::memory_order_acquire)) {
      const std::uint64_t id = state_->next_id++;
      state_->callbacks.emplace_back(id, std::move(callback));
      return CancelRegistration(state_, id);
    }
  }
  callback();
  return {};
}

CancelSource::CancelSource() : state_(std::make_shared<detail::CancelState>()) {}

CancelSource::CancelSource(const CancelToken& parent) : CancelSource() {
  parent_link_ = parent.on_cancel([state = std::weak_ptr<detail::CancelState>(state_)] {
    if (auto s = state.lock()) s->cancel();
  });
}

void CancelSource::cancel() { state_->cancel(); }

bool CancelSource::cancelled() const noexcept { return state_->cancelled.load(std::memory_order_acquire); }

}  // namespace agentd::support
