#include "storage/memory_store.h"

#include <fmt/format.h>

namespace agentd::storage {

using support::Errc;

namespace {

constexpr std::string_view kFactColumns = "id, project, text, source_session_id, created_at";

FactRecord read_fact(const Statement& s) {
  FactRecord f;
  f.id = s.column_int64(0);
  f.project = s.column_string(1);
  f.text = s.column_string(2);
  if (!s.is_null(3)) f.source_session_id = s.column_string(3);
  f.created_at_ms = s.column_int64(4);
  return f;
}

Result<std::vector<FactRecord>> read_facts(Statement& s) {
  std::vector<FactRecord> out;
  while (true) {
    auto row = s.step();
    if (!row) return std::move(row).error();
    if (!*row) break;
    out.push_back(read_fact(s));
  }
  return out;
}

// A LIKE pattern matching `word` anywhere, with LIKE's own wildcards taken literally.
std::string like_pattern(std::string_view word) {
  std::string out = "%";
  for (char c : word) {
    if (c == '%' || c == '_' || c == '\\') out += '\\';
    out += c;
  }
  out += '%';
  return out;
}

std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
    std::size_t start = i;
    while (i < text.size() && !(text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

}  // namespace

Result<std::int64_t> MemoryStore::add(const FactRecord& fact) {
  if (fact.text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Error(Errc::invalid_argument, "a remembered fact needs some text");
  }
  auto stmt = db_.cached(
      "INSERT INTO memory_facts (project, text, source_session_id, created_at) VALUES (?, ?, ?, ?) RETURNING id");
  if (!stmt) return std::move(stmt).error();
  Statement& s = **stmt;
  s.bind(1, fact.project).bind(2, fact.text);
  if (fact.source_session_id) {
    s.bind(3, *fact.source_session_id);
  } else {
    s.bind_null(3);
  }
  s.bind(4, fact.created_at_ms);
  auto row = s.step();
  if (!row) return std::move(row).error();
  if (!*row) return Error(Errc::internal, "INSERT ... RETURNING gave no row");
  return s.column_int64(0);
}

Result<std::vector<FactRecord>> MemoryStore::list(std::string_view project) {
  auto stmt = db_.cached(fmt::format("SELECT {} FROM memory_facts WHERE project = ? ORDER BY id", kFactColumns));
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, project);
  return read_facts(**stmt);
}

Result<std::optional<FactRecord>> MemoryStore::get(std::string_view project, std::int64_t id) {
  auto stmt = db_.cached(fmt::format("SELECT {} FROM memory_facts WHERE id = ? AND project = ?", kFactColumns));
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, id).bind(2, project);
  auto row = (*stmt)->step();
  if (!row) return std::move(row).error();
  if (!*row) return std::optional<FactRecord>();
  return std::optional<FactRecord>(read_fact(**stmt));
}

Result<void> MemoryStore::remove(std::string_view project, std::int64_t id) {
  auto stmt = db_.cached("DELETE FROM memory_facts WHERE id = ? AND project = ?");
  if (!stmt) return std::move(stmt).error();
  (*stmt)->bind(1, id).bind(2, project);
  if (auto r = (*stmt)->run(); !r) return r;
  if (db_.changes() == 0) {
    return Error(Errc::not_found, fmt::format("no remembered fact {} for the project {}", id, project));
  }
  return support::ok();
}

Result<std::vector<FactRecord>> MemoryStore::search(std::string_view project, std::string_view query, int limit) {
  const auto words = words_of(query);
  // One LIKE per word: the SQL text varies with the word count, so it is prepared each time rather than
  // cached (a search is a user action, not a hot path).
  std::string sql = fmt::format("SELECT {} FROM memory_facts WHERE project = ?", kFactColumns);
  for (std::size_t i = 0; i < words.size(); ++i) sql += " AND text LIKE ? ESCAPE '\\'";
  sql += " ORDER BY id DESC LIMIT ?";
  auto stmt = db_.prepare(sql);
  if (!stmt) return std::move(stmt).error();
  int index = 1;
  stmt->bind(index++, project);
  for (std::string_view word : words) stmt->bind(index++, like_pattern(word));
  stmt->bind(index, limit < 0 ? 0 : limit);
  return read_facts(*stmt);
}

}  // namespace agentd::storage
