// TaskGroup: owns spawned coroutines. Every coroutine agentd starts belongs to one, so shutdown can
// cancel them all and wait until they have finished. Use it from one executor (or strand) only.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include "core/support/cancel.h"

namespace agentd::support {

class TaskGroup {
 public:
  explicit TaskGroup(boost::asio::any_io_executor executor);
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;
  ~TaskGroup();

  // Starts `task`. An exception escaping it is logged with `name`, never rethrown into the loop.
  // When `token` fires, the task is cancelled as by cancel_all().
  void spawn(boost::asio::awaitable<void> task, std::string name = "task", const CancelToken& token = {});
  // Requests terminal cancellation of every running child; returns at once.
  void cancel_all();
  std::size_t size() const noexcept { return children_.size(); }
  // Completes once no child is running.
  boost::asio::awaitable<void> join();

 private:
  struct Child {
    boost::asio::cancellation_signal signal;
    CancelRegistration on_token;
  };
  boost::asio::any_io_executor executor_;
  std::list<std::shared_ptr<Child>> children_;
  boost::asio::steady_timer idle_;
};

}  // namespace agentd::support
