#include "tools/verify/ecosystem_util.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "core/support/text.h"
#include "tools/shell_command.h"

namespace agentd::tools::verify {

namespace fs = std::filesystem;

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool is_dir(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// The start of a small text file, or nullopt when it cannot be read.
std::optional<std::string> read_text(const fs::path& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(max_bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max_bytes));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string lower(std::string_view text) { return support::ascii_lower_copy(text); }

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// Whitespace-separated words of a command line (no quoting rules: only used to recognise runners).
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
    const std::size_t start = i;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) == 0) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

bool has_word(std::string_view text, std::string_view word) {
  for (std::string_view w : words(text)) {
    // "npx jest", "./node_modules/.bin/jest", "jest;" all name jest.
    const std::size_t slash = w.rfind('/');
    if (slash != std::string_view::npos) w.remove_prefix(slash + 1);
    while (!w.empty() && (w.back() == ';' || w.back() == ')')) w.remove_suffix(1);
    if (w == word) return true;
  }
  return false;
}

std::string join_quoted(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ' ';
    out += shell_quote(item);
  }
  return out;
}

// `path` relative to `base` in generic form, or empty when it is not under `base`.
std::string relative_to(const fs::path& path, const fs::path& base) {
  const fs::path rel = path.lexically_normal().lexically_relative(base.lexically_normal());
  if (rel.empty()) return {};
  std::string text = rel.generic_string();
  if (text == ".." || text.starts_with("../")) return {};
  return text;
}

// Where a discovered file sits, for `source` and ids: "" at the root, "web/" in a subdirectory.
std::string prefix_of(const fs::path& dir, const fs::path& workspace) {
  const std::string rel = relative_to(dir, workspace);
  return rel.empty() || rel == "." ? std::string() : rel + "/";
}

// The first of `candidates` that exists, or empty.
fs::path first_existing(const std::vector<fs::path>& candidates) {
  for (const auto& candidate : candidates) {
    if (is_file(candidate)) return candidate.lexically_normal();
  }
  return {};
}

// Directories where a project keeps tests for `file`: beside it, in a tests/ folder beside it, and in the
// project's top-level test folders (also mirroring the file's own folder below the first one).
std::vector<fs::path> test_dirs_for(const fs::path& file, const fs::path& root) {
  std::vector<fs::path> dirs;
  const fs::path dir = file.parent_path();
  dirs.push_back(dir);
  for (const char* name : {"tests", "test", "__tests__"}) dirs.push_back(dir / name);
  const fs::path rel = dir.lexically_relative(root);
  fs::path below_first;  // "src/a/b" -> "a/b"
  bool first = true;
  for (const auto& part : rel) {
    if (first) {
      first = false;
      continue;
    }
    below_first /= part;
  }
  for (const char* name : {"tests", "test", "__tests__", "test/unit", "tests/unit"}) {
    dirs.push_back(root / name);
    if (!rel.empty() && rel != ".") dirs.push_back(root / name / rel);
    if (!below_first.empty()) dirs.push_back(root / name / below_first);
  }
  return dirs;
}

// The nearest directory from `file` up to `stop` that holds `marker`, or empty.
fs::path nearest_with(const fs::path& file, const fs::path& stop, const char* marker) {
  for (fs::path dir = file.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (is_file(dir / marker)) return dir;
    if (dir == stop || dir == dir.parent_path() || relative_to(dir, stop).empty()) break;
  }
  return {};
}

Suggestion full(const VerificationCommand& command, std::string reason) {
  Suggestion s;
  s.command = command;
  s.base_id = command.id;
  s.narrowed = false;
  s.reason = std::move(reason);
  return s;
}

Suggestion narrowed(const VerificationCommand& base, std::string command_line, std::string reason) {
  Suggestion s;
  s.command = base;
  s.command.command = std::move(command_line);
  s.base_id = base.id;
  s.narrowed = true;
  s.reason = std::move(reason);
  return s;
}

std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    if (i == 4) {
      out += fmt::format("and {} more", names.size() - 4);
      break;
    }
    out += names[i];
  }
  return out;
}

std::size_t indent_of(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return i;
}

bool is_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::int64_t to_int(std::string_view text) {
  std::int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// The (number, word) pairs of a line: "1 failed, 2 passed in 0.03s" -> (1 failed) (2 passed).
std::vector<std::pair<std::int64_t, std::string>> counts_in(std::string_view line) {
  std::vector<std::pair<std::int64_t, std::string>> out;
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (std::isspace(static_cast<unsigned char>(line[i])) != 0 || line[i] == ',' ||
                               line[i] == '|' || line[i] == ';' || line[i] == '(' || line[i] == ')')) {
      ++i;
    }
    const std::size_t start = i;
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) == 0 && line[i] != ',' &&
           line[i] != '|' && line[i] != ';' && line[i] != '(' && line[i] != ')') {
      ++i;
    }
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  for (std::size_t t = 0; t + 1 < tokens.size(); ++t) {
    if (!is_digits(tokens[t])) continue;
    std::string word;
    for (char c : tokens[t + 1]) {
      if (std::isalpha(static_cast<unsigned char>(c)) == 0) break;
      word += support::ascii_lower(c);
    }
    if (!word.empty()) out.emplace_back(to_int(tokens[t]), std::move(word));
  }
  return out;
}

void add_counts(TestCounts& counts, const std::vector<std::pair<std::int64_t, std::string>>& pairs) {
  for (const auto& [n, word] : pairs) {
    if (word == "passed" || word == "pass" || word == "xpassed") {
      counts.passed += n;
    } else if (word == "failed" || word == "fail" || word == "error" || word == "errors" || word == "cancelled") {
      counts.failed += n;
    } else if (word == "skipped" || word == "skip" || word == "ignored" || word == "todo" || word == "xfailed" ||
               word == "pending") {
      counts.skipped += n;
    }
  }
}

}  // namespace agentd::tools::verify
