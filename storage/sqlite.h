// Small RAII wrappers over SQLite: a Connection, Statements (prepared once and cached by SQL text), and
// scoped Transactions. Errors keep SQLite's extended result code as the Error's native code.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/support/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace agentd::storage {

using support::Error;
using support::Result;

class Connection;

class Statement {
 public:
  Statement() = default;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQLite. Text is copied (SQLITE_TRANSIENT).
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind_null(int index);
  Statement& bind_blob(int index, std::string_view bytes);
  template <class... Args>
  Statement& bind_all(const Args&... args) {
    int index = 1;
    (bind(index++, args), ...);
    return *this;
  }

  // true: a row is ready to read; false: the statement is done.
  Result<bool> step();
  // Steps to completion; for statements that return no rows.
  Result<void> run();
  // Clears bindings and rewinds, ready for the next use.
  void reset();

  int column_count() const;
  bool is_null(int column) const;
  std::int64_t column_int64(int column) const;
  double column_double(int column) const;
  // Valid until the next step/reset.
  std::string_view column_text(int column) const;
  std::string column_string(int column) const { return std::string(column_text(column)); }
  std::string_view column_blob(int column) const;

 private:
  friend class Connection;
  Statement(Connection* connection, sqlite3_stmt* stmt) : connection_(connection), stmt_(stmt) {}
  Connection* connection_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  // A bind failure (out-of-range index, out of memory) is reported by the next step().
  int bind_error_ = 0;
};

// A cached statement on loan: reset when the lease ends, so no half-read SELECT keeps a read
// transaction (and a WAL snapshot) open behind the caller's back.
class StatementLease {
 public:
  explicit StatementLease(Statement* statement) : statement_(statement) {}
  StatementLease(StatementLease&& other) noexcept : statement_(std::exchange(other.statement_, nullptr)) {}
  StatementLease& operator=(StatementLease&&) = delete;
  StatementLease(const StatementLease&) = delete;
  ~StatementLease() {
    if (statement_ != nullptr) statement_->reset();
  }
  Statement& operator*() const noexcept { return *statement_; }
  Statement* operator->() const noexcept { return statement_; }

 private:
  Statement* statement_;
};

class Connection {
 public:
  enum class Mode { read_write_create, read_write, read_only };

  static Result<Connection> open(const std::string& path, Mode mode = Mode::read_write_create);
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Runs one or more statements that return no rows.
  Result<void> exec(std::string_view sql);
  Result<Statement> prepare(std::string_view sql);
  // A statement prepared once per SQL text and kept for the connection's life; lent out unbound.
  Result<StatementLease> cached(std::string_view sql);

  // Reads a single integer (`PRAGMA user_version`, `SELECT count(*) ...`).
  Result<std::int64_t> query_int(std::string_view sql);

  std::int64_t last_insert_rowid() const;
  int changes() const;
  // False in autocommit mode. SQLite may end a transaction on its own (disk full, I/O error), so
  // code holding one can ask whether it still does.
  bool in_transaction() const noexcept;
  const std::string& path() const noexcept { return path_; }
  sqlite3* handle() const noexcept { return db_; }

  // An Error for result code `rc` of operation `what`, with SQLite's message and extended code.
  Error error(std::string_view what, int rc) const;

 private:
  Connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  void close() noexcept;

  sqlite3* db_ = nullptr;
  std::string path_;
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

// Which constraint a failed write broke, read from the Error's extended SQLite code, so a store can
// say "no such session" (foreign key) apart from "already exists" (unique) or "bad JSON" (check).
enum class Constraint { none, unique, foreign_key, check, not_null, other };
Constraint constraint_of(const Error& error) noexcept;

// BEGIN IMMEDIATE on construction (so writers queue on busy_timeout instead of failing mid-way);
// ROLLBACK on destruction unless commit() succeeded. Inside an open transaction (a DbWorker batch)
// it nests as a SAVEPOINT instead, so a store's multi-statement write stays all-or-nothing there too.
class Transaction {
 public:
  static Result<Transaction> begin(Connection& connection);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  ~Transaction();

  Result<void> commit();

 private:
  Transaction(Connection* connection, bool nested) : connection_(connection), nested_(nested) {}
  Connection* connection_;
  bool nested_;
};

}  // namespace agentd::storage
