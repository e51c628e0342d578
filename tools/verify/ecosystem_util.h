// Helpers the ecosystem files (tools/verify/ecosystems/) and the drivers share: reading manifests,
// naming paths relative to the workspace, building suggestions, and reading counts out of runner output.
// Internal to tools/verify.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/verify/discovery.h"
#include "tools/verify/important_output.h"

namespace agentd::tools::verify {

// ---- files ----

// How much of a manifest (package.json, Makefile, README, ...) is read.
constexpr std::size_t kManifestBytes = std::size_t{512} << 10;

bool is_file(const std::filesystem::path& path);
bool is_dir(const std::filesystem::path& path);
// The start of a small text file, or nullopt when it cannot be read.
std::optional<std::string> read_text(const std::filesystem::path& path, std::size_t max_bytes = kManifestBytes);
// The lines of `text`, without their "\r\n" or "\n".
std::vector<std::string_view> lines_of(std::string_view text);
std::string lower(std::string_view text);
bool contains(std::string_view text, std::string_view part);
// Whitespace-separated words of a command line (no quoting rules: only used to recognise runners).
std::vector<std::string_view> words(std::string_view text);
// Whether a word of `text` names `word`: "npx jest", "./node_modules/.bin/jest", "jest;" all name jest.
bool has_word(std::string_view text, std::string_view word);
// Shell-quoted, space-separated.
std::string join_quoted(const std::vector<std::string>& items);
// `path` relative to `base` in generic form, or empty when it is not under `base`.
std::string relative_to(const std::filesystem::path& path, const std::filesystem::path& base);
// Where a discovered file sits, for `source` and ids: "" at the root, "web/" in a subdirectory.
std::string prefix_of(const std::filesystem::path& dir, const std::filesystem::path& workspace);
// The first of `candidates` that exists, or empty.
std::filesystem::path first_existing(const std::vector<std::filesystem::path>& candidates);
// Directories where a project keeps tests for `file`: beside it, in a tests/ folder beside it, and in the
// project's top-level test folders (also mirroring the file's own folder below the first one).
std::vector<std::filesystem::path> test_dirs_for(const std::filesystem::path& file, const std::filesystem::path& root);
// The nearest directory from `file` up to `stop` that holds `marker`, or empty.
std::filesystem::path nearest_with(const std::filesystem::path& file, const std::filesystem::path& stop,
                                   const char* marker);

// ---- suggestions ----

// `command` as it is, with why it was not narrowed.
Suggestion full(const VerificationCommand& command, std::string reason);
// `base` with its command line replaced by the narrowed one.
Suggestion narrowed(const VerificationCommand& base, std::string command_line, std::string reason);
// "a, b, c, d, and 2 more".
std::string list_names(const std::vector<std::string>& names);

// ---- output ----

std::size_t indent_of(std::string_view line);
bool is_digits(std::string_view text);
std::int64_t to_int(std::string_view text);  // 0 when it is not a number that fits
// The (number, word) pairs of a line: "1 failed, 2 passed in 0.03s" -> (1 failed) (2 passed).
std::vector<std::pair<std::int64_t, std::string>> counts_in(std::string_view line);
// Adds passed/failed/skipped words (and their synonyms: error, ignored, todo, xfailed, ...) to `counts`.
void add_counts(TestCounts& counts, const std::vector<std::pair<std::int64_t, std::string>>& pairs);

}  // namespace agentd::tools::verify
