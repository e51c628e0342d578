// agentd_bench_rpc: JSON-RPC round-trip throughput of one agentd over one pipe. A writer thread pushes
// N `_agentd/ping` requests as fast as the pipe takes them while this thread reads and checks every
// response; the same bytes pushed through `cat` are the baseline. See bench/README.md.
#include <simdjson.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/bench_common.h"
#include "test/support/child_process.h"

namespace {

using agentd::bench::Clock;
using agentd::testing::ChildProcess;

constexpr long kDefaultRequests = 200000;
constexpr long kQuickRequests = 20000;
constexpr long kDefaultTrials = 3;
constexpr long kQuickTrials = 1;
// A stream that goes quiet this long has stalled: fail instead of hanging CI.
constexpr auto kStallTimeout = std::chrono::seconds(10);
constexpr double kTargetRequestsPerSecond = 100000;

constexpr std::string_view kInitialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}})"
    "\n";

struct BenchFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a line must be: agentd's success result for a ping, or (through cat) the ping itself.
enum class Expect { result, echo };

// Checks one line and returns its id. simdjson reads it in place: `capacity` counts the bytes after
// the line's start that may be read (at least SIMDJSON_PADDING beyond its end), so no copy is made.
int64_t checked_id(simdjson::ondemand::parser& parser, std::string_view line, std::size_t capacity, Expect expect) {
  simdjson::ondemand::document doc;
  simdjson::ondemand::object object;
  if (parser.iterate(simdjson::padded_string_view(line.data(), line.size(), capacity)).get(doc) ||
      doc.get_object().get(object)) {
    throw BenchFailure("not a JSON object: " + std::string(line));
  }
  int64_t id = -1;
  bool jsonrpc = false;
  bool result = false;
  bool method = false;
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) throw BenchFailure("bad key in: " + std::string(line));
    if (key == "id") {
      if (field.value().get_int64().get(id)) throw BenchFailure("id is not an integer: " + std::string(line));
    } else if (key == "jsonrpc") {
      std::string_view version;
      jsonrpc = !field.value().get_string().get(version) && version == "2.0";
    } else if (key == "result") {
      result = true;
    } else if (key == "method") {
      std::string_view name;
      method = !field.value().get_string().get(name) && name == "_agentd/ping";
    } else if (key == "error") {
      throw BenchFailure("error response: " + std::string(line));
    }
  }
  const bool ok = jsonrpc && (expect == Expect::result ? result && !method : method && !result);
  if (!ok || id < 0) throw BenchFailure("unexpected line: " + std::string(line));
  return id;
}

struct Trial {
  double seconds = 0;
  long lines = 0;
  std::size_t bytes_in = 0;   // requests written
  std::size_t bytes_out = 0;  // response bytes read
  double child_cpu_seconds = 0;
  double client_cpu_seconds = 0;  // this process: writer thread and reader
  double child_rss_mb = 0;

  double lines_per_second() const { return static_cast<double>(lines) / seconds; }
};

