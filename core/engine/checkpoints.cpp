#include "core/engine/checkpoints.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/support/clock.h"
#include "core/support/log.h"
#include "core/support/run_off_loop.h"
#include "storage/blob_files.h"
#include "storage/blob_store.h"
#include "tools/disk_file_access.h"
#include "tools/sha256.h"

namespace agentd::core {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using storage::CheckpointKind;
using storage::CheckpointRecord;
using support::CancelToken;
using support::Errc;
using support::Error;
using support::Result;

namespace {

// Which checkpoints a later restore (itself still in effect) has put back, newest first: a restore that a
// later restore covers has been undone, so it covers nothing.
std::vector<bool> undone_flags(const std::vector<CheckpointRecord>& records) {
  std::vector<bool> undone(records.size(), false);
  std::int64_t covered_from = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i = records.size(); i-- > 0;) {
    undone[i] = records[i].seq >= covered_from;
    if (!undone[i] && records[i].kind == CheckpointKind::restore && records[i].restores_seq) {
      covered_from = std::min(covered_from, *records[i].restores_seq);
    }
  }
  return undone;
}

// One file of a restore: what it goes back to and what it may hold now.
struct PathPlan {
  std::string path;
  std::optional<std::string> target;  // the hash before the target checkpoint; empty: it did not exist
  std::uint32_t target_mode = 0;
  std::optional<std::string> expected;  // the hash the last change left
  // The hash before the last change: a change whose write never happened (the daemon died between
  // recording and writing) leaves the file at this.
  std::optional<std::string> unwritten;
};

struct CurrentFile {
  std::optional<std::string> bytes;  // empty: no file
  std::uint32_t mode = 0;
  std::string problem;  // why it cannot be read (a directory now, unreadable); empty when fine
};

CurrentFile current_file(const std::string& path) {
  CurrentFile out;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err != ENOENT && err != ENOTDIR) out.problem = std::strerror(err);
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.problem = "it is no longer a regular file";
    return out;
  }
  auto bytes = tools::read_disk_file(path);
  if (!bytes) {
    out.problem = bytes.error().message();
    return out;
  }
  out.bytes = std::move(*bytes);
  out.mode = st.st_mode & 07777;
  return out;
}

std::string short_hash(const std::optional<std::string>& hash) {
  return hash ? hash->substr(0, 12) : std::string("no file");
}

}  // namespace

constexpr support::EnumName<RestoreAction> kRestoreActionNames[] = {
    {RestoreAction::restored, "restored"}, {RestoreAction::recreated, "recreated"},
    {RestoreAction::removed, "removed"},   {RestoreAction::unchanged, "unchanged"},
    {RestoreAction::conflict, "conflict"}, {RestoreAction::failed, "failed"},
};
static_assert(support::names_every_value(kRestoreActionNames, RestoreAction::failed));

std::span<const support::EnumName<RestoreAction>> enum_names(RestoreAction) noexcept { return kRestoreActionNames; }

std::string_view restore_action_name(RestoreAction action) noexcept { return support::enum_name(action, "failed"); }

std::size_t RestoreReport::count(RestoreAction action) const {
  return static_cast<std::size_t>(
      std::count_if(files.begin(), files.end(), [&](const RestoredFile& f) { return f.action == action; }));
}

std::string undo_text(const RestoreReport& report, const std::string& cwd) {
  if (report.target.empty()) return "Nothing to undo: no turn of this session changed files that are not undone yet.";
  const auto shown = [&](const std::string& path) {
    const fs::path p(path);
    const fs::path relative = p.lexically_relative(cwd);
    return !relative.empty() && *relative.begin() != ".." ? relative.string() : path;
  };
  std::string text = fmt::format("Undid the file changes of turn {}:", report.target);
  for (const auto& f : report.files) {
    text += fmt::format("\n  {} {}", restore_action_name(f.action), shown(f.path));
    if (!f.detail.empty()) text += fmt::format(" ({})", f.detail);
  }
  if (const std::size_t conflicts = report.count(RestoreAction::conflict); conflicts > 0) {
    text += fmt::format(
        "\n{} file{} changed since the turn and {} left as {} are; look at {} and fix {} by hand if needed.", conflicts,
        conflicts == 1 ? "" : "s", conflicts == 1 ? "was" : "were", conflicts == 1 ? "it" : "they",
        conflicts == 1 ? "it" : "them", conflicts == 1 ? "it" : "them");
  }
  return text;
}

