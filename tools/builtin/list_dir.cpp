// list_dir: the entries of one directory, sorted, so the model can find its way before it reads. It lists
// through the shared walk (tools/walk.h), so what .gitignore ignores is left out (and counted), `.git` is
// never shown, and deny-listed names are skipped; other dot-files are shown, as a plain listing would.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "tools/builtin/builtin_tools.h"
#include "tools/builtin/common.h"
#include "tools/path_guard.h"
#include "tools/search.h"
#include "tools/walk.h"

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

// "name/" for a directory, "name -> target" for a symlink (the model may not follow it outside), "name"
// otherwise.
std::string describe_entry(const WalkEntry& entry) {
  const std::size_t slash = entry.relative.rfind('/');
  std::string name = slash == std::string::npos ? entry.relative : entry.relative.substr(slash + 1);
  if (entry.is_symlink) {
    std::string target(256, '\0');
    for (;;) {
      const ssize_t n = ::readlink(entry.path.c_str(), target.data(), target.size());
      if (n < 0) return name + " -> ?";
      if (static_cast<std::size_t>(n) < target.size()) {
        target.resize(static_cast<std::size_t>(n));
        return fmt::format("{} -> {}", name, target);
      }
      target.resize(target.size() * 2);  // possibly truncated: try again with more room
    }
  }
  if (entry.is_dir) name += '/';
  return name;
}

struct Listing {
  std::vector<std::string> entries;  // described, in name order
  std::size_t ignored = 0;
};

class ListDirTool final : public Tool {
 public:
  ListDirTool() {
    spec_.name = "list_dir";
    spec_.description = fmt::format(
        "List one directory: entries sorted by name, directories end in '/', symlinks show their target, hidden "
        "files included; .git and what .gitignore ignores are left out (the output says how many were ignored). "
        "At most {} entries are shown.",
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

    const PathGuard guard(context);
    auto resolved = guard.resolve(string_field(input, "path", "."), PathAccess::read);
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

    // A huge directory takes a while to read: off the event loop, like every walk.
    auto work = [root = directory.string(), base = walk_options(guard, directory, context),
                 cancel = context.cancel]() -> support::Result<Listing> {
      try {
        Listing listing;
        WalkOptions options = base;
        options.hidden = true;
        options.max_depth = 1;
        auto walked = walk(
            root, options,
            [&](const WalkEntry& entry) {
              listing.entries.push_back(describe_entry(entry));
              return true;
            },
            cancel);
        if (!walked) return std::move(walked).error();
        listing.ignored = walked->ignored;
        return listing;
      } catch (const std::exception& e) {
        return support::Error(Errc::internal, fmt::format("list_dir failed: {}", e.what()));
      }
    };
    auto listed = co_await run_off_loop(std::move(work));
    if (!listed) {
      const support::Error& error = listed.error();
      if (error.code() == Errc::cancelled) co_return std::move(listed).error();
      if (error.code() == Errc::not_found) co_return ToolResult::failure(fmt::format("No such directory: {}", shown));
      const std::string reason = error.native_code() != 0 ? std::strerror(error.native_code()) : error.message();
      co_return ToolResult::failure(fmt::format("Cannot list {}: {}", shown, reason));
    }
    const std::vector<std::string>& entries = listed->entries;
    const std::size_t ignored = listed->ignored;

    const std::size_t shown_count = std::min(entries.size(), kListDirMaxEntries);
    const std::size_t omitted = entries.size() - shown_count;
    ToolResult result;
    result.locations = {directory.string()};
    result.metadata.set("path", directory.string());
    result.metadata.set("entries", entries.size());
    result.metadata.set("shown", shown_count);
    result.metadata.set("omitted", omitted);
    result.metadata.set("ignored", ignored);
    result.summary = fmt::format("Listed {} ({} entr{}{})", shown, entries.size(), entries.size() == 1 ? "y" : "ies",
                                 ignored > 0 ? fmt::format(", {} ignored", ignored) : "");
    const std::string ignored_note =
        ignored == 0 ? ""
                     : fmt::format(
                           "[{} entr{} ignored by .gitignore not shown; an ignored path can still be listed or "
                           "read by name]",
                           ignored, ignored == 1 ? "y" : "ies");
    if (entries.empty()) {
      result.content = ignored == 0 ? fmt::format("[{} is empty]", shown) : ignored_note;
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
    if (!ignored_note.empty()) result.content += (omitted > 0 ? "\n" : "") + ignored_note;
    co_return result;
  }

 private:
  ToolSpec spec_;
};

}  // namespace
}  // namespace builtin

std::shared_ptr<Tool> make_list_dir_tool() { return std::make_shared<builtin::ListDirTool>(); }

}  // namespace agentd::tools
