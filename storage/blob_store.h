// The content-addressed `blobs` table (schema version 4, files since 7, session references since 8):
// bytes stored once under the SHA-256 their writer computed, small ones in the row, large ones in a file
// next to the database (storage/blob_files.h). Two kinds of rows refer to a blob and keep it alive: a file
// change's pre-image (checkpoint_store.h) and a session's attachment, such as an image in a prompt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/sqlite.h"

namespace agentd::storage {

class BlobStore {
 public:
  explicit BlobStore(Connection& db) : db_(db) {}

  // Stores `bytes` under `hash` (the caller's SHA-256 of them: storage does not hash); the same bytes
  // again cost nothing.
  Result<void> put(std::string_view hash, std::string_view bytes);
  // Records that the `size` bytes of `hash` are in the database's blob files, written there by the caller
  // before this.
  Result<void> put_in_file(std::string_view hash, std::uint64_t size);
  // The bytes of `hash`, from the table or its file; nothing when no blob has that hash. A blob whose file
  // is missing or damaged is an error.
  Result<std::optional<std::string>> get(std::string_view hash);

  // Keeps the blob `hash` (stored first) for as long as the session exists.
  Result<void> attach(std::string_view session_id, std::string_view hash);
  // The hashes of the session's attached blobs, in order; and the blobs with their bytes.
  Result<std::vector<std::string>> attached_hashes(std::string_view session_id);
  Result<std::vector<std::pair<std::string, std::string>>> attached(std::string_view session_id);

  // Deletes blobs nothing refers to (left by deleted sessions), their files with them, and files no blob
  // row names that are over an hour old (a writer that died before its row was committed); returns how
  // many blobs and files were removed.
  Result<std::int64_t> prune();

 private:
  Connection& db_;
};

}  // namespace agentd::storage