// Spawns `argv`, does the initialize exchange untimed, then times `payload` (requests 1..count) going
// in while every response is read and checked: each id answered exactly once.
Trial run_trial(const std::vector<std::string>& argv, const std::string& payload, long count, Expect expect) {
  ChildProcess child(argv);
  if (!child.write(kInitialize)) throw BenchFailure(argv[0] + ": cannot write to its stdin");
  if (!child.read_line(kStallTimeout)) {
    throw BenchFailure(argv[0] + ": no answer to initialize; stderr:\n" + child.stderr_text());
  }

  Trial trial;
  trial.bytes_in = payload.size();
  std::vector<bool> answered(static_cast<std::size_t>(count) + 1, false);
  simdjson::ondemand::parser parser;
  std::string buffer;
  std::size_t consumed = 0;

  const double cpu_before = agentd::bench::own_cpu_seconds();
  const auto start = Clock::now();
  bool write_ok = true;
  std::thread writer([&] { write_ok = child.write(payload); });
  try {
    while (trial.lines < count) {
      // Room for simdjson's padding past the last line, so lines are checked where they lie.
      buffer.reserve(buffer.size() + 65536 + simdjson::SIMDJSON_PADDING);
      if (!child.read_some(buffer, kStallTimeout)) {
        throw BenchFailure(argv[0] + ": output stalled or ended after " + std::to_string(trial.lines) + " of " +
                           std::to_string(count) + " responses");
      }
      std::size_t nl;
      while ((nl = buffer.find('\n', consumed)) != std::string::npos) {
        const std::string_view line(buffer.data() + consumed, nl - consumed);
        const int64_t id = checked_id(parser, line, buffer.capacity() - consumed, expect);
        if (id < 1 || id > count) throw BenchFailure("response to an id never sent: " + std::string(line));
        if (answered[static_cast<std::size_t>(id)]) throw BenchFailure("id answered twice: " + std::string(line));
        answered[static_cast<std::size_t>(id)] = true;
        trial.bytes_out += line.size() + 1;
        ++trial.lines;
        consumed = nl + 1;
      }
      buffer.erase(0, consumed);
      consumed = 0;
    }
  } catch (...) {
    // Unblock a writer stuck on a full pipe before leaving.
    child.signal(SIGKILL);
    writer.join();
    throw;
  }
  const auto end = Clock::now();
  writer.join();
  trial.seconds = std::chrono::duration<double>(end - start).count();
  trial.client_cpu_seconds = agentd::bench::own_cpu_seconds() - cpu_before;
  if (!write_ok) throw BenchFailure(argv[0] + ": its stdin closed before all requests were written");

  const long sampled_rss_kb = child.peak_rss_kb();
  // Anything after the last expected response is a response to nothing.
  child.close_stdin();
  const std::string rest = child.read_all_stdout(kStallTimeout);
  const auto status = child.wait(kStallTimeout);
  if (!buffer.empty() || !rest.empty()) throw BenchFailure(argv[0] + ": extra output: " + buffer + rest);
  if (!status || !status->exited || status->code != 0) {
    throw BenchFailure(argv[0] + ": did not exit cleanly after stdin closed; stderr:\n" + child.stderr_text());
  }
  trial.child_cpu_seconds = status->user_seconds + status->system_seconds;
  trial.child_rss_mb = agentd::bench::own_peak_rss_mib(sampled_rss_kb, *status);
  return trial;
}

// Requests with ids 1..count, one per line, built before timing so the writer only writes.
std::string build_payload(long count) {
  std::string payload;
  payload.reserve(static_cast<std::size_t>(count) * 56);
  for (long id = 1; id <= count; ++id) {
    payload += R"({"jsonrpc":"2.0","id":)";
    payload += std::to_string(id);
    payload += R"(,"method":"_agentd/ping"})";
    payload += '\n';
  }
  return payload;
}

void print_trial(const char* name, long index, const Trial& t) {
  std::printf(
      "%-8s trial %ld: %8.3f s %12.0f lines/s %8.2f MiB/s in %8.2f MiB/s out   CPU: %.2f s child, %.2f s client", name,
      index, t.seconds, t.lines_per_second(), static_cast<double>(t.bytes_in) / t.seconds / 1048576.0,
      static_cast<double>(t.bytes_out) / t.seconds / 1048576.0, t.child_cpu_seconds, t.client_cpu_seconds);
  std::printf("   peak RSS %.2f MiB\n", t.child_rss_mb);
}

// The trial with the median rate: the one reported and compared.
const Trial& median_trial(std::vector<Trial>& trials) {
  std::sort(trials.begin(), trials.end(),
            [](const Trial& a, const Trial& b) { return a.lines_per_second() < b.lines_per_second(); });
  return trials[(trials.size() - 1) / 2];
}

