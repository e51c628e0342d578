// The agentd database: where it lives, how it is opened (permissions, WAL, busy timeout, foreign keys)
// and migrated. Stores (sessions, messages, ...) take a Connection from here.
#pragma once

#include <string>

#include "storage/sqlite.h"

namespace agentd::storage {

// $XDG_DATA_HOME/agentd/agentd.db, else ~/.local/share/agentd/agentd.db.
Result<std::string> default_database_path();

// Creates the file at `path` (0600) when missing, and its directory (0700) when missing.
Result<void> ensure_private_file(const std::string& path);

struct DatabaseOptions {
  std::string path;
  int busy_timeout_ms = 5000;
};

// Creates the file (0600) and its directory (0700) when missing, refuses a schema newer than ours
// before changing anything, then switches to WAL and migrates.
Result<Connection> open_database(const DatabaseOptions& options);

// Writes the whole database `from` sees (its WAL included) into a new file at `path`, which must not
// exist: created 0600 (its directory 0700 when missing), fsync'ed, and only then linked at `path`, so a
// reader finds the whole copy or none. How DbWorker puts back a database file removed while it was open.
Result<void> copy_database_to_new_file(Connection& from, const std::string& path);

}  // namespace agentd::storage
