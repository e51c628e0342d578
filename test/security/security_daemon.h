// The security suite's harness: the real agentd binary talking to the in-process mock model, in a temp
// dir laid out like a user's machine (a workspace, HOME, XDG config, data and runtime dirs). It keeps every
// line agentd writes, answers permission prompts the way a test says, and tells what the model was sent.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/mock_model/mock_model_server.h"
#include "test/support/child_process.h"
#include "test/support/temp_dir.h"

namespace agentd::security {

namespace fs = std::filesystem;
using support::Json;

// {"a": 1, "b": "x"} without writing JSON text (paths in it need no escaping by hand).
inline Json object(std::initializer_list<std::pair<std::string_view, Json>> members) {
  Json o = Json::object();
  for (const auto& [key, value] : members) o.set(key, value);
  return o;
}

// One tool call the scripted model makes; `id` finds its result in what the model was sent next.
struct ToolCall {
  std::string id;
  std::string name;
  Json input;
};

inline std::string text_exchange(std::string_view text) {
  Json generate = object({{"provider", "anthropic"},
                          {"text", std::string(text)},
                          {"usage", object({{"input_tokens", 10}, {"output_tokens", 5}})}});
  return object({{"response", object({{"generate", std::move(generate)}})}}).dump();
}

// One model response that makes all of `calls` at once.
inline std::string tool_exchange(const std::vector<ToolCall>& calls) {
  Json list = Json::array();
  for (const auto& c : calls) list.push_back(object({{"id", c.id}, {"name", c.name}, {"input", c.input}}));
  Json generate = object({{"provider", "anthropic"},
                          {"tool_calls", std::move(list)},
                          {"usage", object({{"input_tokens", 10}, {"output_tokens", 5}})}});
  return object({{"response", object({{"generate", std::move(generate)}})}}).dump();
}

// A turn in which the model makes `calls`, then says it is done.
inline std::string tool_turn(const std::vector<ToolCall>& calls) {
  return tool_exchange(calls) + "," + text_exchange("Done.");
}

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void write_text(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// 16 hex digits, new for each call: a canary no file or log could hold by chance.
inline std::string random_tag() {
  std::random_device random;
  return fmt::format("{:08x}{:08x}", random(), random());
}

// Every regular file under `root` (symlinks not followed), with the ones `skip` names left out.
inline std::vector<fs::path> files_under(const fs::path& root, const std::function<bool(const fs::path&)>& skip = {}) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (skip && skip(it->path())) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) out.push_back(it->path());
  }
  return out;
}

// Runs a program to its end (bounded) with `env` over ours: its exit code (-1 when it did not exit) and
// its output, stdout then stderr.
struct RunResult {
  int code = -1;
  std::string output;
};
inline RunResult run(const std::vector<std::string>& argv, const fs::path& cwd,
                     const std::vector<std::string>& env = {}) {
  testing::ChildProcess::Options options;
  options.cwd = cwd.string();
  options.env_overrides = env;
  testing::ChildProcess child(argv, options);
  child.close_stdin();
  RunResult result;
  result.output = child.read_all_stdout(std::chrono::seconds(30));
  const auto status = child.wait(std::chrono::seconds(30));
  result.output += child.stderr_text();
  if (status && status->exited) result.code = status->code;
  return result;
}

// git as a user (or a hostile repository's author) runs it, with `home` as HOME and no system config.
inline RunResult git(const fs::path& repo, const fs::path& home, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-c", "init.defaultBranch=main"});
  return run(args, repo,
             {"HOME=" + home.string(), "XDG_CONFIG_HOME=" + (home / ".config").string(), "GIT_CONFIG_NOSYSTEM=1",
              "GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_COMMITTER_NAME=Test",
              "GIT_COMMITTER_EMAIL=test@example.com", "GIT_TERMINAL_PROMPT=0"});
}

// A repository in `dir` with `files` committed.
inline void make_repository(const fs::path& dir, const fs::path& home,
                            const std::vector<std::pair<std::string, std::string>>& files) {
  fs::create_directories(dir);
  EXPECT_EQ(git(dir, home, {"init", "-q"}).code, 0);
  for (const auto& [name, text] : files) write_text(dir / name, text);
  EXPECT_EQ(git(dir, home, {"add", "-A"}).code, 0);
  const RunResult commit = git(dir, home, {"commit", "-q", "-m", "initial"});
  EXPECT_EQ(commit.code, 0) << commit.output;
}

inline constexpr std::string_view kMockUrl = "@MOCK_URL@";

