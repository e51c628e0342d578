// Remembered facts on disk (schema version 5): what the user asked agentd to remember (/remember,
// `_agentd/memory/add`), per project, listable, searchable and deletable. Choosing which facts go into a
// turn is core/memory/facts.h's job; this file only keeps them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sqlite.h"

namespace agentd::storage {

struct FactRecord {
  std::int64_t id = 0;  // assigned by add
  std::string project;  // absolute workspace path
  std::string text;
  std::optional<std::string> source_session_id;  // the session it was remembered in
  std::int64_t created_at_ms = 0;
};

class MemoryStore {
 public:
  explicit MemoryStore(Connection& db) : db_(db) {}

  // Stores a fact; returns its id. Errc::invalid_argument for empty text.
  Result<std::int64_t> add(const FactRecord& fact);
  // The project's facts, oldest first.
  Result<std::vector<FactRecord>> list(std::string_view project);
  Result<std::optional<FactRecord>> get(std::string_view project, std::int64_t id);
  // Errc::not_found when the project has no fact `id` (one project cannot delete another's facts).
  Result<void> remove(std::string_view project, std::int64_t id);
  // The project's facts containing every whitespace-separated word of `query` (case-insensitive for
  // ASCII, as SQLite's LIKE), newest first, at most `limit`. An empty query lists the newest facts.
  Result<std::vector<FactRecord>> search(std::string_view project, std::string_view query, int limit = 50);

 private:
  Connection& db_;
};

}  // namespace agentd::storage
