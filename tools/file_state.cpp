#include "tools/file_state.h"

#include <utility>

#include <sys/stat.h>

#include "tools/sha256.h"

namespace agentd::tools {

FileSnapshot snapshot_of(std::string_view bytes, const std::filesystem::path& path) {
  return snapshot_of_hashed(sha256_hex(bytes), bytes.size(), path);
}

FileSnapshot snapshot_of_hashed(std::string sha256, std::uint64_t size, const std::filesystem::path& path) {
  FileSnapshot snapshot;
  snapshot.sha256 = std::move(sha256);
  snapshot.size = size;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    snapshot.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  }
  return snapshot;
}

void FileState::record(const std::filesystem::path& path, FileSnapshot snapshot) {
  const std::lock_guard lock(mutex_);
  files_.insert_or_assign(path.string(), std::move(snapshot));
}

std::optional<FileSnapshot> FileState::find(const std::filesystem::path& path) const {
  const std::lock_guard lock(mutex_);
  const auto it = files_.find(path.string());
  if (it == files_.end()) return std::nullopt;
  return it->second;
}

void FileState::forget(const std::filesystem::path& path) {
  const std::lock_guard lock(mutex_);
  files_.erase(path.string());
}

Freshness FileState::check(const std::filesystem::path& path, std::string_view current) const {
  const auto snapshot = find(path);
  if (!snapshot) return Freshness::never_seen;
  // The size settles most changes without hashing; the hash settles the rest (mtime alone would miss
  // a same-second rewrite and flag a touch that changed nothing).
  if (snapshot->size != current.size()) return Freshness::stale;
  return snapshot->sha256 == sha256_hex(current) ? Freshness::fresh : Freshness::stale;
}

Freshness FileState::check_hashed(const std::filesystem::path& path, std::uint64_t size,
                                  std::string_view sha256) const {
  const auto snapshot = find(path);
  if (!snapshot) return Freshness::never_seen;
  return snapshot->size == size && snapshot->sha256 == sha256 ? Freshness::fresh : Freshness::stale;
}

std::size_t FileState::size() const {
  const std::lock_guard lock(mutex_);
  return files_.size();
}

}  // namespace agentd::tools