Checkpoints::Checkpoints(EngineStore& store, std::string session_id, tools::FileState& file_state)
    : store_(store), session_id_(std::move(session_id)), file_state_(file_state) {}

void Checkpoints::begin_turn(const std::string& turn_id) {
  tag_ = Tag{turn_id, turn_id, CheckpointKind::turn, {}};
  turn_changes_.clear();
}

void Checkpoints::end_turn() {
  tag_.reset();
  turn_changes_.clear();
}

std::vector<std::string> Checkpoints::turn_changed_files() const {
  std::vector<std::string> files;
  for (const auto& [id, path] : turn_changes_) {
    if (std::find(files.begin(), files.end(), path) == files.end()) files.push_back(path);
  }
  return files;
}

asio::awaitable<Result<std::int64_t>> Checkpoints::record(tools::FileChange change) {
  if (!tag_)
    co_return Error(Errc::internal,
                    fmt::format("{} changed outside a turn: no checkpoint to record it in", change.path));
  const std::int64_t now = support::unix_millis_now();
  CheckpointRecord header;
  header.id = tag_->id;
  header.session_id = session_id_;
  header.turn_id = tag_->turn_id;
  header.kind = tag_->kind;
  header.restores_seq = tag_->restores_seq;
  header.created_at_ms = now;
  storage::FileChangeRecord row;
  row.checkpoint_id = tag_->id;
  row.path = change.path;
  row.after_hash = change.after_hash;
  row.mode = change.mode;
  row.created_at_ms = now;
  // A large pre-image goes to a blob file, written and fsynced on a thread of its own before the row that
  // names it: inside the database's transaction it would hold the one write lock, and every session's
  // events behind it, for as long as writing many MiB takes.
  std::optional<std::uint64_t> in_file;
  const std::filesystem::path blob_dir = storage::blob_directory(store_.worker().path());
  if (change.before && change.before->size() >= storage::kBlobFileMinBytes && !blob_dir.empty()) {
    auto put = [blob_dir, before = std::move(*change.before)]() -> Result<std::pair<std::string, std::uint64_t>> {
      std::string hash = tools::sha256_hex(before);
      AGENTD_TRY_VOID(storage::write_blob_file(blob_dir, hash, before));
      return std::pair<std::string, std::uint64_t>(std::move(hash), before.size());
    };
    auto stored = co_await support::run_off_loop(std::move(put));
    if (!stored) co_return std::move(stored).error().context("recording the file's pre-image for undo");
    row.before_hash = std::move(stored->first);
    in_file = stored->second;
    change.before.reset();
  }
  auto job = [header = std::move(header), row = std::move(row), before = std::move(change.before),
              in_file](storage::Connection& db) mutable -> Result<std::int64_t> {
    storage::CheckpointStore store(db);
    storage::BlobStore blobs(db);
    if (in_file) {
      AGENTD_TRY_VOID(blobs.put_in_file(*row.before_hash, *in_file));
    } else if (before) {
      // Hashed here, on the database's thread: even a small pre-image is not the event loop's work.
      row.before_hash = tools::sha256_hex(*before);
      AGENTD_TRY_VOID(blobs.put(*row.before_hash, *before));
    }
    AGENTD_TRY_VOID(store.open(header));
    return store.add_change(row);
  };
  std::string path = change.path;
  const std::string tag_id = tag_->id;
  auto id = co_await store_.write_durable_value<std::int64_t>(std::move(job));
  if (!id) co_return std::move(id).error().context("recording the file's pre-image for undo");
  if (tag_ && tag_->id == tag_id) turn_changes_.emplace_back(*id, std::move(path));
  co_return *id;
}

