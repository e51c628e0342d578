// agentd_bench_load: many sessions in one agentd process (issue 17's load campaign).
//
// 1. Streaming under load: N sessions run their prompts at once against one mock model that streams each
//    reply in pieces (a network write every 2 ms) and asks for a read_file round trip every other
//    request. For every session the client checks what it was sent: seqs only grow, no update comes
//    twice, none belongs to another session, every turn answers; afterwards every update is in that
//    session's `_agentd/events/replay` with the same seq and content, and the only stored updates it was
//    not sent are the user's own messages (logged for replay, not echoed live). The gap between a
//    reply's consecutive deltas is measured with 1 session and with N; the difference of the p99s is
//    what the load adds. agentd's peak RSS is printed.
// 2. Idle sessions: 500 sessions opened in one fresh process, RSS before and after, per session.
//
// Prints a closing table; the exit code says only whether the benchmark could run and the checks held.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_client.h"
#include "bench/bench_common.h"
#include "core/support/json.h"
#include "core/support/log.h"
#include "test/mock_model/mock_model_server.h"
#include "test/support/child_process.h"

namespace {

using agentd::bench::Clock;
using agentd::bench::ms_between;
using agentd::bench::RpcClient;
using agentd::bench::Samples;
using agentd::support::Json;
using agentd::testing::ChildProcess;
using namespace std::chrono_literals;

std::string script() {
  std::string text;
  while (text.size() < 60 * 40) text += "answer ";
  text.resize(60 * 40);
  return fmt::format(R"({{"loop": true, "exchanges": [
    {{"name": "tool", "response": {{"generate": {{"provider": "anthropic", "text": "Reading the notes.",
      "tool_calls": [{{"name": "read_file", "input": {{"path": "notes.txt"}}}}]}}}}}},
    {{"name": "answer", "response": {{"generate": {{"provider": "anthropic", "text": "{}", "text_piece_bytes": 40}},
      "chunk_size": 170, "chunk_delay_ms": 2}}}}]}})",
                     text);
}

long rss_kb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

struct Agentd {
  agentd::bench::TempDir dir;
  std::unique_ptr<agentd::mock_model::MockModelServer> mock;
  std::unique_ptr<ChildProcess> process;
  std::unique_ptr<RpcClient> client;

