#include "tools/builtin/common.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include <fmt/format.h>

#include "tools/json_schema.h"

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
  const auto newlines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
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

support::Result<std::optional<std::string>> SingleFileTool::preview_current(const support::Json& input,
                                                                            const ToolContext& context,
                                                                            std::string& absolute) const {
  constexpr std::uintmax_t kMaxPreviewBytes = std::uintmax_t{4} << 20;
  auto resolved = PathGuard(context).resolve(string_field(input, "path"), access_);
  if (!resolved) return std::move(resolved).error();
  absolute = resolved->absolute.string();
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(resolved->absolute, ec);
  if (ec || status.type() == std::filesystem::file_type::not_found) return std::optional<std::string>();
  if (status.type() != std::filesystem::file_type::regular) {
    return support::make_error(support::Errc::invalid_argument, "{} is not a regular file", absolute);
  }
  if (std::filesystem::file_size(resolved->absolute, ec) > kMaxPreviewBytes || ec) {
    return support::make_error(support::Errc::invalid_argument, "{} is too large to preview", absolute);
  }
  std::ifstream in(resolved->absolute, std::ios::binary);
  if (!in) return support::make_error(support::Errc::io, "cannot read {}", absolute);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return std::optional<std::string>(std::move(text));
}

std::vector<std::string> SingleFileTool::locations(const support::Json& input, const ToolContext& context) const {
  auto resolved = PathGuard(context).resolve(string_field(input, "path"), access_);
  if (!resolved) return {};
  return {resolved->absolute.string()};
}

}  // namespace agentd::tools::builtin