void print_usage() {
  std::printf(
      "usage: agentd_bench_rpc [--requests N] [--trials N] [--quick] [--agentd PATH]\n"
      "  --requests N   pings per trial (default %ld)\n"
      "  --trials N     trials of each program; the median trial is reported (default %ld)\n"
      "  --quick        %ld requests, %ld trial, for a smoke run in CI\n"
      "  --agentd PATH  the agentd binary to measure (default: the one built with this benchmark)\n",
      kDefaultRequests, kDefaultTrials, kQuickRequests, kQuickTrials);
}

}  // namespace

int main(int argc, char** argv) {
  long requests = kDefaultRequests;
  long trials = kDefaultTrials;
  std::string agentd_bin = AGENTD_BIN;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      requests = kQuickRequests;
      trials = kQuickTrials;
    } else if ((arg == "--requests" || arg == "--trials") && i + 1 < argc) {
      const auto n = agentd::bench::parse_count(argv[++i]);
      if (!n) {
        std::fprintf(stderr, "agentd_bench_rpc: %s wants a positive count\n", argv[i - 1]);
        return 2;
      }
      (arg == "--requests" ? requests : trials) = *n;
    } else if (arg == "--agentd" && i + 1 < argc) {
      agentd_bin = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      print_usage();
      return 0;
    } else {
      std::fprintf(stderr, "agentd_bench_rpc: unknown argument '%s'\n", argv[i]);
      print_usage();
      return 2;
    }
  }

  try {
    const agentd::bench::TempDir dir;
    const std::string db = (dir.path() / "bench.db").string();
    const std::vector<std::string> agentd_argv{agentd_bin, "--db", db};
    const std::vector<std::string> cat_argv{"cat"};
    const std::string payload = build_payload(requests);

    std::printf("JSON-RPC throughput over one pipe: %ld _agentd/ping requests x %ld trials, %ld CPUs online\n",
                requests, trials, agentd::bench::online_cpus());
    std::printf("agentd: %s --db %s\n\n", agentd_bin.c_str(), db.c_str());

    // Interleaved, so drift in machine load (2 shared cores) hits both series alike.
    std::vector<Trial> cat;
    std::vector<Trial> agentd;
    for (long i = 0; i < trials; ++i) {
      cat.push_back(run_trial(cat_argv, payload, requests, Expect::echo));
      print_trial("cat", i + 1, cat.back());
      agentd.push_back(run_trial(agentd_argv, payload, requests, Expect::result));
      print_trial("agentd", i + 1, agentd.back());
    }

    const Trial& base = median_trial(cat);
    const Trial& ours = median_trial(agentd);
    const double rate = ours.lines_per_second();
    std::printf("\nmedian trials:\n");
    std::printf("  cat (pipe echo floor): %12.0f lines/s     %8.2f MiB/s\n", base.lines_per_second(),
                static_cast<double>(base.bytes_in) / base.seconds / 1048576.0);
    std::printf("  agentd:                %12.0f requests/s  %8.2f MiB/s in, %.2f MiB/s out\n", rate,
                static_cast<double>(ours.bytes_in) / ours.seconds / 1048576.0,
                static_cast<double>(ours.bytes_out) / ours.seconds / 1048576.0);
    std::printf("  agentd / cat: %.3fx   agentd CPU per request: %.2f us (client: %.2f us)\n",
                rate / base.lines_per_second(), ours.child_cpu_seconds / static_cast<double>(ours.lines) * 1e6,
                ours.client_cpu_seconds / static_cast<double>(ours.lines) * 1e6);
    std::printf("\ntarget (informational):\n");
    std::printf("  > %.0f trivial requests/s through one pipe: %.0f requests/s   %s\n", kTargetRequestsPerSecond, rate,
                agentd::bench::pass_word(rate > kTargetRequestsPerSecond));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agentd_bench_rpc: benchmark failed: %s\n", e.what());
    return 1;
  }
}
