#include "storage/migrations.h"

#include <fmt/format.h>

#include "core/support/log.h"

namespace agentd::storage {

using support::Errc;

namespace {

// Version 1: sessions and their messages. Message content is the engine's JSON for that message;
// `seq` orders messages within a session and never repeats.
constexpr std::string_view kSchemaV1 = R"sql(
CREATE TABLE sessions (
  id          TEXT PRIMARY KEY,
  cwd         TEXT NOT NULL,
  title       TEXT,
  created_at  INTEGER NOT NULL,  -- Unix epoch milliseconds
  updated_at  INTEGER NOT NULL,
  metadata    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata))
) STRICT;
CREATE INDEX sessions_by_cwd ON sessions(cwd, updated_at DESC);

CREATE TABLE messages (
  id          INTEGER PRIMARY KEY,
  session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq         INTEGER NOT NULL,
  role        TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
  content     TEXT NOT NULL CHECK (json_valid(content)),
  created_at  INTEGER NOT NULL,
  UNIQUE (session_id, seq)
) STRICT;
)sql";

constexpr Migration kMigrations[] = {
    {1, "sessions and messages", kSchemaV1},
};

}  // namespace

std::span<const Migration> schema_migrations() { return kMigrations; }

Result<int> check_schema_version(Connection& connection, std::span<const Migration> migrations) {
  auto version = connection.query_int("PRAGMA user_version");
  if (!version) return std::move(version).error();
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  if (*version > latest) {
    return Error(Errc::conflict,
                 fmt::format("database {} has schema version {}, newer than this agentd understands ({}); it was "
                             "left untouched: upgrade agentd, or pass --db with another file",
                             connection.path(), *version, latest));
  }
  if (*version < 0)
    return Error(Errc::storage, fmt::format("database {} has a negative schema version", connection.path()));
  return static_cast<int>(*version);
}

Result<int> migrate(Connection& connection, std::span<const Migration> migrations) {
  auto current = check_schema_version(connection, migrations);
  if (!current) return current;
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  if (*current == latest) return latest;

  auto tx = Transaction::begin(connection);
  if (!tx) return std::move(tx).error();
  // Another process may have migrated between our check and our write lock: look again.
  current = check_schema_version(connection, migrations);
  if (!current) return current;
  for (const Migration& m : migrations) {
    if (m.version <= *current) continue;
    if (auto r = connection.exec(m.sql); !r) {
      return std::move(r).error().context(fmt::format("migration {} ({})", m.version, m.description));
    }
    support::log::info("database {}: migrated to schema version {} ({})", connection.path(), m.version, m.description);
  }
  if (auto r = connection.exec(fmt::format("PRAGMA user_version = {}", latest)); !r) return std::move(r).error();
  if (auto r = tx->commit(); !r) return std::move(r).error();
  return latest;
}

}  // namespace agentd::storage
