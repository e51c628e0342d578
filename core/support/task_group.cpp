#include "core/support/task_group.h"

#include <exception>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/support/log.h"

namespace agentd::support {

namespace asio = boost::asio;

TaskGroup::TaskGroup(asio::any_io_executor executor)
    : executor_(std::move(executor)), idle_(executor_, asio::steady_timer::time_point::max()) {}

TaskGroup::~TaskGroup() {
  // A group must be joined (or its io_context destroyed) before it goes; detach what is left so a
  // late completion cannot reach a dead group's slots.
  for (auto& child : children_) child->signal.slot().clear();
}

void TaskGroup::spawn(asio::awaitable<void> task, std::string name, const CancelToken& token) {
  auto child = std::make_shared<Child>();
  auto it = children_.insert(children_.end(), child);
  if (token.cancelled()) {
    // Spawned already cancelled: cancel as soon as it starts to wait on anything.
    asio::post(executor_, [weak = std::weak_ptr(child)] {
      if (auto c = weak.lock()) c->signal.emit(asio::cancellation_type::terminal);
    });
  } else {
    child->on_token = token.on_cancel([weak = std::weak_ptr(child), ex = executor_] {
      asio::post(ex, [weak] {
        if (auto c = weak.lock()) c->signal.emit(asio::cancellation_type::terminal);
      });
    });
  }
  asio::co_spawn(executor_, std::move(task),
                 asio::bind_cancellation_slot(child->signal.slot(),
                                              [this, it, name = std::move(name)](const std::exception_ptr& e) {
                                                if (e) {
                                                  try {
                                                    std::rethrow_exception(e);
                                                  } catch (const std::exception& ex) {
                                                    log::error("{} failed: {}", name, ex.what());
                                                  } catch (...) {
                                                    log::error("{} failed with an unknown exception", name);
                                                  }
                                                }
                                                children_.erase(it);
                                                if (children_.empty()) idle_.cancel();
                                              }));
}

void TaskGroup::cancel_all() {
  // Emitting can complete a child synchronously and erase it from the list: emit on a snapshot.
  std::vector<std::shared_ptr<Child>> snapshot(children_.begin(), children_.end());
  for (auto& child : snapshot) child->signal.emit(asio::cancellation_type::terminal);
}

asio::awaitable<void> TaskGroup::join() {
  while (!children_.empty()) {
    idle_.expires_at(asio::steady_timer::time_point::max());
    co_await idle_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

}  // namespace agentd::support
