#include "tools/builtin/builtin_tools.h"

#include "tools/builtin/shell.h"

namespace agentd::tools {

support::Result<void> register_builtin_tools(ToolRegistry& registry) {
  return register_builtin_tools(registry, ShellConfig{});
}

support::Result<void> register_builtin_tools(ToolRegistry& registry, const ShellConfig& shell) {
  for (auto make : {&make_read_file_tool, &make_list_dir_tool, &make_glob_tool, &make_grep_tool, &make_write_file_tool,
                    &make_edit_file_tool, &make_todo_write_tool}) {
    auto added = registry.add(make());
    if (!added) return added;
  }
  return registry.add(make_shell_tool(shell));  // last: the riskiest tool
}

}  // namespace agentd::tools
