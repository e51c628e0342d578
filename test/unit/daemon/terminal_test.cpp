// Commands in the editor's terminal: a client that offers `terminal` gets shell's command as
// terminal/create of `agentd sandbox-exec ... -- /bin/sh -c <command>`, the tool call carries the
// terminal content (the live card), agentd waits for the exit, reads the output, releases the terminal,
// and the model reads the output and exit code as from its own runner. A command past its timeout is
// killed through terminal/kill. The test plays the editor: it runs what terminal/create names.
#include <signal.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/mock_model/mock_model_server.h"
#include "test/support/child_process.h"
#include "test/support/session_fixture.h"
#include "test/support/temp_dir.h"

namespace agentd {
namespace {

namespace fs = std::filesystem;
using support::Json;
using namespace std::chrono_literals;

// The editor's side of terminal/*: each terminal a child process running what the agent asked for.
struct FakeEditor {
  testing::AcpClient* agentd = nullptr;
  std::map<std::string, std::unique_ptr<testing::ChildProcess>> terminals;
  std::map<std::string, std::string> output;
  std::map<std::string, Json> exit;
  std::vector<std::string> methods;
  Json created_params;
  std::optional<Json> pending_wait;  // a wait_for_exit not answered yet (the command still runs)
  std::string pending_terminal;
  int next = 1;

  void reply(const Json& id, const Json& result) const {
    agentd->write(R"({"jsonrpc":"2.0","id":)" + id.dump() + R"(,"result":)" + result.dump() + "}\n");
  }

  // Collects a finished terminal's output and exit status.
  void finish(const std::string& id, const testing::ExitStatus& status) {
    auto& child = *terminals[id];
    output[id] = child.read_all_stdout(5s) + child.stderr_text();
    Json e = Json::object();
    e.set("exitCode", status.exited ? Json(status.code) : Json());
    e.set("signal", status.exited ? Json() : Json(std::string("SIG") + ::sigabbrev_np(status.signal)));
    exit[id] = std::move(e);
  }

  void handle(const Json& m) {
    if (!m["method"].is_string() || !m.contains("id")) return;
    const std::string method = m["method"].as_string();
    methods.push_back(method);
    const Json& params = m["params"];
    if (method == "terminal/create") {
      created_params = params;
      std::vector<std::string> argv{params["command"].as_string()};
      for (const Json& a : params["args"].as_array()) argv.push_back(a.as_string());
      testing::ChildProcess::Options options;
      options.cwd = params["cwd"].as_string();
      const std::string id = "term-" + std::to_string(next++);
      terminals[id] = std::make_unique<testing::ChildProcess>(argv, options);
      terminals[id]->close_stdin();
      Json result = Json::object();
      result.set("terminalId", id);
      reply(m["id"], result);
      return;
    }
    const std::string id = params["terminalId"].is_string() ? params["terminalId"].as_string() : "";
    if (method == "terminal/wait_for_exit") {
      if (auto status = terminals[id]->wait(2s)) {
        finish(id, *status);
        reply(m["id"], exit[id]);
      } else {
        pending_wait = m["id"];  // answered when it ends (terminal/kill)
        pending_terminal = id;
      }
    } else if (method == "terminal/kill") {
      terminals[id]->signal(SIGTERM);  // as an editor ends a terminal's process
      if (auto status = terminals[id]->wait(5s)) finish(id, *status);
      reply(m["id"], Json::object());
      if (pending_wait && pending_terminal == id) {
        reply(*pending_wait, exit[id]);
        pending_wait.reset();
      }
    } else if (method == "terminal/output") {
      Json result = Json::object();
      result.set("output", output[id]);
      result.set("truncated", false);
      if (exit.contains(id)) result.set("exitStatus", exit[id]);
      reply(m["id"], result);
    } else if (method == "terminal/release") {
      terminals.erase(id);
      reply(m["id"], Json());
    }
  }
};

struct TerminalFixture {
  testing::TempDir dir;
  std::unique_ptr<mock_model::MockModelServer> mock;
  std::unique_ptr<testing::AcpClient> agentd;
  std::string session;
  FakeEditor editor;
  int next_id = 1;