void Checkpoints::abandon(std::int64_t id) {
  std::erase_if(turn_changes_, [id](const auto& change) { return change.first == id; });
  store_.worker().write([id](storage::Connection& db) { return storage::CheckpointStore(db).remove_change(id); },
                        [id](const Result<void>& r) {
                          if (!r)
                            support::log::warn("file change {} could not be forgotten: {}", id, r.error().message());
                        });
}

asio::awaitable<Result<std::vector<CheckpointRecord>>> Checkpoints::load() {
  auto job = [session = session_id_](storage::Connection& db) {
    return storage::CheckpointStore(db).for_session(session);
  };
  co_return co_await store_.read<std::vector<CheckpointRecord>>(std::move(job));
}

asio::awaitable<Result<std::vector<CheckpointInfo>>> Checkpoints::list() {
  auto records = co_await load();
  if (!records) co_return std::move(records).error();
  const std::vector<bool> undone = undone_flags(*records);
  std::map<std::int64_t, std::string> id_of_seq;
  for (const auto& r : *records) id_of_seq[r.seq] = r.id;
  std::vector<CheckpointInfo> out;
  for (std::size_t i = 0; i < records->size(); ++i) {
    const CheckpointRecord& r = (*records)[i];
    CheckpointInfo info;
    info.id = r.id;
    info.seq = r.seq;
    info.kind = r.kind;
    if (r.restores_seq) {
      auto it = id_of_seq.find(*r.restores_seq);
      if (it != id_of_seq.end()) info.restores = it->second;
    }
    info.undone = undone[i];
    info.created_at_ms = r.created_at_ms;
    for (const auto& c : r.changes) info.files.push_back(CheckpointFile{c.path, c.before_hash, c.after_hash});
    out.push_back(std::move(info));
  }
  co_return out;
}

asio::awaitable<Result<RestoreReport>> Checkpoints::restore(std::string target, std::string restore_id,
                                                            std::optional<std::string> turn_id, CancelToken cancel) {
  auto records = co_await load();
  if (!records) co_return std::move(records).error();
  const auto it =
      std::find_if(records->begin(), records->end(), [&](const CheckpointRecord& r) { return r.id == target; });
  if (it == records->end()) {
    co_return Error(Errc::not_found,
                    fmt::format("turn \"{}\" has no checkpoint in this session: it changed no files, or it is not "
                                "one of this session's turns (_agentd/checkpoints/list shows them)",
                                target));
  }
  const auto index = static_cast<std::size_t>(it - records->begin());
  co_return co_await restore_from(std::move(*records), index, std::move(restore_id), std::move(turn_id),
                                  std::move(cancel));
}

asio::awaitable<Result<RestoreReport>> Checkpoints::undo(std::string restore_id, std::optional<std::string> turn_id,
                                                         CancelToken cancel) {
  auto records = co_await load();
  if (!records) co_return std::move(records).error();
  const std::vector<bool> undone = undone_flags(*records);
  for (std::size_t i = records->size(); i-- > 0;) {
    if ((*records)[i].kind == CheckpointKind::turn && !undone[i]) {
      co_return co_await restore_from(std::move(*records), i, std::move(restore_id), std::move(turn_id),
                                      std::move(cancel));
    }
  }
  co_return RestoreReport{};
}