  Agentd() {
    mock = agentd::bench::start_mock(script(), dir.path());
    const ChildProcess::Options options = agentd::bench::agentd_options(dir.path(), dir.path(), mock->url(), "warn");
    process = std::make_unique<ChildProcess>(
        std::vector<std::string>{AGENTD_BIN, "--db", (dir.path() / "agentd.db").string()}, options);
    client = std::make_unique<RpcClient>(*process);
    client->call("initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  }
  ~Agentd() {
    process->close_stdin();
    process->wait(30s);
  }

  std::string new_session(int n) {
    const auto work = dir.path() / fmt::format("work{}", n);
    std::filesystem::create_directories(work);
    std::ofstream(work / "notes.txt") << "build: green\n";
    Json created = client->call("session/new", fmt::format(R"({{"cwd":"{}","mcpServers":[]}})", work.string()));
    if (!created["result"]["sessionId"].is_string()) throw std::runtime_error("session/new: " + created.dump());
    return created["result"]["sessionId"].as_string();
  }
};

struct Seen {
  std::vector<Json> updates;  // in arrival order
  std::int64_t last_seq = 0;
  Clock::time_point last_delta{};
  int turns = 0;
};

struct LoadRun {
  int sessions = 0;
  int turns = 0;
  std::size_t updates = 0;
  std::size_t compared = 0;
  std::size_t problems = 0;  // out of order, repeated, foreign, lost or different updates; failed turns
  Samples gaps;              // ms between consecutive deltas of one reply
  double seconds = 0;
  double peak_rss_mib = 0;
  std::size_t model_requests = 0;
};

LoadRun run_load(int sessions, int turns) {
  Agentd agentd;
  LoadRun run;
  run.sessions = sessions;
  std::vector<std::string> ids;
  for (int i = 0; i < sessions; ++i) ids.push_back(agentd.new_session(i));
  std::map<std::string, Seen> seen;
  std::map<int, std::string> prompts;  // request id -> session
  auto problem = [&run](const std::string& what) {
    if (run.problems++ < 10) std::fprintf(stderr, "  problem: %s\n", what.c_str());
  };
  const auto started = Clock::now();
  for (const auto& id : ids) prompts[agentd.client->send("session/prompt", RpcClient::prompt_params(id, "go"))] = id;
  while (!prompts.empty()) {
    Json m = agentd.client->next();
    if (m["method"].is_string()) {
      if (m["method"].as_string() != "session/update") continue;
      const Json& params = m["params"];
      const std::string session = params["sessionId"].as_string();
      auto it = seen.find(session);
      if (it == seen.end() && std::find(ids.begin(), ids.end(), session) == ids.end()) {
        problem("an update of an unknown session " + session);
        continue;
      }
      Seen& s = seen[session];
      const std::int64_t seq = params["_meta"]["agentd"]["seq"].as_int64();
      if (seq <= s.last_seq) problem(fmt::format("{}: seq {} after {}", session, seq, s.last_seq));
      s.last_seq = std::max(s.last_seq, seq);
      s.updates.push_back(params);
      ++run.updates;
      if (params["update"]["sessionUpdate"] == Json("agent_message_chunk")) {
        const auto now = Clock::now();
        if (s.last_delta != Clock::time_point{}) run.gaps.add(ms_between(s.last_delta, now));
        s.last_delta = now;
      } else {
        s.last_delta = {};  // a new reply starts after anything else
      }
      continue;
    }
    if (!m["id"].is_integer()) continue;
    auto p = prompts.find(static_cast<int>(m["id"].as_int64()));
    if (p == prompts.end()) continue;
    const std::string session = p->second;
    prompts.erase(p);
    if (!m["result"]["stopReason"].is_string()) problem("a turn failed: " + m.dump());
    Seen& s = seen[session];
    s.last_delta = {};
    ++run.turns;
    if (++s.turns < turns) {
      prompts[agentd.client->send("session/prompt", RpcClient::prompt_params(session, "go on"))] = session;
    }
  }
  run.seconds = ms_between(started, Clock::now()) / 1000.0;
  run.peak_rss_mib = static_cast<double>(agentd.process->peak_rss_kb()) / 1024.0;
  run.model_requests = agentd.mock->requests().size();

  // Everything the client saw is stored as it saw it; what it did not see is the user's own messages.
  for (const auto& id : ids) {
    Json replay = agentd.client->call("_agentd/events/replay",
                                      fmt::format(R"({{"sessionId":"{}","since":0,"limit":100000}})", id));
    std::map<std::int64_t, Json> stored;
    for (const Json& e : replay["result"]["events"].as_array())
      stored.emplace(e["_meta"]["agentd"]["seq"].as_int64(), e);
    std::set<std::int64_t> sent;
    for (const Json& u : seen[id].updates) {
      const std::int64_t seq = u["_meta"]["agentd"]["seq"].as_int64();
      sent.insert(seq);
      auto it = stored.find(seq);
      if (it == stored.end()) {
        problem(fmt::format("{}: update {} was sent but is not stored", id, seq));
      } else if (it->second != u) {
        problem(fmt::format("{}: update {} differs from the stored one", id, seq));
      }
      ++run.compared;
    }
    for (const auto& [seq, e] : stored) {
      if (sent.count(seq) == 0 && e["update"]["sessionUpdate"] != Json("user_message_chunk") &&
          e["update"]["sessionUpdate"] != Json("available_commands_update")) {
        problem(fmt::format("{}: stored update {} ({}) was never sent", id, seq, e["update"]["sessionUpdate"].dump()));
      }
    }
  }
  return run;
}

}  // namespace

int main(int argc, char** argv) try {
  const bool quick = argc > 1 && std::string_view(argv[1]) == "--quick";
  agentd::support::log::set_level(agentd::support::log::Level::warn);
  const int kSessions = quick ? 10 : 50;
  const int kTurns = quick ? 2 : 4;
  const int kIdle = quick ? 100 : 500;

  const LoadRun one = run_load(1, kTurns * 5);
  const LoadRun many = run_load(kSessions, kTurns);

  double idle_before_mib = 0;
  double idle_after_mib = 0;
  {
    Agentd agentd;
    agentd.client->call("_agentd/ping", "{}");
    idle_before_mib = static_cast<double>(rss_kb(agentd.process->pid())) / 1024.0;
    for (int i = 0; i < kIdle; ++i) agentd.new_session(i);
    agentd.client->call("_agentd/ping", "{}");
    idle_after_mib = static_cast<double>(rss_kb(agentd.process->pid())) / 1024.0;
  }
  const double per_idle_kib = (idle_after_mib - idle_before_mib) * 1024.0 / kIdle;
  const double added_p99 = many.gaps.percentile(99) - one.gaps.percentile(99);

  std::printf("agentd_bench_load: one agentd, sessions streaming turns with read_file round trips at once\n");
  std::printf("  %-10s %6s %6s %8s %9s %8s %9s %9s %9s %9s\n", "sessions", "turns", "model", "updates", "compared",
              "problems", "gap p50", "gap p99", "peak RSS", "seconds");
  for (const LoadRun* r : {&one, &many}) {
    std::printf("  %-10d %6d %6zu %8zu %9zu %8zu %7.2fms %7.2fms %6.1fMiB %9.2f\n", r->sessions, r->turns,
                r->model_requests, r->updates, r->compared, r->problems, r->gaps.median(), r->gaps.percentile(99),
                r->peak_rss_mib, r->seconds);
  }
  std::printf("  added p99 gap between deltas with %d sessions: %.2f ms (the mock writes a piece every 2 ms)\n",
              kSessions, added_p99);
  std::printf("  lost, repeated, foreign or altered updates: %zu   %s\n", one.problems + many.problems,
              agentd::bench::pass_word(one.problems + many.problems == 0));
  std::printf("  %d idle sessions in one process: RSS %.1f MiB -> %.1f MiB, %.1f KiB per session\n", kIdle,
              idle_before_mib, idle_after_mib, per_idle_kib);
  return one.problems + many.problems == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "agentd_bench_load: %s\n", e.what());
  return 1;
}
