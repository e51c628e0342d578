// todo_write: the model's plan for a task of several steps, as one whole list each time. The engine sends
// the list to the client as ACP's `plan` update (Zed and JetBrains draw it as a checklist) and keeps it in
// the session's event log, so session/load shows it again. Nothing on disk changes, so it needs no
// permission, in any mode (plan mode included: planning is what that mode is for).
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tools/builtin/builtin_tools.h"
#include "tools/builtin/common.h"

namespace agentd::tools {
namespace builtin {
namespace {

using support::Json;

constexpr std::size_t kMaxEntries = 50;
constexpr std::size_t kMaxContentBytes = 500;

const std::string& schema_text() {
  static const std::string kText = fmt::format(R"({{
  "type": "object",
  "properties": {{
    "todos": {{
      "type": "array", "maxItems": {},
      "description": "The whole plan, in order: every entry each time, not just the changed ones. An empty list clears it.",
      "items": {{
        "type": "object",
        "properties": {{
          "content": {{"type": "string", "minLength": 1, "maxLength": {},
                       "description": "What the step does, in a few words the user understands."}},
          "status": {{"type": "string", "enum": ["pending", "in_progress", "completed"]}},
          "priority": {{"type": "string", "enum": ["high", "medium", "low"],
                        "description": "Default medium."}}
        }},
        "required": ["content", "status"],
        "additionalProperties": false
      }}
    }}
  }},
  "required": ["todos"],
  "additionalProperties": false
}})",
                                               kMaxEntries, kMaxContentBytes);
  return kText;
}

std::string_view mark(PlanStatus status) {
  switch (status) {
    case PlanStatus::pending: return "[ ]";
    case PlanStatus::in_progress: return "[>]";
    case PlanStatus::completed: return "[x]";
  }
  return "[ ]";
}

class TodoWriteTool final : public Tool {
 public:
  TodoWriteTool() {
    spec_.name = "todo_write";
    spec_.description =
        "Keep a visible plan for a task of three or more steps: the whole list each time, with each entry's status "
        "(pending, in_progress, completed). The user sees it as a checklist. Mark a step in_progress before "
        "you start it (one at a time) and completed as soon as it is done. Not for a one-step request.";
    spec_.input_schema = support::parse_json(schema_text()).value();
    spec_.kind = ToolKind::think;
    spec_.base_risk = Risk::none;
  }

  const ToolSpec& spec() const override { return spec_; }

  std::string title(const Json& input, const ToolContext& /*context*/) const override {
    const Json* todos = input.find("todos");
    const std::size_t n = todos != nullptr && todos->is_array() ? todos->size() : 0;
    return n == 0 ? std::string("Clear the plan") : fmt::format("Plan: {} step{}", n, n == 1 ? "" : "s");
  }

  boost::asio::awaitable<support::Result<ToolResult>> run(Json input, ToolContext& /*context*/) override {
    if (auto invalid = check_input(spec_, input)) co_return std::move(*invalid);
    std::vector<PlanItem> plan;
    std::size_t in_progress = 0;
    std::size_t completed = 0;
    for (const Json& entry : input["todos"].as_array()) {
      PlanItem item;
      item.content = entry["content"].as_string();
      // The schema's enums hold, so the names parse.
      item.status = support::enum_from_name<PlanStatus>(entry["status"].as_string()).value_or(PlanStatus::pending);
      if (const Json* priority = entry.find("priority"); priority != nullptr) {
        item.priority = support::enum_from_name<PlanPriority>(priority->as_string()).value_or(PlanPriority::medium);
      }
      in_progress += item.status == PlanStatus::in_progress ? 1 : 0;
      completed += item.status == PlanStatus::completed ? 1 : 0;
      plan.push_back(std::move(item));
    }

    ToolResult result;
    if (plan.empty()) {
      result.summary = "Plan cleared";
      result.content = "The plan is now empty.";
    } else {
      result.summary = fmt::format("Plan: {} of {} done", completed, plan.size());
      result.content = fmt::format("The plan now ({} done, {} in progress, {} to do):", completed, in_progress,
                                   plan.size() - completed - in_progress);
      for (const auto& item : plan) result.content += fmt::format("\n{} {}", mark(item.status), item.content);
      // Advice, not a refusal: the list is stored as given.
      if (in_progress > 1) {
        result.content += fmt::format(
            "\nNote: {} steps are in_progress; keep one in_progress at a time so the user sees what runs now.",
            in_progress);
      }
    }
    result.metadata.set("entries", static_cast<std::uint64_t>(plan.size()));
    result.metadata.set("completed", static_cast<std::uint64_t>(completed));
    result.plan = std::move(plan);
    co_return result;
  }

 private:
  ToolSpec spec_;
};

}  // namespace
}  // namespace builtin

std::shared_ptr<Tool> make_todo_write_tool() { return std::make_shared<builtin::TodoWriteTool>(); }

}  // namespace agentd::tools
