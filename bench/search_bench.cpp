// agentd_bench_search: the grep tool's search core (tools/search.h, the same walker, ignore rules and
// matcher the tool uses) against ripgrep on the same tree, in one run: a literal query, a regex query and a
// file glob, median wall time of warm runs, the ratio, and whether both found the same number of lines.
// The tree is the Linux kernel source (Debian's linux-source-6.1, unpacked once under bench/data/) or any
// directory given; `--quick` generates a small tree instead, for CI's smoke stage.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>

#include "bench/bench_common.h"
#include "test/support/child_process.h"
#include "tools/builtin/builtin_tools.h"
#include "tools/ignore.h"
#include "tools/search.h"
#include "tools/walk.h"

namespace {

namespace fs = std::filesystem;
using agentd::bench::Clock;
using agentd::bench::Samples;
using agentd::testing::ChildProcess;

constexpr long kDefaultRuns = 5;
constexpr long kQuickRuns = 3;
constexpr std::string_view kTarball = agentd::bench::kKernelTarball;
constexpr double kTargetRatio = 1.5;
constexpr auto kTimeout = std::chrono::minutes(5);

struct BenchFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What one side of one query found: matching lines (grep) or files (glob).
struct Outcome {
  double seconds = 0;
  std::size_t count = 0;
  std::size_t symlinks = 0;  // glob: symlinks to files, which the glob tool lists and `rg --files` does not
};

// rg with the settings that make it apply the same rules as agentd's walker: .gitignore files even
// outside a git repository (the kernel tarball has no .git), no user or global configuration.
Outcome run_rg(const fs::path& root, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"rg", "--no-config", "--no-require-git", "--no-ignore-global", "--no-messages"};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess::Options options;
  options.cwd = root.string();
  // Not a pipe: with no path given, rg searches a piped stdin instead of the directory.
  options.stdin_file = "/dev/null";
  const auto start = Clock::now();
  ChildProcess child(argv, options);
  std::string out;
  // Read as it comes, as the tool's caller would, counting lines.
  std::size_t lines = 0;
  while (child.read_some(out, kTimeout)) {
    lines += static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n'));
    out.clear();
  }
  const auto status = child.wait(kTimeout);
  const auto end = Clock::now();
  if (!status || !status->exited || status->code > 1) {
    throw BenchFailure("rg failed: " + child.stderr_text());
  }
  return {agentd::bench::ms_between(start, end) / 1000.0, lines};
}

Outcome run_agentd_grep(const fs::path& root, const std::string& pattern) {
  const auto start = Clock::now();
  auto matcher = agentd::tools::Matcher::compile(agentd::tools::SearchPattern{pattern, false, false});
  if (!matcher) throw BenchFailure("pattern does not compile: " + matcher.error().message());
  // The tool's settings: output kept to what it would show, lines cut the same way.
  agentd::tools::SearchOptions options;
  options.max_line_bytes = agentd::tools::kGrepMaxLineBytes;
  options.max_kept_bytes = 2 * agentd::tools::kGrepMaxOutputBytes;
  auto report = agentd::tools::search_tree(*matcher, root.string(), "", agentd::tools::WalkOptions{}, {}, options, {});
  const auto end = Clock::now();
  if (!report) throw BenchFailure("search failed: " + report.error().message());
  return {agentd::bench::ms_between(start, end) / 1000.0, report->matched_lines};
}

// What the glob tool does: walk with the same rules, match each file's relative path; a symlink counts
// when it leads to a file.
Outcome run_agentd_glob(const fs::path& root, const std::string& glob) {
  const auto start = Clock::now();
  Outcome outcome;
  const auto visit = [&](const agentd::tools::WalkEntry& entry) {
    if (entry.is_dir || !agentd::tools::wildmatch(glob, entry.relative, true)) return true;
    struct stat target {};
    if (!entry.is_symlink) {
      ++outcome.count;
    } else if (::stat(entry.path.c_str(), &target) == 0 && S_ISREG(target.st_mode)) {
      ++outcome.symlinks;
    }
    return true;
  };
  auto walked = agentd::tools::walk(root.string(), agentd::tools::WalkOptions{}, visit, {});
  const auto end = Clock::now();
  if (!walked) throw BenchFailure("walk failed: " + walked.error().message());
  outcome.seconds = agentd::bench::ms_between(start, end) / 1000.0;
  return outcome;
}

struct Query {
  std::string name;
  std::function<Outcome()> agentd;
  std::function<Outcome()> rg;
  Samples agentd_seconds;
  Samples rg_seconds;
  std::size_t agentd_count = 0;
  std::size_t agentd_symlinks = 0;
  std::size_t rg_count = 0;
  bool is_grep = true;  // the 1.5x target is about grep
};

Query make_query(std::string name, std::function<Outcome()> agentd, std::function<Outcome()> rg, bool is_grep) {
  Query q;
  q.name = std::move(name);
  q.agentd = std::move(agentd);
  q.rg = std::move(rg);
  q.is_grep = is_grep;
  return q;
}

