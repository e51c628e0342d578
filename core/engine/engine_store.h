// EngineStore: the engine's door to SQLite. Every statement runs on the storage::DbWorker thread, never
// on the event loop; writes are group-committed there, and their completions come back to the caller's
// executor. A write's completion means it is committed, as durable as the write asked (storage::Durability):
// events stream at `process` level (in the WAL, safe from kill -9), and what the client is acknowledged
// (a prompt's answer, a created session) waits for a `disk` commit, whose fsync covers everything before.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/support/result.h"
#include "storage/db_worker.h"

namespace agentd::core {

class EngineStore {
 public:
  explicit EngineStore(storage::DbWorker& worker) : worker_(worker) {}

  // Fire-and-forget write; `done` (optional) runs on `executor` once the write is committed or failed.
  void write(storage::DbWorker::WriteJob job, boost::asio::any_io_executor executor,
             std::function<void(support::Result<void>)> done = {},
             storage::Durability durability = storage::Durability::disk) {
    if (!done) {
      worker_.write(std::move(job), {}, durability);
      return;
    }
    worker_.write(
        std::move(job),
        [executor, done = std::move(done)](support::Result<void> result) mutable {
          boost::asio::post(
              executor, [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
        },
        durability);
  }

  // A write awaited until committed (by default on disk). Not a coroutine: it returns the operation
  // itself, so the job is moved straight into it (GCC 12 mishandles class temporaries passed to
  // coroutines; callers also keep jobs in named variables for that reason).
  template <class Job>
  auto write_durable(Job job, storage::Durability durability = storage::Durability::disk) {
    return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>, void(support::Result<void>)>(
        [this, durability](auto handler, Job j) {
          auto executor = boost::asio::get_associated_executor(handler);
          auto shared = std::make_shared<decltype(handler)>(std::move(handler));
          worker_.write(
              std::move(j),
              [executor, shared](support::Result<void> result) mutable {
                boost::asio::post(executor,
                                  [shared, result = std::move(result)]() mutable { (*shared)(std::move(result)); });
              },
              durability);
        },
        boost::asio::use_awaitable, std::move(job));
  }

  // A write whose job `fn(Connection&) -> Result<T>` produces a value (the id of a new row), awaited
  // until committed; the value comes back only once the write is durable.
  template <class T, class Fn>
  auto write_durable_value(Fn fn, storage::Durability durability = storage::Durability::disk) {
    return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>, void(support::Result<T>)>(
        [this, durability](auto handler, Fn f) {
          auto executor = boost::asio::get_associated_executor(handler);
          auto shared = std::make_shared<decltype(handler)>(std::move(handler));
          auto value = std::make_shared<std::optional<T>>();
          worker_.write(
              [f = std::move(f), value](storage::Connection& db) mutable -> support::Result<void> {
                auto produced = f(db);
                if (!produced) return std::move(produced).error();
                value->emplace(std::move(*produced));
                return support::ok();
              },
              [executor, shared, value](support::Result<void> result) mutable {
                boost::asio::post(executor, [shared, value, result = std::move(result)]() mutable {
                  if (!result) {
                    (*shared)(support::Result<T>(std::move(result).error()));
                  } else {
                    (*shared)(support::Result<T>(std::move(**value)));
                  }
                });
              },
              durability);
        },
        boost::asio::use_awaitable, std::move(fn));
  }

  // Completes once every write queued before it is committed at `durability` (a `disk` barrier makes
  // all earlier `process` writes power-safe too).
  auto barrier(storage::Durability durability = storage::Durability::disk) {
    return write_durable([](storage::Connection&) -> support::Result<void> { return support::ok(); }, durability);
  }

  // Runs `fn(Connection&) -> Result<T>` on the worker, after every write queued before it.
  template <class T, class Fn>
  auto read(Fn fn) {
    return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>, void(support::Result<T>)>(
        [this](auto handler, Fn f) {
          auto executor = boost::asio::get_associated_executor(handler);
          auto shared = std::make_shared<decltype(handler)>(std::move(handler));
          const bool queued = worker_.read([executor, shared, f = std::move(f)](storage::Connection& db) mutable {
            std::optional<support::Result<T>> result;
            try {
              result.emplace(f(db));
            } catch (const std::exception& e) {
              result.emplace(support::Error(support::Errc::internal, e.what()));
            }
            boost::asio::post(executor, [shared, r = std::move(*result)]() mutable { (*shared)(std::move(r)); });
          });
          if (!queued) {
            boost::asio::post(executor, [shared]() mutable {
// GCC 12 cannot tell that this Result holds the Error and warns that T's members are moved uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
              (*shared)(support::Result<T>(
                  support::Error(support::Errc::unavailable, "the database worker is shutting down")));
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
            });
          }
        },
        boost::asio::use_awaitable, std::move(fn));
  }

  storage::DbWorker& worker() noexcept { return worker_; }

 private:
  storage::DbWorker& worker_;
};

}  // namespace agentd::core
