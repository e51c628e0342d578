// ProjectMemory: the facts remembered for one project (its workspace root), shared by every session in
// it: /remember, /forget, /memory and `_agentd/memory/*`, and the facts a turn's context selects from.
// A service the Session owns; storage is storage/memory_store's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>

#include "core/engine/engine_store.h"
#include "core/memory/facts.h"
#include "core/support/result.h"

namespace agentd::core {

class ProjectMemory {
 public:
  // `strand` is the owner's: every call completes on it. `session_id` is recorded as a fact's source.
  ProjectMemory(EngineStore& store, boost::asio::strand<boost::asio::any_io_executor> strand, std::string project,
                std::string session_id);

  const std::string& project() const noexcept { return project_; }

  // Oldest first.
  boost::asio::awaitable<support::Result<std::vector<memory::Fact>>> facts();
  // Refuses empty, oversized or non-UTF-8 text (invalid_argument); durable when it answers.
  boost::asio::awaitable<support::Result<memory::Fact>> remember(std::string text);
  // Errc::not_found for an id this project does not have.
  boost::asio::awaitable<support::Result<void>> forget(std::int64_t fact_id);

 private:
  EngineStore& store_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  std::string project_;
  std::string session_id_;
};

}  // namespace agentd::core