struct DaemonOptions {
  std::vector<std::string> env;  // "NAME=value" for agentd, after (and over) the defaults below
  // Written to $XDG_CONFIG_HOME/agentd/config.json when not empty, with kMockUrl replaced by the mock's URL.
  std::string user_config;
  bool set_model = true;  // AGENTD_MODEL=anthropic:claude-sonnet-4-5 (off: the user config chooses)
  std::string log_level = "warn";
  // XDG_CONFIG_HOME, relative to the temp dir ("config"); "home/.config" puts it inside HOME.
  std::string config_dir = "config";
};

// agentd in a temp dir: `work/` is the workspace (its cwd), `home/` its HOME, `config/` its
// XDG_CONFIG_HOME, `data/` its XDG_DATA_HOME (so the database is data/agentd/agentd.db, where the
// sandbox expects it), `run/` its XDG_RUNTIME_DIR, and logs go to agentd.log.
class Daemon {
 public:
  // `prepare` fills the temp dir before agentd starts. The model says "Hello." to every prompt until
  // script() gives it something else to do.
  explicit Daemon(const std::function<void(Daemon&)>& prepare = {}, DaemonOptions options = {})
      : options_(std::move(options)) {
    for (const char* sub : {"work", "home", "data", "run"}) fs::create_directories(dir.path() / sub);
    fs::create_directories(config_home());
    auto server = mock_model::MockModelServer::start(parse(text_exchange("Hello.")));
    EXPECT_TRUE(server);
    mock = std::move(*server);
    if (!options_.user_config.empty()) {
      std::string text = options_.user_config;
      for (auto at = text.find(kMockUrl); at != std::string::npos; at = text.find(kMockUrl)) {
        text.replace(at, kMockUrl.size(), mock->url());
      }
      write_text(config_home() / "agentd/config.json", text);
    }
    if (prepare) prepare(*this);
    start();
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;
  ~Daemon() { stop(); }

  // The model's script from now on: `exchanges` (comma-separated JSON objects), played in a loop (a turn
  // that makes calls and the text after them, again for the next turn).
  void script(const std::string& exchanges) { mock->set_script(parse(exchanges)); }

  fs::path work() const { return dir.path() / "work"; }
  fs::path home() const { return dir.path() / "home"; }
  fs::path config_home() const { return dir.path() / options_.config_dir; }
  fs::path data_dir() const { return dir.path() / "data/agentd"; }
  fs::path runtime_dir() const { return dir.path() / "run"; }
  fs::path log_file() const { return dir.path() / "agentd.log"; }

  void start() {
    testing::ChildProcess::Options child;
    child.env_overrides = {
        "ANTHROPIC_BASE_URL=" + mock->url(),         "ANTHROPIC_API_KEY=test",
        "AGENTD_LOG=" + options_.log_level,          "HOME=" + home().string(),
        "XDG_CONFIG_HOME=" + config_home().string(), "XDG_DATA_HOME=" + (dir.path() / "data").string(),
        "XDG_RUNTIME_DIR=" + runtime_dir().string()};
    if (options_.set_model) child.env_overrides.push_back("AGENTD_MODEL=anthropic:claude-sonnet-4-5");
    for (const auto& e : options_.env) child.env_overrides.push_back(e);
    child.cwd = work().string();
    agentd = std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{AGENTD_BIN, "--log-file", log_file().string()}, child);
    Json init = request("initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
    EXPECT_TRUE(init["result"].is_object()) << init.dump();
  }

  // Closes agentd's input and waits for it to finish (its database closed), as a client that quits.
  void stop() {
    if (!agentd) return;
    agentd->close_stdin();
    const auto status = agentd->wait(std::chrono::seconds(10));
    EXPECT_TRUE(status) << "agentd did not exit after its input closed";
    stderr_text += agentd->stderr_text();
    agentd.reset();
  }
  void restart() {
    stop();
    start();
  }

  // Sends a request and returns its response. Permission requests that come first are answered with
  // what `answer` says (reject_once by default) after `before_answer` has run; every other message
  // goes to `on_message`.
  Json request(std::string_view method, const std::string& params) {
    const int id = next_id_++;
    EXPECT_TRUE(agentd->write(
        fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"{}","params":{}}})", id, method, params) + "\n"));
    for (;;) {
      auto line = agentd->read_line(std::chrono::seconds(20));
      stderr_text += agentd->stderr_text();
      EXPECT_TRUE(line) << "agentd wrote nothing for " << method << "; stderr:\n" << stderr_text;
      if (!line) return {};
      transcript += *line;
      transcript += '\n';
      auto parsed = support::parse_json(*line);
      EXPECT_TRUE(parsed) << *line;
      if (!parsed) continue;
      const Json& m = *parsed;
      if (!m.contains("method") && m["id"].is_integer() && m["id"].as_int64() == id) return m;
      if (m["method"] == Json("session/request_permission")) {
        permission_requests.push_back(m["params"]);
        if (before_answer) before_answer(m["params"]);
        const std::string option = answer ? answer(m["params"]) : "reject_once";
        agentd->write(fmt::format(R"({{"jsonrpc":"2.0","id":{},"result":{{"outcome":{{"outcome":"selected",)"
                                  R"("optionId":"{}"}}}}}})",
                                  m["id"].dump(), option) +
                      "\n");
        continue;
      }
      if (on_message) on_message(m);
    }
  }
  void notify(std::string_view method, const std::string& params) {
    agentd->write(fmt::format(R"({{"jsonrpc":"2.0","method":"{}","params":{}}})", method, params) + "\n");
  }

