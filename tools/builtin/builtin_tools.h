// The builtin tools and the factory that registers them. Each tool reads and writes only through the
// PathGuard and records what the model saw in the session's FileState.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/support/result.h"
#include "tools/tool.h"

namespace agentd::tools {

// Output caps for read_file: past either, the result says which offset to read on from.
inline constexpr std::size_t kReadFileMaxLines = 2000;
inline constexpr std::size_t kReadFileMaxBytes = std::size_t{256} << 10;
// A longer line (minified code, data) is cut; its line number still tells the model where it is.
inline constexpr std::size_t kReadFileMaxLineBytes = 2000;
// Binary sniffing looks for a NUL byte this far into the file, as git and grep do.
inline constexpr std::size_t kBinarySniffBytes = std::size_t{8} << 10;
// list_dir shows at most this many entries and says how many it left out.
inline constexpr std::size_t kListDirMaxEntries = 1000;
// glob shows at most this many paths and says how many it left out.
inline constexpr std::size_t kGlobMaxResults = 500;
// grep shows at most this much output (and says how many matches it left out), lines cut to this length.
inline constexpr std::size_t kGrepMaxOutputBytes = std::size_t{32} << 10;
inline constexpr std::size_t kGrepMaxLineBytes = 500;
// shell: the timeout when a call gives none, the most one may ask for, and the output the result keeps.
inline constexpr std::int64_t kShellDefaultTimeoutMs = 120000;
inline constexpr std::int64_t kShellMaxTimeoutMs = 600000;
inline constexpr std::size_t kShellOutputHeadBytes = std::size_t{16} << 10;
inline constexpr std::size_t kShellOutputTailBytes = std::size_t{16} << 10;

std::shared_ptr<Tool> make_read_file_tool();
std::shared_ptr<Tool> make_list_dir_tool();
std::shared_ptr<Tool> make_glob_tool();
std::shared_ptr<Tool> make_write_file_tool();
std::shared_ptr<Tool> make_edit_file_tool();
std::shared_ptr<Tool> make_todo_write_tool();
std::shared_ptr<Tool> make_grep_tool();
std::shared_ptr<Tool> make_shell_tool();  // with ShellConfig's defaults; tools/builtin/shell.h takes a config

struct ShellConfig;  // tools/builtin/shell.h

// Adds read_file, list_dir, glob, grep, write_file, edit_file, todo_write and shell, in that order; shell with `shell`
// (timeouts, sandbox policy, environment), or with ShellConfig's defaults. Fails only if a name is taken.
support::Result<void> register_builtin_tools(ToolRegistry& registry);
support::Result<void> register_builtin_tools(ToolRegistry& registry, const ShellConfig& shell);

}  // namespace agentd::tools
