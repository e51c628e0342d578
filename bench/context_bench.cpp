// agentd_bench_context: retrieve_context (core/context/retrieve.h) on the Linux kernel source tree, cold
// (the first turn: a new WorkspaceIndex walks the tree) and warm (the second turn: the index is refreshed by
// directory mtimes and reused, with a different prompt, so nothing but the index carries over). Prints the
// median and spread of each, the stage breakdown, and PASS/FAIL against the targets (warm < 50 ms,
// cold < 1 s). `--quick` runs on a small generated tree instead, for CI's smoke stage.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_common.h"
#include "core/context/content_indexer.h"
#include "core/context/retrieve.h"

namespace {

namespace fs = std::filesystem;
namespace ctx = agentd::core::context;
using agentd::bench::Clock;
using agentd::bench::Samples;

constexpr long kDefaultRuns = 7;
constexpr long kQuickRuns = 3;
constexpr double kWarmTargetMs = 50;
constexpr double kColdTargetMs = 1000;
constexpr double kIndexTargetMs = 10000;
constexpr double kIndexRssTargetMib = 60;
constexpr std::uint64_t kBudget = 20000;  // context_token_budget of a 200k-token window

// The first turn: a kernel oops with a decoded call trace, as scripts/decode_stacktrace.sh prints it.
constexpr std::string_view kColdInput =
    "Mounting a corrupted ext4 image oopses the kernel. Decoded trace:\n"
    "BUG: kernel NULL pointer dereference, address: 0000000000000010\n"
    "Call Trace:\n"
    " <TASK>\n"
    " __ext4_fill_super (fs/ext4/super.c:5131)\n"
    " ext4_fill_super (fs/ext4/super.c:5680)\n"
    " get_tree_bdev (fs/super.c:1310)\n"
    " vfs_get_tree (fs/super.c:1573)\n"
    " path_mount (fs/namespace.c:3387)\n"
    " </TASK>\n"
    "It started after the journal changes; is `ext4_load_journal` checking the superblock?\n";

// The second turn: a different question, so the search and the slices are new work.
constexpr std::string_view kWarmInput =
    "Where is `tcp_v4_connect` defined, and how does it choose the source port? See also "
    "net/ipv4/inet_hashtables.c";

struct BenchFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw BenchFailure("cannot write " + path.string());
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

// A small kernel-shaped tree: 2000 C files in 40 directories, plus the files the prompts name, with the
// functions defined at the lines the cold prompt's trace gives.
void generate_tree(const fs::path& root) {
  std::mt19937 random(7);
  const std::vector<std::string> words = {"static", "int", "struct", "return", "if",    "(",      ")",
                                          "{",      "}",   ";",      "sb",     "inode", "err",    "=",
                                          "NULL",   "->",  "lock",   "unlock", "0",     "-EINVAL"};
  const auto filler = [&](int lines) {
    std::string text;
    for (int l = 0; l < lines; ++l) {
      const int n = static_cast<int>(random() % 9);
      for (int w = 0; w < n; ++w) {
        text += words[random() % words.size()];
        text += ' ';
      }
      text += '\n';
    }
    return text;
  };
  write(root / ".gitignore", "*.o\n*.ko\n");
  for (int d = 0; d < 40; ++d) {
    for (int f = 0; f < 50; ++f) {
      write(root / fmt::format("drivers/sub{}/file{}.c", d, f), filler(120));
    }
  }
  const auto with_function_at = [&](int line, const std::string& definition) {
    return filler(line - 1) + definition + "\n{\n" + filler(40) + "}\n";
  };
  write(root / "fs/ext4/super.c",
        filler(66) + "static int ext4_load_journal(struct super_block *, struct ext4_super_block *,\n" +
            filler(5131 - 68) + "static int __ext4_fill_super(struct fs_context *fc, struct super_block *sb)\n{\n" +
            filler(5680 - 5133) + "static int ext4_fill_super(struct super_block *sb, struct fs_context *fc)\n{\n" +
            filler(5932 - 5682) + "static int ext4_load_journal(struct super_block *sb,\n" + filler(200));
  write(root / "fs/super.c", with_function_at(1310, "int get_tree_bdev(struct fs_context *fc,") + filler(300));
  write(root / "fs/namespace.c", with_function_at(3387, "int path_mount(const char *dev_name, struct path *path,"));
  write(root / "net/ipv4/tcp_ipv4.c",
        with_function_at(211, "int tcp_v4_connect(struct sock *sk, struct sockaddr *uaddr, int addr_len)"));
  write(root / "net/ipv4/inet_hashtables.c", filler(900));
}

struct Turn {
  Samples total_ms;
  Samples index_ms;
  Samples git_ms;
  Samples search_ms;
  Samples read_ms;
  std::optional<ctx::ContextPackage> last;
};

ctx::ContextPackage run_turn(const fs::path& root, std::string_view input, ctx::WorkspaceIndex& index, Turn& turn) {
  ctx::ContextRequest request;
  request.cwd = root.string();
  request.input = std::string(input);
  request.token_budget = kBudget;
  const auto start = Clock::now();
  auto package = ctx::retrieve_context(request, index, {});
  const double wall = agentd::bench::ms_between(start, Clock::now());
  if (!package) throw BenchFailure("retrieve_context failed: " + package.error().message());
  if (package->used_tokens > kBudget) throw BenchFailure("the package is over its budget");
  turn.total_ms.add(wall);
  turn.index_ms.add(package->stats.index_ms);
  turn.git_ms.add(package->stats.git_ms);
  turn.search_ms.add(package->stats.search_ms);
  turn.read_ms.add(package->stats.read_ms);
  turn.last = *package;
  return std::move(package).value();
}

void print_turn(const char* name, const Turn& t) {
  std::printf("%-34s %8.1f ms median  %8.1f min  %8.1f max   (index %.1f, git %.1f, search %.1f, read %.1f)\n", name,
              t.total_ms.median(), t.total_ms.min(), t.total_ms.max(), t.index_ms.median(), t.git_ms.median(),
              t.search_ms.median(), t.read_ms.median());
}

void print_package(const char* name, const ctx::ContextPackage& p) {
  std::printf("%s: task %s, %zu files indexed, %zu searched (%s), %zu evidence blocks, %zu omitted, %llu/%llu tokens\n",
              name, std::string(ctx::task_kind_name(p.task.kind)).c_str(), p.stats.indexed_files,
              p.stats.searched_files, p.stats.search_exhaustive ? "whole tree" : "focused", p.evidence.size(),
              p.omitted_total, static_cast<unsigned long long>(p.used_tokens),
              static_cast<unsigned long long>(p.budget_tokens));
  for (std::size_t i = 0; i < p.evidence.size() && i < 5; ++i) {
    const auto& e = p.evidence[i];
    std::printf("  %s %s:%zu-%zu  score %.0f  %s\n", e.id.c_str(), e.path.c_str(), e.start_line, e.end_line, e.score,
                e.reason.substr(0, 90).c_str());
  }
}

// The persistent content index (core/context/content_indexer.h): its first build in a new cache, the
// process's RSS with it, a re-check with nothing changed, and warm turns whose focused search it chose.
void content_index_stage(const fs::path& root, long runs, bool quick) {
  agentd::bench::TempDir cache;
  ctx::IndexOptions options;
  options.content.cache_directory = cache.path().string();
  if (quick) options.content_min_files = 0;  // the generated tree is below the usual threshold
  ctx::WorkspaceIndex index(options);
  const double rss_before = agentd::bench::own_max_rss_mib();
  auto start = Clock::now();
  auto refreshed = index.refresh(root.string(), {});
  if (!refreshed || !refreshed->content) throw BenchFailure("no content index for the tree");
  refreshed->content->wait_idle();
  const double build_ms = agentd::bench::ms_between(start, Clock::now());
  const auto status = refreshed->content->status();
  if (!status.ready) throw BenchFailure("the content index failed: " + status.error);
  double disk_mib = 0;
  for (const auto& db : refreshed->content->database_files()) {
    std::error_code ec;
    disk_mib += static_cast<double>(fs::file_size(db, ec)) / 1048576.0;
    const auto wal = fs::file_size(db + "-wal", ec);
    if (!ec) disk_mib += static_cast<double>(wal) / 1048576.0;
  }
  const double rss_after = agentd::bench::current_rss_mib();
  const double rss_peak = agentd::bench::own_max_rss_mib();
  start = Clock::now();
  refreshed->content->update(refreshed->files);
  refreshed->content->wait_idle();
  const double recheck_ms = agentd::bench::ms_between(start, Clock::now());
  Turn warm;
  for (long r = 0; r < runs; ++r) run_turn(root, kWarmInput, index, warm);
  std::printf(
      "\ncontent index: first build %.0f ms for %zu files (%.1f MiB on disk); re-check with nothing changed %.0f ms\n",
      build_ms, status.files, disk_mib, recheck_ms);
  std::printf("content index: RSS %.1f MiB after the build (peak %.1f, %.1f before it)\n", rss_after, rss_peak,
              rss_before);
  print_turn("warm with the content index", warm);
  print_package("warm, content index", *warm.last);
  std::printf("content index: %s\n", warm.last->stats.content_index.c_str());
  std::printf("target: first build < %.0f ms: %s\n", kIndexTargetMs,
              agentd::bench::pass_word(build_ms < kIndexTargetMs));
  std::printf("target: RSS with the index < %.0f MiB: %s\n", kIndexRssTargetMib,
              agentd::bench::pass_word(rss_after < kIndexRssTargetMib));
  std::printf("target: warm with the index < %.0f ms (median): %s\n", kWarmTargetMs,
              agentd::bench::pass_word(warm.total_ms.median() < kWarmTargetMs));
}

void usage() {
  std::fprintf(stderr,
               "usage: agentd_bench_context [--quick] [--runs N] [--dir PATH] [--no-content-index]\n"
               "  --quick      a generated tree of 2000 files, %ld runs: a smoke run for CI\n"
               "  --runs N     timed turns of each kind (default %ld)\n"
               "  --dir PATH   the tree (default: $AGENTD_BENCH_TREE, else the Linux source unpacked under\n"
               "               bench/data/ from %s)\n"
               "  --no-content-index  skip the content index stage (its first build, RSS, warm turns)\n",
               kQuickRuns, kDefaultRuns, agentd::bench::kKernelTarball.data());
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  bool with_content_index = true;
  long runs = kDefaultRuns;
  std::string dir;
  if (const char* env = std::getenv("AGENTD_BENCH_TREE"); env != nullptr) dir = env;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      quick = true;
      runs = kQuickRuns;
    } else if (arg == "--runs" && i + 1 < argc) {
      const auto n = agentd::bench::parse_count(argv[++i]);
      if (!n) {
        usage();
        return 2;
      }
      runs = *n;
    } else if (arg == "--no-content-index") {
      with_content_index = false;
    } else if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      usage();
      return 2;
    }
  }

  try {
    std::optional<agentd::bench::TempDir> scratch;
    fs::path root;
    if (quick) {
      scratch.emplace();
      root = scratch->path() / "tree";
      generate_tree(root);
    } else {
      root = agentd::bench::kernel_tree(dir, AGENTD_SOURCE_DIR);
      if (root.empty()) {
        std::printf(
            "context: no tree: install linux-source-6.1 (apt-get install linux-source-6.1), or pass --dir PATH; "
            "skipped\n");
        return 0;
      }
    }
    root = fs::canonical(root);
    std::printf("context: %s, %ld timed turns of each kind, budget %llu tokens, %ld CPUs\n", root.c_str(), runs,
                static_cast<unsigned long long>(kBudget), agentd::bench::online_cpus());

    // The very first turn also pays for a page cache that may be cold; reported, not compared.
    Turn first;
    {
      ctx::WorkspaceIndex index;
      run_turn(root, kColdInput, index, first);
    }
    // Cold: a new index each time (a new workspace, or the daemon's first turn), page cache warm.
    Turn cold;
    // Warm: the second turn of a session, a different prompt, the index kept.
    Turn warm;
    Turn warm_same;
    for (long r = 0; r < runs; ++r) {
      ctx::WorkspaceIndex index;
      run_turn(root, kColdInput, index, cold);
      run_turn(root, kWarmInput, index, warm);
      run_turn(root, kColdInput, index, warm_same);
    }

    std::printf("\n");
    print_turn("first turn ever (cache as found)", first);
    print_turn("cold: first turn, new index", cold);
    print_turn("warm: second turn, other prompt", warm);
    print_turn("warm: second turn, same prompt", warm_same);
    std::printf("\n");
    print_package("cold", *cold.last);
    print_package("warm", *warm.last);
    const bool warm_pass = warm.total_ms.median() < kWarmTargetMs;
    const bool cold_pass = cold.total_ms.median() < kColdTargetMs;
    std::printf("\ntarget: warm < %.0f ms (median): %s\n", kWarmTargetMs, agentd::bench::pass_word(warm_pass));
    std::printf("target: cold < %.0f ms (median): %s\n", kColdTargetMs, agentd::bench::pass_word(cold_pass));
    if (with_content_index) content_index_stage(root, runs, quick);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agentd_bench_context: %s\n", e.what());
    return 1;
  }
}
