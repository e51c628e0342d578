// The README's "Testing" section: shell commands in its code blocks (fenced, indented, or after a `$ `
// prompt), at most three, skipping those a manifest already gave. Each is read as the runner its command
// line names (guess_runner).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/support/text.h"
#include "tools/verify/ecosystem.h"
#include "tools/verify/ecosystem_util.h"

namespace agentd::tools::verify {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kReadmeCommands = 3;

bool is_testing_heading(std::string_view heading) {
  const std::string h = lower(support::trim(heading));
  return h.starts_with("test") || contains(h, "testing") || contains(h, "running tests") || contains(h, "run tests") ||
         contains(h, "running the tests") || contains(h, "run the tests");
}

// Lines that are shell commands in a README code block: prompts stripped, comments and blanks dropped.
std::optional<std::string> readme_command(std::string_view line) {
  line = support::trim(line);
  if (line.starts_with("$ ") || line.starts_with("> ") || line.starts_with("% ")) line = support::trim(line.substr(2));
  if (line.empty() || line.front() == '#' || line.starts_with("//")) return std::nullopt;
  return std::string(line);
}

void discover_readme(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  fs::path readme;
  for (const char* name : {"README.md", "README.markdown", "README.rst", "README.txt", "README", "readme.md"}) {
    if (is_file(dir / name)) {
      readme = dir / name;
      break;
    }
  }
  if (readme.empty()) return;
  const auto text = read_text(readme);
  if (!text) return;
  const auto lines = lines_of(*text);
  const bool rst = readme.extension() == ".rst";
  // Headings: "## Testing" (ATX) or "Testing" underlined with === / --- (setext, and reStructuredText).
  auto heading_at = [&](std::size_t i, int* level) -> std::optional<std::string_view> {
    const std::string_view line = lines[i];
    if (!rst && line.starts_with('#')) {
      std::size_t hashes = 0;
      while (hashes < line.size() && line[hashes] == '#') ++hashes;
      if (hashes <= 6 && (hashes == line.size() || line[hashes] == ' ')) {
        *level = static_cast<int>(hashes);
        return support::trim(line.substr(hashes));
      }
    }
    if (i + 1 < lines.size() && !support::trim(line).empty()) {
      const std::string_view under = support::trim(lines[i + 1]);
      if (under.size() >= 3 && std::all_of(under.begin(), under.end(), [&](char c) { return c == under[0]; }) &&
          (under[0] == '=' || under[0] == '-' || under[0] == '~' || under[0] == '^')) {
        *level = under[0] == '=' ? 1 : under[0] == '-' ? 2 : 3;
        return support::trim(line);
      }
    }
    return std::nullopt;
  };

  const std::string prefix = prefix_of(dir, workspace);
  const std::string file = readme.filename().string();
  std::size_t taken = 0;
  for (std::size_t i = 0; i < lines.size() && taken < kReadmeCommands; ++i) {
    int level = 0;
    const auto heading = heading_at(i, &level);
    if (!heading || !is_testing_heading(*heading)) continue;
    const std::string title(*heading);
    bool in_fence = false;
    bool fence_is_shell = true;
    for (std::size_t j = i + 1; j < lines.size() && taken < kReadmeCommands; ++j) {
      const std::string_view line = lines[j];
      int inner_level = 0;
      if (!in_fence && heading_at(j, &inner_level) && inner_level <= level && j != i + 1) break;
      const std::string_view trimmed = support::trim(line);
      if (trimmed.starts_with("```") || trimmed.starts_with("~~~")) {
        in_fence = !in_fence;
        if (in_fence) {
          const std::string lang = lower(support::trim(trimmed.substr(3)));
          fence_is_shell = lang.empty() || lang == "sh" || lang == "bash" || lang == "shell" || lang == "console" ||
                           lang == "shell-session" || lang == "zsh" || lang == "text";
        }
        continue;
      }
      const bool indented_block =
          !in_fence && line.starts_with("    ") && !trimmed.starts_with("- ") && !trimmed.starts_with("* ");
      const bool prompt = trimmed.starts_with("$ ");
      if (!((in_fence && fence_is_shell) || indented_block || prompt)) continue;
      if (rst && !in_fence && trimmed.starts_with("..")) continue;
      auto command_line = readme_command(line);
      if (!command_line) continue;
      const bool known = std::any_of(out.commands.begin(), out.commands.end(),
                                     [&](const VerificationCommand& c) { return c.command == *command_line; });
      if (known) continue;
      VerificationCommand command;
      command.id = fmt::format("{}readme:{}", prefix, ++taken);
      command.runner = guess_runner(*command_line);
      command.command = std::move(*command_line);
      command.cwd = dir;
      command.source = fmt::format("{}{} section \"{}\"", prefix, file, title);
      out.commands.push_back(std::move(command));
    }
  }
}

}  // namespace

const Ecosystem& readme_ecosystem() {
  static const Ecosystem kReadme{
      .name = "readme",
      .stage = DiscoveryStage::workspace,
      .discover = discover_readme,
  };
  return kReadme;
}

}  // namespace agentd::tools::verify
