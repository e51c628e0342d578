// What a session has seen of each file: the hash of the bytes the model last read or wrote. An edit
// on a file whose bytes no longer match is refused as stale, so the model never overwrites a change
// made behind its back (by the user, the editor, or a command) with text built from an old read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace agentd::tools {

struct FileSnapshot {
  std::string sha256;         // lowercase hex of the bytes the model saw
  std::uint64_t size = 0;     // of those bytes
  std::int64_t mtime_ns = 0;  // the file's mtime on disk when they were seen; 0 when unknown
};

// Builds a snapshot of `bytes`, taking the mtime from `path` on disk when it can be read.
FileSnapshot snapshot_of(std::string_view bytes, const std::filesystem::path& path);
// The same for bytes whose hash is already known (hashed off the event loop).
FileSnapshot snapshot_of_hashed(std::string sha256, std::uint64_t size, const std::filesystem::path& path);

enum class Freshness {
  fresh,       // the bytes match what the session last saw
  stale,       // the file changed since
  never_seen,  // the session has not read or written this file
};

// One per session (it outlives turns); keyed by resolved absolute path. Thread-safe: read-only tools
// of one model response run in parallel.
class FileState {
 public:
  void record(const std::filesystem::path& path, FileSnapshot snapshot);
  std::optional<FileSnapshot> find(const std::filesystem::path& path) const;
  void forget(const std::filesystem::path& path);
  // Compares `current` (the bytes there now) with the last snapshot of `path`.
  Freshness check(const std::filesystem::path& path, std::string_view current) const;
  // The same for bytes of `size` whose sha256 (lowercase hex) is known.
  Freshness check_hashed(const std::filesystem::path& path, std::uint64_t size, std::string_view sha256) const;
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, FileSnapshot> files_;
};

}  // namespace agentd::tools
