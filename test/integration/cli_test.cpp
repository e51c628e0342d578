// The `agent` CLI end to end: the real `agent` binary starting the real agentd against the mock model,
// in -p mode (text, json, jsonl, exit codes, permissions from --mode and rules) and under a
// pseudo-terminal (the interactive loop, a permission prompt answered at the keyboard, Ctrl-C).
#include <pty.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "core/support/json.h"
#include "test/mock_model/mock_model_server.h"
#include "test/support/child_process.h"
#include "test/support/temp_dir.h"

namespace agentd {
namespace {

namespace fs = std::filesystem;
using support::Json;
using ::testing::HasSubstr;
using ::testing::Not;

std::string text(std::string_view name, std::string_view t) {
  return fmt::format(R"({{"name": "{}", "response": {{"generate": {{"provider": "anthropic", "text": "{}",
     "usage": {{"input_tokens": 100, "output_tokens": 10}}}}}}}})",
                     name, t);
}
std::string tool(std::string_view name, std::string_view tool_name, std::string_view input) {
  return fmt::format(R"({{"name": "{}", "response": {{"generate": {{"provider": "anthropic", "text": "Working.",
     "tool_calls": [{{"id": "toolu_{}", "name": "{}", "input": {}}}]}}}}}})",
                     name, name, tool_name, input);
}

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

// The mock model and a workspace; runs `agent` with the environment a user would have.
struct CliFixture {
  testing::TempDir dir;
  std::unique_ptr<mock_model::MockModelServer> mock;

  explicit CliFixture(const std::string& exchanges) {
    fs::create_directories(dir.file("work"));
    std::ofstream(dir.file("work/notes.txt")) << "one\ntwo\n";
    auto script = mock_model::parse_script(*support::parse_json(R"({"exchanges": [)" + exchanges + "]}"), dir.path());
    EXPECT_TRUE(script);
    auto server = mock_model::MockModelServer::start(std::move(*script));
    EXPECT_TRUE(server);
    mock = std::move(*server);
  }

  std::vector<std::string> env() const {
    return {"ANTHROPIC_BASE_URL=" + mock->url(),
            "ANTHROPIC_API_KEY=test",
            "AGENTD_MODEL=anthropic:claude-sonnet-4-5",
            "AGENTD_LOG=warn",
            "NO_COLOR=1",
            "HOME=" + dir.file("home"),
            "XDG_CONFIG_HOME=" + dir.file("config"),
            "XDG_STATE_HOME=" + dir.file("state"),
            "XDG_DATA_HOME=" + dir.file("data")};
  }

  // The body agentd sent in model request `i`, as the text of its JSON.
  std::string body_of(std::size_t i) const {
    auto requests = mock->requests();
    return requests.size() > i ? requests[i]["body"].dump() : std::string();
  }

  CliRun run(std::vector<std::string> args) {
    args.insert(args.begin(), AGENT_BIN);
    testing::ChildProcess::Options options;
    options.env_overrides = env();
    options.cwd = dir.file("work");
    testing::ChildProcess agent(args, options);
    agent.close_stdin();
    CliRun r;
    r.out = agent.read_all_stdout(std::chrono::seconds(30));
    auto status = agent.wait(std::chrono::seconds(30));
    EXPECT_TRUE(status) << "agent did not exit";
    r.err = agent.stderr_text();
    if (status && status->exited) r.code = status->code;
    return r;
  }
};

