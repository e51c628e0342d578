// agentd_bench_chaos: a misbehaving provider (issue 17's robustness campaign).
//
// Each case is a fresh agentd and a fresh mock model whose first answer misbehaves: HTTP 429/529/5xx with
// and without retry-after, a connection reset before the response and after its first bytes, a drop in the
// middle of a tool call's arguments, garbage instead of an event stream, a chunked body cut short, a stall
// (full run only: it takes the 120 s idle timeout), an endless stream (ended by session/cancel). Later
// answers are well-formed. A case passes when the prompt ends within its limit with an allowed outcome
// (answered after a retry, a clear error, or cancelled), the next prompt in the same session is answered
// (the history survived), and every request the model got pairs each tool call with its result. Prints a
// closing table; exits 1 when a case fails.
#include <chrono>
#include <cstdio>
#include <filesystem>
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
using agentd::bench::RpcClient;
using agentd::support::Json;
using agentd::testing::ChildProcess;
using namespace std::chrono_literals;

constexpr std::string_view kOk =
    R"({"name": "ok", "response": {"generate": {"provider": "anthropic", "text": "All good."}}})";

struct Case {
  std::string name;
  std::string fault;                // the first exchange's JSON
  std::set<std::string> allowed;    // "answered", "error", "cancelled"
  std::chrono::seconds limit{30};   // the prompt must end within this
  bool cancel_after_500ms = false;  // the client cancels (the endless stream)
  bool full_only = false;           // too slow for --quick
};

std::vector<Case> cases() {
  const std::string tool_call =
      R"("generate": {"provider": "anthropic", "text": "Writing.", "tool_calls": [{"name": "write_file",
         "input": {"path": "out.txt", "content": "a long enough content for the cut to fall inside it"}}]})";
  const std::string long_text = std::string(2000, 'x');
  return {
      {"429 with retry-after: 1",
       R"({"name": "f", "response": {"status": 429, "headers": {"retry-after": "1"},
         "body": {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}}})",
       {"answered"}},
      {"429 without retry-after",
       R"({"name": "f", "response": {"status": 429,
         "body": {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}}})",
       {"answered"}},
      {"529 overloaded",
       R"({"name": "f", "response": {"status": 529,
         "body": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}}})",
       {"answered"}},
      {"500 internal error", R"({"name": "f", "response": {"status": 500, "body": "oops"}})", {"answered"}},
      {"503 with retry-after: 1",
       R"({"name": "f", "response": {"status": 503, "headers": {"retry-after": "1"},
         "body": "unavailable"}})",
       {"answered"}},
      {"reset before the response", R"({"name": "f", "response": {"disconnect_before_headers": true}})", {"answered"}},
      {"reset after the first bytes",
       fmt::format(R"({{"name": "f", "response": {{"generate": {{"provider": "anthropic", "text": "{}"}},
         "disconnect_after_bytes": 40}}}})",
                   long_text),
       {"answered", "error"}},
      {"drop inside a tool call's arguments",
       fmt::format(R"({{"name": "f", "response": {{{}, "disconnect_after_bytes": 900}}}})", tool_call),
       {"answered", "error"}},
      {"garbage instead of events",
       R"({"name": "f", "response": {"events": [{"raw": "\u0000\u0001 not SSE at all\n\n"},
         {"raw": "data: {broken json\n\n"}]}})",
       {"answered", "error"}},
      {"chunked body cut short",
       fmt::format(R"({{"name": "f", "response": {{"generate": {{"provider": "anthropic", "text": "{}"}},
         "chunk_size": 100, "disconnect_after_bytes": 650}}}})",
                   long_text),
       {"answered", "error"}},
      {"endless stream, cancelled",
       fmt::format(R"({{"name": "f", "response": {{"generate": {{"provider": "anthropic", "text": "{}",
         "text_piece_bytes": 10}}, "chunk_size": 64, "chunk_delay_ms": 20}}}})",
                   std::string(200000, 'y')),
       {"cancelled"},
       10s,
       true},
      {"stall after the first bytes",
       R"({"name": "f", "response": {"generate": {"provider": "anthropic",
         "text": "stalls"}, "stall_after_bytes": 120}})",
       {"answered", "error"},
       200s,
       false,
       true},
  };
}

