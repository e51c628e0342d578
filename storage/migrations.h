// Schema migrations keyed by SQLite's `user_version`. All pending steps run in one transaction, so a
// database is either fully migrated or untouched. A database newer than the code is refused, never
// modified: a downgraded agentd must not damage what a newer one wrote.
#pragma once

#include <span>
#include <string_view>

#include "storage/sqlite.h"

namespace agentd::storage {

struct Migration {
  int version;  // the user_version after this step; steps are numbered 1, 2, 3, ...
  std::string_view description;
  std::string_view sql;
};

// agentd's own schema, oldest step first.
std::span<const Migration> schema_migrations();

// The user_version of the database; fails when it is newer than the last of `migrations`.
Result<int> check_schema_version(Connection& connection, std::span<const Migration> migrations);
// Brings the schema up to the last of `migrations`; returns the version it ended at.
Result<int> migrate(Connection& connection, std::span<const Migration> migrations);

}  // namespace agentd::storage
