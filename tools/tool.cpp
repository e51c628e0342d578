#include "tools/tool.h"

#include <algorithm>
#include <array>

#include "core/support/preempt.h"
#include "tools/diff.h"

namespace agentd::tools {
namespace {

struct RiskName {
  Risk flag;
  std::string_view name;
};
// In bit order, so risk_names() is stable for logs and tests.
constexpr std::array<RiskName, 9> kRiskNames = {{
    {Risk::read, "read"},
    {Risk::write, "write"},
    {Risk::execute, "execute"},
    {Risk::network, "network"},
    {Risk::outside_workspace, "outside_workspace"},
    {Risk::protected_path, "protected_path"},
    {Risk::recursive_delete, "recursive_delete"},
    {Risk::remote_code, "remote_code"},
    {Risk::permissions, "permissions"},
}};

// What Anthropic and OpenAI accept as a tool name; checking at registration beats a 400 mid-turn.
bool valid_tool_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

}  // namespace

std::string risk_names(Risk risk) {
  std::string out;
  for (const auto& [flag, name] : kRiskNames) {
    if (!has_risk(risk, flag)) continue;
    if (!out.empty()) out += '|';
    out += name;
  }
  return out.empty() ? "none" : out;
}

std::optional<Risk> parse_risk_name(std::string_view name) noexcept {
  for (const auto& [flag, known] : kRiskNames) {
    if (known == name) return flag;
  }
  return std::nullopt;
}

constexpr support::EnumName<PlanStatus> kPlanStatusNames[] = {
    {PlanStatus::pending, "pending"}, {PlanStatus::in_progress, "in_progress"}, {PlanStatus::completed, "completed"}};
static_assert(support::names_every_value(kPlanStatusNames, PlanStatus::completed));
std::span<const support::EnumName<PlanStatus>> enum_names(PlanStatus) noexcept { return kPlanStatusNames; }

constexpr support::EnumName<PlanPriority> kPlanPriorityNames[] = {
    {PlanPriority::high, "high"}, {PlanPriority::medium, "medium"}, {PlanPriority::low, "low"}};
static_assert(support::names_every_value(kPlanPriorityNames, PlanPriority::low));
std::span<const support::EnumName<PlanPriority>> enum_names(PlanPriority) noexcept { return kPlanPriorityNames; }

constexpr support::EnumName<ToolKind> kToolKindNames[] = {
    {ToolKind::read, "read"},       {ToolKind::edit, "edit"},
    {ToolKind::remove, "delete"},  // ACP's spelling; `delete` is a C++ keyword
    {ToolKind::move, "move"},       {ToolKind::search, "search"},
    {ToolKind::execute, "execute"}, {ToolKind::think, "think"},
    {ToolKind::fetch, "fetch"},     {ToolKind::other, "other"},
};
static_assert(support::names_every_value(kToolKindNames, ToolKind::other));

std::span<const support::EnumName<ToolKind>> enum_names(ToolKind) noexcept { return kToolKindNames; }

std::string_view tool_kind_name(ToolKind kind) noexcept { return support::enum_name(kind, "other"); }

ToolKind parse_tool_kind(std::string_view name) noexcept {
  return support::enum_from_name<ToolKind>(name).value_or(ToolKind::other);
}

boost::asio::awaitable<support::Result<Tool::Resolved>> Tool::resolve(support::Json input, ToolContext& /*context*/) {
  co_return Resolved{std::move(input), std::nullopt};
}

RiskAssessment Tool::assess(const support::Json& /*input*/, const ToolContext& /*context*/) const {
  return {spec().base_risk, {}};
}

std::string Tool::describe(const support::Json& /*input*/, const ToolContext& /*context*/) const { return {}; }

std::string Tool::title(const support::Json& /*input*/, const ToolContext& /*context*/) const { return spec().name; }

std::vector<std::string> Tool::locations(const support::Json& /*input*/, const ToolContext& /*context*/) const {
  return {};
}

namespace {

constexpr std::size_t kDiffContextLines = 3;

// The first `bytes` of `text` or less, ending at a line end when there is one.
std::string_view head_lines(std::string_view text, std::size_t bytes) {
  if (text.size() <= bytes) return text;
  const std::size_t nl = text.rfind('\n', bytes - 1);
  return text.substr(0, nl == std::string_view::npos ? bytes : nl + 1);
}

}  // namespace

ToolDiff client_diff(std::string path, std::optional<std::string_view> old_text, std::string_view new_text) {
  ToolDiff diff;
  diff.path = std::move(path);
  const std::string_view old_view = old_text.value_or(std::string_view());
  if (old_view.size() + new_text.size() <= kWholeDiffBytes) {
    if (old_text) diff.old_text = std::string(*old_text);
    diff.new_text = std::string(new_text);
    return diff;
  }
  // The common head and tail of the two texts, each a whole number of lines, are left out.
  const std::size_t shorter = std::min(old_view.size(), new_text.size());
  const std::size_t head = common_prefix_bytes(old_view, new_text);
  const std::size_t tail = common_suffix_bytes(old_view, new_text, shorter - head);
  const std::size_t start = std::min(line_start_before(old_view, head, kDiffContextLines),
                                     line_start_before(new_text, head, kDiffContextLines));
  // The tail kept is the same bytes in both texts, so it ends both excerpts at the same line.
  std::size_t old_end = line_end_after(old_view, old_view.size() - tail, kDiffContextLines);
  const std::size_t tail_kept = old_view.size() - old_end;
  const std::size_t new_end = new_text.size() - tail_kept;
  old_end = std::max(old_end, start);
  std::string_view old_part = old_view.substr(start, old_end - start);
  std::string_view new_part = new_text.substr(start, std::max(new_end, start) - start);
  if (old_part.size() + new_part.size() > kWholeDiffBytes) {
    old_part = head_lines(old_part, kWholeDiffBytes / 2);
    new_part = head_lines(new_part, kWholeDiffBytes / 2);
    diff.cut = true;
  }
  diff.first_line = 1;
  support::for_each_slice(old_view.substr(0, start), [&diff](std::string_view slice) {
    diff.first_line += static_cast<std::size_t>(std::count(slice.begin(), slice.end(), '\n'));
  });
  if (old_text) diff.old_text = std::string(old_part);
  diff.new_text = std::string(new_part);
  return diff;
}

boost::asio::awaitable<std::vector<ToolDiff>> Tool::preview(const support::Json& /*input*/,
                                                            const ToolContext& /*context*/) const {
  co_return std::vector<ToolDiff>{};
}

boost::asio::awaitable<support::Result<void>> FileAccess::write_text(std::string path, std::string /*text*/,
                                                                     support::CancelToken /*cancel*/) {
  co_return support::make_error(support::Errc::unsupported, "{} cannot be written through the editor here", path);
}

support::Result<void> ToolRegistry::add(std::shared_ptr<Tool> tool) {
  if (tool == nullptr) return support::Error(support::Errc::invalid_argument, "cannot register a null tool");
  const std::string& name = tool->spec().name;
  if (!valid_tool_name(name)) {
    return support::make_error(support::Errc::invalid_argument,
                               "tool name \"{}\" is invalid: use 1-64 characters from A-Z, a-z, 0-9, '_' and '-'",
                               name);
  }
  if (find(name) != nullptr) {
    return support::make_error(support::Errc::conflict, "a tool named \"{}\" is already registered", name);
  }
  tools_.push_back(std::move(tool));
  return support::ok();
}

void ToolRegistry::remove(std::string_view name) {
  std::erase_if(tools_, [name](const std::shared_ptr<Tool>& tool) { return tool->spec().name == name; });
}

std::shared_ptr<Tool> ToolRegistry::find(std::string_view name) const {
  const auto it = std::find_if(tools_.begin(), tools_.end(),
                               [name](const std::shared_ptr<Tool>& tool) { return tool->spec().name == name; });
  return it == tools_.end() ? nullptr : *it;
}

std::vector<std::string> ToolRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(tools_.size());
  for (const auto& tool : tools_) out.push_back(tool->spec().name);
  return out;
}

std::vector<const ToolSpec*> ToolRegistry::specs() const {
  std::vector<const ToolSpec*> out;
  out.reserve(tools_.size());
  for (const auto& tool : tools_) out.push_back(&tool->spec());
  return out;
}

}  // namespace agentd::tools
