// C and C++: CTest build trees of a CMake project that enables testing (built before ctest runs; configured
// first into build/ when the project has none);
// narrowed to the GoogleTest suites of the changed files (or of their <name>_test.cpp), building only the
// test executables that hold them; output ranked for ctest and gtest, counted from ctest's "N% tests
// passed" line or a gtest binary's own summary.
#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/support/text.h"
#include "tools/shell_command.h"
#include "tools/verify/ecosystem.h"
#include "tools/verify/ecosystem_util.h"
#include "tools/verify/locator.h"

// The ranker is a ladder of "this kind of line gets that rank": several rungs share a rank on purpose.
// NOLINTBEGIN(bugprone-branch-clone)
namespace agentd::tools::verify {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kSourceBytes = std::size_t{1} << 20;
constexpr std::size_t kBuildTrees = 3;
constexpr int kCtestIncludeDepth = 6;

// ---- discover ----

bool cmake_enables_testing(const fs::path& dir) {
  const auto text = read_text(dir / "CMakeLists.txt");
  if (!text) return false;
  const std::string l = lower(*text);
  return contains(l, "enable_testing(") || contains(l, "include(ctest)") || contains(l, "add_test(") ||
         contains(l, "gtest_discover_tests(") || contains(l, "gtest_add_tests(");
}

// Configured build trees under the workspace (build/, build/<preset>/, cmake-build-*/, out/build/*),
// newest first.
std::vector<fs::path> ctest_build_trees(const fs::path& root) {
  std::vector<std::pair<fs::file_time_type, fs::path>> found;
  auto consider = [&](const fs::path& dir) {
    std::error_code ec;
    const fs::path file = dir / "CTestTestfile.cmake";
    if (!fs::is_regular_file(file, ec)) return false;
    found.emplace_back(fs::last_write_time(file, ec), dir);
    return true;
  };
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, fs::directory_options::skip_permission_denied, ec)) {
    const std::string name = entry.path().filename().string();
    if (!(name.starts_with("build") || name.starts_with("cmake-build-") || name == "out")) continue;
    if (!entry.is_directory(ec)) continue;
    if (consider(entry.path())) continue;
    std::error_code inner;
    for (const auto& child :
         fs::directory_iterator(entry.path(), fs::directory_options::skip_permission_denied, inner)) {
      if (!child.is_directory(inner)) continue;
      if (consider(child.path())) continue;
      if (name == "out" && child.path().filename() == "build") {
        std::error_code deeper;
        for (const auto& preset : fs::directory_iterator(child.path(), deeper)) {
          if (preset.is_directory(deeper)) consider(preset.path());
        }
      }
    }
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return a.second < b.second;
  });
  std::vector<fs::path> out;
  out.reserve(found.size());
  for (auto& [time, dir] : found) out.push_back(std::move(dir));
  return out;
}

// The build tree discovery proposes for a project that has none yet; the command configures it first.
constexpr std::string_view kNewBuildTree = "build";

bool is_configured(const fs::path& project, const std::string& build) {
  std::error_code ec;
  return fs::is_regular_file(project / build / "CTestTestfile.cmake", ec);
}

// Build, then run the tests: a changed source would otherwise be tested in its old version. A tree that
// is not configured yet (discovery proposed `build/`) is configured first.
std::string ctest_command(const fs::path& project, const std::string& build, const std::vector<std::string>& targets,
                          const std::string& regex) {
  std::string command;
  if (!is_configured(project, build)) command = "cmake -S . -B " + shell_quote(build) + " && ";
  command += "cmake --build " + shell_quote(build);
  if (!targets.empty()) command += " --target " + join_quoted(targets);
  command += " && ctest --test-dir " + shell_quote(build) + " --output-on-failure --no-tests=error";
  if (!regex.empty()) command += " -R " + shell_quote(regex);
  return command;
}

void discover_cmake(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  if (!cmake_enables_testing(dir)) return;
  const auto add = [&](const std::string& build, std::string source) {
    VerificationCommand command;
    command.id = "ctest:" + build;
    command.command = ctest_command(dir, build, {}, {});
    command.runner = RunnerKind::gtest_ctest;
    command.cwd = dir;
    command.source = std::move(source);
    out.commands.push_back(std::move(command));
  };
  const std::string prefix = prefix_of(dir, workspace);
  const auto trees = ctest_build_trees(dir);
  if (trees.empty()) {
    // No configured tree (build/, build/*/, cmake-build-*/, out/build/*): the command configures one.
    add(std::string(kNewBuildTree),
        fmt::format("{}CMakeLists.txt (CTest), no build tree yet: configures {}/ first", prefix, kNewBuildTree));
    return;
  }
  for (std::size_t i = 0; i < trees.size() && i < kBuildTrees; ++i) {
    const std::string build = relative_to(trees[i], dir);
    add(build, fmt::format("{}CMakeLists.txt (CTest), build tree {}", prefix, build));
  }
}

