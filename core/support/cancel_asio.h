// Bridges a CancelToken to Asio: operations (or co_spawned coroutines) bound to slot() are cancelled
// when the token fires. Asio's cancellation_signal is not thread-safe, so the emit is posted to the
// executor the operations run on.
#pragma once

#include <memory>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>

#include "core/support/cancel.h"

namespace agentd::support {

class CancelBridge {
 public:
  CancelBridge(const CancelToken& token, boost::asio::any_io_executor executor,
               boost::asio::cancellation_type type = boost::asio::cancellation_type::terminal)
      : signal_(std::make_shared<boost::asio::cancellation_signal>()) {
    registration_ = token.on_cancel([weak = std::weak_ptr(signal_), executor, type] {
      boost::asio::post(executor, [weak, type] {
        if (auto signal = weak.lock()) signal->emit(type);
      });
    });
  }
  CancelBridge(const CancelBridge&) = delete;
  CancelBridge& operator=(const CancelBridge&) = delete;

  boost::asio::cancellation_slot slot() { return signal_->slot(); }

 private:
  std::shared_ptr<boost::asio::cancellation_signal> signal_;
  CancelRegistration registration_;
};

}  // namespace agentd::support
