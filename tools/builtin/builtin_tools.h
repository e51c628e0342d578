// The builtin tools and the factory that registers them. Each tool reads and writes only through the
// PathGuard and records what the model saw in the session's FileState.
#pragma once

#include <cstddef>
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

std::shared_ptr<Tool> make_read_file_tool();
std::shared_ptr<Tool> make_list_dir_tool();
std::shared_ptr<Tool> make_write_file_tool();

// Adds read_file, list_dir and write_file, in that order. Fails only if a name is already taken.
support::Result<void> register_builtin_tools(ToolRegistry& registry);

}  // namespace agentd::tools
