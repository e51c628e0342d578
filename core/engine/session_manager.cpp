#include "core/engine/session_manager.h"

#include <filesystem>
#include <map>
#include <system_error>

#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/engine/ids.h"
#include "core/engine/session_fork.h"
#include "core/support/base64.h"
#include "core/support/clock.h"
#include "core/support/log.h"
#include "storage/blob_store.h"
#include "storage/event_store.h"
#include "storage/session_store.h"
#include "storage/span_store.h"

namespace agentd::core {

namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace log = support::log;
using support::Errc;
using support::Error;
using support::Json;
using support::Result;

namespace {

Result<std::string> canonical_dir(const std::string& path, std::string_view what) {
  if (path.empty() || path.front() != '/') {
    return Error(Errc::invalid_argument, fmt::format("{} must be an absolute path, got \"{}\"", what, path));
  }
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  if (ec) return Error(Errc::invalid_argument, fmt::format("{} {}: {}", what, path, ec.message()));
  if (!fs::is_directory(canonical, ec)) {
    return Error(Errc::invalid_argument, fmt::format("{} {} is not a directory", what, path));
  }
  return canonical.string();
}

// A session's directories, canonical: `cwd` and every additional one absolute existing directories.
struct WorkspaceDirs {
  std::string cwd;
  std::vector<std::string> additional;
};
Result<WorkspaceDirs> workspace_dirs(const std::string& cwd, const std::vector<std::string>& additional) {
  WorkspaceDirs out;
  auto root = canonical_dir(cwd, "cwd");
  if (!root) return std::move(root).error();
  out.cwd = std::move(*root);
  for (const auto& d : additional) {
    auto dir = canonical_dir(d, "additional directory");
    if (!dir) return std::move(dir).error();
    out.additional.push_back(std::move(*dir));
  }
  return out;
}

SessionInfo info_from_record(const storage::SessionRecord& record, const Json& metadata) {
  SessionInfo info;
  info.id = record.id;
  info.cwd = record.cwd;
  info.title = record.title;
  info.created_at_ms = record.created_at_ms;
  info.updated_at_ms = record.updated_at_ms;
  if (metadata["additionalDirectories"].is_array()) {
    for (const Json& d : metadata["additionalDirectories"].as_array()) {
      if (d.is_string()) info.additional_dirs.push_back(d.as_string());
    }
  }
  return info;
}

std::string metadata_json(std::string_view mode, std::string_view model, const std::vector<std::string>& dirs) {
  std::string json;
  support::JsonWriter w(json);
  w.begin_object().member("mode", mode).member("model", model).member("additionalDirectories", dirs);
  w.member("clearedAfterTurn", 0).end_object();
  return json;
}

}  // namespace

SessionManager::SessionManager(EngineContext& engine) : engine_(engine), closing_(engine.executor) {}

storage::DbWorker::Health SessionManager::database_health() const { return engine_.store->worker().health(); }

Result<ProjectSettings> SessionManager::settings_for(const std::string& cwd) const {
  if (!engine_.project_settings) return ProjectSettings{};
  auto settings = engine_.project_settings(cwd);
  if (!settings) return std::move(settings).error().context(fmt::format("the configuration for {}", cwd));
  return settings;
}

SessionManager::~SessionManager() { cancel_all(); }

asio::awaitable<Result<std::shared_ptr<Session>>> SessionManager::create(NewSessionParams params) {
  auto workspace = workspace_dirs(params.cwd, params.additional_dirs);
  if (!workspace) co_return std::move(workspace).error();
  const std::string& cwd = workspace->cwd;
  std::vector<std::string>& dirs = workspace->additional;
  auto settings = settings_for(cwd);
  if (!settings) co_return std::move(settings).error();
  if (!settings->resolve_model) co_return Error(Errc::internal, "no model resolver is configured");
  auto model = settings->resolve_model(settings->model_spec);
  if (!model) co_return std::move(model).error().context("the default model");
  // A session that could never call its model is refused before it is stored (ACP auth_required), so
  // the client authenticates first.
  if (engine_.credentials && !engine_.credentials->usable(*model)) {
    co_return engine_.credentials->missing(*model, settings->model_spec);
  }

  storage::SessionRecord record;
  record.id = new_id("s");
  record.cwd = cwd;
  record.created_at_ms = record.updated_at_ms = support::unix_millis_now();
  record.metadata_json = metadata_json(permission_mode_id(settings->default_mode), settings->model_spec, dirs);
  auto create_job = [record](storage::Connection& db) { return storage::SessionStore(db).create(record); };
  auto stored = co_await engine_.store->write_durable(std::move(create_job));
  if (!stored) co_return std::move(stored).error().context("creating the session");

  SessionInfo info = info_from_record(record, Json::object());
  info.additional_dirs = std::move(dirs);
  std::string spec = settings->model_spec;
  auto session =
      std::make_shared<Session>(engine_, std::move(info), std::move(*settings), std::move(*model), std::move(spec));
  if (auto installed = session->install_tools(); !installed) co_return std::move(installed).error();
  if (auto loaded = co_await session->load_permissions(); !loaded) co_return std::move(loaded).error();
  session->start_mcp(std::move(params.mcp_servers));
  sessions_[record.id] = session;
  log::info("session {} created in {}", record.id, record.cwd);
  co_return session;
}

asio::awaitable<Result<std::shared_ptr<Session>>> SessionManager::fork(ForkSessionParams params) {
  auto workspace = workspace_dirs(params.cwd, params.additional_dirs);
  if (!workspace) co_return std::move(workspace).error();
  ForkSpec spec;
  spec.cwd = std::move(workspace->cwd);
  spec.additional_dirs = std::move(workspace->additional);
  spec.source_id = std::move(params.source_id);
  spec.fork_id = new_id("s");
  spec.up_to_turn = std::move(params.up_to_turn);
  spec.now_ms = support::unix_millis_now();
  if (auto open = find(spec.source_id)) spec.running_turn = open->running_id();

  auto copy_job = [spec](storage::Connection& db) { return fork_session_history(db, spec); };
  auto copied = co_await engine_.store->write_durable_value<ForkCopy>(std::move(copy_job));
  if (!copied) co_return std::move(copied).error().context(fmt::format("forking session {}", spec.source_id));
  auto session = co_await open_stored(spec.fork_id);
  // Like session/new: a fork that could never call its model is refused, and not kept, so the client
  // authenticates first.
  std::optional<Error> refused;
  if (!session) {
    refused = session.error();
  } else if (engine_.credentials && !engine_.credentials->usable((*session)->model_config())) {
    refused = engine_.credentials->missing((*session)->model_config(), (*session)->model_spec());
  }
  if (refused) {
    auto remove_job = [id = spec.fork_id](storage::Connection& db) { return storage::SessionStore(db).remove(id); };
    if (auto removed = co_await engine_.store->write_durable(std::move(remove_job)); !removed) {
      log::warn("session {}: the refused fork could not be removed: {}", spec.fork_id, removed.error().message());
    }
    co_return std::move(*refused);
  }
  sessions_[spec.fork_id] = *session;
  (*session)->start_mcp(std::move(params.mcp_servers));
  log::info("session {} forked from {} ({} turns, {} messages, {} events)", spec.fork_id, spec.source_id, copied->turns,
            copied->messages, copied->events);
  co_return session;
}

std::shared_ptr<Session> SessionManager::find(const std::string& id) const {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

asio::awaitable<Result<std::shared_ptr<Session>>> SessionManager::open_stored(std::string id) {
  auto get_job = [id](storage::Connection& db) { return storage::SessionStore(db).get(id); };
  auto record = co_await engine_.store->read<std::optional<storage::SessionRecord>>(std::move(get_job));
  if (!record) co_return std::move(record).error();
  if (!*record) co_return Error(Errc::not_found, fmt::format("no session with id \"{}\"", id));

  Json metadata = Json::object();
  if (auto parsed = support::parse_json((*record)->metadata_json); parsed && parsed->is_object()) {
    metadata = std::move(*parsed);
  }
  auto settings = settings_for((*record)->cwd);
  if (!settings) co_return std::move(settings).error();
  if (!settings->resolve_model) co_return Error(Errc::internal, "no model resolver is configured");
  std::string spec = metadata["model"].is_string() ? metadata["model"].as_string() : settings->model_spec;
  auto model = settings->resolve_model(spec);
  if (!model) {
    log::warn("session {}: its model {} is not usable now ({}); using {}", id, spec, model.error().message(),
              settings->model_spec);
    spec = settings->model_spec;
    model = settings->resolve_model(spec);
    if (!model) co_return std::move(model).error().context("the default model");
  }
  auto session = std::make_shared<Session>(engine_, info_from_record(**record, metadata), std::move(*settings),
                                           std::move(*model), spec);
  if (auto installed = session->install_tools(); !installed) co_return std::move(installed).error();
  if (metadata["mode"].is_string()) {
    if (auto mode = parse_permission_mode(metadata["mode"].as_string())) session->restore_mode(*mode);
  }
  if (const Json& b = metadata["budgets"]; b.is_object()) {
    Budgets budgets;
    if (b["sessionUsd"].is_number()) budgets.session_usd = b["sessionUsd"].as_double();
    if (b["turnUsd"].is_number()) budgets.turn_usd = b["turnUsd"].as_double();
    if (b["turnOutputTokens"].is_integer()) budgets.turn_output_tokens = b["turnOutputTokens"].as_uint64();
    session->restore_budgets(budgets);
  }
  const Json& cleared = metadata["clearedAfterTurn"];
  auto restored = co_await session->restore(cleared.is_integer() ? cleared.as_int64() : 0);
  if (!restored) co_return std::move(restored).error();
  if (auto loaded = co_await session->load_permissions(); !loaded) co_return std::move(loaded).error();
  co_return session;
}

asio::awaitable<Result<std::shared_ptr<Session>>> SessionManager::load(
    std::string id, std::vector<tools::mcp::ServerConfig> mcp_servers) {
  if (auto open = find(id)) co_return open;
  auto session = co_await open_stored(id);
  if (!session) co_return std::move(session).error();
  // Another load may have finished while this one waited.
  if (auto open = find(id)) co_return open;
  sessions_[id] = *session;
  (*session)->start_mcp(std::move(mcp_servers));
  log::info("session {} loaded", id);
  co_return session;
}

asio::awaitable<Result<SessionPage>> SessionManager::list(std::optional<std::string> cwd,
                                                          std::optional<std::string> cursor, int limit) {
  auto list_job = [query = storage::SessionListQuery{cwd, cursor, limit}](storage::Connection& db) {
    return storage::SessionStore(db).list_page(query);
  };
  auto page = co_await engine_.store->read<storage::SessionPage>(std::move(list_job));
  if (!page) co_return std::move(page).error();
  SessionPage out;
  for (const auto& record : page->sessions) {
    Json metadata = Json::object();
    if (auto parsed = support::parse_json(record.metadata_json); parsed && parsed->is_object()) {
      metadata = std::move(*parsed);
    }
    out.sessions.push_back(info_from_record(record, metadata));
  }
  out.next_cursor = page->next_cursor;
  co_return out;
}

asio::awaitable<void> SessionManager::stop_all() {
  for (auto& [id, session] : sessions_) co_await session->stop_mcp();
  co_await closing_.join();
}

Result<void> SessionManager::close(const std::string& id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return Error(Errc::not_found, fmt::format("session \"{}\" is not open", id));
  it->second->cancel();
  it->second->detach();
  it->second->stop_mcp_in_background(closing_);
  sessions_.erase(it);
  log::info("session {} closed", id);
  return {};
}

asio::awaitable<Result<void>> SessionManager::remove(std::string id) {
  if (auto it = sessions_.find(id); it != sessions_.end()) {
    it->second->cancel();
    it->second->detach();
    it->second->stop_mcp_in_background(closing_);
    sessions_.erase(it);
  }
  auto remove_job = [id](storage::Connection& db) { return storage::SessionStore(db).remove(id); };
  co_return co_await engine_.store->write_durable(std::move(remove_job));
}

asio::awaitable<Result<std::vector<SequencedEvent>>> SessionManager::events(std::string id, std::int64_t since,
                                                                            int limit) {
  auto events_job = [id, since, limit](storage::Connection& db) {
    return storage::EventStore(db).since(id, since, limit);
  };
  auto records = co_await engine_.store->read<std::vector<storage::EventRecord>>(std::move(events_job));
  if (!records) co_return std::move(records).error();
  std::vector<SequencedEvent> events;
  events.reserve(records->size());
  for (const auto& record : *records) {
    auto payload = support::parse_json(record.payload_json);
    if (!payload) co_return Error(Errc::storage, fmt::format("session {}: event {} is not JSON", id, record.seq));
    auto event = event_from_log(record.kind, *payload);
    if (!event) co_return std::move(event).error().context(fmt::format("session {} event {}", id, record.seq));
    events.push_back(SequencedEvent{record.seq, record.turn_id.value_or(""), std::move(*event)});
  }
  // The log keeps an image's hash; a replay shows the image itself.
  std::vector<std::string> hashes;
  for (const auto& e : events) {
    if (const auto* image = std::get_if<UserImageEvent>(&e.event)) hashes.push_back(image->hash);
  }
  if (!hashes.empty()) {
    auto blobs_job = [hashes](storage::Connection& db) -> Result<std::map<std::string, std::string, std::less<>>> {
      std::map<std::string, std::string, std::less<>> out;
      storage::BlobStore blobs(db);
      for (const auto& hash : hashes) {
        auto bytes = blobs.get(hash);
        if (!bytes) return std::move(bytes).error();
        if (*bytes) out.emplace(hash, support::base64_encode(**bytes));
      }
      return out;
    };
    auto images = co_await engine_.store->read<std::map<std::string, std::string, std::less<>>>(std::move(blobs_job));
    if (!images) co_return std::move(images).error().context(fmt::format("session {}: the images of its prompts", id));
    for (auto& e : events) {
      auto* image = std::get_if<UserImageEvent>(&e.event);
      if (image == nullptr) continue;
      if (auto it = images->find(image->hash); it != images->end()) image->data = it->second;
    }
  }
  co_return events;
}

asio::awaitable<Result<std::vector<support::SpanRecord>>> SessionManager::spans(std::string turn_id) {
  auto spans_job = [turn_id](storage::Connection& db) { return storage::SpanStore(db).for_turn(turn_id); };
  co_return co_await engine_.store->read<std::vector<support::SpanRecord>>(std::move(spans_job));
}

asio::awaitable<Result<std::vector<storage::PermissionAuditRecord>>> SessionManager::permission_audit(
    std::optional<std::string> session_id, std::size_t limit) {
  auto audit_job = [session_id, limit](storage::Connection& db) {
    return storage::PermissionStore(db).audit(session_id, limit);
  };
  co_return co_await engine_.store->read<std::vector<storage::PermissionAuditRecord>>(std::move(audit_job));
}

void SessionManager::cancel_all() {
  for (auto& [id, session] : sessions_) session->cancel();
}

}  // namespace agentd::core
