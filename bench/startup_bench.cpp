// agentd_bench_startup: cold start of the real agentd binary to its `initialize` response, wall time
// and peak RSS over many runs, against the same spawn-write-read-reap cycle with `cat` (the floor that
// process creation and a pipe round trip set on this machine). See bench/README.md.
#include <simdjson.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_common.h"
#include "test/support/child_process.h"

namespace {

using agentd::bench::Clock;
using agentd::bench::Samples;
using agentd::testing::ChildProcess;

constexpr long kDefaultRuns = 200;
constexpr long kQuickRuns = 20;
// Untimed runs of each program first, so the page cache and the dynamic loader's caches are warm for
// both sides alike and the first timed sample is not an outlier.
constexpr int kWarmupRuns = 3;
constexpr auto kTimeout = std::chrono::seconds(10);
constexpr double kTargetStartupMs = 5.0;
constexpr double kTargetRssMb = 8.0;

constexpr std::string_view kInitialize =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}})"
    "\n";

struct Run {
  double wall_ms = 0;  // spawn until the first response line has arrived
  double rss_mb = 0;   // the child's own peak resident set size (see own_peak_rss_mib); 0 if unknown
  double cpu_ms = 0;   // user + system time of the child
};

// Why a run failed; the benchmark stops at the first one, since its numbers would mean nothing.
struct BenchFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A line that is agentd's answer to our initialize: id 1, a result with protocolVersion 1.
bool is_initialize_result(const std::string& line) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(line).get(doc) != simdjson::SUCCESS) return false;
  int64_t id = 0;
  int64_t version = 0;
  return doc["id"].get(id) == simdjson::SUCCESS && id == 1 &&
         doc["result"]["protocolVersion"].get(version) == simdjson::SUCCESS && version == 1;
}

// What a program must answer with, which also says whether it is sent our initialize line first.
enum class Reply { echo, initialize_result, version_line };

// One spawn-write-read-reap cycle: timed from spawn until the first line arrives.
Run run_once(const std::vector<std::string>& argv, Reply reply) {
  const auto start = Clock::now();
  ChildProcess child(argv);
  if (reply != Reply::version_line && !child.write(kInitialize)) {
    throw BenchFailure(argv[0] + ": cannot write to its stdin");
  }
  const auto line = child.read_line(kTimeout);
  const auto end = Clock::now();
  const long sampled_rss_kb = child.peak_rss_kb();

  child.close_stdin();
  const auto status = child.wait(kTimeout);
  const std::string stderr_text = child.stderr_text();
  if (!line) throw BenchFailure(argv[0] + ": no response line within the timeout; stderr:\n" + stderr_text);
  const bool answered = reply == Reply::echo                ? *line + "\n" == kInitialize
                        : reply == Reply::initialize_result ? is_initialize_result(*line)
                                                            : line->starts_with("agentd ");
  if (!answered) throw BenchFailure(argv[0] + ": unexpected response: " + *line);
  if (!status) throw BenchFailure(argv[0] + ": did not exit after stdin closed");
  if (!status->exited || status->code != 0) {
    throw BenchFailure(argv[0] + ": exited with code " + std::to_string(status->code) + ", signal " +
                       std::to_string(status->signal) + "; stderr:\n" + stderr_text);
  }
  return Run{agentd::bench::ms_between(start, end), agentd::bench::own_peak_rss_mib(sampled_rss_kb, *status),
             (status->user_seconds + status->system_seconds) * 1000.0};
}

// One program measured over many runs.
struct Probe {
  std::string name;
  std::vector<std::string> argv;
  Reply reply;
  Samples wall_ms;
  Samples rss_mb;
  Samples cpu_ms;

  void run(bool record) {
    const Run r = run_once(argv, reply);
    if (!record) return;
    wall_ms.add(r.wall_ms);
    if (r.rss_mb > 0) rss_mb.add(r.rss_mb);
    cpu_ms.add(r.cpu_ms);
  }
};

void print_row(const Probe& p) {
  std::printf("%-34s %8.3f %8.3f %8.3f   ", p.name.c_str(), p.wall_ms.median(), p.wall_ms.percentile(90),
              p.wall_ms.min());
  // Complete RSS figures only: a program that exits before we can sample it may leave gaps.
  if (p.rss_mb.size() == p.wall_ms.size()) {
    std::printf("%8.2f %8.2f", p.rss_mb.median(), p.rss_mb.max());
  } else {
    std::printf("%8s %8s", "n/a", "n/a");
  }
  std::printf("   %8.3f\n", p.cpu_ms.median());
}

void print_usage() {
  std::printf(
      "usage: agentd_bench_startup [--runs N] [--quick] [--agentd PATH] [--compare PATH]...\n"
      "  --runs N        timed runs of each program (default %ld)\n"
      "  --quick         %ld runs, for a smoke run in CI\n"
      "  --agentd PATH   the agentd binary to measure (default: the one built with this benchmark)\n"
      "  --compare PATH  also measure this agentd build (--db FILE), interleaved with the others\n",
      kDefaultRuns, kQuickRuns);
}

}  // namespace

