#include "core/engine/project_memory.h"

#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/support/clock.h"
#include "storage/memory_store.h"

namespace agentd::core {

namespace asio = boost::asio;
using support::Result;

namespace {
memory::Fact to_fact(const storage::FactRecord& record) { return {record.id, record.text, record.created_at_ms}; }
}  // namespace

ProjectMemory::ProjectMemory(EngineStore& store, asio::strand<asio::any_io_executor> strand, std::string project,
                             std::string session_id)
    : store_(store), strand_(std::move(strand)), project_(std::move(project)), session_id_(std::move(session_id)) {}

asio::awaitable<Result<std::vector<memory::Fact>>> ProjectMemory::facts() {
  auto job = [project = project_](storage::Connection& db) -> Result<std::vector<storage::FactRecord>> {
    return storage::MemoryStore(db).list(project);
  };
  auto listed = co_await store_.read<std::vector<storage::FactRecord>>(std::move(job));
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!listed) co_return std::move(listed).error().context("reading the remembered facts");
  std::vector<memory::Fact> out;
  out.reserve(listed->size());
  for (const auto& r : *listed) out.push_back(to_fact(r));
  co_return out;
}

asio::awaitable<Result<memory::Fact>> ProjectMemory::remember(std::string text) {
  auto normalized = memory::normalize_fact_text(text);
  if (!normalized) co_return std::move(normalized).error();
  storage::FactRecord record;
  record.project = project_;
  record.text = std::move(*normalized);
  record.source_session_id = session_id_;
  record.created_at_ms = support::unix_millis_now();
  auto job = [record](storage::Connection& db) { return storage::MemoryStore(db).add(record); };
  auto id = co_await store_.write_durable_value<std::int64_t>(std::move(job));
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!id) co_return std::move(id).error().context("remembering the fact");
  record.id = *id;
  co_return to_fact(record);
}

asio::awaitable<Result<void>> ProjectMemory::forget(std::int64_t fact_id) {
  auto job = [project = project_, fact_id](storage::Connection& db) -> Result<void> {
    return storage::MemoryStore(db).remove(project, fact_id);
  };
  auto removed = co_await store_.write_durable(std::move(job));
  co_await asio::dispatch(strand_, asio::use_awaitable);
  co_return removed;
}

}  // namespace agentd::core
