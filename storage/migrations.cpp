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

// Version 2: what the engine records per turn. `events` is the log of what was streamed to the client
// (the engine's own event JSON, numbered per session), replayed by session/load and
// `_agentd/events/replay`; `spans` is the turn's trace; `usage` is one row per model call, where a NULL
// cost means the model was unpriced (never 0, which would claim the call was free).
// `events.turn_id` and `usage.turn_id` are plain columns, not foreign keys: events and usage exist
// outside turns too (slash commands, compaction), and the session's cascade removes them anyway.
constexpr std::string_view kSchemaV2 = R"sql(
CREATE TABLE turns (
  id           TEXT PRIMARY KEY,
  session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq          INTEGER NOT NULL CHECK (seq > 0),  -- 1, 2, 3, ... within the session
  input        TEXT NOT NULL,                     -- the user's text
  started_at   INTEGER NOT NULL,                  -- Unix epoch milliseconds
  ended_at     INTEGER,                           -- NULL while the turn runs (or when the daemon died in it)
  stop_reason  TEXT,
  metadata     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
  UNIQUE (session_id, seq)
) STRICT;

CREATE TABLE events (
  session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq         INTEGER NOT NULL CHECK (seq > 0),
  turn_id     TEXT,
  kind        TEXT NOT NULL,
  payload     TEXT NOT NULL CHECK (json_valid(payload)),
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (session_id, seq)
) STRICT;

CREATE TABLE spans (
  turn_id         TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  id              INTEGER NOT NULL,
  parent_id       INTEGER NOT NULL DEFAULT 0,  -- 0: a root span
  name            TEXT NOT NULL,
  start_us        INTEGER NOT NULL,            -- Unix epoch microseconds
  end_us          INTEGER NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('ok', 'error', 'cancelled')),
  status_message  TEXT NOT NULL DEFAULT '',
  attributes      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(attributes)),
  PRIMARY KEY (turn_id, id)
) STRICT;

CREATE TABLE usage (
  id                  INTEGER PRIMARY KEY,
  session_id          TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  turn_id             TEXT,
  provider            TEXT NOT NULL,
  model               TEXT NOT NULL,
  input_tokens        INTEGER NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
  output_tokens       INTEGER NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
  cache_write_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (cache_write_tokens >= 0),
  cache_read_tokens   INTEGER NOT NULL DEFAULT 0 CHECK (cache_read_tokens >= 0),
  cost_usd            REAL,  -- NULL: unpriced
  price_table_version TEXT,  -- the price table the cost came from, so it can be re-derived
  created_at          INTEGER NOT NULL
) STRICT;
-- Cascades from sessions and the per-session / per-turn totals look rows up by these.
CREATE INDEX usage_by_session ON usage(session_id);
CREATE INDEX usage_by_turn ON usage(turn_id) WHERE turn_id IS NOT NULL;
-- session/list without a cwd filter pages in (updated_at DESC, id) order.
CREATE INDEX sessions_by_updated ON sessions(updated_at DESC, id);
)sql";

// Permissions: "always" answers persisted per project (the session's cwd), and the audit trail of every
// decision. Approvals outlive the session they were given in (no foreign key to it).
constexpr std::string_view kSchemaPermissions = R"sql(
CREATE TABLE approvals (
  id          INTEGER PRIMARY KEY,
  project     TEXT NOT NULL,   -- absolute path of the workspace the approval covers
  rule        TEXT NOT NULL,   -- "shell(npm test)", "write_file"
  verdict     TEXT NOT NULL CHECK (verdict IN ('allow', 'deny')),
  session_id  TEXT,            -- where it was given, for the record
  created_at  INTEGER NOT NULL,
  UNIQUE (project, rule)
) STRICT;

