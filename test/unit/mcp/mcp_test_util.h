// Helpers for the MCP client tests: a one-thread io_context that runs a coroutine (or until a
// condition holds) with a bound, and calls of McpManager tools by their mcp__ name.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "core/support/json.h"
#include "tools/mcp/mcp_manager.h"

namespace agentd::tools::mcp::testing {

using namespace std::chrono_literals;

class McpFixture : public ::testing::Test {
 protected:
  // By reference: GCC 12 destroys a class prvalue passed by value to a coroutine twice.
  template <class T>
  static boost::asio::awaitable<void> store(boost::asio::awaitable<T>& task, std::shared_ptr<std::optional<T>> out) {
    auto awaitable = std::move(task);
    out->emplace(co_await std::move(awaitable));
  }

  ~McpFixture() override {
    if (manager_) run_void(manager_->shutdown());
  }

  // Runs `task` to completion, or fails the test after `limit`. (Through a void coroutine: co_spawn
  // wants a default-constructible result, which Result<T> is not.)
  template <class T>
  std::optional<T> run(boost::asio::awaitable<T> task, std::chrono::milliseconds limit = 20s) {
    // Shared with the coroutine: on a timeout it may still finish later, after we returned.
    auto out = std::make_shared<std::optional<T>>();
    run_void(store(task, out), limit);
    return std::move(*out);
  }

  void run_void(boost::asio::awaitable<void> task, std::chrono::milliseconds limit = 20s) {
    auto done = std::make_shared<bool>(false);
    boost::asio::co_spawn(io_, std::move(task), [done](const std::exception_ptr& e) {
      *done = true;
      if (e) ADD_FAILURE() << "coroutine threw";
    });
    if (!run_until([&] { return *done; }, limit)) {
      ADD_FAILURE() << "coroutine did not finish in time";
      // Let it finish (or be destroyed with the loop) without touching our locals.
      io_.stop();
    }
  }

  // Runs the loop until `condition` holds (true) or `limit` passes (false). Event-driven: run_for
  // returns as soon as handlers ran, it is no sleep.
  bool run_until(const std::function<bool()>& condition, std::chrono::milliseconds limit = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!condition()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      if (io_.stopped()) io_.restart();
      io_.run_for(10ms);
    }
    return true;
  }

  std::shared_ptr<McpManager> start(std::vector<ServerConfig> servers, ClientOptions options = {}) {
    manager_ = McpManager::create(io_.get_executor(), options);
    manager_->on_tools_changed([this] { ++tools_changed_; });
    manager_->start(std::move(servers));
    return manager_;
  }

  void wait_ready(std::chrono::milliseconds timeout = 15s) {
    support::CancelToken never;
    run_void(manager_->wait_ready(timeout, never), timeout + 5s);
  }

  ServerStatus status(std::size_t index = 0) const { return manager_->status().at(index); }

  std::shared_ptr<Tool> find_tool(const std::string& name) const {
    for (auto& tool : manager_->tools()) {
      if (tool->spec().name == name) return tool;
    }
    return nullptr;
  }

  std::vector<std::string> tool_names() const {
    std::vector<std::string> names;
    for (auto& tool : manager_->tools()) names.push_back(tool->spec().name);
    return names;
  }

  // Calls a tool; the outer optional is empty when the coroutine did not finish.
  std::optional<support::Result<ToolResult>> call(const std::string& name, support::Json input, ToolContext& context,
                                                  std::chrono::milliseconds limit = 20s) {
    auto tool = find_tool(name);
    if (!tool) {
      ADD_FAILURE() << "no tool " << name;
      return std::nullopt;
    }
    return run(tool->run(std::move(input), context), limit);
  }

  std::optional<support::Result<ToolResult>> call(const std::string& name,
                                                  support::Json input = support::Json::object()) {
    ToolContext context;
    return call(name, std::move(input), context);
  }

  boost::asio::io_context io_;
  std::shared_ptr<McpManager> manager_;
  int tools_changed_ = 0;
};

inline support::Json text_input(std::string text) {
  support::Json input = support::Json::object();
  input.set("text", std::move(text));
  return input;
}

}  // namespace agentd::tools::mcp::testing
