// make: the test, check, tests and lint targets of the root's Makefile. Not narrowed; its output is read
// as the runner it shows (important_output.h).
#include <array>
#include <set>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "tools/verify/ecosystem.h"
#include "tools/verify/ecosystem_util.h"

namespace agentd::tools::verify {
namespace {

namespace fs = std::filesystem;

void discover_make(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  fs::path makefile;
  for (const char* name : {"GNUmakefile", "Makefile", "makefile"}) {
    if (is_file(dir / name)) {
      makefile = dir / name;
      break;
    }
  }
  if (makefile.empty()) return;
  const auto text = read_text(makefile);
  if (!text) return;
  std::set<std::string> targets;
  for (std::string_view line : lines_of(*text)) {
    if (line.empty() || line.front() == '\t' || line.front() == ' ' || line.front() == '#' || line.front() == '.') {
      continue;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (colon + 1 < line.size() && line[colon + 1] == '=') continue;  // VAR := value
    const std::string_view head = line.substr(0, colon);
    if (contains(head, "=") || contains(head, "$")) continue;
    for (std::string_view target : words(head)) targets.emplace(target);
  }
  struct Wanted {
    std::string_view name;
    Purpose purpose;
  };
  constexpr std::array<Wanted, 4> kWanted{
      {{"test", Purpose::test}, {"check", Purpose::test}, {"tests", Purpose::test}, {"lint", Purpose::lint}}};
  const std::string prefix = prefix_of(dir, workspace);
  const std::string file = makefile.filename().string();
  for (const Wanted& wanted : kWanted) {
    if (targets.count(std::string(wanted.name)) == 0) continue;
    VerificationCommand command;
    command.id = fmt::format("{}make:{}", prefix, wanted.name);
    command.command = fmt::format("make {}", wanted.name);
    command.runner = RunnerKind::make;
    command.purpose = wanted.purpose;
    command.cwd = dir;
    command.source = fmt::format("{}{} target {}", prefix, file, wanted.name);
    out.commands.push_back(std::move(command));
  }
}

bool guess_make(std::string_view command) {
  const auto parts = words(command);
  return !parts.empty() && (parts[0] == "make" || parts[0] == "gmake");
}

}  // namespace

const Ecosystem& make_ecosystem() {
  static const Ecosystem kMake{
      .name = "make",
      .runners = {{.kind = RunnerKind::make, .counts_tests = false, .guess_order = 8, .guess = guess_make}},
      .stage = DiscoveryStage::workspace,
      .discover = discover_make,
  };
  return kMake;
}

}  // namespace agentd::tools::verify