CREATE TABLE permission_audit (
  id            INTEGER PRIMARY KEY,
  session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  turn_id       TEXT,
  tool_call_id  TEXT NOT NULL,
  tool          TEXT NOT NULL,
  input_digest  TEXT NOT NULL,   -- sha256 of the canonical input the decision was about
  decision      TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),
  decided_by    TEXT NOT NULL,   -- "policy", "user", "no_client"
  reason        TEXT NOT NULL,   -- the rule or mode that decided, in words
  created_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX permission_audit_by_session ON permission_audit(session_id, id);
)sql";

// Version 4: file checkpoints (DESIGN.md section 5, /undo). `blobs` is content-addressed: a file's bytes
// are stored once under their SHA-256, however many changes refer to them. A checkpoint gathers the file
// changes of one turn (kind 'turn') or of one restore (kind 'restore', which put files back as they were
// before checkpoint `restores_seq`), numbered per session in the order they were made. A change's pre-image
// is in `blobs` before the file is touched; `before_hash` NULL means the file did not exist, `after_hash`
// NULL that the change removed it. Blobs are not cascaded: prune_blobs() removes those nothing refers to.
constexpr std::string_view kSchemaCheckpoints = R"sql(
CREATE TABLE blobs (
  hash  TEXT PRIMARY KEY,            -- lowercase hex SHA-256 of data
  size  INTEGER NOT NULL CHECK (size >= 0),
  data  BLOB NOT NULL
) STRICT;

CREATE TABLE checkpoints (
  id            TEXT PRIMARY KEY,    -- the turn's id; a restore made outside a turn has its own
  session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq           INTEGER NOT NULL CHECK (seq > 0),
  turn_id       TEXT,                -- NULL for a restore made outside a turn
  kind          TEXT NOT NULL CHECK (kind IN ('turn', 'restore')),
  restores_seq  INTEGER CHECK ((kind = 'restore') = (restores_seq IS NOT NULL)),
  created_at    INTEGER NOT NULL,
  UNIQUE (session_id, seq)
) STRICT;

CREATE TABLE file_changes (
  id             INTEGER PRIMARY KEY,
  checkpoint_id  TEXT NOT NULL REFERENCES checkpoints(id) ON DELETE CASCADE,
  path           TEXT NOT NULL,
  before_hash    TEXT REFERENCES blobs(hash),
  after_hash     TEXT,
  mode           INTEGER NOT NULL DEFAULT 0,  -- permission bits before the change
  created_at     INTEGER NOT NULL
) STRICT;
CREATE INDEX file_changes_by_checkpoint ON file_changes(checkpoint_id, id);
CREATE INDEX file_changes_by_before ON file_changes(before_hash) WHERE before_hash IS NOT NULL;
)sql";

// Version 5: memory and compaction. `memory_facts` are what /remember (and `_agentd/memory/add`) stored,
// per project like approvals, and outlive the session that stored them (no foreign key to it).
// `compactions` records each summary that replaced a session's older turns in later model requests: the
// range of turns it covers (by turn id, inclusive), the summary as JSON, and the estimated tokens before and
// after. The summarized messages themselves stay in `messages`; only what is sent changes.
constexpr std::string_view kSchemaMemory = R"sql(
CREATE TABLE memory_facts (
  id                 INTEGER PRIMARY KEY,
  project            TEXT NOT NULL,                           -- absolute path of the workspace
  text               TEXT NOT NULL CHECK (length(text) > 0),
  source_session_id  TEXT,                                    -- where it was remembered, for the record
  created_at         INTEGER NOT NULL                         -- Unix epoch milliseconds
) STRICT;
CREATE INDEX memory_facts_by_project ON memory_facts(project, id);

CREATE TABLE compactions (
  id             INTEGER PRIMARY KEY,
  session_id     TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  first_turn_id  TEXT NOT NULL,    -- the oldest turn the summary covers
  last_turn_id   TEXT NOT NULL,    -- the newest turn it covers; later turns are sent as they are
  summary        TEXT NOT NULL CHECK (json_valid(summary)),
  tokens_before  INTEGER NOT NULL CHECK (tokens_before >= 0),
  tokens_after   INTEGER NOT NULL CHECK (tokens_after >= 0),
  created_at     INTEGER NOT NULL
) STRICT;
CREATE INDEX compactions_by_session ON compactions(session_id, id);
)sql";

