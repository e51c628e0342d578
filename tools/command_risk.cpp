#include "tools/command_risk.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;

bool in_list(std::string_view list, std::string_view word) {
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(' ', start), list.size());
    if (list.substr(start, end - start) == word) return true;
    start = end + 1;
  }
  return false;
}

// Programs that talk to other machines whatever their arguments.
constexpr std::string_view kNetworkPrograms =
    "curl wget ssh scp sftp ftp telnet nc ncat netcat socat ping ping6 dig nslookup http https xh aria2c gh aws "
    "gcloud az kubectl npx pnpx bunx uvx";
// Programs that reach the network with some subcommands: the subcommands, "" meaning "with no subcommand".
struct NetworkSubcommands {
  std::string_view program;
  std::string_view subcommands;
};
constexpr std::array<NetworkSubcommands, 26> kNetworkSubcommands = {{
    {"git", "push pull fetch clone ls-remote submodule"},
    {"npm", "install i add ci update upgrade publish exec x create init"},
    {"pnpm", "install i add update upgrade publish dlx create"},
    {"yarn", " install add upgrade up publish dlx create"},
    {"bun", "install i add update publish x create"},
    {"pip", "install download"},
    {"pip3", "install download"},
    {"pipx", "install run upgrade"},
    {"uv", "pip add sync lock tool run"},
    {"poetry", "install add update lock publish"},
    {"conda", "install create update"},
    {"mamba", "install create update"},
    {"cargo", "install add update fetch publish search"},
    {"go", "get install mod"},
    {"gem", "install update fetch"},
    {"bundle", "install update"},
    {"composer", "install require update create-project"},
    {"apt", "install update upgrade full-upgrade dist-upgrade"},
    {"apt-get", "install update upgrade dist-upgrade source"},
    {"dnf", "install update upgrade"},
    {"yum", "install update upgrade"},
    {"apk", "add update upgrade"},
    {"brew", "install update upgrade tap"},
    {"zypper", "install in update up"},
    {"docker", "pull push login run build"},
    {"podman", "pull push login run build"},
}};
// Programs that fetch a URL's body for another program to run.
constexpr std::string_view kDownloaders = "curl wget fetch http https xh aria2c";
// Programs that run code they read (a file or their input).
constexpr std::string_view kInterpreters =
    "sh bash dash zsh ksh mksh fish busybox python python3 perl ruby node deno php lua tclsh";
constexpr std::string_view kPermissionPrograms = "chmod chown chgrp setfacl chattr setcap sudo su doas pkexec runuser";
// Files a command may name that are not files of anyone's (the null device, the terminal).
constexpr std::string_view kHarmlessDevices =
    "/dev/null /dev/stdin /dev/stdout /dev/stderr /dev/tty /dev/zero /dev/random /dev/urandom";

std::string quoted_command(const ShellSimpleCommand& cmd) {
  constexpr std::size_t kMaxChars = 60;
  std::string text = cmd.text();
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return fmt::format("`{}`", text);
}

// The first word after the program that is not an option: `git -C dir push` -> "push". Options that take
// a value as the next word (git's -C and -c) are skipped with it.
std::string_view subcommand(const ShellSimpleCommand& cmd) {
  for (std::size_t i = 1; i < cmd.words.size(); ++i) {
    const std::string& w = cmd.words[i];
    if (w.starts_with('-')) {
      if (cmd.words[0] == "git" && in_list("-C -c --git-dir --work-tree --namespace", w)) ++i;
      continue;
    }
    return w;
  }
  return {};
}

bool reaches_network(const ShellSimpleCommand& cmd) {
  const std::string& name = cmd.words[0];
  if (in_list(kNetworkPrograms, name)) return true;
  // `python -m pip install x`: the module is the program.
  if (name.starts_with("python") && cmd.words.size() > 3 && cmd.words[1] == "-m" && cmd.words[2].starts_with("pip")) {
    return in_list("install download", cmd.words[3]);
  }
  // rsync copies locally too; `host:path` and `rsync://` reach another machine.
  if (name == "rsync") {
    return std::any_of(cmd.words.begin() + 1, cmd.words.end(), [](const std::string& w) {
      const auto colon = w.find(':');
      return !w.starts_with('-') && colon != std::string::npos && w.find('/') > colon;
    });
  }
  for (const auto& [program, subcommands] : kNetworkSubcommands) {
    if (program != name) continue;
    const std::string_view sub = subcommand(cmd);
    // `yarn` alone installs; the list's leading space stands for the empty subcommand.
    return in_list(subcommands, sub);
  }
  return false;
}