  explicit TerminalFixture(const std::string& exchanges) {
    fs::create_directories(dir.file("work"));
    auto script = mock_model::parse_script(*support::parse_json(R"({"exchanges": [)" + exchanges + "]}"), dir.path());
    EXPECT_TRUE(script);
    mock = std::move(*mock_model::MockModelServer::start(std::move(*script)));
    agentd = testing::start_in_process_with_mock(dir, mock->url(), {{"AGENTD_SANDBOX_EXEC", AGENTD_BIN}});
    editor.agentd = agentd.get();
    call("initialize", R"({"protocolVersion":1,"clientCapabilities":{"terminal":true}})");
    Json created = call("session/new", R"({"cwd":")" + dir.file("work") + R"(","mcpServers":[]})");
    session = created["result"]["sessionId"].as_string();
    call("session/set_mode", R"({"sessionId":")" + session + R"(","modeId":"bypass"})");
  }

  Json call(std::string_view method, const std::string& params, std::vector<Json>* updates = nullptr) {
    return testing::request(*agentd, next_id++, method, params, [&](const Json& m) {
      if (m["method"] == Json("session/update")) {
        if (updates != nullptr) updates->push_back(m["params"]["update"]);
        return;
      }
      editor.handle(m);
    });
  }

  Json prompt(const std::string& text, std::vector<Json>* updates) {
    return call("session/prompt",
                R"({"sessionId":")" + session + R"(","prompt":[{"type":"text","text":")" + text + R"("}]})", updates);
  }

  std::string body(std::size_t i) { return mock->requests().at(i)["body"].dump(); }
};

std::string shell_call(std::string_view command, int timeout_ms = 0) {
  Json input = Json::object();
  input.set("command", command);
  if (timeout_ms > 0) input.set("timeout_ms", timeout_ms);
  return R"({"name": "call", "response": {"generate": {"provider": "anthropic", "text": "Running.",
     "tool_calls": [{"id": "toolu_t", "name": "shell", "input": )" +
         input.dump() + "}]}}}";
}

constexpr std::string_view kDone =
    R"({"name": "done", "response": {"generate": {"provider": "anthropic", "text": "ok"}}})";

TEST(Terminal, ShellRunsInTheEditorsTerminalUnderSandboxExec) {
  TerminalFixture f(shell_call("echo hi from the terminal; exit 3") + "," + std::string(kDone));
  std::vector<Json> updates;
  Json answer = f.prompt("run it", &updates);
  ASSERT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
  EXPECT_EQ(f.editor.methods, (std::vector<std::string>{"terminal/create", "terminal/wait_for_exit", "terminal/output",
                                                        "terminal/release"}));
  // What the editor was asked to run: agentd's sandbox around the shell.
  const Json& created = f.editor.created_params;
  EXPECT_EQ(created["command"], Json(std::string(AGENTD_BIN)));
  const std::string args = created["args"].dump();
  EXPECT_EQ(created["args"].as_array()[0], Json("sandbox-exec")) << args;
  EXPECT_NE(args.find(R"("--root",")" + fs::canonical(f.dir.file("work")).string()), std::string::npos) << args;
  EXPECT_NE(args.find(R"("--","/bin/sh","-c","echo hi from the terminal; exit 3"])"), std::string::npos) << args;
  // The tool call showed the terminal, and kept it when it ended.
  int terminal_updates = 0;
  bool completed_with_terminal = false;
  for (const Json& u : updates) {
    if (u["sessionUpdate"] != Json("tool_call_update") || !u["content"].is_array()) continue;
    for (const Json& c : u["content"].as_array()) {
      if (c["type"] == Json("terminal") && c["terminalId"] == Json("term-1")) {
        ++terminal_updates;
        if (u["status"] == Json("completed")) completed_with_terminal = true;
      }
    }
  }
  EXPECT_GE(terminal_updates, 2);
  EXPECT_TRUE(completed_with_terminal);
  // The model read the output and the exit code.
  const std::string second = f.body(1);
  EXPECT_NE(second.find("hi from the terminal"), std::string::npos) << second;
  EXPECT_NE(second.find("exit code 3"), std::string::npos) << second;
}

TEST(Terminal, ACommandPastItsTimeoutIsKilledThroughTheTerminal) {
  TerminalFixture f(shell_call("echo started; sleep 30", 300) + "," + std::string(kDone));
  std::vector<Json> updates;
  const auto started = std::chrono::steady_clock::now();
  Json answer = f.prompt("run it", &updates);
  ASSERT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);
  EXPECT_NE(std::find(f.editor.methods.begin(), f.editor.methods.end(), "terminal/kill"), f.editor.methods.end());
  EXPECT_EQ(f.editor.methods.back(), "terminal/release");
  const std::string second = f.body(1);
  EXPECT_NE(second.find("timed out"), std::string::npos) << second;
}

}  // namespace
}  // namespace agentd
