// Cancellation tokens: a CancelSource owns the decision, any number of CancelTokens observe it.
// Thread-safe. cancel_asio.h bridges a token to Asio's per-operation cancellation slots.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace agentd::support {

namespace detail {
struct CancelState;
}

// Unregisters its callback when destroyed. Move-only.
class [[nodiscard]] CancelRegistration {
 public:
  CancelRegistration() = default;
  CancelRegistration(CancelRegistration&& other) noexcept;
  CancelRegistration& operator=(CancelRegistration&& other) noexcept;
  CancelRegistration(const CancelRegistration&) = delete;
  CancelRegistration& operator=(const CancelRegistration&) = delete;
  ~CancelRegistration();
  void reset();

 private:
  friend class CancelToken;
  CancelRegistration(std::shared_ptr<detail::CancelState> state, std::uint64_t id)
      : state_(std::move(state)), id_(id) {}
  std::shared_ptr<detail::CancelState> state_;
  std::uint64_t id_ = 0;
};

class CancelToken {
 public:
  // A token that is never cancelled.
  CancelToken() = default;

  bool cancelled() const noexcept;
  // Runs `callback` once when cancellation is requested: immediately, on this thread, if it already
  // was; otherwise on the thread that calls cancel(). Callbacks must be quick and must not throw.
  CancelRegistration on_cancel(std::function<void()> callback) const;

 private:
  friend class CancelSource;
  explicit CancelToken(std::shared_ptr<detail::CancelState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::CancelState> state_;
};

class CancelSource {
 public:
  CancelSource();
  // A source that is also cancelled when `parent` is (a turn inside a session, a tool inside a turn).
  explicit CancelSource(const CancelToken& parent);

  CancelToken token() const { return CancelToken(state_); }
  // Idempotent; runs the registered callbacks once.
  void cancel();
  bool cancelled() const noexcept;

 private:
  std::shared_ptr<detail::CancelState> state_;
  CancelRegistration parent_link_;
};

}  // namespace agentd::support
