// Small pieces the process-level benchmarks share: command-line counts, a scratch directory that
// removes itself, order statistics, and the PASS/FAIL line printed next to a target. Benchmarks print
// numbers for people; the exit code only says whether the benchmark itself could run.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <sys/resource.h>

#include "test/support/child_process.h"

namespace agentd::bench {

using Clock = std::chrono::steady_clock;

inline double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// A positive count from the command line ("--runs 50"); nothing when it is not one.
inline std::optional<long> parse_count(std::string_view text) {
  long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

// A fresh directory under $TMPDIR (else /tmp), removed with everything in it when this goes away,
// so a benchmark never touches the user's real database.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/agentd-bench-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

// Order statistics over samples: nearest-rank percentiles, so every reported value was measured.
class Samples {
 public:
  void add(double value) { values_.push_back(value); }
  bool empty() const noexcept { return values_.empty(); }
  std::size_t size() const noexcept { return values_.size(); }
  const std::vector<double>& values() const noexcept { return values_; }

  double percentile(double p) const {
    if (values_.empty()) return 0;
    std::vector<double> sorted(values_);
    std::sort(sorted.begin(), sorted.end());
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
  }
  double median() const { return percentile(50); }
  double min() const { return values_.empty() ? 0 : *std::min_element(values_.begin(), values_.end()); }
  double max() const { return values_.empty() ? 0 : *std::max_element(values_.begin(), values_.end()); }

 private:
  std::vector<double> values_;
};

// CPU seconds this process (all its threads) has used: the benchmark client shares the machine's
// cores with the process it measures, so its own cost belongs in the report.
inline double own_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// The child's own peak RSS in MiB. wait4's ru_maxrss covers the child's whole life, exit included, but
// only counts when it is above what Linux carried over from us at spawn (ExitStatus::spawner_max_rss_kb);
// otherwise the VmHWM sampled while the child ran (ChildProcess::peak_rss_kb) is the best we know.
// 0 when neither is known (the child exited before it was sampled and stayed below our peak).
inline double own_peak_rss_mib(long sampled_kb, const testing::ExitStatus& status) {
  const long whole_life_kb = status.max_rss_kb > status.spawner_max_rss_kb ? status.max_rss_kb : 0;
  return static_cast<double>(std::max(sampled_kb, whole_life_kb)) / 1024.0;
}

// Our own peak RSS in MiB: the floor under every wait4 ru_maxrss of a child we spawn.
inline double own_max_rss_mib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// Our RSS now in MiB (VmRSS of /proc/self/status), or 0 when it cannot be read.
inline double current_rss_mib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  long kb = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
  }
  std::fclose(f);
  return static_cast<double>(kb) / 1024.0;
}

inline const char* pass_word(bool pass) { return pass ? "PASS" : "FAIL"; }

inline long online_cpus() { return ::sysconf(_SC_NPROCESSORS_ONLN); }

// The Linux kernel source tree the search and context benchmarks run on: Debian's linux-source-6.1,
// unpacked once under bench/data/. (Moved here from search_bench.cpp so both share it.)
inline constexpr std::string_view kKernelTarball = "/usr/src/linux-source-6.1.tar.xz";
inline constexpr std::string_view kKernelTreeName = "linux-source-6.1";

// Debian's linux-source tarball ends its top-level .gitignore with "/*" and "!/debian/" (its packaging
// repository ignores the kernel tree), which would leave both searchers nothing to search. Those two
// lines go, so the tree is ignored as a kernel git checkout is.
inline void unignore_debian_top_level(const std::filesystem::path& tree) {
  const std::filesystem::path path = tree / ".gitignore";
  std::FILE* in = std::fopen(path.c_str(), "rb");
  if (in == nullptr) return;
  std::string kept;
  bool changed = false;
  char line[4096];
  while (std::fgets(line, sizeof line, in) != nullptr) {
    const std::string_view text = line;
    if (text == "/*\n" || text == "!/debian/\n") {
      changed = true;
      continue;
    }
    kept += text;
  }
  std::fclose(in);
  if (!changed) return;
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) throw std::runtime_error("cannot rewrite " + path.string());
  std::fwrite(kept.data(), 1, kept.size(), out);
  std::fclose(out);
}

// The kernel tree: a directory given, else the one unpacked under `source_dir`/bench/data/, else unpacked
// there now from Debian's package. Empty when there is none to be had. Throws std::runtime_error when
// unpacking fails.
inline std::filesystem::path kernel_tree(const std::string& given, const std::filesystem::path& source_dir) {
  namespace fs = std::filesystem;
  if (!given.empty()) return given;
  const fs::path data = source_dir / "bench" / "data";
  const fs::path tree = data / kKernelTreeName;
  if (fs::is_directory(tree)) {
    unignore_debian_top_level(tree);
    return tree;
  }
  if (!fs::exists(kKernelTarball)) return {};
  std::fprintf(stderr, "unpacking %s into %s (once; takes a minute)...\n", kKernelTarball.data(), data.c_str());
  const fs::path staging = data / ".unpacking";
  fs::remove_all(staging);
  fs::create_directories(staging);
  const std::string command = "tar -xf '" + std::string(kKernelTarball) + "' -C '" + staging.string() + "'";
  if (std::system(command.c_str()) != 0) throw std::runtime_error("could not unpack " + std::string(kKernelTarball));
  fs::rename(staging / kKernelTreeName, tree);
  fs::remove_all(staging);
  unignore_debian_top_level(tree);
  return tree;
}

}  // namespace agentd::bench
