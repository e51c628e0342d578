// A repository whose git configuration runs commands (core.fsmonitor, core.pager, diff.external, filter
// drivers, textconv, core.sshCommand, aliases, hooks through core.hooksPath and .git/hooks): agentd runs
// git itself to gather context on every turn (status, and diff for a bug fix or a review), and none of
// those commands may run. Each leaves a marker file when it runs; the same git commands a user would run
// by hand make the markers appear, so the configuration is live and the test can fail.
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test/security/attack_table.h"
#include "test/security/security_daemon.h"

namespace agentd::security {
namespace {

struct Trap {
  std::string marker;  // the file the command touches, in the markers directory
  std::string attack;  // for the table
};

TEST(HostileRepository, ItsGitConfigurationRunsNothingWhenAgentdRunsGit) {
  fs::path markers;
  const std::vector<Trap> traps = {
      {"fsmonitor", "core.fsmonitor"},
      {"pager", "core.pager"},
      {"diff-external", "diff.external"},
      {"textconv", "diff.<driver>.textconv (from .gitattributes)"},
      {"filter-clean", "filter.<driver>.clean (from .gitattributes)"},
      {"filter-process", "filter.<driver>.process (from .gitattributes)"},
      {"ssh", "core.sshCommand"},
      {"alias", "alias.st (a shell alias)"},
      {"hooks-path", "core.hooksPath hooks (pre-commit, post-index-change, reference-transaction)"},
      {"dot-git-hook", ".git/hooks (pre-commit, post-index-change, post-checkout)"},
  };
  Daemon d([&](Daemon& d) {
    markers = fs::canonical(d.dir.path()) / "markers";
    fs::create_directories(markers);
    const fs::path work = d.work();
    make_repository(work, d.home(), {{"a.txt", "one\n"}, {"b.md", "one\n"}});
    const auto touch = [&](const std::string& name) { return fmt::format("touch '{}'", (markers / name).string()); };
    // Added after the first commit, as a repository's author would ship them (a clone gets
    // .gitattributes and .githooks/; a sandboxed command could write .git/config).
    write_text(work / ".gitattributes", "*.txt filter=trap diff=trap\n*.md filter=trapproc\n");
    const std::vector<std::pair<std::string, std::string>> config = {
        {"core.fsmonitor", touch("fsmonitor") + "; false"},
        {"core.pager", touch("pager") + "; cat"},
        {"diff.external", touch("diff-external") + "; true"},
        {"diff.trap.textconv", touch("textconv") + "; cat"},
        {"filter.trap.clean", touch("filter-clean") + "; cat"},
        {"filter.trap.smudge", touch("filter-clean") + "; cat"},
        {"filter.trapproc.process", touch("filter-process") + "; false"},
        {"core.sshCommand", touch("ssh") + "; false"},
        {"alias.st", "!" + touch("alias")},
        {"core.hooksPath", (work / ".githooks").string()},
    };
    for (const auto& [key, value] : config) EXPECT_EQ(git(work, d.home(), {"config", key, value}).code, 0) << key;
    for (const char* hook : {"pre-commit", "post-index-change", "reference-transaction", "post-checkout"}) {
      write_text(work / ".githooks" / hook, "#!/bin/sh\n" + touch("hooks-path") + "\n");
      fs::permissions(work / ".githooks" / hook, fs::perms::owner_all);
      write_text(work / ".git/hooks" / hook, "#!/bin/sh\n" + touch("dot-git-hook") + "\n");
      fs::permissions(work / ".git/hooks" / hook, fs::perms::owner_all);
    }
    // Changes for status and diff to look at.
    write_text(work / "a.txt", "one\ntwo\n");
    write_text(work / "b.md", "one\ntwo\n");
  });

  // Turns whose input makes context gathering run status and diff (a bug fix), and a preview.
  const std::string session = d.new_session();
  for (const char* input : {"fix the bug in a.txt, it fails", "review my change to a.txt and b.md"}) {
    d.prompt(session, input);
  }
  const Json preview = d.request("_agentd/context/preview",
                                 object({{"sessionId", session}, {"input", "fix the crash in a.txt"}}).dump());
  EXPECT_TRUE(preview["result"].is_object()) << preview.dump();
  EXPECT_NE(preview.dump().find("a.txt"), std::string::npos) << "context gathering saw the change: git ran";

  std::vector<std::string> ran;
  for (const auto& entry : fs::directory_iterator(markers)) ran.push_back(entry.path().filename());
  for (const auto& trap : traps) {
    const bool refused = !fs::exists(markers / trap.marker);
    record("agentd's own git in a hostile repository: " + trap.attack, refused);
    EXPECT_TRUE(refused) << trap.attack << " ran";
  }

  // The same configuration, under the git commands a user runs: every trap springs.
  const fs::path work = d.work();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"status"},
           // Pathspecs keep b.md, whose failing process filter makes git die, out of these two.
           {"diff", "--", "a.txt"},
           {"diff", "--no-ext-diff", "--", "a.txt"},
           {"var", "GIT_PAGER"},
           {"ls-remote", "ssh://example.invalid/repo"},
           {"st"},
           {"add", "a.txt", "b.md"},
           {"commit", "-q", "-m", "second"},
           {"-c", "core.hooksPath=" + (work / ".git/hooks").string(), "commit", "-q", "--allow-empty", "-m", "third"},
       }) {
    git(work, d.home(), args);
  }
  // git never pages without a terminal: that core.pager is the pager git would run is proof enough.
  EXPECT_NE(git(work, d.home(), {"var", "GIT_PAGER"}).output.find(markers.string() + "/pager"), std::string::npos);
  for (const auto& trap : traps) {
    if (trap.marker == "pager") continue;
    EXPECT_TRUE(fs::exists(markers / trap.marker)) << trap.attack << " is not live: the test could not fail";
  }
}

}  // namespace
}  // namespace agentd::security
