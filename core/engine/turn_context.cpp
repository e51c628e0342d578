#include "core/engine/turn_context.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "core/context/retrieve.h"
#include "tools/ignore.h"
#include "tools/path_guard.h"

namespace agentd::core {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Skills and facts are small next to the window; these shares keep them from crowding out history.
std::uint64_t skills_budget(std::uint64_t window) { return std::clamp<std::uint64_t>(window / 25, 500, 8000); }
std::uint64_t facts_budget(std::uint64_t window) { return std::clamp<std::uint64_t>(window / 100, 200, 2000); }

}  // namespace

std::string workspace_root_of(const std::string& cwd) { return memory::find_workspace_root(cwd).string(); }

TurnContext gather_turn_context(const TurnContextRequest& request, context::WorkspaceIndex& index,
                                const support::CancelToken& cancel) {
  TurnContext out;
  out.workspace_root = workspace_root_of(request.cwd);
  out.input = request.input;
  support::SpanBuffer spans;

  auto start = Clock::now();
  support::Span step = spans.start("instructions.load");
  memory::InstructionOptions instruction_options;
  instruction_options.cwd = request.cwd;
  instruction_options.root = out.workspace_root;
  {
    // A deny-listed file (built in or configured, or a `read(...)` deny rule) is never pinned, whatever
    // the name of the link that leads to it.
    auto guard =
        std::make_shared<tools::PathGuard>(out.workspace_root, std::vector<std::string>{}, request.denied_paths);
    instruction_options.refuse_project_file = [guard, rules = request.denied_reads,
                                               cwd = std::filesystem::path(request.cwd)](
                                                  const std::filesystem::path& absolute) -> std::optional<std::string> {
      if (auto denied =
              tools::denied_path(guard->relative_to_root(absolute), tools::PathAccess::read, guard->denied())) {
        return fmt::format("it is {} ({})", denied->pattern, denied->reason);
      }
      const std::string shown = tools::lexical_display(absolute.string(), cwd);
      for (const std::string& pattern : rules) {
        if (tools::wildmatch(pattern, shown, true)) return fmt::format("a read({}) deny rule covers it", pattern);
      }
      return std::nullopt;
    };
  }
  out.instructions = memory::load_instructions(instruction_options);
  out.instructions_text = memory::render_instructions(out.instructions);
  out.instructions_ms = ms_since(start);
  step.set_attribute("files", static_cast<std::uint64_t>(out.instructions.files.size()));
  step.end();

  start = Clock::now();
  step = spans.start("skill.select");
  skills::SkillLocations locations = skills::default_locations(out.workspace_root);
  locations.reserved_names = request.reserved_names;
  out.skills = skills::load_skills(locations);
  std::string_view match_text = request.input;
  if (auto invocation = skills::parse_skill_invocation(out.skills, request.input)) out.input = invocation->rest;
  skills::SkillSelectionOptions skill_options;
  skill_options.token_budget = skills_budget(request.context_window);
  out.skill_selection = skills::select_skills(out.skills, match_text, skill_options);
  out.skills_text = skills::render_selection(out.skills, out.skill_selection);
  out.skills_ms = ms_since(start);
  step.set_attribute("skills", static_cast<std::uint64_t>(out.skills.skills.size()));
  {
    support::Json selected = support::Json::array();
    for (auto& name : out.skill_selection.selected_names()) selected.push_back(std::move(name));
    step.set_attribute("selected", std::move(selected));
  }
  step.end();

  start = Clock::now();
  step = spans.start("memory.select");
  memory::FactSelectionOptions fact_options;
  fact_options.token_budget = facts_budget(request.context_window);
  out.facts = request.facts;
  out.fact_selection = memory::select_facts(out.facts, out.input, fact_options);
  out.facts_text = memory::render_facts(out.facts, out.fact_selection);
  out.facts_ms = ms_since(start);
  step.set_attribute("facts", static_cast<std::uint64_t>(out.facts.size()));
  step.end();

  start = Clock::now();
  step = spans.start("verify.discover");
  out.verification = plan_verification(request.cwd, {});
  out.verification_text = render_verification_context(out.verification);
  out.verification_ms = ms_since(start);
  step.end();

  if (!request.retrieve) {
    out.spans = spans.records();
    return out;
  }
  start = Clock::now();
  step = spans.start("context.workspace");
  context::ContextRequest retrieval;
  retrieval.cwd = request.cwd;
  retrieval.additional_dirs = request.additional_dirs;
  retrieval.input = out.input;
  retrieval.token_budget = context::context_token_budget(request.context_window);
  retrieval.deny_paths = request.denied_paths;
  if (!request.denied_paths.empty() || !request.denied_reads.empty()) {
    // What the read tools may not read, evidence may not show: deny-paths, and `read(...)` deny rules
    // matched as rules match paths (relative to the cwd, else absolute).
    auto guard = std::make_shared<tools::PathGuard>(request.cwd, request.additional_dirs, request.denied_paths);
    retrieval.denied = [guard, rules = request.denied_reads,
                        cwd = std::filesystem::path(request.cwd)](const std::string& absolute) {
      if (tools::denied_path(guard->relative_to_root(absolute), tools::PathAccess::read, guard->denied())) return true;
      if (rules.empty()) return false;
      const std::string shown = tools::lexical_display(absolute, cwd);
      return std::any_of(rules.begin(), rules.end(),
                         [&](const std::string& pattern) { return tools::wildmatch(pattern, shown, true); });
    };
  }
  retrieval.trace = &step;
  auto package = context::retrieve_context(retrieval, index, cancel);
  if (package) {
    out.package = std::move(*package);
    step.set_attribute("files", static_cast<std::uint64_t>(out.package->evidence.size()));
  } else {
    out.retrieval_note = package.error().message();
    step.set_status(package.error().code() == support::Errc::cancelled ? support::SpanStatus::cancelled
                                                                       : support::SpanStatus::error,
                    package.error().message());
  }
  out.retrieve_ms = ms_since(start);
  step.end();
  out.spans = spans.records();
  return out;
}

