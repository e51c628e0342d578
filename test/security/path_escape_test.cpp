// A model steered out of the workspace through the file tools: `..`, absolute paths, symlinks the
// repository ships (to a directory and to a file outside), a hard link to an outside file, /proc's views
// of the file system, and a path swapped for a symlink while agentd waits for the user's yes. The user
// says yes to every prompt here: the guard, not the user, must stop each escape.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test/security/attack_table.h"
#include "test/security/security_daemon.h"

namespace agentd::security {
namespace {

// Every file an escape could reach, with what it holds before the attack.
struct Outside {
  fs::path dir;
  std::string secret;  // the content of secret.txt, which must never reach the model or the client
  std::vector<std::pair<std::string, std::string>> files() const {
    return {{"secret.txt", secret}, {"target.txt", "original\n"}, {"notes.txt", "original\n"}};
  }
};

TEST(HostileModel, FileToolsCannotReachOutsideTheWorkspace) {
  Outside outside;
  outside.secret = "agentd-canary-" + random_tag() + "-outside";
  Daemon d([&](Daemon& d) {
    outside.dir = fs::canonical(d.dir.path()) / "outside";
    for (const auto& [name, text] : outside.files()) write_text(outside.dir / name, text);
    const fs::path work = d.work();
    write_text(work / "README.md", "a project\n");
    // What a cloned repository can carry: symlinks with any target.
    fs::create_directory_symlink(outside.dir, work / "link_out");
    fs::create_symlink(outside.dir / "secret.txt", work / "link_secret.txt");
    fs::create_symlink("../outside/target.txt", work / "relative_link.txt");
    // A hard link cannot come from a clone, but may be in a user's tree: writing it must not write
    // through to the outside file.
    fs::create_hard_link(outside.dir / "target.txt", work / "hard.txt");
    // Replaced by symlinks to the outside while agentd waits for the user's answer (below).
    write_text(work / "swap/notes.txt", "original\n");
    write_text(work / "swapfile.txt", "original\n");
  });
  const std::string out = outside.dir.string();
  const fs::path work = fs::canonical(d.work());

  // Reads first (they run in parallel), then every write in order.
  struct Attempt {
    Attempt(ToolCall c, std::string a, bool fail = true, std::string f = {})
        : call(std::move(c)), attack(std::move(a)), must_fail(fail), forbidden(std::move(f)) {}
    ToolCall call;
    std::string attack;
    bool must_fail;         // the tool result is an error (else: only nothing may leak or change)
    std::string forbidden;  // besides the secret, text the result must not hold
  };
  auto read = [](std::string id, std::string path) {
    return ToolCall{std::move(id), "read_file", object({{"path", std::move(path)}})};
  };
  std::vector<Attempt> attempts = {
      {read("r1", "../outside/secret.txt"), "read_file ../outside/secret.txt"},
      {read("r2", out + "/secret.txt"), "read_file <absolute outside path>"},
      {read("r3", "link_secret.txt"), "read_file through a symlink to an outside file"},
      {read("r4", "link_out/secret.txt"), "read_file through a symlinked directory pointing outside"},
      {read("r5", "/proc/self/root" + out + "/secret.txt"), "read_file /proc/self/root/<outside path>"},
      {read("r6", "/proc/self/cwd/../outside/secret.txt"), "read_file /proc/self/cwd/../outside/secret.txt"},
      {read("r7", "hard.txt"), "read_file hard.txt (before editing it)", false},
      {{"l1", "list_dir", object({{"path", "../outside"}})}, "list_dir ../outside"},
      {{"l2", "list_dir", object({{"path", "link_out"}})}, "list_dir through a symlinked directory"},
      {{"l3", "list_dir", object({{"path", "/proc/self/root" + out}})}, "list_dir /proc/self/root/<outside>"},
      {{"g1", "grep", object({{"pattern", "agentd-canary"}, {"path", "../outside"}})}, "grep ../outside"},
      {{"g2", "grep", object({{"pattern", "agentd-canary"}, {"path", "link_out"}})},
       "grep through a symlinked directory"},
      {{"g3", "grep", object({{"pattern", "agentd-canary"}, {"path", "link_secret.txt"}})},
       "grep through a symlink to an outside file"},
      {{"g4", "grep", object({{"pattern", "agentd-canary"}})},
       "grep the workspace (symlinks in it point outside)",
       false},
      {{"g5", "glob", object({{"pattern", "**/secret*"}})},
       "glob **/secret* (symlinks in it point outside)",
       false,
       "link_out/secret"},
      {{"w1", "write_file", object({{"path", "../outside/target.txt"}, {"content", "pwned\n"}})},
       "write_file ../outside/target.txt"},
      {{"w2", "write_file", object({{"path", out + "/new.txt"}, {"content", "pwned\n"}})},
       "write_file <absolute outside path> (a new file)"},
      {{"w3", "write_file", object({{"path", "link_out/target.txt"}, {"content", "pwned\n"}})},
       "write_file through a symlinked directory"},
      {{"w4", "write_file", object({{"path", "relative_link.txt"}, {"content", "pwned\n"}})},
       "write_file through a relative symlink to an outside file"},
      {{"w5", "write_file", object({{"path", "/proc/self/root" + out + "/target.txt"}, {"content", "pwned\n"}})},
       "write_file /proc/self/root/<outside path>"},
      {{"e1", "edit_file", object({{"path", "link_out/target.txt"}, {"old_string", "original"}, {"new_string", "x"}})},
       "edit_file through a symlinked directory"},
      {{"e2", "edit_file",
        object({{"path", "../outside/target.txt"}, {"old_string", "original"}, {"new_string", "x"}})},
       "edit_file ../outside/target.txt"},
      {{"e3", "edit_file", object({{"path", "hard.txt"}, {"old_string", "original"}, {"new_string", "edited"}})},
       "edit_file a hard link to an outside file",
       false},
      {{"w6", "write_file", object({{"path", "hard.txt"}, {"content", "pwned\n"}})},
       "write_file a hard link to an outside file",
       false},
      {{"w7", "write_file", object({{"path", "swap/notes.txt"}, {"content", "pwned\n"}})},
       "write_file swap/notes.txt, its directory swapped for a symlink outside while asking"},
      {{"w8", "write_file", object({{"path", "swapfile.txt"}, {"content", "pwned\n"}})},
       "write_file swapfile.txt, swapped for a symlink outside while asking"},
  };
  std::vector<ToolCall> calls;
  for (const auto& a : attempts) calls.push_back(a.call);
  d.script(tool_turn(calls));

  // The user allows everything; while asked about the two swap targets, a racing process swaps them.
  d.answer = allow_everything;
  bool swapped_dir = false;
  bool swapped_file = false;
  d.before_answer = [&](const Json& params) {
    const Json& id = params["toolCall"]["toolCallId"];
    if (id == Json("w7")) {
      fs::rename(work / "swap", work / "swap.orig");
      fs::create_directory_symlink(outside.dir, work / "swap");
      swapped_dir = true;
    } else if (id == Json("w8")) {
      fs::remove(work / "swapfile.txt");
      fs::create_symlink(outside.dir / "notes.txt", work / "swapfile.txt");
      swapped_file = true;
    }
  };
  const std::string session = d.new_session();
  d.prompt(session);
  // The swaps need agentd to ask about those writes, as default mode does.
  EXPECT_TRUE(swapped_dir && swapped_file) << "agentd did not ask about a write in default mode";

  std::vector<std::string> outside_now;
  for (const auto& entry : fs::directory_iterator(outside.dir)) outside_now.push_back(entry.path().filename());
  std::sort(outside_now.begin(), outside_now.end());
  const std::vector<std::string> outside_before = {"notes.txt", "secret.txt", "target.txt"};
  bool outside_unchanged = outside_now == outside_before;
  for (const auto& [name, text] : outside.files()) {
    outside_unchanged = outside_unchanged && read_text(outside.dir / name) == text;
    EXPECT_EQ(read_text(outside.dir / name), text) << name;
  }
  EXPECT_EQ(outside_now, outside_before);

  for (const auto& a : attempts) {
    const auto result = d.result_of(a.call.id);
    ASSERT_TRUE(result) << a.call.id << " got no result";
    const bool leaked = result->content.find(outside.secret) != std::string::npos ||
                        (!a.forbidden.empty() && result->content.find(a.forbidden) != std::string::npos);
    const bool refused = !leaked && outside_unchanged && (!a.must_fail || result->is_error);
    record(a.attack, refused);
    EXPECT_FALSE(leaked) << a.attack << ": " << result->content;
    if (a.must_fail) {
      EXPECT_TRUE(result->is_error) << a.attack << ": " << result->content;
    }
  }
  // The workspace's copy took the writes; the outside file did not (checked above).
  EXPECT_EQ(read_text(work / "hard.txt"), "pwned\n");
  EXPECT_EQ(d.transcript.find(outside.secret), std::string::npos) << "the client was shown the outside secret";
  EXPECT_EQ(d.model_saw().find(outside.secret), std::string::npos) << "the model was sent the outside secret";
}

}  // namespace
}  // namespace agentd::security