// ---- narrow ----

// gtest suite names defined in a source file: TEST(Suite, ...), TEST_F, TEST_P, TYPED_TEST(_P).
std::vector<std::string> gtest_suites(const fs::path& file) {
  std::vector<std::string> suites;
  const auto text = read_text(file, kSourceBytes);
  if (!text) return suites;
  std::size_t pos = 0;
  while ((pos = text->find("TEST", pos)) != std::string::npos) {
    const bool boundary =
        pos == 0 || (std::isalnum(static_cast<unsigned char>((*text)[pos - 1])) == 0 && (*text)[pos - 1] != '_');
    std::size_t i = pos + 4;
    pos = i;
    if (!boundary) continue;
    // TEST, TEST_F, TEST_P, TYPED_TEST, TYPED_TEST_P (the TYPED_ prefix starts before pos: handled by
    // the boundary check failing for "TYPED_TEST", so accept it separately below).
    for (const char* suffix : {"_F", "_P"}) {
      if (text->compare(i, 2, suffix) == 0) i += 2;
    }
    while (i < text->size() && (*text)[i] == ' ') ++i;
    if (i >= text->size() || (*text)[i] != '(') continue;
    ++i;
    while (i < text->size() && std::isspace(static_cast<unsigned char>((*text)[i])) != 0) ++i;
    const std::size_t start = i;
    while (i < text->size() && (std::isalnum(static_cast<unsigned char>((*text)[i])) != 0 || (*text)[i] == '_')) ++i;
    if (i == start) continue;
    std::string suite = text->substr(start, i - start);
    while (i < text->size() && std::isspace(static_cast<unsigned char>((*text)[i])) != 0) ++i;
    if (i >= text->size() || (*text)[i] != ',') continue;
    if (std::find(suites.begin(), suites.end(), suite) == suites.end()) suites.push_back(std::move(suite));
  }
  // TYPED_TEST(Suite, Name): "TEST" inside "TYPED_TEST" fails the boundary check above.
  pos = 0;
  while ((pos = text->find("TYPED_TEST", pos)) != std::string::npos) {
    std::size_t i = pos + 10;
    pos = i;
    if (text->compare(i, 2, "_P") == 0) i += 2;
    if (i >= text->size() || (*text)[i] != '(') continue;
    ++i;
    const std::size_t start = i;
    while (i < text->size() && (std::isalnum(static_cast<unsigned char>((*text)[i])) != 0 || (*text)[i] == '_')) ++i;
    if (i == start || i >= text->size() || (*text)[i] != ',') continue;
    std::string suite = text->substr(start, i - start);
    if (std::find(suites.begin(), suites.end(), suite) == suites.end()) suites.push_back(std::move(suite));
  }
  return suites;
}

fs::path cpp_test_for(const fs::path& file, const fs::path& root) {
  const std::string stem = file.stem().string();
  std::vector<fs::path> candidates;
  for (const auto& dir : test_dirs_for(file, root)) {
    for (const char* ext : {".cpp", ".cc", ".cxx"}) {
      candidates.push_back(dir / (stem + "_test" + ext));
      candidates.push_back(dir / (stem + "_unittest" + ext));
      candidates.push_back(dir / (stem + "_tests" + ext));
      candidates.push_back(dir / ("test_" + stem + ext));
    }
  }
  return first_existing(candidates);
}

// One CMake argument at `i` (bracket, quoted or unquoted); advances `i`.
std::string cmake_argument(std::string_view text, std::size_t& i) {
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
  if (i >= text.size()) return {};
  if (text[i] == '[') {
    std::size_t j = i + 1;
    while (j < text.size() && text[j] == '=') ++j;
    if (j < text.size() && text[j] == '[') {
      const std::string close = "]" + std::string(j - i - 1, '=') + "]";
      const std::size_t end = text.find(close, j + 1);
      if (end == std::string_view::npos) return {};
      std::string out(text.substr(j + 1, end - j - 1));
      i = end + close.size();
      return out;
    }
  }
  if (text[i] == '"') {
    std::string out;
    for (++i; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      out += text[i];
    }
    ++i;
    return out;
  }
  const std::size_t start = i;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) == 0 && text[i] != ')') ++i;
  return std::string(text.substr(start, i - start));
}

struct CtestTest {
  std::string name;
  std::string executable;
};

