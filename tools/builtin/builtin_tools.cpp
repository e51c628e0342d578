#include "tools/builtin/builtin_tools.h"

namespace agentd::tools {

support::Result<void> register_builtin_tools(ToolRegistry& registry) {
  for (auto make : {&make_read_file_tool, &make_list_dir_tool, &make_write_file_tool}) {
    auto added = registry.add(make());
    if (!added) return added;
  }
  return support::ok();
}

}  // namespace agentd::tools