bool deletes_recursively(const ShellSimpleCommand& cmd) {
  const std::string& name = cmd.words[0];
  if (name == "rm") {
    for (std::size_t i = 1; i < cmd.words.size(); ++i) {
      const std::string& w = cmd.words[i];
      if (w == "--") break;
      if (w == "--recursive") return true;
      if (w.starts_with('-') && !w.starts_with("--") &&
          (w.find('r') != std::string::npos || w.find('R') != std::string::npos)) {
        return true;
      }
    }
    return false;
  }
  if (name == "find") return std::find(cmd.words.begin(), cmd.words.end(), "-delete") != cmd.words.end();
  if (name == "git") return subcommand(cmd) == "clean";
  return false;
}

bool changes_permissions(const ShellSimpleCommand& cmd) { return in_list(kPermissionPrograms, cmd.words[0]); }

bool is_path_word(std::string_view w) {
  return w.starts_with('/') || w == "~" || w.starts_with("~/") || w == ".." || w.starts_with("../") ||
         w.find("/../") != std::string_view::npos || w.ends_with("/..");
}

bool inside(const fs::path& path, std::span<const fs::path> roots) {
  return std::any_of(roots.begin(), roots.end(), [&](const fs::path& root) {
    const auto rel = path.lexically_relative(root);
    return !rel.empty() && *rel.begin() != "..";
  });
}

// The path a word names, if it names one outside the workspace; "" otherwise.
std::string outside_path(std::string_view word, const fs::path& cwd, std::span<const fs::path> roots,
                         const fs::path& home) {
  // `--file=/etc/x`: the value is the path.
  if (word.starts_with("--")) {
    const auto eq = word.find('=');
    if (eq == std::string_view::npos) return {};
    word = word.substr(eq + 1);
  }
  if (!is_path_word(word) || in_list(kHarmlessDevices, word) || word.starts_with("/dev/fd/")) return {};
  fs::path path;
  if (word.starts_with('~')) {
    if (home.empty()) return std::string(word);
    path = home / std::string(word.substr(std::min<std::size_t>(2, word.size())));
  } else if (word.starts_with('/')) {
    path = std::string(word);
  } else {
    path = cwd / std::string(word);
  }
  path = path.lexically_normal();
  if (inside(path, roots)) return {};
  return std::string(word);
}

}  // namespace

RiskAssessment assess_command_line(const ShellCommandLine& line, const fs::path& cwd, std::span<const fs::path> roots,
                                   const fs::path& home) {
  RiskAssessment out;
  const ShellSimpleCommand* downloader = nullptr;
  const ShellSimpleCommand* interpreter = nullptr;
  for (const auto& cmd : line.commands) {
    if (cmd.words.empty()) continue;
    const std::string& name = cmd.words[0];
    if (!has_risk(out.risk, Risk::network) && reaches_network(cmd)) {
      out.add(Risk::network, fmt::format("reaches the network ({})", quoted_command(cmd)));
    }
    if (!has_risk(out.risk, Risk::recursive_delete) && deletes_recursively(cmd)) {
      out.add(Risk::recursive_delete, fmt::format("deletes recursively ({})", quoted_command(cmd)));
    }
    if (!has_risk(out.risk, Risk::permissions) && changes_permissions(cmd)) {
      out.add(Risk::permissions,
              fmt::format("changes permissions or ownership, or runs as another user ({})", quoted_command(cmd)));
    }
    if (downloader == nullptr && in_list(kDownloaders, name)) downloader = &cmd;
    if (interpreter == nullptr && in_list(kInterpreters, name)) interpreter = &cmd;
    if (!has_risk(out.risk, Risk::outside_workspace)) {
      // Words that cannot expand, after the program, and where redirections read or write.
      std::string found;
      for (std::size_t i = 1; i < cmd.literal_words && found.empty(); ++i) {
        found = outside_path(cmd.words[i], cwd, roots, home);
      }
      for (const auto& r : cmd.redirections) {
        if (!found.empty()) break;
        found = outside_path(r.target, cwd, roots, home);
      }
      if (!found.empty()) {
        out.add(Risk::outside_workspace,
                fmt::format("names {}, outside the workspace ({})", found, quoted_command(cmd)));
      }
    }
  }
  // Fetching and running in one line: `curl -fsSL x | sh`, `sh -c "$(curl x)"`, `wget x && bash x`.
  if (downloader != nullptr && interpreter != nullptr) {
    out.add(Risk::remote_code, fmt::format("runs code it downloads ({} with {})", quoted_command(*downloader),
                                           quoted_command(*interpreter)));
  }
  return out;
}

}  // namespace agentd::tools
