#include "storage/blob_store.h"

#include <fmt/format.h>

#include "core/support/log.h"
#include "storage/blob_files.h"

namespace agentd::storage {

using support::Errc;

Result<void> BlobStore::put(std::string_view hash, std::string_view bytes) {
  // Content-addressed: a hash already present names these same bytes, so there is nothing to write.
  auto stmt = db_.cached("INSERT INTO blobs (hash, size, data) VALUES (?, ?, ?) ON CONFLICT(hash) DO NOTHING");
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, hash).bind(2, static_cast<std::int64_t>(bytes.size())).bind_blob(3, bytes);
  return (*stmt)->run();
}

Result<void> BlobStore::put_in_file(std::string_view hash, std::uint64_t size) {
  auto stmt =
      db_.cached("INSERT INTO blobs (hash, size, data, in_file) VALUES (?, ?, x'', 1) ON CONFLICT(hash) DO NOTHING");
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, hash).bind(2, static_cast<std::int64_t>(size));
  return (*stmt)->run();
}

Result<std::optional<std::string>> BlobStore::get(std::string_view hash) {
  std::uint64_t size = 0;
  {
    auto stmt = db_.cached("SELECT data, in_file, size FROM blobs WHERE hash = ?");
    if (!stmt) return std::move(stmt).error();
    (*stmt)->bind(1, hash);
    if (!AGENTD_TRY((*stmt)->step())) return std::optional<std::string>();
    if ((*stmt)->column_int64(1) == 0) return std::optional<std::string>(std::string((*stmt)->column_blob(0)));
    size = static_cast<std::uint64_t>((*stmt)->column_int64(2));
  }
  const std::filesystem::path dir = blob_directory(db_.path());
  auto bytes = read_blob_file(dir, hash, size);
  if (!bytes) return std::move(bytes).error();
  if (!*bytes) {
    return Error(Errc::storage,
                 fmt::format("the blob {} is recorded as stored in {}, but its file is missing", hash, dir.string()));
  }
  return bytes;
}

Result<void> BlobStore::attach(std::string_view session_id, std::string_view hash) {
  auto stmt = db_.cached("INSERT INTO session_blobs (session_id, hash) VALUES (?, ?) ON CONFLICT DO NOTHING");
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, session_id).bind(2, hash);
  return (*stmt)->run();
}

Result<std::vector<std::string>> BlobStore::attached_hashes(std::string_view session_id) {
  std::vector<std::string> hashes;
  auto stmt = db_.cached("SELECT hash FROM session_blobs WHERE session_id = ? ORDER BY hash");
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, session_id);
  while (AGENTD_TRY((*stmt)->step())) hashes.emplace_back((*stmt)->column_text(0));
  return hashes;
}

Result<std::vector<std::pair<std::string, std::string>>> BlobStore::attached(std::string_view session_id) {
  auto hashes = attached_hashes(session_id);
  if (!hashes) return std::move(hashes).error();
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(hashes->size());
  for (auto& hash : *hashes) {
    auto bytes = get(hash);
    if (!bytes) return std::move(bytes).error();
    if (*bytes) out.emplace_back(std::move(hash), std::move(**bytes));
  }
  return out;
}

Result<std::int64_t> BlobStore::prune() {
  constexpr char kUnreferenced[] =
      "FROM blobs WHERE NOT EXISTS (SELECT 1 FROM file_changes WHERE before_hash = blobs.hash) "
      "AND NOT EXISTS (SELECT 1 FROM session_blobs WHERE hash = blobs.hash)";
  std::vector<std::string> files;
  {
    auto stmt = db_.prepare(fmt::format("SELECT hash {} AND in_file = 1", kUnreferenced));
    if (!stmt) return std::move(stmt).error();
    while (AGENTD_TRY(stmt->step())) files.emplace_back(stmt->column_text(0));
  }
  auto stmt = db_.prepare(fmt::format("DELETE {}", kUnreferenced));
  if (!stmt) return std::move(stmt).error();
  AGENTD_TRY_VOID(stmt->run());
  std::int64_t removed = db_.changes();
  const std::filesystem::path dir = blob_directory(db_.path());
  if (dir.empty()) return removed;
  // This runs inside the caller's transaction, so the files go before the deletes commit. If the commit
  // then fails, the rows come back without their files; that is harmless, because these rows are the
  // ones nothing refers to: nothing will read them, and the next prune deletes them again. A file that
  // cannot be removed is logged and left for the next prune.
  for (const auto& hash : files) {
    if (auto gone = remove_blob_file(dir, hash); !gone) support::log::warn("{}", gone.error().message());
  }
  auto named = db_.cached("SELECT 1 FROM blobs WHERE hash = ?");
  if (!named) return std::move(named).error();
  auto referenced = [&](std::string_view hash) {
    (*named)->reset();
    (*named)->bind(1, hash);
    auto found = (*named)->step();
    return !found || *found;  // when in doubt, keep the file
  };
  auto orphans = prune_blob_files(dir, referenced, std::chrono::hours(1));
  if (!orphans) return std::move(orphans).error();
  return removed + *orphans;
}

}  // namespace agentd::storage