  // A session in `cwd` (the workspace by default); its id, or "" (and a failure) when refused.
  std::string new_session(const fs::path& cwd = {}, const std::string& mode = "") {
    Json created = request(
        "session/new", object({{"cwd", (cwd.empty() ? work() : cwd).string()}, {"mcpServers", Json::array()}}).dump());
    last_session_response = created;
    EXPECT_TRUE(created["result"]["sessionId"].is_string()) << created.dump();
    if (!created["result"]["sessionId"].is_string()) return "";
    std::string id = created["result"]["sessionId"].as_string();
    if (!mode.empty()) {
      Json set = request("session/set_mode", object({{"sessionId", id}, {"modeId", mode}}).dump());
      EXPECT_FALSE(set.contains("error")) << set.dump();
    }
    return id;
  }

  // One turn; returns its stop reason. Permission requests are counted in `permission_requests`.
  std::string prompt(const std::string& session, std::string_view text = "go") {
    Json answer_json = request(
        "session/prompt",
        object({{"sessionId", session}, {"prompt", Json(Json::Array{object({{"type", "text"}, {"text", text}})})}})
            .dump());
    EXPECT_TRUE(answer_json["result"]["stopReason"].is_string()) << answer_json.dump();
    return answer_json["result"]["stopReason"].is_string() ? answer_json["result"]["stopReason"].as_string() : "";
  }

  // What the model was sent as the result of the call `id` (its content, as JSON text), and whether it
  // was an error; nullopt when the model never got one.
  struct SentResult {
    std::string content;
    bool is_error = false;
  };
  std::optional<SentResult> result_of(std::string_view id) const {
    std::optional<SentResult> found;
    std::function<void(const Json&)> visit = [&](const Json& j) {
      if (found) return;
      if (j.is_object()) {
        if (j["type"] == Json("tool_result") && j["tool_use_id"] == Json(std::string(id))) {
          found = SentResult{j["content"].dump(), j["is_error"] == Json(true)};
          return;
        }
        for (const auto& [key, value] : j.as_object()) visit(value);
      } else if (j.is_array()) {
        for (const auto& value : j.as_array()) visit(value);
      }
    };
    for (const auto& r : mock->requests()) visit(r["body"]);
    return found;
  }
  // Every request body the model was sent, as JSON text: what a provider would see and log.
  std::string model_saw() const {
    std::string out;
    for (const auto& r : mock->requests()) out += r["body"].dump() + "\n";
    return out;
  }
  // How many permission requests were about the call `id`.
  int asked_about(std::string_view id) const {
    int n = 0;
    for (const auto& p : permission_requests) n += p["toolCall"]["toolCallId"] == Json(std::string(id)) ? 1 : 0;
    return n;
  }

  testing::TempDir dir;
  std::unique_ptr<mock_model::MockModelServer> mock;
  std::unique_ptr<testing::ChildProcess> agentd;
  std::string transcript;   // every line agentd wrote to stdout
  std::string stderr_text;  // and to stderr
  std::vector<Json> permission_requests;
  std::function<std::string(const Json& params)> answer;  // the option chosen; reject_once when unset
  std::function<void(const Json& params)> before_answer;  // runs while agentd waits for the answer
  std::function<void(const Json& message)> on_message;    // notifications and other requests
  Json last_session_response;

 private:
  mock_model::Script parse(const std::string& exchanges) const {
    auto script = mock_model::parse_script(*support::parse_json(R"({"loop": true, "exchanges": [)" + exchanges + "]}"),
                                           dir.path());
    EXPECT_TRUE(script) << (script ? "" : script.error().message());
    return script ? std::move(*script) : mock_model::Script{};
  }

  DaemonOptions options_;
  int next_id_ = 1;
};

inline std::string allow_everything(const Json& /*params*/) { return "allow_once"; }

}  // namespace agentd::security
