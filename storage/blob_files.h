// Large checkpoint pre-images as files next to the database, content-addressed like the `blobs` table.
// A pre-image of many MiB written inside a database transaction holds SQLite's one write lock for as long
// as the write and its fsync take (tens to hundreds of ms), and every other session's events wait behind
// it before they may be delivered. Written here instead, by the thread that made the change and before the
// database row that refers to it, the transaction stays a few hundred bytes. Layout:
// `<database>.blobs/<first two hex digits>/<sha256 hex>`, 0600 in 0700 directories. A file is complete
// once its name exists: it is written under a temporary name, fsynced, renamed, and the directory fsynced.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/support/result.h"

namespace agentd::storage {

// Pre-images larger than this go to files; smaller ones stay in the `blobs` table (one row, no fsync of
// their own).
inline constexpr std::size_t kBlobFileMinBytes = std::size_t{64} << 10;

// Where the blob files of the database at `database_path` live; empty for an in-memory database (which
// keeps every blob in its table).
std::filesystem::path blob_directory(std::string_view database_path);

// Stores `bytes` under `hash` (lowercase hex SHA-256 of them, computed by the caller) in `dir`, durably.
// A file already there under that name holds these bytes: nothing is written. Blocking.
support::Result<void> write_blob_file(const std::filesystem::path& dir, std::string_view hash, std::string_view bytes);

// The bytes stored under `hash`, or nothing when there is no such file. A file whose size is not
// `expected_size` is an error (it was damaged), never returned as the pre-image. Blocking.
support::Result<std::optional<std::string>> read_blob_file(const std::filesystem::path& dir, std::string_view hash,
                                                           std::uint64_t expected_size);

// Removes the blob file of `hash` (gone already is fine).
support::Result<void> remove_blob_file(const std::filesystem::path& dir, std::string_view hash);

// Removes files that `referenced` says nothing refers to and that are older than `min_age` (a younger one
// may belong to a change whose row is about to be committed), and leftover temporary files of that age.
// Returns how many files were removed.
support::Result<std::int64_t> prune_blob_files(const std::filesystem::path& dir,
                                               const std::function<bool(std::string_view hash)>& referenced,
                                               std::chrono::seconds min_age);

}  // namespace agentd::storage