// The tests a build tree knows, from CTestTestfile.cmake and the files it includes (gtest_discover_tests
// writes its test lists at build time and includes them from there).
void collect_ctest_tests(const fs::path& file, int depth, std::set<fs::path>& seen, std::vector<CtestTest>& out) {
  if (depth > kCtestIncludeDepth || !seen.insert(file).second) return;
  const auto text = read_text(file, std::size_t{8} << 20);
  if (!text) return;
  const std::string_view view(*text);
  std::size_t pos = 0;
  while (pos < view.size()) {
    const std::size_t add = view.find("add_test(", pos);
    const std::size_t inc = view.find("include(", pos);
    const std::size_t sub = view.find("subdirs(", pos);
    const std::size_t next = std::min({add, inc, sub});
    if (next == std::string_view::npos) break;
    std::size_t i = next;
    if (next == add) {
      i += 9;
      CtestTest test;
      test.name = cmake_argument(view, i);
      test.executable = cmake_argument(view, i);
      if (!test.name.empty()) out.push_back(std::move(test));
    } else if (next == inc) {
      i += 8;
      const fs::path included = cmake_argument(view, i);
      if (included.is_absolute()) collect_ctest_tests(included, depth + 1, seen, out);
    } else {
      i += 8;
      const fs::path dir = cmake_argument(view, i);
      collect_ctest_tests((dir.is_absolute() ? dir : file.parent_path() / dir) / "CTestTestfile.cmake", depth + 1, seen,
                          out);
    }
    pos = std::max(i, next + 1);
  }
}

std::optional<Suggestion> narrow_ctest(const VerificationCommand& base, const std::vector<fs::path>& files) {
  const std::string build = base.id.substr(std::string_view("ctest:").size());
  std::vector<std::string> suites;
  std::vector<std::string> mapped;
  for (const auto& file : files) {
    const std::string rel = relative_to(file, base.cwd);
    auto found = gtest_suites(file);
    if (found.empty()) {
      const fs::path test = cpp_test_for(file, base.cwd);
      if (!test.empty()) {
        found = gtest_suites(test);
        if (!found.empty()) mapped.push_back(fmt::format("{} -> {}", rel, relative_to(test, base.cwd)));
      }
    }
    if (found.empty()) {
      return full(base, fmt::format("no GoogleTest suite found for {} (in the file itself, or in a {}_test.cpp "
                                    "beside it or under test/): running every test",
                                    rel.empty() ? file.string() : rel, file.stem().string()));
    }
    for (auto& suite : found) {
      if (std::find(suites.begin(), suites.end(), suite) == suites.end()) suites.push_back(std::move(suite));
    }
  }
  std::string regex = "^(";
  for (std::size_t i = 0; i < suites.size(); ++i) regex += (i > 0 ? "|" : "") + suites[i];
  regex += ")\\.";

  // Build only the test executables that hold those suites, when the build tree says which they are.
  std::vector<CtestTest> known;
  std::set<fs::path> seen;
  collect_ctest_tests(base.cwd / build / "CTestTestfile.cmake", 0, seen, known);
  std::set<std::string> targets;
  std::set<std::string> matched_suites;
  for (const auto& test : known) {
    for (const auto& suite : suites) {
      if (test.name.starts_with(suite + ".")) {
        matched_suites.insert(suite);
        if (!test.executable.empty()) targets.insert(fs::path(test.executable).stem().string());
      }
    }
  }
  std::vector<std::string> target_list;
  if (matched_suites.size() == suites.size()) target_list.assign(targets.begin(), targets.end());
  std::string reason =
      fmt::format("ctest runs only the GoogleTest suite{} {}", suites.size() == 1 ? "" : "s", list_names(suites));
  if (!mapped.empty()) reason += fmt::format(" (tests of changed sources: {})", list_names(mapped));
  if (!target_list.empty()) reason += fmt::format(", after building {}", list_names(target_list));
  if (!is_configured(base.cwd, build)) reason += fmt::format(", after configuring {}", build);
  return narrowed(base, ctest_command(base.cwd, build, target_list, regex), std::move(reason));
}

// ---- rank, summarise ----

