// SessionManager: the sessions of one agentd process. Creates them (stored before the id is handed
// out), loads them back from storage with the same id, lists, closes (stops the running turn, keeps the
// history) and deletes them. Sessions are independent: each runs on its own strand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/engine/events.h"
#include "core/engine/session.h"
#include "core/support/result.h"
#include "core/support/task_group.h"
#include "core/support/trace.h"
#include "storage/db_worker.h"
#include "storage/permission_store.h"

namespace agentd::core {

struct NewSessionParams {
  std::string cwd;  // absolute
  std::vector<std::string> additional_dirs;
  std::vector<tools::mcp::ServerConfig> mcp_servers;  // the client's (session/new)
};

// session/fork: the source session, the fork's directories (canonicalized like session/new's) and MCP
// servers, and optionally the last turn the fork keeps.
struct ForkSessionParams {
  std::string source_id;
  std::string cwd;  // absolute
  std::vector<std::string> additional_dirs;
  std::vector<tools::mcp::ServerConfig> mcp_servers;
  std::optional<std::string> up_to_turn;
};

struct SessionPage {
  std::vector<SessionInfo> sessions;
  std::optional<std::string> next_cursor;
};

class SessionManager {
 public:
  // `engine` must outlive the manager; its project_settings gives each session its project's settings.
  explicit SessionManager(EngineContext& engine);

  // The API keys the sessions use (authenticate, logout); null when nothing gates them.
  const std::shared_ptr<model::Credentials>& credentials() const noexcept { return engine_.credentials; }
  // Where turn spans are exported; null when nowhere (_agentd/status reports its counts).
  const std::shared_ptr<telemetry::OtlpExporter>& exporter() const noexcept { return engine_.otlp; }
  ~SessionManager();

  boost::asio::awaitable<support::Result<std::shared_ptr<Session>>> create(NewSessionParams params);
  // The open session, or the stored one loaded back (history, counters, cost). `mcp_servers` (the
  // client's, from session/load) start with a session loaded back; an open session keeps its own.
  boost::asio::awaitable<support::Result<std::shared_ptr<Session>>> load(
      std::string id, std::vector<tools::mcp::ServerConfig> mcp_servers = {});
  // A new session holding the source's history up to a turn (core/engine/session_fork.h says what is
  // copied), opened like a loaded one. The source may be open, even running a turn (which is left out),
  // or only stored. Refused like create() when the fork's model has no usable key.
  boost::asio::awaitable<support::Result<std::shared_ptr<Session>>> fork(ForkSessionParams params);
  std::shared_ptr<Session> find(const std::string& id) const;
  boost::asio::awaitable<support::Result<SessionPage>> list(std::optional<std::string> cwd,
                                                            std::optional<std::string> cursor, int limit = 50);
  // Cancels its turn and forgets the session in memory; storage keeps it. not_found when not open.
  support::Result<void> close(const std::string& id);
  boost::asio::awaitable<support::Result<void>> remove(std::string id);

  // The logged events of a session after `since`, oldest first (session/load, _agentd/events/replay).
  boost::asio::awaitable<support::Result<std::vector<SequencedEvent>>> events(std::string id, std::int64_t since,
                                                                              int limit);
  // The spans of a turn (_agentd/trace/get).
  boost::asio::awaitable<support::Result<std::vector<support::SpanRecord>>> spans(std::string turn_id);
  // Recorded permission decisions, newest first, of one session (open, stored or deleted: the audit
  // outlives it) or of every session; at most `limit`, capped at PermissionStore::kMaxAuditLimit
  // (_agentd/permissions/audit).
  boost::asio::awaitable<support::Result<std::vector<storage::PermissionAuditRecord>>> permission_audit(
      std::optional<std::string> session_id, std::size_t limit);

  // Cancels every running turn (shutdown).
  void cancel_all();
  // Stops every open session's MCP servers (shutdown), each within its grace periods, and waits for the
  // stops of sessions closed earlier (closing_).
  boost::asio::awaitable<void> stop_all();
  std::size_t open_sessions() const noexcept { return sessions_.size(); }
  // Whether writes are landing (the database worker's account).
  storage::DbWorker::Health database_health() const;

 private:
  support::Result<ProjectSettings> settings_for(const std::string& cwd) const;
  // A stored session as a Session (history, mode, budgets, permissions), neither registered nor started.
  boost::asio::awaitable<support::Result<std::shared_ptr<Session>>> open_stored(std::string id);

  EngineContext& engine_;
  std::map<std::string, std::shared_ptr<Session>, std::less<>> sessions_;
  // Closed sessions stopping their MCP servers in the background; each task holds its session. Joined
  // by stop_all(), not cancelled: a stop is itself bounded by its grace periods.
  support::TaskGroup closing_;
};

}  // namespace agentd::core
