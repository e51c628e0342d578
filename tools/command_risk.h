// What a shell command line does beyond running a program, read from its parsed simple commands
// (tools/shell_command.h): reaches the network (`curl`, `git push`, package installs), deletes a tree
// (`rm -r`, `find -delete`, `git clean`), runs code it downloads (`curl ... | sh`), changes permissions
// or ownership or runs as another user (`chmod`, `sudo`), or names a path outside the workspace. This is
// the seed's assessToolRisk(tool, input) for tools that execute: a reading for the permission policy and
// the prompt, not a boundary (the sandbox is the boundary). Text in, no I/O.
#pragma once

#include <filesystem>
#include <span>

#include "tools/shell_command.h"
#include "tools/tool.h"

namespace agentd::tools {

// The flags found (never `execute` itself) with one reason per flag naming the command that earned it.
// `cwd` is where the line runs and `roots` the workspace's directories (absolute, lexically normal); `home`
// is what `~` stands for ("" when unknown: then `~` counts as outside).
RiskAssessment assess_command_line(const ShellCommandLine& line, const std::filesystem::path& cwd,
                                   std::span<const std::filesystem::path> roots, const std::filesystem::path& home);

}  // namespace agentd::tools