// A small source-like tree with a .git directory, ignored files and a binary file.
void generate_tree(const fs::path& root) {
  std::mt19937 random(42);
  const std::vector<std::string> words = {"static",
                                          "int",
                                          "void",
                                          "return",
                                          "if",
                                          "struct",
                                          "device",
                                          "(",
                                          ")",
                                          "{",
                                          "}",
                                          ";",
                                          "*",
                                          "x",
                                          "data",
                                          "EXPORT_SYMBOL_GPL(foo);",
                                          "static int my_probe(struct device *dev)"};
  fs::create_directories(root / ".git");
  const auto write = [](const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) throw BenchFailure("cannot write " + path.string());
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  };
  write(root / ".gitignore", "*.o\nbuild/\n");
  for (int d = 0; d < 40; ++d) {
    for (int f = 0; f < 50; ++f) {
      std::string text;
      for (int l = 0; l < 80; ++l) {
        const int n = static_cast<int>(random() % 8);
        for (int w = 0; w < n; ++w) {
          const std::size_t pick = random() % 50 == 0 ? words.size() - 1 - random() % 2 : random() % (words.size() - 2);
          text += words[pick];
          text += ' ';
        }
        text += '\n';
      }
      const char* ext = f % 10 == 0 ? ".o" : f % 3 == 0 ? ".h" : ".c";
      write(root / fmt::format("dir{}/sub{}/file{}{}", d % 8, d, f, ext), text);
    }
  }
  write(root / "build/gen.c", "EXPORT_SYMBOL_GPL(ignored);\n");
  write(root / "blob.c", std::string("\0EXPORT_SYMBOL_GPL(binary);\n", 28));
}

void usage() {
  std::fprintf(stderr,
               "usage: agentd_bench_search [--quick] [--runs N] [--dir PATH]\n"
               "  --quick      a generated tree of 2000 files, %ld runs: a smoke run for CI\n"
               "  --runs N     timed runs of each query (default %ld), after one warm-up run\n"
               "  --dir PATH   the tree to search (default: $AGENTD_BENCH_TREE, else the Linux source\n"
               "               unpacked under bench/data/ from %s)\n",
               kQuickRuns, kDefaultRuns, kTarball.data());
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
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
    } else if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      usage();
      return 2;
    }
  }

  try {
    if (std::system("rg --version >/dev/null 2>&1") != 0) {
      std::printf("search: rg (ripgrep) not found; skipped (scripts/deps.sh installs it)\n");
      return 0;
    }
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
            "search: no tree to search: install linux-source-6.1 (apt-get install linux-source-6.1), or pass "
            "--dir PATH; skipped\n");
        return 0;
      }
    }
    root = fs::canonical(root);

    const std::string literal = "EXPORT_SYMBOL_GPL";
    const std::string regex = R"(static\s+int\s+\w+_probe\()";
    const std::string glob = "**/*.c";
    std::vector<Query> queries;
    queries.push_back(make_query(
        "grep literal " + literal, [&] { return run_agentd_grep(root, literal); },
        [&] {
          return run_rg(root, {"-n", "--no-heading", literal});
        },
        true));
    queries.push_back(make_query(
        "grep regex " + regex, [&] { return run_agentd_grep(root, regex); },
        [&] {
          return run_rg(root, {"-n", "--no-heading", regex});
        },
        true));
    queries.push_back(make_query(
        "glob " + glob + " (count)", [&] { return run_agentd_glob(root, glob); },
        [&] {
          return run_rg(root, {"--files", "-g", glob});
        },
        false));

    std::printf("search: %s, %ld timed runs per query after one warm-up, %ld CPUs\n", root.c_str(), runs,
                agentd::bench::online_cpus());
    // Warm-up: fills the page cache for both sides alike; its counts are the ones compared.
    for (auto& q : queries) {
      const Outcome ours = q.agentd();
      q.agentd_count = ours.count;
      q.agentd_symlinks = ours.symlinks;
      q.rg_count = q.rg().count;
    }
    // Interleaved, so a change in machine load hits both sides alike.
    for (long r = 0; r < runs; ++r) {
      for (auto& q : queries) {
        q.agentd_seconds.add(q.agentd().seconds);
        q.rg_seconds.add(q.rg().seconds);
      }
    }

    bool counts_agree = true;
    bool target_met = true;
    std::printf("\n%-48s %12s %12s %8s %20s\n", "query", "agentd", "rg", "ratio", "lines/files");
    for (const auto& q : queries) {
      const double ours = q.agentd_seconds.median();
      const double theirs = q.rg_seconds.median();
      const double ratio = theirs > 0 ? ours / theirs : 0;
      const bool same = q.agentd_count == q.rg_count;
      counts_agree = counts_agree && same;
      if (q.is_grep) target_met = target_met && ratio <= kTargetRatio;
      std::printf("%-48s %10.1f ms %10.1f ms %7.2fx %9zu / %-9zu%s\n", q.name.c_str(), ours * 1000, theirs * 1000,
                  ratio, q.agentd_count, q.rg_count, same ? "" : " MISMATCH");
      if (q.agentd_symlinks > 0) {
        std::printf("%-48s   + %zu symlink(s) to files, which glob lists and rg --files does not\n", "",
                    q.agentd_symlinks);
      }
      std::printf("%-48s %10.1f ms %10.1f ms   (min)\n", "", q.agentd_seconds.min() * 1000, q.rg_seconds.min() * 1000);
    }
    std::printf("\ntarget: grep within %.1fx of rg (median): %s\n", kTargetRatio, agentd::bench::pass_word(target_met));
    std::printf("counts: %s\n", counts_agree ? "agentd and rg found the same number of lines and files"
                                             : "MISMATCH between agentd and rg (see above)");
    // Only the generated tree is known to hold nothing the two may legitimately disagree on.
    return quick && !counts_agree ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agentd_bench_search: %s\n", e.what());
    return 1;
  }
}
