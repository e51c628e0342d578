#include "core/engine/session_fork.h"

#include <set>

#include <fmt/format.h>

#include "core/engine/events.h"
#include "core/engine/history.h"
#include "core/engine/ids.h"
#include "core/support/json.h"
#include "core/support/json_writer.h"
#include "storage/blob_store.h"
#include "storage/compaction_store.h"
#include "storage/event_store.h"
#include "storage/session_store.h"
#include "storage/turn_store.h"

namespace agentd::core {

using support::Errc;
using support::Error;
using support::Json;
using support::Result;

namespace {

// The fork's metadata: the source's (mode, model, budgets, what else it holds), with the fork's own
// directories, a /clear that happened after the cut undone (its turn counter would hide the fork's
// history), and where the fork came from.
std::string fork_metadata(std::string_view source_json, const ForkSpec& spec, std::int64_t cut_seq,
                          const std::optional<std::string>& last_turn) {
  Json metadata = Json::object();
  if (auto parsed = support::parse_json(source_json); parsed && parsed->is_object()) metadata = std::move(*parsed);
  Json dirs = Json::array();
  for (const auto& d : spec.additional_dirs) dirs.push_back(Json(d));
  metadata.set("additionalDirectories", std::move(dirs));
  const Json& cleared = metadata["clearedAfterTurn"];
  if (!cleared.is_integer() || cleared.as_int64() >= cut_seq) metadata.set("clearedAfterTurn", std::int64_t{0});
  Json from = Json::object();
  from.set("sessionId", spec.source_id);
  if (last_turn) from.set("turnId", *last_turn);
  metadata.set("forkedFrom", std::move(from));
  return metadata.dump();
}

}  // namespace

Result<ForkCopy> fork_session_history(storage::Connection& db, const ForkSpec& spec) {
  auto tx = storage::Transaction::begin(db);
  if (!tx) return std::move(tx).error();
  storage::SessionStore sessions(db);
  auto source = sessions.get(spec.source_id);
  if (!source) return std::move(source).error();
  if (!*source) return Error(Errc::not_found, fmt::format("no session with id \"{}\"", spec.source_id));

  auto turns = storage::TurnStore(db).for_session(spec.source_id);
  if (!turns) return std::move(turns).error();
  // The cut: the seq of the last turn kept.
  std::int64_t cut = 0;
  for (const auto& t : *turns) {
    if (spec.running_turn && t.id == *spec.running_turn) break;
    cut = t.seq;
  }
  if (spec.up_to_turn) {
    const storage::TurnRecord* named = nullptr;
    for (const auto& t : *turns) named = t.id == *spec.up_to_turn ? &t : named;
    if (named == nullptr) {
      return Error(Errc::invalid_argument, fmt::format("params._meta.agentd.turnId: \"{}\" is not a turn of session {}",
                                                       *spec.up_to_turn, spec.source_id));
    }
    if (named->seq > cut) {
      return Error(Errc::invalid_argument, fmt::format("params._meta.agentd.turnId: turn {} of session {} is still "
                                                       "running; fork from a turn that has ended",
                                                       *spec.up_to_turn, spec.source_id));
    }
    cut = named->seq;
  }

  ForkCopy copy;
  LogRenames ids;  // the kept turns, old id -> new
  std::set<std::string, std::less<>> left_out;
  for (const auto& t : *turns) {
    if (t.seq > cut) {
      left_out.insert(t.id);
      continue;
    }
    ids.turns.emplace(t.id, new_id("t"));
    copy.last_turn = t.id;
  }
  auto kept = [&](const std::string& turn) { return ids.turns.contains(turn); };
  auto dropped = [&](const std::string& turn) { return left_out.contains(turn); };

  storage::SessionRecord record;
  record.id = spec.fork_id;
  record.cwd = spec.cwd;
  record.title = (*source)->title;
  record.created_at_ms = record.updated_at_ms = spec.now_ms;
  record.metadata_json = fork_metadata((*source)->metadata_json, spec, cut, copy.last_turn);
  AGENTD_TRY_VOID(sessions.create(record));

  storage::TurnStore turn_store(db);
  for (const auto& t : *turns) {
    if (t.seq > cut) continue;
    storage::TurnRecord turn = t;
    turn.id = ids.turns.at(t.id);
    turn.session_id = spec.fork_id;
    const std::optional<std::int64_t> ended = turn.ended_at_ms;
    turn.ended_at_ms.reset();
    turn.stop_reason.reset();
    AGENTD_TRY_VOID(turn_store.begin(turn));
    if (ended) AGENTD_TRY_VOID(turn_store.finish(turn.id, *ended, t.stop_reason.value_or(""), t.metadata_json));
    ++copy.turns;
  }

  // Messages: those of the kept turns, and any that name no stored turn before the first of a turn left out.
  auto messages = sessions.messages(spec.source_id);
  if (!messages) return std::move(messages).error();
  bool past_cut = false;
  for (const auto& m : *messages) {
    auto json = support::parse_json(m.content_json);
    if (!json) return Error(Errc::storage, fmt::format("session {}: a stored message is not JSON", spec.source_id));
    const std::string turn = message_turn_id(*json);
    past_cut = past_cut || dropped(turn);
    if (kept(turn)) {
      set_message_turn_id(*json, ids.turns.at(turn));
    } else if (past_cut) {
      continue;
    }
    AGENTD_TRY_VOID(sessions.append_message(spec.fork_id, m.role, json->dump()));
    ++copy.messages;
  }

  storage::CompactionStore compactions(db);
  auto summaries = compactions.for_session(spec.source_id);
  if (!summaries) return std::move(summaries).error();
  for (const auto& c : *summaries) {
    if (!kept(c.last_turn_id)) continue;
    storage::CompactionRecord moved = c;
    moved.session_id = spec.fork_id;
    moved.last_turn_id = ids.turns.at(c.last_turn_id);
    if (kept(c.first_turn_id)) moved.first_turn_id = ids.turns.at(c.first_turn_id);
    auto id = compactions.add(moved);
    if (!id) return std::move(id).error();
    ids.compactions.emplace(c.id, *id);
  }

  // The log, up to the first event of a turn left out; the sequence numbers stay (the fork's log is a
  // prefix of the source's), the turn ids follow the turns.
  storage::EventStore events(db);
  auto logged = events.since(spec.source_id, 0);
  if (!logged) return std::move(logged).error();
  for (auto& e : *logged) {
    if (e.turn_id && dropped(*e.turn_id)) break;
    e.session_id = spec.fork_id;
    if (e.turn_id && kept(*e.turn_id)) e.turn_id = ids.turns.at(*e.turn_id);
    if (auto payload = support::parse_json(e.payload_json); payload) {
      rename_event_refs(e.kind, *payload, ids);
      e.payload_json = payload->dump();
    }
    AGENTD_TRY_VOID(events.append(e));
    ++copy.events;
  }

  storage::BlobStore blobs(db);
  auto hashes = blobs.attached_hashes(spec.source_id);
  if (!hashes) return std::move(hashes).error();
  for (const auto& hash : *hashes) AGENTD_TRY_VOID(blobs.attach(spec.fork_id, hash));

  AGENTD_TRY_VOID(tx->commit());
  return copy;
}

}  // namespace agentd::core