int main(int argc, char** argv) {
  long runs = kDefaultRuns;
  std::string agentd_bin = AGENTD_BIN;
  std::vector<std::string> compare_bins;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      runs = kQuickRuns;
    } else if (arg == "--runs" && i + 1 < argc) {
      const auto n = agentd::bench::parse_count(argv[++i]);
      if (!n) {
        std::fprintf(stderr, "agentd_bench_startup: --runs wants a positive count\n");
        return 2;
      }
      runs = *n;
    } else if (arg == "--agentd" && i + 1 < argc) {
      agentd_bin = argv[++i];
    } else if (arg == "--compare" && i + 1 < argc) {
      compare_bins.emplace_back(argv[++i]);
    } else if (arg == "--help" || arg == "-h") {
      print_usage();
      return 0;
    } else {
      std::fprintf(stderr, "agentd_bench_startup: unknown argument '%s'\n", argv[i]);
      print_usage();
      return 2;
    }
  }

  try {
    const agentd::bench::TempDir dir;
    const std::string db = (dir.path() / "bench.db").string();
    const std::vector<std::string> agentd_argv{agentd_bin, "--db", db};

    std::printf("agentd start-up to initialize response: %ld runs each, %ld CPUs online\n", runs,
                agentd::bench::online_cpus());
    std::printf("agentd: %s --db %s\n\n", agentd_bin.c_str(), db.c_str());

    // The first run creates the database and its schema; every later run opens an existing one, which
    // is what a frontend pays on each start after the first.
    const Run first = run_once(agentd_argv, Reply::initialize_result);
    std::printf("first run, creating the database: %.3f ms wall, %.2f MiB peak RSS, %.3f ms CPU\n\n", first.wall_ms,
                first.rss_mb, first.cpu_ms);

    // The baseline, the measured start-up, and two partial start-ups that split it into phases: --version
    // exits after the dynamic loader and static initializers; ":memory:" skips the database file's I/O.
    Probe cat{"cat (spawn + pipe floor)", {"cat"}, Reply::echo, {}, {}, {}};
    Probe agentd{"agentd --db FILE", agentd_argv, Reply::initialize_result, {}, {}, {}};
    Probe version{"  phase: agentd --version", {agentd_bin, "--version"}, Reply::version_line, {}, {}, {}};
    Probe memory{
        "  phase: agentd --db :memory:", {agentd_bin, "--db", ":memory:"}, Reply::initialize_result, {}, {}, {}};
    std::vector<Probe*> probes{&cat, &agentd, &version, &memory};
    // Other builds (static vs shared libraries, say), each against its own database, run in the same
    // rotation: under a changing load only an interleaved comparison means anything.
    std::vector<Probe> compared;
    compared.reserve(compare_bins.size());
    for (std::size_t i = 0; i < compare_bins.size(); ++i) {
      const std::string compare_db = (dir.path() / ("compare" + std::to_string(i) + ".db")).string();
      std::vector<std::string> argv_i{compare_bins[i], "--db", compare_db};
      run_once(argv_i, Reply::initialize_result);  // creates its database, untimed
      const std::string base = std::filesystem::path(compare_bins[i]).filename().string();
      compared.push_back(Probe{"compare: " + base, std::move(argv_i), Reply::initialize_result, {}, {}, {}});
      std::printf("compare %zu: %s --db %s\n", i + 1, compare_bins[i].c_str(), compare_db.c_str());
    }
    for (Probe& p : compared) probes.push_back(&p);
    if (!compared.empty()) std::printf("\n");

    // Warm-up runs first, then interleaved runs, so drift in machine load (2 shared cores) hits every
    // series alike.
    for (int i = 0; i < kWarmupRuns; ++i) {
      for (Probe* p : probes) p->run(false);
    }
    for (long i = 0; i < runs; ++i) {
      for (Probe* p : probes) p->run(true);
    }

    std::printf("%-34s %8s %8s %8s   %8s %8s   %8s\n", "", "wall ms", "", "", "RSS MiB", "", "CPU ms");
    std::printf("%-34s %8s %8s %8s   %8s %8s   %8s\n", "program", "median", "p90", "min", "median", "max", "median");
    for (const Probe* p : probes) print_row(*p);
    std::printf(
        "(peak RSS is each child's own: wait4's ru_maxrss of a posix_spawn child includes this benchmark's\n"
        " own peak, %.2f MiB, so below that the child's VmHWM sampled after its response is used)\n",
        agentd::bench::own_max_rss_mib());
    std::printf("\nagentd / cat, median wall: %.2fx (agentd's own start-up: ~%.3f ms over the floor)\n",
                agentd.wall_ms.median() / cat.wall_ms.median(), agentd.wall_ms.median() - cat.wall_ms.median());
    for (const Probe& p : compared) {
      std::printf("%s / agentd, median wall: %.2fx (%+.3f ms)\n", p.name.c_str(),
                  p.wall_ms.median() / agentd.wall_ms.median(), p.wall_ms.median() - agentd.wall_ms.median());
    }

    const double startup = agentd.wall_ms.median();
    const double rss = agentd.rss_mb.max();
    std::printf("\ntargets (informational):\n");
    std::printf("  initialize response < %.0f ms (median wall): %8.3f ms   %s\n", kTargetStartupMs, startup,
                agentd::bench::pass_word(startup < kTargetStartupMs));
    std::printf("  peak RSS < %.0f MiB (max over runs):        %8.2f MiB  %s\n", kTargetRssMb, rss,
                agentd::bench::pass_word(rss < kTargetRssMb));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agentd_bench_startup: benchmark failed: %s\n", e.what());
    return 1;
  }
}
