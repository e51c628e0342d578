// list_dir: the entries of one directory, sorted, so the model can find its way before it reads.
// Gitignore filtering arrives with the ignore-rules part of the Tools issue; until then only `.git` is
// skipped (its internals are noise to the model and can be huge).
#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "tools/builtin/builtin_tools.h"
#include "tools/builtin/common.h"
#include "tools/path_guard.h"

namespace agentd::tools {
namespace builtin {
namespace {

namespace fs = std::filesystem;
using support::Errc;
using support::Json;

constexpr std::string_view kSchema = R"({
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1,
             "description": "The directory to list: relative to the working directory, or absolute inside it. Default: the working directory."}
  },
  "additionalProperties": false
})";

// How often the listing loop looks at the cancel token: cheap enough, and a huge directory still stops.
constexpr std::size_t kCancelCheckEvery = 256;

// "name/" for a directory, "name -> target" for a symlink (the model may not follow it outside), "name"
// otherwise.
std::string describe_entry(const fs::directory_entry& entry) {
  std::string name = entry.path().filename().string();
  std::error_code ec;
  const fs::file_status status = entry.symlink_status(ec);
  if (!ec && fs::is_symlink(status)) {
    const fs::path target = fs::read_symlink(entry.path(), ec);
    return ec ? name + " -> ?" : fmt::format("{} -> {}", name, target.string());
  }
  if (!ec && fs::is_directory(status)) name += '/';
  return name;
}

class ListDirTool final : public Tool {
 public:
  ListDirTool() {
    spec_.name = "list_dir";
    spec_.description = fmt::format(
        "List one directory: entries sorted by name, directories end in '/', symlinks show their target, hidden "
        "files included, .git left out. At most {} entries are shown.",
        kListDirMaxEntries);
    spec_.input_schema = support::parse_json(kSchema).value();
    spec_.kind = ToolKind::read;
    spec_.base_risk = Risk::read;
  }

  const ToolSpec& spec() const override { return spec_; }

  std::string title(const Json& input, const ToolContext& context) const override {
    return "List " + lexical_display(string_field(input, "path", "."), context.cwd);
  }

  std::vector<std::string> locations(const Json& input, const ToolContext& context) const override {
    auto resolved = PathGuard(context).resolve(string_field(input, "path", "."), PathAccess::read);
    if (!resolved) return {};
    return {resolved->absolute.string()};
  }

  boost::asio::awaitable<support::Result<ToolResult>> run(Json input, ToolContext& context) override {
    if (auto invalid = check_input(spec_, input)) co_return std::move(*invalid);
    if (context.cancel.cancelled()) co_return support::Error(Errc::cancelled, "list_dir cancelled");

    auto resolved = PathGuard(context).resolve(string_field(input, "path", "."), PathAccess::read);
    if (!resolved) co_return ToolResult::failure(resolved.error().message());
    const fs::path& directory = resolved->absolute;
    const std::string& shown = resolved->display;

    std::error_code ec;
    const fs::file_status status = fs::status(directory, ec);
    if (ec || !fs::exists(status)) {
      if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
        co_return ToolResult::failure(fmt::format("Cannot list {}: {}", shown, ec.message()));
      }
      co_return ToolResult::failure(fmt::format("No such directory: {}", shown));
    }
    if (!fs::is_directory(status)) {
      co_return ToolResult::failure(fmt::format("{} is a file, not a directory; use read_file to read it", shown));
    }

    // Blocking directory I/O on the caller's thread: the engine runs tools off its event loop.
    std::vector<std::string> entries;
    fs::directory_iterator it(directory, ec);
    for (std::size_t seen = 0; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (++seen % kCancelCheckEvery == 0 && context.cancel.cancelled()) {
        co_return support::Error(Errc::cancelled, "list_dir cancelled");
      }
      if (it->path().filename() == ".git") continue;
      entries.push_back(describe_entry(*it));
    }
    if (ec) co_return ToolResult::failure(fmt::format("Cannot list {}: {}", shown, ec.message()));
    std::sort(entries.begin(), entries.end());

    const std::size_t shown_count = std::min(entries.size(), kListDirMaxEntries);
    const std::size_t omitted = entries.size() - shown_count;
    ToolResult result;
    result.locations = {directory.string()};
    result.metadata.set("path", directory.string());
    result.metadata.set("entries", entries.size());
    result.metadata.set("shown", shown_count);
    result.metadata.set("omitted", omitted);
    result.summary = fmt::format("Listed {} ({} entr{})", shown, entries.size(), entries.size() == 1 ? "y" : "ies");
    if (entries.empty()) {
      result.content = fmt::format("[{} is empty]", shown);
      co_return result;
    }
    for (std::size_t i = 0; i < shown_count; ++i) {
      result.content += entries[i];
      result.content += '\n';
    }
    if (omitted > 0) {
      result.content +=
          fmt::format("[{} more entr{} not shown (list_dir shows at most {}); list a subdirectory to narrow it down]",
                      omitted, omitted == 1 ? "y" : "ies", kListDirMaxEntries);
    }
    co_return result;
  }

 private:
  ToolSpec spec_;
};

}  // namespace
}  // namespace builtin

std::shared_ptr<Tool> make_list_dir_tool() { return std::make_shared<builtin::ListDirTool>(); }

}  // namespace agentd::tools
