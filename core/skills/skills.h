// Skills: procedures in `<dir>/SKILL.md` files (YAML front matter with `name` and `description`, then
// the procedure) found under the project's `.agents/skills/` and `.claude/skills/` and the user's
// `~/.config/agentd/skills/`. Each turn selects the relevant ones by the input within a token budget,
// or the one the user forces with `/<skill-name>`, and keeps why each was or was not chosen for /skills.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/enum_names.h"
#include "core/support/result.h"

namespace agentd::core::skills {

// Where a skill came from, in precedence order: the first wins when two share a name.
enum class SkillSource { project_agents, project_claude, user };
std::string_view skill_source_name(SkillSource source) noexcept;  // ".agents/skills", ".claude/skills", "user"
std::span<const support::EnumName<SkillSource>> enum_names(SkillSource) noexcept;

struct Skill {
  std::string name;         // from the front matter; what `/<name>` forces
  std::string description;  // when to use it: what the input is matched against, with the name
  std::string body;         // the procedure, the file's bytes after the front matter
  std::string path;         // the SKILL.md file
  SkillSource source = SkillSource::project_agents;
  std::uint64_t tokens = 0;  // estimate of render_skill(*this)
};

struct SkillDiagnostic {
  std::string path;
  std::string message;  // "line 3: `description` is missing"
};

struct ShadowedSkill {
  std::string name;
  std::string kept_path;      // the skill that is used
  std::string shadowed_path;  // the one hidden by it
};

struct SkillCatalog {
  std::vector<Skill> skills;                 // by name
  std::vector<SkillDiagnostic> diagnostics;  // files refused, with why
  std::vector<ShadowedSkill> shadowed;
  const Skill* find(std::string_view name) const noexcept;
};

struct SkillLocations {
  std::filesystem::path project;  // the workspace root; empty: no project skills
  // agentd's user config dir (memory::user_config_dir()); its skills/ subdirectory is searched. Empty: none.
  std::filesystem::path user_config_dir;
  // Names a skill may not take because a builtin slash command has them (/help, /compact, ...).
  std::vector<std::string> reserved_names;
  std::size_t max_file_bytes = 256 * 1024;
};

// The locations for a workspace, with the user dir from the environment ($XDG_CONFIG_HOME, $HOME).
SkillLocations default_locations(const std::filesystem::path& workspace_root);

// Reads every `<location>/*/SKILL.md`; never fails: a file that cannot be used is a diagnostic.
SkillCatalog load_skills(const SkillLocations& locations);

// Parses one SKILL.md. Errors (invalid_argument) name the line: no front matter, an unclosed one, a
// malformed line, a missing or empty name or description, a name that is not [A-Za-z0-9][A-Za-z0-9._-]*
// (at most 64 bytes), text that is not UTF-8.
support::Result<Skill> parse_skill(std::string_view text, std::string path, SkillSource source);

// The skill as it goes into a request (the "selected skills" part of the prompt).
std::string render_skill(const Skill& skill);

enum class SkillVerdict { selected, forced, not_relevant, over_budget };
std::string_view skill_verdict_name(SkillVerdict verdict) noexcept;
std::span<const support::EnumName<SkillVerdict>> enum_names(SkillVerdict) noexcept;

struct SkillDecision {
  std::string name;
  std::string path;
  double score = 0;
  SkillVerdict verdict = SkillVerdict::not_relevant;
  std::string reason;  // "selected (score 5): name: release, notes; description: changelog"
  std::uint64_t tokens = 0;
};

struct SkillSelectionOptions {
  std::uint64_t token_budget = 8000;
  // A name word counts 3, a description word 1 (less when other skills share it), the whole name written
  // in the input 3 more: 2 means a name word, or two description words.
  double min_score = 2.0;
};

struct SkillSelection {
  std::string input;                     // the text matched (after a forcing `/<name>`)
  std::optional<std::string> forced;     // the skill forced with /<name>
  std::vector<SkillDecision> decisions;  // every skill: forced, then by score (ties by name)
  std::uint64_t tokens_used = 0;
  std::uint64_t token_budget = 0;
  std::vector<std::string> selected_names() const;  // forced first, then by score
};

// "/release-notes draft them" -> {"release-notes", "draft them"} when the catalog has that skill;
// nullopt otherwise (not a slash, an unknown name: the caller's other slash commands may take it).
struct SkillInvocation {
  std::string name;
  std::string rest;
};
std::optional<SkillInvocation> parse_skill_invocation(const SkillCatalog& catalog, std::string_view input);

// Ranks every skill against the input (what follows a forcing `/<name>`); the forced skill is always
// selected, even over the budget (the user asked for it), and the others share what budget is left.
SkillSelection select_skills(const SkillCatalog& catalog, std::string_view input, const SkillSelectionOptions& options);

// The selected skills' text for the request, forced first; empty when none.
std::string render_selection(const SkillCatalog& catalog, const SkillSelection& selection);

// The reply to /skills: each skill (source, description, and why it was or was not selected in `last`),
// then the shadowed and the refused files.
std::string skills_report(const SkillCatalog& catalog, const SkillSelection* last);

}  // namespace agentd::core::skills
