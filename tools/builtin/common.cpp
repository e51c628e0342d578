#include "tools/builtin/common.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/support/preempt.h"
#include "core/support/run_off_loop.h"
#include "tools/disk_file_access.h"
#include "tools/file_state.h"
#include "tools/json_schema.h"
#include "tools/sha256.h"

namespace agentd::tools::builtin {

std::optional<ToolResult> check_input(const ToolSpec& spec, const support::Json& input) {
  const auto violations = schema_violations(spec.input_schema, input);
  if (violations.empty()) return std::nullopt;
  std::string message = fmt::format("Invalid input for {}; fix these and call it again:", spec.name);
  for (const auto& violation : violations) message += fmt::format("\n- {}", violation);
  auto result = ToolResult::failure(std::move(message));
  result.summary = fmt::format("Invalid input for {}", spec.name);
  return result;
}

std::string string_field(const support::Json& input, std::string_view key, std::string_view fallback) {
  const support::Json* value = input.find(key);
  return value != nullptr && value->is_string() ? value->as_string() : std::string(fallback);
}

std::optional<std::int64_t> integer_field(const support::Json& input, std::string_view key) {
  const support::Json* value = input.find(key);
  if (value == nullptr) return std::nullopt;
  if (const auto* i = value->if_int64()) return *i;
  if (value->if_uint64() != nullptr) return std::numeric_limits<std::int64_t>::max();
  if (!value->is_number()) return std::nullopt;
  const double d = value->as_double();
  if (!std::isfinite(d)) return std::nullopt;
  // 2^63 is exactly representable; anything at or above it would overflow the conversion.
  if (d >= 9223372036854775808.0) return std::numeric_limits<std::int64_t>::max();
  if (d <= -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(d);
}

support::Error missing_context(std::string_view tool, std::string_view what) {
  return support::make_error(support::Errc::internal, "{} ran without {} in its ToolContext", tool, what);
}

std::size_t count_lines(std::string_view text) {
  if (text.empty()) return 0;
  std::size_t newlines = 0;
  support::for_each_slice(text, [&newlines](std::string_view slice) {
    newlines += static_cast<std::size_t>(std::count(slice.begin(), slice.end(), '\n'));
  });
  return newlines + (text.back() == '\n' ? 0 : 1);
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    if (newline == std::string_view::npos) {
      lines.push_back(text);
      break;
    }
    lines.push_back(text.substr(0, newline));
    text.remove_prefix(newline + 1);
  }
  return lines;
}

std::size_t changed_lines(std::string_view before, std::string_view after) {
  const auto old_lines = split_lines(before);
  const auto new_lines = split_lines(after);
  std::size_t prefix = 0;
  while (prefix < old_lines.size() && prefix < new_lines.size() && old_lines[prefix] == new_lines[prefix]) ++prefix;
  std::size_t suffix = 0;
  while (suffix < old_lines.size() - prefix && suffix < new_lines.size() - prefix &&
         old_lines[old_lines.size() - 1 - suffix] == new_lines[new_lines.size() - 1 - suffix]) {
    ++suffix;
  }
  const std::size_t changed = std::max(old_lines.size() - prefix - suffix, new_lines.size() - prefix - suffix);
  // Texts that differ only in a final newline still changed a line.
  return changed == 0 && before != after ? 1 : changed;
}

WalkOptions walk_options(const PathGuard& guard, const std::filesystem::path& root, const ToolContext& context) {
  WalkOptions options;
  options.denied = guard.denied();
  if (!options.denied.empty()) options.deny_base = guard.relative_to_root(root);
  options.denied_rules = context.denied_reads;
  options.rules_cwd = context.cwd;
  return options;
}

std::string SingleFileTool::title(const support::Json& input, const ToolContext& context) const {
  return verb_ + " " + lexical_display(string_field(input, "path"), context.cwd);
}

RiskAssessment SingleFileTool::assess(const support::Json& input, const ToolContext& context) const {
  RiskAssessment risk{spec_.base_risk, {}};
  if (access_ != PathAccess::write) return risk;
  // Resolved as run() will resolve it, so a symlink to a protected file is seen for what it is. A path
  // the guard refuses fails in run() with the guard's message; nothing to assess.
  auto resolved = PathGuard(context).resolve(string_field(input, "path"), access_);
  if (!resolved) return risk;
  if (auto why = protected_path(resolved->absolute)) {
    risk.add(Risk::protected_path, fmt::format("writes {}, {}", resolved->display, *why));
  }
  return risk;
}

boost::asio::awaitable<support::Result<std::optional<std::string>>> SingleFileTool::preview_current(
    const support::Json& input, const ToolContext& context, std::string& absolute) const {
  constexpr std::size_t kMaxPreviewBytes = std::size_t{4} << 20;
  auto resolved = PathGuard(context).resolve(string_field(input, "path"), access_);
  if (!resolved) co_return std::move(resolved).error();
  absolute = resolved->absolute.string();
  std::string what = "not previewed";
  auto current = co_await read_current(resolved->absolute, resolved->display, context, std::move(what));
  if (auto* refused = std::get_if<ToolResult>(&current)) {
    co_return support::make_error(support::Errc::invalid_argument, "{}", refused->content);
  }
  auto& text = std::get<CurrentText>(current);
  if (!text.exists) co_return std::optional<std::string>();
  if (text.text.size() > kMaxPreviewBytes) {
    co_return support::make_error(support::Errc::invalid_argument, "{} is too large to preview", absolute);
  }
  co_return std::optional<std::string>(std::move(text.text));
}

namespace {

// What is on disk at `path` (blocking): the CurrentText, or the failure's message.
std::variant<CurrentText, std::string> read_disk_current(const std::filesystem::path& path, const std::string& shown,
                                                         const std::string& what, bool read_bytes) {
  CurrentText current;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return current;
    if (err == ENOTDIR) {
      current.parent_is_file = true;
      return current;
    }
    return fmt::format("Cannot inspect {}: {}", shown, std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) return fmt::format("{} is a directory; {}", shown, what);
  if (!S_ISREG(st.st_mode)) return fmt::format("{} is not a regular file (a device, socket or pipe)", shown);
  current.exists = true;
  current.mode = st.st_mode & 07777;
  if (!read_bytes) return current;
  auto bytes = read_disk_file(path);
  if (!bytes)
    return fmt::format("Cannot read the current {} to check it before changing it: {}", shown, bytes.error().message());
  current.text = std::move(bytes).value();
  current.sha256 = sha256_hex(current.text);
  return current;
}

}  // namespace

boost::asio::awaitable<std::variant<CurrentText, ToolResult>> read_current(std::filesystem::path path,
                                                                           std::string shown,
                                                                           const ToolContext& context,
                                                                           std::string what) {
  const bool from_buffer = context.files != nullptr && context.files->writes_buffers();
  // The disk says whether the file exists and what it is even when its text comes from the editor.
  auto inspect = [path, shown, what, read_bytes = !from_buffer] {
    return read_disk_current(path, shown, what, read_bytes);
  };
  struct stat st {};
  const bool large = ::stat(path.c_str(), &st) != 0 || static_cast<std::size_t>(st.st_size) >= support::kOffLoopBytes;
  auto on_disk = co_await support::run_off_loop(std::move(inspect), large);
  if (auto* failed = std::get_if<std::string>(&on_disk)) co_return ToolResult::failure(std::move(*failed));
  CurrentText current = std::move(std::get<CurrentText>(on_disk));
  if (!from_buffer || !current.exists) co_return current;
  std::string buffer_path = path.string();
  auto buffer = co_await context.files->read_text(std::move(buffer_path), context.cancel);
  if (!buffer) {
    co_return ToolResult::failure(fmt::format("Cannot read {} from the editor: {}", shown, buffer.error().message()));
  }
  current.from_buffer = true;
  current.text = std::move(buffer).value();
  const bool large_text = current.text.size() >= support::kOffLoopBytes;
  auto hash = [current = std::move(current)]() mutable {
    current.sha256 = sha256_hex(current.text);
    return current;
  };
  co_return co_await support::run_off_loop(std::move(hash), large_text);
}

boost::asio::awaitable<std::optional<ToolResult>> check_fresh(std::filesystem::path path, std::string shown,
                                                              const CurrentText& current, const ToolContext& context,
                                                              std::string never_seen, std::string redo) {
  switch (context.file_state->check_hashed(path, current.text.size(), current.sha256)) {
    case Freshness::fresh: co_return std::nullopt;
    case Freshness::never_seen: co_return ToolResult::failure(std::move(never_seen));
    case Freshness::stale: break;
  }
  const auto seen = context.file_state->find(path);
  if (!current.from_buffer && context.files != nullptr && context.files->reads_buffers()) {
    // The model read the editor's buffer; this change would replace the disk's bytes.
    std::string buffer_path = path.string();
    auto buffer = co_await context.files->read_text(std::move(buffer_path), context.cancel);
    if (buffer && context.file_state->check(path, *buffer) == Freshness::fresh) {
      co_return ToolResult::failure(fmt::format(
          "{} has changes in the editor that are not saved to disk, and this editor does not let agentd write "
          "through it (it offers no fs/write_text_file), so changing the file on disk would conflict with them. "
          "Ask the user to save (or revert) {} in the editor, then read it again with read_file and redo your {}.",
          shown, shown, redo));
    }
  }
  co_return ToolResult::failure(
      fmt::format("{} changed since you last read it (then {} bytes, now {}): the user, the editor or a command "
                  "edited it. Read it again with read_file and redo your {} on the current content.",
                  shown, seen ? seen->size : 0, current.text.size(), redo));
}

std::vector<std::string> SingleFileTool::locations(const support::Json& input, const ToolContext& context) const {
  auto resolved = PathGuard(context).resolve(string_field(input, "path"), access_);
  if (!resolved) return {};
  return {resolved->absolute.string()};
}

}  // namespace agentd::tools::builtin