asio::awaitable<Result<RestoreReport>> Checkpoints::restore_from(std::vector<CheckpointRecord> records,
                                                                 std::size_t target, std::string restore_id,
                                                                 std::optional<std::string> turn_id,
                                                                 CancelToken cancel) {
  // Each path goes back to what it held before its first change at or after the target; it should now hold
  // what its last change left. Ordered by first change, walked newest first.
  std::vector<PathPlan> plans;
  std::map<std::string, std::size_t, std::less<>> plan_of;
  for (std::size_t i = target; i < records.size(); ++i) {
    for (const auto& c : records[i].changes) {
      auto [entry, inserted] = plan_of.try_emplace(c.path, plans.size());
      if (inserted) plans.push_back(PathPlan{c.path, c.before_hash, c.mode, {}, {}});
      PathPlan& plan = plans[entry->second];
      plan.expected = c.after_hash;
      plan.unwritten = c.before_hash;
    }
  }

  // The target contents, from the blob table.
  std::vector<std::string> hashes;
  for (const auto& p : plans) {
    if (p.target) hashes.push_back(*p.target);
  }
  auto blobs_job = [hashes](storage::Connection& db) -> Result<std::map<std::string, std::string>> {
    std::map<std::string, std::string> out;
    storage::BlobStore blobs(db);
    for (const auto& h : hashes) {
      auto bytes = AGENTD_TRY(blobs.get(h));
      if (!bytes) return Error(Errc::storage, fmt::format("the stored pre-image {} is missing", h));
      out.emplace(h, std::move(*bytes));
    }
    return out;
  };
  auto blobs = co_await store_.read<std::map<std::string, std::string>>(std::move(blobs_job));
  if (!blobs) co_return std::move(blobs).error();

  RestoreReport report;
  report.target = records[target].id;
  const std::optional<Tag> saved = tag_;
  tag_ = Tag{restore_id, std::move(turn_id), CheckpointKind::restore, records[target].seq};
  bool wrote = false;
  for (std::size_t i = plans.size(); i-- > 0;) {
    const PathPlan& plan = plans[i];
    RestoredFile file{plan.path, RestoreAction::restored, {}};
    CurrentFile now = current_file(plan.path);
    const std::optional<std::string> now_hash = now.bytes ? std::optional(tools::sha256_hex(*now.bytes)) : std::nullopt;
    if (!now.problem.empty()) {
      file.action = RestoreAction::conflict;
      file.detail = now.problem;
    } else if (now_hash == plan.target) {
      file.action = RestoreAction::unchanged;
    } else if (now_hash != plan.expected && now_hash != plan.unwritten) {
      file.action = RestoreAction::conflict;
      file.detail = fmt::format("it changed since: it holds {}, the turn left {}", short_hash(now_hash),
                                short_hash(plan.expected));
    } else {
      tools::FileCommit commit;
      commit.path = plan.path;
      commit.before = now.bytes;
      commit.before_mode = now.mode;
      if (plan.target) {
        commit.after = blobs->at(*plan.target);
        commit.mode = plan.target_mode;
        std::error_code ec;
        fs::create_directories(fs::path(plan.path).parent_path(), ec);
      }
      auto committed = co_await tools::commit_file(std::move(commit), this, cancel);
      if (!committed) {
        tag_ = saved;
        co_return std::move(committed).error().context(fmt::format("restoring {}", plan.path));
      }
      switch (committed->status) {
        case tools::CommitStatus::committed:
          wrote = true;
          file.action =
              !plan.target ? RestoreAction::removed : (now.bytes ? RestoreAction::restored : RestoreAction::recreated);
          break;
        case tools::CommitStatus::conflict:
          file.action = RestoreAction::conflict;
          file.detail = "it changed while it was being restored";
          break;
        case tools::CommitStatus::failed:
          file.action = RestoreAction::failed;
          file.detail = committed->message;
          break;
      }
    }
    // What the model saw of a file put back is history now: it must read it again before changing it.
    if (file.action == RestoreAction::restored || file.action == RestoreAction::recreated ||
        file.action == RestoreAction::removed) {
      file_state_.forget(plan.path);
    }
    report.files.push_back(std::move(file));
  }
  tag_ = saved;
  if (wrote) report.checkpoint_id = restore_id;
  co_return report;
}

}  // namespace agentd::core