std::string render_system_prompt(std::string_view rules, const TurnContext* context, std::string_view summary,
                                 const std::string& cwd, const std::vector<std::string>& additional_dirs) {
  std::string system(rules);
  system += "\n\n# Workspace\n";
  system += fmt::format("Working directory: {}\n", cwd);
  for (const auto& dir : additional_dirs) system += fmt::format("Additional directory: {}\n", dir);
  system += "Platform: linux\n";
  if (context != nullptr && !context->instructions_text.empty()) {
    system += "\n";
    system += context->instructions_text;
  }
  if (context != nullptr && !context->verification_text.empty()) {
    system += "\n# Verification\n";
    system += context->verification_text;
  }
  if (!summary.empty()) {
    system += "\n";
    system += summary;
  }
  return system;
}

std::vector<std::string> render_turn_preamble(const TurnContext& context) {
  std::vector<std::string> parts;
  if (!context.skills_text.empty()) parts.push_back(context.skills_text);
  if (!context.facts_text.empty()) parts.push_back(context.facts_text);
  if (context.package && !context.package->text.empty()) parts.push_back(context.package->text);
  return parts;
}

support::Json turn_context_json(const TurnContext& context, std::string_view system_prompt) {
  using support::Json;
  Json out = Json::object();
  out["workspaceRoot"] = context.workspace_root;
  out["input"] = context.input;
  out["context"] = context.package ? context::to_json(*context.package) : Json();
  if (!context.retrieval_note.empty()) out["contextError"] = context.retrieval_note;

  Json instructions = Json::array();
  for (const auto& file : context.instructions.files) {
    Json f = Json::object();
    f["path"] = file.path;
    f["scope"] = std::string(memory::instruction_scope_name(file.scope));
    f["bytes"] = file.file_bytes;
    f["cut"] = file.cut;
    if (!file.note.empty()) f["note"] = file.note;
    instructions.push_back(std::move(f));
  }
  out["instructions"] = std::move(instructions);
  // Files found and left out (a link out of the workspace, a deny-listed target, unreadable, the same file
  // twice) or cut, in words.
  Json notes = Json::array();
  for (const auto& note : context.instructions.notes) notes.push_back(note);
  out["instructionNotes"] = std::move(notes);
  out["verification"] = to_json(context.verification);

  Json skills = Json::array();
  for (const auto& d : context.skill_selection.decisions) {
    Json s = Json::object();
    s["name"] = d.name;
    s["path"] = d.path;
    s["verdict"] = std::string(skills::skill_verdict_name(d.verdict));
    s["score"] = d.score;
    s["reason"] = d.reason;
    s["tokens"] = d.tokens;
    skills.push_back(std::move(s));
  }
  out["skills"] = std::move(skills);

  Json facts = Json::array();
  for (const auto& d : context.fact_selection.decisions) {
    Json f = Json::object();
    f["id"] = d.id;
    f["verdict"] = std::string(memory::fact_verdict_name(d.verdict));
    f["score"] = d.score;
    f["reason"] = d.reason;
    facts.push_back(std::move(f));
  }
  out["facts"] = std::move(facts);

  Json texts = Json::object();
  texts["system"] = std::string(system_prompt);
  Json preamble = Json::array();
  for (auto& part : render_turn_preamble(context)) preamble.push_back(std::move(part));
  texts["preamble"] = std::move(preamble);
  out["request"] = std::move(texts);
  Json timings = Json::object();
  timings["instructionsMs"] = context.instructions_ms;
  timings["skillsMs"] = context.skills_ms;
  timings["factsMs"] = context.facts_ms;
  timings["retrieveMs"] = context.retrieve_ms;
  timings["verificationMs"] = context.verification_ms;
  out["timings"] = std::move(timings);
  return out;
}

}  // namespace agentd::core