std::vector<Json> json_lines(const std::string& out) {
  std::vector<Json> lines;
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t nl = out.find('\n', start);
    const std::string line = out.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    auto parsed = support::parse_json(line);
    EXPECT_TRUE(parsed) << "not JSON: " << line;
    if (parsed) lines.push_back(std::move(*parsed));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

TEST(AgentCli, PrintModeStreamsTextAndShowsToolCalls) {
  CliFixture f(tool("read", "read_file", R"({"path": "notes.txt"})") + "," + text("done", "The notes say one, two."));
  CliRun r = f.run({"-p", "what do the notes say?"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Working."));
  EXPECT_THAT(r.out, HasSubstr("The notes say one, two."));
  EXPECT_THAT(r.err, HasSubstr("✓ Read notes.txt"));
  EXPECT_THAT(r.err, HasSubstr("end_turn · 110 in / 20 out tokens"));
  EXPECT_THAT(r.out, Not(HasSubstr("✓"))) << "stdout is the answer only";
}

// A hostile model (or the repository it read) cannot command the user's terminal through agent: its
// escape sequences (window title, clipboard write, screen clear) are printed as visible characters.
TEST(AgentCli, EscapeSequencesFromTheModelAreShownNotObeyed) {
  CliFixture f(text("evil", R"(\u001b]0;pwned\u0007\u001b]52;c;cm0gLXJmIH4=\u0007\u001b[2JAll done.)"));
  CliRun r = f.run({"-p", "hi"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("All done."));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x07'), std::string::npos) << r.out;
  EXPECT_THAT(r.out, HasSubstr("␛]52;c;"));
}

TEST(AgentCli, JsonlPrintsEventsAsTheyHappenAndJsonOneObject) {
  CliFixture f(tool("read", "read_file", R"({"path": "notes.txt"})") + "," + text("done", "Read.") + "," +
               text("again", "Second."));
  CliRun r = f.run({"-p", "read", "--output-format", "jsonl"});
  EXPECT_EQ(r.code, 0) << r.err;
  auto lines = json_lines(r.out);
  ASSERT_GE(lines.size(), 4U) << r.out;
  EXPECT_EQ(lines.front()["type"].as_string(), "session");
  EXPECT_EQ(lines.back()["type"].as_string(), "result");
  EXPECT_EQ(lines.back()["stopReason"].as_string(), "end_turn");
  EXPECT_EQ(lines.back()["usage"]["inputTokens"].as_int64(), 110);
  int started = -1;
  int completed = -1;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Json& u = lines[i]["update"];
    if (!u.is_object()) continue;
    if (u["sessionUpdate"].as_string() == "tool_call") started = static_cast<int>(i);
    if (u["status"].is_string() && u["status"].as_string() == "completed") completed = static_cast<int>(i);
  }
  EXPECT_GE(started, 1);
  EXPECT_GT(completed, started) << "in the order they happened";

  // json, continuing the same session: one object.
  CliRun j = f.run({"-p", "again", "--output-format", "json", "--continue"});
  EXPECT_EQ(j.code, 0) << j.err;
  auto objects = json_lines(j.out);
  ASSERT_EQ(objects.size(), 1U) << j.out;
  EXPECT_EQ(objects[0]["sessionId"].as_string(), lines.front()["sessionId"].as_string()) << "--continue";
  EXPECT_EQ(objects[0]["text"].as_string(), "Second.");
  EXPECT_EQ(objects[0]["stopReason"].as_string(), "end_turn");
  EXPECT_TRUE(objects[0]["toolCalls"].is_array());
}

TEST(AgentCli, ExitCodes) {
  CliFixture f(
      R"({"name": "broken", "response": {"status": 400, "body": {"type": "error", "error": {"type": "invalid_request_error", "message": "bad request"}}}},)" +
      std::string(
          R"({"name": "long", "response": {"generate": {"provider": "anthropic", "text": "cut", "stop_reason": "max_tokens"}}})"));
  EXPECT_EQ(f.run({"--bogus"}).code, 2);
  EXPECT_EQ(f.run({"--output-format", "json", "x"}).code, 2) << "--output-format needs -p";
  EXPECT_EQ(f.run({"-p"}).code, 2);
  EXPECT_EQ(f.run({"--mode", "yolo", "-p", "x"}).code, 2);
  CliRun error = f.run({"-p", "fail"});
  EXPECT_EQ(error.code, 1);
  EXPECT_THAT(error.err, HasSubstr("bad request"));
  EXPECT_EQ(f.run({"-p", "long"}).code, 3) << "max_tokens is a budget stop";
  CliRun none = f.run({"cost"});
  EXPECT_EQ(none.code, 0) << none.err;  // the latest session of the directory
}

TEST(AgentCli, PermissionsComeFromModeAndRulesNeverAPrompt) {
  const std::string write = tool("write", "write_file", R"({"path": "out.txt", "content": "new\n"})");
  CliFixture f(write + "," + text("after", "Not written.") + "," + write + "," + text("after2", "Written.") + "," +
               write + "," + text("after3", "Denied."));
  // default mode, no rule: agentd asks, the CLI refuses without asking.
  CliRun refused = f.run({"-p", "write it"});
  EXPECT_EQ(refused.code, 0) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("refused: Write out.txt"));
  EXPECT_FALSE(fs::exists(f.dir.file("work/out.txt")));
  // --allow: written, and the diff is shown.
  CliRun allowed = f.run({"-p", "write it", "--allow", "write_file"});
  EXPECT_EQ(allowed.code, 0) << allowed.err;
  EXPECT_TRUE(fs::exists(f.dir.file("work/out.txt")));
  EXPECT_THAT(allowed.err, HasSubstr("✓ Write out.txt"));
  EXPECT_THAT(allowed.err, HasSubstr("+new"));
  // --deny wins over --allow.
  CliRun denied = f.run({"-p", "write it", "--allow", "write_file", "--deny", "write_file"});
  EXPECT_EQ(denied.code, 0) << denied.err;
  EXPECT_THAT(denied.err, HasSubstr("✗ Write out.txt"));
  EXPECT_THAT(f.body_of(5), HasSubstr("not run"));
}

TEST(AgentCli, SessionsTraceAndCost) {
  CliFixture f(text("one", "First."));
  ASSERT_EQ(f.run({"-p", "hello"}).code, 0);
  CliRun sessions = f.run({"sessions"});
  EXPECT_EQ(sessions.code, 0) << sessions.err;
  EXPECT_THAT(sessions.out, HasSubstr("s_"));
  CliRun trace = f.run({"trace"});
  EXPECT_EQ(trace.code, 0) << trace.err;
  EXPECT_THAT(trace.out, HasSubstr("turn t_"));
  EXPECT_THAT(trace.out, HasSubstr("  turn.run "));
  EXPECT_THAT(trace.out, HasSubstr("    model.call "));
  CliRun cost = f.run({"cost"});
  EXPECT_EQ(cost.code, 0) << cost.err;
  EXPECT_THAT(cost.out, HasSubstr("session:   100 in / 10 out tokens"));
}

// ---- under a pseudo-terminal ----

class Pty {
 public:
  Pty(const std::vector<std::string>& args, const std::vector<std::string>& env, const std::string& cwd) {
    pid_ = ::forkpty(&master_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      if (::chdir(cwd.c_str()) != 0) ::_exit(127);
      for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));  // NOLINT: the child's own copy
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));  // NOLINT
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~Pty() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) ::close(master_);
  }
  void send(std::string_view bytes) {
    EXPECT_EQ(::write(master_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  // Reads until `needle` shows up after `from` (bounded); true when it did.
  bool wait_for(std::string_view needle, std::chrono::seconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (seen_.find(needle, from_) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      fd_set set;
      FD_ZERO(&set);
      FD_SET(master_, &set);
      timeval tv{0, 100000};
      if (::select(master_ + 1, &set, nullptr, nullptr, &tv) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(master_, buf, sizeof buf);
      if (n <= 0) return false;
      seen_.append(buf, static_cast<std::size_t>(n));
    }
    from_ = seen_.find(needle, from_) + needle.size();
    return true;
  }
  int wait_exit() {
    int status = 0;
    for (int i = 0; i < 200; ++i) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      wait_for("\x01never", std::chrono::seconds(0));
      ::usleep(50000);
    }
    return -1;
  }
  const std::string& seen() const { return seen_; }

 private:
  pid_t pid_ = -1;
  int master_ = -1;
  std::string seen_;
  std::size_t from_ = 0;
};

TEST(AgentCli, InteractiveLoopAsksAtTheKeyboardAndCtrlCCancels) {
  const std::string write = tool("write", "write_file", R"({"path": "typed.txt", "content": "yes\n"})");
  CliFixture f(
      write + "," + text("after", "Written at your word.") + "," +
      R"({"name": "stall", "response": {"generate": {"provider": "anthropic", "text": "This piece comes, then nothing.", "text_piece_bytes": 8}, "stall_after_bytes": 600}})");
  Pty pty({AGENT_BIN}, f.env(), f.dir.file("work"));
  ASSERT_TRUE(pty.wait_for("> ")) << pty.seen();
  pty.send("please write it\r");
  ASSERT_TRUE(pty.wait_for("allow? [y]es / [n]o / [a]lways / [r]eject always")) << pty.seen();
  pty.send("y\r");
  ASSERT_TRUE(pty.wait_for("Written at your word.")) << pty.seen();
  EXPECT_TRUE(fs::exists(f.dir.file("work/typed.txt")));
  ASSERT_TRUE(pty.wait_for("> ")) << pty.seen();
  // A turn whose stream stalls: Ctrl-C cancels it and the prompt comes back.
  pty.send("now stall\r");
  ASSERT_TRUE(pty.wait_for("This")) << pty.seen();
  pty.send("\x03");
  ASSERT_TRUE(pty.wait_for("cancelling")) << pty.seen();
  ASSERT_TRUE(pty.wait_for("cancelled · ")) << pty.seen();
  ASSERT_TRUE(pty.wait_for("> ")) << pty.seen();
  pty.send("/exit\r");
  EXPECT_EQ(pty.wait_exit(), 0) << pty.seen();
  // History is kept for the next run.
  std::ifstream history(f.dir.file("state/agentd/history"));
  std::string all((std::istreambuf_iterator<char>(history)), std::istreambuf_iterator<char>());
  EXPECT_THAT(all, HasSubstr("please\\040write\\040it")) << "libedit's history file format";
}

}  // namespace
}  // namespace agentd
