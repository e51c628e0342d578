// Pinned project instructions: AGENTS.md (and CLAUDE.md beside it) in every directory from the workspace
// root down to the cwd, plus the user's own ~/.config/agentd/AGENTS.md. Their bytes go into every request
// exactly as they are on disk, and compaction never summarizes them; only a size cap may cut one, and then
// the cut is said, not hidden.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/enum_names.h"

namespace agentd::core::memory {

// agentd's per-user configuration directory: $XDG_CONFIG_HOME/agentd when that is an absolute path, else
// $HOME/.config/agentd; empty when neither is set. The overload reads the process environment.
std::filesystem::path user_config_dir(std::string_view xdg_config_home, std::string_view home);
std::filesystem::path user_config_dir();

// The workspace root for `cwd`: the nearest ancestor (or cwd itself) holding `.git` (a directory, or a
// file as in worktrees and submodules); cwd when there is none.
std::filesystem::path find_workspace_root(const std::filesystem::path& cwd);

enum class InstructionScope { user, project };
std::string_view instruction_scope_name(InstructionScope scope) noexcept;
std::span<const support::EnumName<InstructionScope>> enum_names(InstructionScope) noexcept;

struct InstructionFile {
  std::string path;  // absolute
  InstructionScope scope = InstructionScope::project;
  std::string text;              // the file's bytes, unchanged; a prefix of them when cut
  std::uint64_t file_bytes = 0;  // the file's whole size
  bool cut = false;              // text holds fewer bytes than the file
  std::string note;              // why it was cut; empty when it was not
  std::uint64_t tokens() const;  // estimate of text
};

struct InstructionOptions {
  std::filesystem::path cwd;
  std::optional<std::filesystem::path> root;       // default: find_workspace_root(cwd)
  std::optional<std::filesystem::path> user_file;  // default: user_config_dir()/AGENTS.md; empty: none
  std::size_t max_file_bytes = 64 * 1024;          // per file
  std::size_t max_total_bytes = 128 * 1024;        // all files together, in the order below
  // A project's file is a stranger's: one that resolves (through symlinks) outside the workspace root is
  // always left out, and so is one this returns a reason for (deny-paths such as `.env`: a link named
  // AGENTS.md must not carry a secret into every request). Given the resolved absolute path.
  std::function<std::optional<std::string>(const std::filesystem::path&)> refuse_project_file;
};

struct Instructions {
  std::filesystem::path root;
  // General to specific, so later files refine earlier ones: the user's file, then each directory from the
  // root down to the cwd, AGENTS.md before CLAUDE.md within one.
  std::vector<InstructionFile> files;
  // Files found but left out (unreadable, the same file twice) or cut, in words.
  std::vector<std::string> notes;
  std::uint64_t bytes() const;
};

// Reads the files; never fails (what cannot be read is a note). Files over the caps are cut at a line end
// when one is close, else at a UTF-8 character boundary; files after the total cap is used up are left out.
Instructions load_instructions(const InstructionOptions& options);

// The pinned text for a model request: a short preface, then each file's bytes between markers that name
// its path, verbatim. Empty when there are no files.
std::string render_instructions(const Instructions& instructions);

}  // namespace agentd::core::memory