// Version 6: the permission audit outlives its session. Version 3 cascaded deletes from `sessions`, so
// deleting a session erased the record of what was allowed in it; the table is rebuilt without that
// foreign key (SQLite cannot drop one in place: create, copy keeping ids, drop, rename, index again).
// `cwd` keeps the session's project on each row, so a row of a deleted session still says where it ran
// (filled from `sessions` for the rows copied here); `risk` names what the call could do
// ("execute|network"), empty for rows written before it existed.
constexpr std::string_view kSchemaAuditKept = R"sql(
CREATE TABLE permission_audit_v6 (
  id            INTEGER PRIMARY KEY,
  session_id    TEXT NOT NULL,   -- no foreign key: the audit stays when the session is deleted
  turn_id       TEXT,
  tool_call_id  TEXT NOT NULL,
  tool          TEXT NOT NULL,
  input_digest  TEXT NOT NULL,   -- sha256 of the canonical input the decision was about
  decision      TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),
  decided_by    TEXT NOT NULL,   -- "policy", "user", "no_client"
  reason        TEXT NOT NULL,   -- the rule or mode that decided, in words
  created_at    INTEGER NOT NULL,
  cwd           TEXT,            -- the session's working directory; NULL when unknown
  risk          TEXT NOT NULL DEFAULT ''  -- risk names joined by '|': "execute|network"
) STRICT;
INSERT INTO permission_audit_v6 (id, session_id, turn_id, tool_call_id, tool, input_digest, decision, decided_by,
                                 reason, created_at, cwd)
  SELECT a.id, a.session_id, a.turn_id, a.tool_call_id, a.tool, a.input_digest, a.decision, a.decided_by, a.reason,
         a.created_at, s.cwd
  FROM permission_audit AS a LEFT JOIN sessions AS s ON s.id = a.session_id;
DROP TABLE permission_audit;
ALTER TABLE permission_audit_v6 RENAME TO permission_audit;
CREATE INDEX permission_audit_by_session ON permission_audit(session_id, id);
)sql";

// Version 7: large pre-images live in files next to the database (storage/blob_files.h), so writing one
// does not hold the database's write lock. Their `blobs` row stays (file_changes refers to it, and it
// records the size) with empty `data` and `in_file` 1.
constexpr std::string_view kSchemaBlobFiles = R"sql(
ALTER TABLE blobs ADD COLUMN in_file INTEGER NOT NULL DEFAULT 0 CHECK (in_file IN (0, 1));
)sql";

// Version 8: blobs a session refers to besides checkpoint pre-images (the images of its prompts), kept
// while the session exists and pruned with it.
constexpr std::string_view kSchemaSessionBlobs = R"sql(
CREATE TABLE session_blobs (
  session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  hash        TEXT NOT NULL REFERENCES blobs(hash),
  PRIMARY KEY (session_id, hash)
) STRICT, WITHOUT ROWID;
CREATE INDEX session_blobs_by_hash ON session_blobs(hash);
)sql";

constexpr Migration kMigrations[] = {
    {1, "sessions and messages", kSchemaV1},
    {2, "turns, events, spans and usage", kSchemaV2},
    {3, "permission approvals and audit", kSchemaPermissions},
    {4, "blobs and file checkpoints", kSchemaCheckpoints},
    {5, "remembered facts and compaction records", kSchemaMemory},
    {6, "a permission audit that outlives its session", kSchemaAuditKept},
    {7, "large checkpoint pre-images in files", kSchemaBlobFiles},
    {8, "blobs a session refers to", kSchemaSessionBlobs},
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