void rank_gtest_ctest(const std::vector<std::string_view>& lines, Ranks& ranks) {
  const bool under_ctest = std::any_of(lines.begin(), lines.end(), [](std::string_view l) {
    return l.starts_with("Test project ") || contains(l, "% tests passed");
  });
  bool in_assertion = false;  // between "file:line: Failure" and the next "[ ... ]" line
  bool in_failed_list = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::string_view t = support::trim(line);
    if (line.starts_with("[")) in_assertion = false;
    if (in_failed_list) {
      if (!t.empty() && (line.starts_with('\t') || line.starts_with(' '))) {
        ranks[i] = kSummary;
        continue;
      }
      in_failed_list = false;
    }
    if (contains(line, "***Failed") || contains(line, "***Exception") || contains(line, "***Timeout") ||
        contains(line, "Not Run") || contains(line, "***Skipped")) {
      ranks[i] = kSummary;
    } else if (contains(line, "% tests passed") || t.starts_with("No tests were found") ||
               t == "Errors while running CTest") {
      ranks[i] = kSummary;
    } else if (t == "The following tests FAILED:" || t.starts_with("The following tests did not run:")) {
      ranks[i] = kSummary;
      in_failed_list = true;
    } else if (line.starts_with("[  FAILED  ]")) {
      ranks[i] = kSummary;
    } else if (line.starts_with("[==========]") && contains(line, " ran.")) {
      ranks[i] = under_ctest ? kContext : kSummary;
    } else if (line.starts_with("[  PASSED  ]") || line.starts_with("[  SKIPPED ]")) {
      ranks[i] = under_ctest ? kContext : kSummary;
    } else if ((contains(line, ": Failure") || contains(line, ": error: ")) && has_location(line)) {
      ranks[i] = kDetail;
      in_assertion = true;
    } else if (in_assertion && !t.empty()) {
      ranks[i] = kDetail;  // "Expected equality of these values:", "Which is: 4"
    } else if (contains(line, "C++ exception") || contains(line, "terminate called") ||
               contains(line, "Segmentation fault") || contains(line, "Aborted")) {
      ranks[i] = kDetail;
    } else if (t.starts_with("Total Test time") || t.starts_with("Test project ")) {
      ranks[i] = kContext;
    } else if (line.starts_with("[ RUN      ]")) {
      // Places an assertion (which test it belongs to) when one follows before the test ends.
      for (std::size_t j = i + 1; j < lines.size() && !lines[j].starts_with("[ RUN"); ++j) {
        if (lines[j].starts_with("[  FAILED  ]")) {
          ranks[i] = kContext;
          break;
        }
        if (lines[j].starts_with("[       OK ]")) break;
      }
    }
  }
}

std::optional<TestCounts> summarise_gtest_ctest(const OutputLines& lines) {
  TestCounts counts;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const std::string_view t = support::trim(*it);
    if (t.starts_with("No tests were found")) {
      counts.no_tests = true;
      return counts;
    }
    const std::size_t mark = t.find("% tests passed, ");
    if (mark == std::string_view::npos) continue;
    // "67% tests passed, 1 tests failed out of 3"
    const auto pairs = counts_in(t.substr(mark));
    const std::size_t out_of = t.rfind("out of ");
    if (pairs.empty() || out_of == std::string_view::npos) continue;
    const std::int64_t total = to_int(support::trim(t.substr(out_of + 7)));
    counts.failed = pairs.front().first;
    counts.passed = total - counts.failed;
    counts.no_tests = total == 0;
    return counts;
  }
  // A gtest binary on its own.
  bool found = false;
  for (const auto& line : lines) {
    if (line.starts_with("[==========]") && contains(line, " ran.")) {
      const auto pairs = counts_in(line.substr(12));
      if (!pairs.empty()) {
        found = true;
        counts.no_tests = pairs.front().first == 0;
      }
    } else if (line.starts_with("[  PASSED  ]")) {
      const auto pairs = counts_in(line.substr(12));
      if (!pairs.empty()) counts.passed = pairs.front().first;
    } else if (line.starts_with("[  FAILED  ]") && contains(line, "listed below")) {
      const auto pairs = counts_in(line.substr(12));
      if (!pairs.empty()) counts.failed = pairs.front().first;
    } else if (line.starts_with("[  SKIPPED ]") && contains(line, "test")) {
      const auto pairs = counts_in(line.substr(12));
      if (!pairs.empty() && !contains(line, "listed below")) counts.skipped = pairs.front().first;
    }
  }
  if (!found) return std::nullopt;
  return counts;
}

bool guess_ctest(std::string_view command) { return has_word(command, "ctest"); }

bool sniff_gtest_ctest(std::string_view output) {
  return contains(output, "% tests passed") || contains(output, "No tests were found!!!") ||
         contains(output, "[==========]");
}

}  // namespace

const Ecosystem& cpp_ecosystem() {
  static const Ecosystem kCpp{
      .name = "cpp",
      .runners = {{.kind = RunnerKind::gtest_ctest,
                   .counts_tests = true,
                   .guess_order = 1,
                   .guess = guess_ctest,
                   .sniff_order = 2,
                   .sniff = sniff_gtest_ctest,
                   .rank = rank_gtest_ctest,
                   .summarise = summarise_gtest_ctest}},
      .stage = DiscoveryStage::manifests,
      .discover = discover_cmake,
      .root_has_project = nullptr,  // a build tree is the root's: subdirectories are not read
      .language = Language::cpp,
      .language_name = "C/C++",
      .extensions = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".ipp", ".inl"},
      .narrow = narrow_ctest,
  };
  return kCpp;
}

}  // namespace agentd::tools::verify
// NOLINTEND(bugprone-branch-clone)
