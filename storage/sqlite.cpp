#include "storage/sqlite.h"

#include <utility>

#include <sqlite3.h>

#include "core/support/log.h"

namespace agentd::storage {

using support::Errc;

// --- Statement -----------------------------------------------------------------------------------

Statement::Statement(Statement&& other) noexcept
    : connection_(std::exchange(other.connection_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      bind_error_(std::exchange(other.bind_error_, 0)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    connection_ = std::exchange(other.connection_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_error_ = std::exchange(other.bind_error_, 0);
  }
  return *this;
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

namespace {
void keep_first(int& slot, int rc) {
  if (rc != SQLITE_OK && slot == 0) slot = rc;
}
}  // namespace

Statement& Statement::bind(int index, std::int64_t value) {
  keep_first(bind_error_, sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::bind(int index, double value) {
  keep_first(bind_error_, sqlite3_bind_double(stmt_, index, value));
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  keep_first(bind_error_, sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::bind_null(int index) {
  keep_first(bind_error_, sqlite3_bind_null(stmt_, index));
  return *this;
}

Statement& Statement::bind_blob(int index, std::string_view bytes) {
  keep_first(bind_error_, sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT));
  return *this;
}

Result<bool> Statement::step() {
  if (bind_error_ != 0) {
    const int rc = std::exchange(bind_error_, 0);
    return connection_->error("binding parameters", rc);
  }
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return connection_->error(sqlite3_sql(stmt_), rc);
}

Result<void> Statement::run() {
  while (true) {
    auto row = step();
    if (!row) return std::move(row).error();
    if (!*row) return support::ok();
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = 0;
}

int Statement::column_count() const { return sqlite3_column_count(stmt_); }
bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
std::int64_t Statement::column_int64(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::column_double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string_view Statement::column_text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (text == nullptr) return {};
  return {text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))};
}

std::string_view Statement::column_blob(int column) const {
  const auto* blob = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  if (blob == nullptr) return {};
  return {blob, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))};
}

// --- Connection ----------------------------------------------------------------------------------

Result<Connection> Connection::open(const std::string& path, Mode mode) {
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  switch (mode) {
    case Mode::read_write_create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
    case Mode::read_write: flags |= SQLITE_OPEN_READWRITE; break;
    case Mode::read_only: flags |= SQLITE_OPEN_READONLY; break;
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if (db != nullptr) sqlite3_close(db);
    return Error(Errc::storage, fmt::format("cannot open database {}: {}", path, message), rc);
  }
  sqlite3_extended_result_codes(db, 1);
  return Connection(db, path);
}

Connection::Connection(Connection&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)), cache_(std::move(other.cache_)) {
  // Cached statements point back at the connection that owns them.
  for (auto& [sql, stmt] : cache_) stmt->connection_ = this;
}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    cache_ = std::move(other.cache_);
    for (auto& [sql, stmt] : cache_) stmt->connection_ = this;
  }
  return *this;
}

Connection::~Connection() { close(); }

void Connection::close() noexcept {
  cache_.clear();  // statements must be finalized before the connection closes
  if (db_ != nullptr) {
    if (const int rc = sqlite3_close(db_); rc != SQLITE_OK) {
      support::log::error("closing database {}: {}", path_, sqlite3_errstr(rc));
    }
    db_ = nullptr;
  }
}

Error Connection::error(std::string_view what, int rc) const {
  const char* message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  const int extended = db_ != nullptr ? sqlite3_extended_errcode(db_) : rc;
  // Constraint violations are the caller's input being wrong; everything else is storage trouble.
  const Errc code = (rc & 0xFF) == SQLITE_CONSTRAINT ? Errc::conflict : Errc::storage;
  return Error(code, fmt::format("{}: {} (SQLite code {})", what, message, extended), extended);
}

Result<void> Connection::exec(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string detail = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    return Error((rc & 0xFF) == SQLITE_CONSTRAINT ? Errc::conflict : Errc::storage,
                 fmt::format("{}: {} (SQLite code {})", sql.substr(0, 80), detail, sqlite3_extended_errcode(db_)),
                 sqlite3_extended_errcode(db_));
  }
  return support::ok();
}

Result<Statement> Connection::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc =
      sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return error(fmt::format("preparing '{}'", sql.substr(0, 80)), rc);
  return Statement(this, stmt);
}

Result<StatementLease> Connection::cached(std::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it == cache_.end()) {
    auto prepared = prepare(sql);
    if (!prepared) return std::move(prepared).error();
    it = cache_.emplace(std::string(sql), std::make_unique<Statement>(std::move(*prepared))).first;
  }
  return StatementLease(it->second.get());
}

Result<std::int64_t> Connection::query_int(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) return std::move(stmt).error();
  auto row = stmt->step();
  if (!row) return std::move(row).error();
  if (!*row) return Error(Errc::storage, fmt::format("'{}' returned no row", sql));
  return stmt->column_int64(0);
}

std::int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int Connection::changes() const { return sqlite3_changes(db_); }
bool Connection::in_transaction() const noexcept { return db_ != nullptr && sqlite3_get_autocommit(db_) == 0; }

Constraint constraint_of(const Error& error) noexcept {
  const int rc = error.native_code();
  if ((rc & 0xFF) != SQLITE_CONSTRAINT) return Constraint::none;
  switch (rc) {
    case SQLITE_CONSTRAINT_PRIMARYKEY:
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_ROWID: return Constraint::unique;
    case SQLITE_CONSTRAINT_FOREIGNKEY: return Constraint::foreign_key;
    case SQLITE_CONSTRAINT_CHECK: return Constraint::check;
    case SQLITE_CONSTRAINT_NOTNULL: return Constraint::not_null;
    default: return Constraint::other;
  }
}

// --- Transaction ---------------------------------------------------------------------------------

Result<Transaction> Transaction::begin(Connection& connection) {
  const bool nested = connection.in_transaction();
  auto stmt = connection.cached(nested ? "SAVEPOINT agentd_nested" : "BEGIN IMMEDIATE");
  if (!stmt) return std::move(stmt).error();
  if (auto r = (*stmt)->run(); !r) return std::move(r).error();
  return Transaction(&connection, nested);
}

Transaction::Transaction(Transaction&& other) noexcept
    : connection_(std::exchange(other.connection_, nullptr)), nested_(other.nested_) {}

Transaction::~Transaction() {
  if (connection_ == nullptr) return;
  // SQLite rolls back by itself on some errors (disk full, I/O); then there is nothing left to undo.
  if (!connection_->in_transaction()) return;
  // A savepoint stays on the stack after ROLLBACK TO; RELEASE pops it without committing anything.
  if (auto r = connection_->exec(nested_ ? "ROLLBACK TO agentd_nested; RELEASE agentd_nested" : "ROLLBACK"); !r) {
    support::log::error("rollback failed: {}", r.error().message());
  }
}

Result<void> Transaction::commit() {
  if (connection_ == nullptr) return Error(support::Errc::internal, "commit of a finished transaction");
  auto stmt = connection_->cached(nested_ ? "RELEASE agentd_nested" : "COMMIT");
  if (!stmt) return std::move(stmt).error();
  if (auto r = (*stmt)->run(); !r) return r;  // still open: the destructor rolls back
  connection_ = nullptr;
  return support::ok();
}

}  // namespace agentd::storage