struct Outcome {
  std::string ended;  // answered, error, cancelled, hung
  double seconds = 0;
  bool next_answered = false;
  long requests = 0;
  long unpaired = 0;
  std::string detail;
};

Outcome run_case(const Case& c, const agentd::bench::TempDir& dir, int index) {
  Outcome out;
  const auto work = dir.path() / fmt::format("case{}", index);
  std::filesystem::create_directories(work);
  const std::string script_text =
      fmt::format(R"({{"exchanges": [{}, {}, {}, {}, {}, {}]}})", c.fault, kOk, kOk, kOk, kOk, kOk);
  auto mock = agentd::bench::start_mock(script_text, dir.path());
  const ChildProcess::Options options = agentd::bench::agentd_options(dir.path(), work, mock->url(), "error");
  ChildProcess agentd({AGENTD_BIN, "--db", (work / "agentd.db").string()}, options);
  RpcClient client(agentd);
  client.call("initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  Json created = client.call("session/new", fmt::format(R"({{"cwd":"{}","mcpServers":[]}})", work.string()));
  const std::string session = created["result"]["sessionId"].as_string();
  client.call("session/set_mode", fmt::format(R"({{"sessionId":"{}","modeId":"acceptEdits"}})", session));

  const auto start = Clock::now();
  const int id = client.send("session/prompt", RpcClient::prompt_params(session, "go"));
  bool cancel_sent = false;
  out.ended = "hung";
  while (Clock::now() - start < c.limit) {
    if (c.cancel_after_500ms && !cancel_sent && Clock::now() - start > 500ms) {
      agentd.write(
          fmt::format(R"({{"jsonrpc":"2.0","method":"session/cancel","params":{{"sessionId":"{}"}}}})", session) +
          "\n");
      cancel_sent = true;
    }
    auto line = agentd.read_line(100ms);
    if (!line) continue;
    auto m = agentd::support::parse_json(*line);
    if (!m || !RpcClient::is_response(*m, id)) continue;
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if ((*m)["result"]["stopReason"].is_string()) {
      out.ended = (*m)["result"]["stopReason"].as_string() == "cancelled" ? "cancelled" : "answered";
    } else {
      out.ended = "error";
      out.detail = (*m)["error"]["message"].is_string() ? (*m)["error"]["message"].as_string() : m->dump();
    }
    break;
  }
  if (out.ended != "hung") {
    Json next = client.call("session/prompt", RpcClient::prompt_params(session, "and now?"));
    out.next_answered = next["result"]["stopReason"].is_string();
    if (!out.next_answered && out.detail.empty()) out.detail = next.dump();
  }
  for (const Json& request : mock->requests()) {
    ++out.requests;
    out.unpaired += agentd::bench::unpaired_tool_calls(request["body"]);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) try {
  const bool quick = argc > 1 && std::string_view(argv[1]) == "--quick";
  agentd::support::log::set_level(agentd::support::log::Level::warn);
  agentd::bench::TempDir dir;
  std::printf("agentd_bench_chaos: the provider misbehaves on the first answer of a prompt; a second prompt follows\n");
  std::printf("  %-38s %-10s %8s %6s %9s %9s  %s\n", "case", "ended", "seconds", "limit", "next turn", "requests",
              "result");
  bool all = true;
  int index = 0;
  for (const Case& c : cases()) {
    ++index;
    if (quick && c.full_only) {
      std::printf("  %-38s %-10s %8s %5llds %9s %9s  %s\n", c.name.c_str(), "-", "-",
                  static_cast<long long>(c.limit.count()), "-", "-", "skipped (--quick)");
      continue;
    }
    const Outcome out = run_case(c, dir, index);
    const bool pass = c.allowed.contains(out.ended) && out.next_answered && out.unpaired == 0;
    all = all && pass;
    std::printf("  %-38s %-10s %8.2f %5llds %9s %9ld  %s%s\n", c.name.c_str(), out.ended.c_str(), out.seconds,
                static_cast<long long>(c.limit.count()), out.next_answered ? "answered" : "FAILED", out.requests,
                pass ? "PASS" : "FAIL", out.unpaired > 0 ? " (a tool call without its result)" : "");
    if (!out.detail.empty()) std::printf("    %s\n", out.detail.substr(0, 200).c_str());
  }
  std::printf("  %s\n", agentd::bench::pass_word(all));
  return all ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "agentd_bench_chaos: %s\n", e.what());
  return 1;
}
