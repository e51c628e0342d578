// What a turn adds to the model's view besides the conversation: the pinned project instructions
// (AGENTS.md, CLAUDE.md), the selected skills, the remembered facts and the workspace context package.
// Gathered once per turn, off the event loop (it reads files, runs git and greps), by one blocking
// function, and rendered here in the one order the requests use.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/context/context_package.h"
#include "core/context/workspace_index.h"
#include "core/engine/verification.h"
#include "core/memory/facts.h"
#include "core/memory/instructions.h"
#include "core/skills/skills.h"
#include "core/support/cancel.h"
#include "core/support/json.h"
#include "core/support/trace.h"

namespace agentd::core {

struct TurnContextRequest {
  std::string cwd;  // absolute
  std::vector<std::string> additional_dirs;
  std::string input;                        // the user's text, as typed (a leading /<skill> included)
  std::uint64_t context_window = 200000;    // the model's, for the budgets
  std::vector<std::string> denied_paths;    // permissions.denyPaths of the project
  std::vector<std::string> denied_reads;    // patterns of `read(...)` deny rules, relative to cwd
  std::vector<memory::Fact> facts;          // the project's stored facts
  bool retrieve = true;                     // false: skip the workspace search (a slash-only preview)
  std::vector<std::string> reserved_names;  // builtin slash commands: no skill may take these names
};

struct TurnContext {
  std::string workspace_root;  // where AGENTS.md files are looked for from, and the facts' project key
  memory::Instructions instructions;
  std::string instructions_text;  // pinned: verbatim, never summarized
  skills::SkillCatalog skills;
  skills::SkillSelection skill_selection;
  std::string skills_text;
  std::vector<memory::Fact> facts;  // the project's, as read for this turn
  memory::FactSelection fact_selection;
  std::string facts_text;
  std::optional<context::ContextPackage> package;
  std::string retrieval_note;  // why there is no package (an error, cancelled), else empty
  // How the project verifies itself (discovered commands, the default suggestion), and its text in the
  // system prompt: stable while the manifests are, so it does not break the provider's cache.
  VerificationPlan verification;
  std::string verification_text;
  std::string input;  // the user's text with a forcing `/<skill>` taken off
  // The steps above as spans (instructions.load, skill.select, memory.select, verify.discover,
  // context.workspace with the retrieval's own steps), recorded off the loop; the turn's
  // context.retrieve span adopts them.
  std::vector<support::SpanRecord> spans;
  double instructions_ms = 0;
  double skills_ms = 0;
  double facts_ms = 0;
  double retrieve_ms = 0;
  double verification_ms = 0;
};

// The workspace root of a cwd (the nearest ancestor with .git, else the cwd): the project whose facts
// a session shares.
std::string workspace_root_of(const std::string& cwd);

// Blocking: reads the instruction files and skills, selects skills and facts, and retrieves the
// workspace context. Never fails; a retrieval that fails or is cancelled leaves `package` empty and says
// why in `retrieval_note`.
TurnContext gather_turn_context(const TurnContextRequest& request, context::WorkspaceIndex& index,
                                const support::CancelToken& cancel);

// The system prompt: the built-in rules, the pinned instructions, the project's verification commands,
// then the summary of compacted turns
// (empty when none). The stable prefix of every request of a session (the provider caches it).
std::string render_system_prompt(std::string_view rules, const TurnContext* context, std::string_view summary,
                                 const std::string& cwd, const std::vector<std::string>& additional_dirs);

// What precedes the user's input in the turn's user message, in this order: selected skills, remembered
// facts, the workspace context package. One text per part; empty parts are left out.
std::vector<std::string> render_turn_preamble(const TurnContext& context);

// `_agentd/context/preview`: the package (context::to_json), the skills and facts chosen, the pinned
// instruction files, and the exact texts a request would carry.
support::Json turn_context_json(const TurnContext& context, std::string_view system_prompt);

}  // namespace agentd::core
