// Verification discovery and narrowing: reads manifests and build trees, never runs anything.
#include "tools/verify/discovery.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "core/support/text.h"
#include "tools/shell_command.h"

namespace agentd::tools::verify {
namespace {

namespace fs = std::filesystem;
using support::Json;

constexpr std::size_t kManifestBytes = std::size_t{512} << 10;
constexpr std::size_t kSourceBytes = std::size_t{1} << 20;
constexpr std::size_t kReadmeCommands = 3;
constexpr std::size_t kBuildTrees = 3;
constexpr int kCtestIncludeDepth = 6;

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool is_dir(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// The start of a small text file, or nullopt when it cannot be read.
std::optional<std::string> read_text(const fs::path& path, std::size_t max_bytes = kManifestBytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(max_bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max_bytes));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// Whitespace-separated words of a command line (no quoting rules: only used to recognise runners).
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
    const std::size_t start = i;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) == 0) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

bool has_word(std::string_view text, std::string_view word) {
  for (std::string_view w : words(text)) {
    // "npx jest", "./node_modules/.bin/jest", "jest;" all name jest.
    const std::size_t slash = w.rfind('/');
    if (slash != std::string_view::npos) w.remove_prefix(slash + 1);
    while (!w.empty() && (w.back() == ';' || w.back() == ')')) w.remove_suffix(1);
    if (w == word) return true;
  }
  return false;
}

std::string join_quoted(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ' ';
    out += shell_quote(item);
  }
  return out;
}

// `path` relative to `base` in generic form, or empty when it is not under `base`.
std::string relative_to(const fs::path& path, const fs::path& base) {
  const fs::path rel = path.lexically_normal().lexically_relative(base.lexically_normal());
  if (rel.empty()) return {};
  std::string text = rel.generic_string();
  if (text == ".." || text.starts_with("../")) return {};
  return text;
}

// Where a discovered file sits, for `source` and ids: "" at the root, "web/" in a subdirectory.
std::string prefix_of(const fs::path& dir, const fs::path& workspace) {
  const std::string rel = relative_to(dir, workspace);
  return rel.empty() || rel == "." ? std::string() : rel + "/";
}

// ---- package.json ----

std::string package_manager(const fs::path& dir) {
  if (is_file(dir / "pnpm-lock.yaml")) return "pnpm";
  if (is_file(dir / "yarn.lock")) return "yarn";
  if (is_file(dir / "bun.lockb") || is_file(dir / "bun.lock")) return "bun";
  return "npm";
}

std::string script_command(const std::string& manager, const std::string& name) {
  if (manager == "bun") return "bun run " + name;  // `bun test` is bun's own runner, not the script
  if (name == "test") return manager + " test";
  return manager + " run " + name;
}

RunnerKind script_runner(std::string_view script) {
  if (has_word(script, "vitest")) return RunnerKind::vitest;
  if (has_word(script, "jest")) return RunnerKind::jest;
  if (has_word(script, "node") && contains(script, "--test")) return RunnerKind::node_test;
  return RunnerKind::npm_script;
}

void discover_package_json(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  const auto text = read_text(dir / "package.json");
  if (!text) return;
  auto parsed = support::parse_json(*text);
  if (!parsed || !parsed->is_object()) {
    out.notes.push_back(
        fmt::format("{}package.json is not valid JSON: its scripts were not read", prefix_of(dir, workspace)));
    return;
  }
  const Json* scripts = parsed->find("scripts");
  if (scripts == nullptr || !scripts->is_object()) return;
  const std::string manager = package_manager(dir);
  const std::string prefix = prefix_of(dir, workspace);
  struct Wanted {
    std::string_view name;
    Purpose purpose;
  };
  constexpr std::array<Wanted, 5> kWanted{{{"test", Purpose::test},
                                           {"lint", Purpose::lint},
                                           {"typecheck", Purpose::typecheck},
                                           {"type-check", Purpose::typecheck},
                                           {"check-types", Purpose::typecheck}}};
  for (const Wanted& wanted : kWanted) {
    const Json* script = scripts->find(wanted.name);
    if (script == nullptr || !script->is_string()) continue;
    const std::string& body = script->as_string();
    // npm init's placeholder fails on purpose: it is not a test command.
    if (wanted.purpose == Purpose::test && contains(body, "no test specified")) continue;
    VerificationCommand command;
    command.id = fmt::format("{}npm:{}", prefix, wanted.name);
    command.command = script_command(manager, std::string(wanted.name));
    command.runner = wanted.purpose == Purpose::test ? script_runner(body) : RunnerKind::npm_script;
    command.purpose = wanted.purpose;
    command.cwd = dir;
    command.source = fmt::format("{}package.json scripts.{}", prefix, wanted.name);
    command.script = body;
    out.commands.push_back(std::move(command));
  }
}

// ---- pytest ----

// Where pytest is configured in `dir`, as a `source` text; empty when it is not.
std::string pytest_source(const fs::path& dir) {
  if (is_file(dir / "pytest.ini")) return "pytest.ini";
  if (const auto text = read_text(dir / "pyproject.toml")) {
    if (contains(*text, "[tool.pytest.ini_options]")) return "pyproject.toml [tool.pytest.ini_options]";
    if (contains(*text, "[tool.pytest]")) return "pyproject.toml [tool.pytest]";
  }
  if (const auto text = read_text(dir / "tox.ini")) {
    if (contains(*text, "[pytest]")) return "tox.ini [pytest]";
    if (contains(*text, "[tool:pytest]")) return "tox.ini [tool:pytest]";
  }
  if (const auto text = read_text(dir / "setup.cfg")) {
    if (contains(*text, "[tool:pytest]")) return "setup.cfg [tool:pytest]";
  }
  if (is_file(dir / "conftest.py")) return "conftest.py";
  if (const auto text = read_text(dir / "pyproject.toml")) {
    if (contains(*text, "\"pytest") || contains(*text, "'pytest") || contains(*text, "\npytest")) {
      return "pyproject.toml (pytest in its dependencies)";
    }
  }
  return {};
}

void discover_pytest(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  const std::string source = pytest_source(dir);
  if (source.empty()) return;
  const std::string prefix = prefix_of(dir, workspace);
  // A project virtualenv has the project's pytest; the system python3 may have none.
  std::string python = "python3";
  for (const char* venv : {".venv/bin/python", "venv/bin/python"}) {
    if (is_file(dir / venv)) {
      python = venv;
      break;
    }
  }
  VerificationCommand command;
  command.id = prefix + "pytest";
  command.command = python + " -m pytest";
  command.runner = RunnerKind::pytest;
  command.cwd = dir;
  command.source = prefix + source;
  out.commands.push_back(std::move(command));
}

// ---- Cargo, Go ----

void discover_cargo(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  if (!is_file(dir / "Cargo.toml")) return;
  const std::string prefix = prefix_of(dir, workspace);
  VerificationCommand command;
  command.id = prefix + "cargo:test";
  command.command = "cargo test";
  command.runner = RunnerKind::cargo_test;
  command.cwd = dir;
  command.source = prefix + "Cargo.toml";
  out.commands.push_back(std::move(command));
}

void discover_go(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  if (!is_file(dir / "go.mod")) return;
  const std::string prefix = prefix_of(dir, workspace);
  VerificationCommand command;
  command.id = prefix + "go:test";
  command.command = "go test ./...";
  command.runner = RunnerKind::go_test;
  command.cwd = dir;
  command.source = prefix + "go.mod";
  out.commands.push_back(std::move(command));
}

// ---- CMake / CTest ----

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

std::string ctest_command(const std::string& build, const std::vector<std::string>& targets, const std::string& regex) {
  std::string command = "cmake --build " + shell_quote(build);
  if (!targets.empty()) command += " --target " + join_quoted(targets);
  command += " && ctest --test-dir " + shell_quote(build) + " --output-on-failure --no-tests=error";
  if (!regex.empty()) command += " -R " + shell_quote(regex);
  return command;
}

void discover_cmake(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  if (!cmake_enables_testing(dir)) return;
  const auto trees = ctest_build_trees(dir);
  if (trees.empty()) {
    out.notes.push_back(
        "CMakeLists.txt enables testing, but no build directory (build/, build/*/, cmake-build-*/) has a "
        "CTestTestfile.cmake: configure and build first (cmake -S . -B build && cmake --build build), then "
        "ctest --test-dir build");
    return;
  }
  for (std::size_t i = 0; i < trees.size() && i < kBuildTrees; ++i) {
    const std::string build = relative_to(trees[i], dir);
    VerificationCommand command;
    command.id = "ctest:" + build;
    // Tests run the built binaries: build first, or a changed source is tested in its old version.
    command.command = ctest_command(build, {}, {});
    command.runner = RunnerKind::gtest_ctest;
    command.cwd = dir;
    command.source = fmt::format("{}CMakeLists.txt (CTest), build tree {}", prefix_of(dir, workspace), build);
    out.commands.push_back(std::move(command));
  }
}

// ---- Makefile ----

void discover_make(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  fs::path makefile;
  for (const char* name : {"GNUmakefile", "Makefile", "makefile"}) {
    if (is_file(dir / name)) {
      makefile = dir / name;
      break;
    }
  }
  if (makefile.empty()) return;
  const auto text = read_text(makefile);
  if (!text) return;
  std::set<std::string> targets;
  for (std::string_view line : lines_of(*text)) {
    if (line.empty() || line.front() == '\t' || line.front() == ' ' || line.front() == '#' || line.front() == '.') {
      continue;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (colon + 1 < line.size() && line[colon + 1] == '=') continue;  // VAR := value
    const std::string_view head = line.substr(0, colon);
    if (contains(head, "=") || contains(head, "$")) continue;
    for (std::string_view target : words(head)) targets.emplace(target);
  }
  struct Wanted {
    std::string_view name;
    Purpose purpose;
  };
  constexpr std::array<Wanted, 4> kWanted{
      {{"test", Purpose::test}, {"check", Purpose::test}, {"tests", Purpose::test}, {"lint", Purpose::lint}}};
  const std::string prefix = prefix_of(dir, workspace);
  const std::string file = makefile.filename().string();
  for (const Wanted& wanted : kWanted) {
    if (targets.count(std::string(wanted.name)) == 0) continue;
    VerificationCommand command;
    command.id = fmt::format("{}make:{}", prefix, wanted.name);
    command.command = fmt::format("make {}", wanted.name);
    command.runner = RunnerKind::make;
    command.purpose = wanted.purpose;
    command.cwd = dir;
    command.source = fmt::format("{}{} target {}", prefix, file, wanted.name);
    out.commands.push_back(std::move(command));
  }
}

// ---- README ----

bool is_testing_heading(std::string_view heading) {
  const std::string h = lower(support::trim(heading));
  return h.starts_with("test") || contains(h, "testing") || contains(h, "running tests") || contains(h, "run tests") ||
         contains(h, "running the tests") || contains(h, "run the tests");
}

// Lines that are shell commands in a README code block: prompts stripped, comments and blanks dropped.
std::optional<std::string> readme_command(std::string_view line) {
  line = support::trim(line);
  if (line.starts_with("$ ") || line.starts_with("> ") || line.starts_with("% ")) line = support::trim(line.substr(2));
  if (line.empty() || line.front() == '#' || line.starts_with("//")) return std::nullopt;
  return std::string(line);
}

void discover_readme(const fs::path& dir, const fs::path& workspace, Discovery& out) {
  fs::path readme;
  for (const char* name : {"README.md", "README.markdown", "README.rst", "README.txt", "README", "readme.md"}) {
    if (is_file(dir / name)) {
      readme = dir / name;
      break;
    }
  }
  if (readme.empty()) return;
  const auto text = read_text(readme);
  if (!text) return;
  const auto lines = lines_of(*text);
  const bool rst = readme.extension() == ".rst";
  // Headings: "## Testing" (ATX) or "Testing" underlined with === / --- (setext, and reStructuredText).
  auto heading_at = [&](std::size_t i, int* level) -> std::optional<std::string_view> {
    const std::string_view line = lines[i];
    if (!rst && line.starts_with('#')) {
      std::size_t hashes = 0;
      while (hashes < line.size() && line[hashes] == '#') ++hashes;
      if (hashes <= 6 && (hashes == line.size() || line[hashes] == ' ')) {
        *level = static_cast<int>(hashes);
        return support::trim(line.substr(hashes));
      }
    }
    if (i + 1 < lines.size() && !support::trim(line).empty()) {
      const std::string_view under = support::trim(lines[i + 1]);
      if (under.size() >= 3 && std::all_of(under.begin(), under.end(), [&](char c) { return c == under[0]; }) &&
          (under[0] == '=' || under[0] == '-' || under[0] == '~' || under[0] == '^')) {
        *level = under[0] == '=' ? 1 : under[0] == '-' ? 2 : 3;
        return support::trim(line);
      }
    }
    return std::nullopt;
  };

  const std::string prefix = prefix_of(dir, workspace);
  const std::string file = readme.filename().string();
  std::size_t taken = 0;
  for (std::size_t i = 0; i < lines.size() && taken < kReadmeCommands; ++i) {
    int level = 0;
    const auto heading = heading_at(i, &level);
    if (!heading || !is_testing_heading(*heading)) continue;
    const std::string title(*heading);
    bool in_fence = false;
    bool fence_is_shell = true;
    for (std::size_t j = i + 1; j < lines.size() && taken < kReadmeCommands; ++j) {
      const std::string_view line = lines[j];
      int inner_level = 0;
      if (!in_fence && heading_at(j, &inner_level) && inner_level <= level && j != i + 1) break;
      const std::string_view trimmed = support::trim(line);
      if (trimmed.starts_with("```") || trimmed.starts_with("~~~")) {
        in_fence = !in_fence;
        if (in_fence) {
          const std::string lang = lower(support::trim(trimmed.substr(3)));
          fence_is_shell = lang.empty() || lang == "sh" || lang == "bash" || lang == "shell" || lang == "console" ||
                           lang == "shell-session" || lang == "zsh" || lang == "text";
        }
        continue;
      }
      const bool indented_block =
          !in_fence && line.starts_with("    ") && !trimmed.starts_with("- ") && !trimmed.starts_with("* ");
      const bool prompt = trimmed.starts_with("$ ");
      if (!((in_fence && fence_is_shell) || indented_block || prompt)) continue;
      if (rst && !in_fence && trimmed.starts_with("..")) continue;
      auto command_line = readme_command(line);
      if (!command_line) continue;
      const bool known = std::any_of(out.commands.begin(), out.commands.end(),
                                     [&](const VerificationCommand& c) { return c.command == *command_line; });
      if (known) continue;
      VerificationCommand command;
      command.id = fmt::format("{}readme:{}", prefix, ++taken);
      command.runner = guess_runner(*command_line);
      command.command = std::move(*command_line);
      command.cwd = dir;
      command.source = fmt::format("{}{} section \"{}\"", prefix, file, title);
      out.commands.push_back(std::move(command));
    }
  }
}

// ---- the changed files ----

enum class Family { none, python, node, rust, go, cpp, docs, other };

Family family_of(const fs::path& path) {
  const std::string ext = lower(path.extension().string());
  const std::string name = path.filename().string();
  if (ext == ".py") return Family::python;
  if (ext == ".js" || ext == ".jsx" || ext == ".ts" || ext == ".tsx" || ext == ".mjs" || ext == ".cjs" ||
      ext == ".mts" || ext == ".cts") {
    return Family::node;
  }
  if (ext == ".rs") return Family::rust;
  if (ext == ".go") return Family::go;
  if (ext == ".c" || ext == ".cc" || ext == ".cpp" || ext == ".cxx" || ext == ".h" || ext == ".hh" || ext == ".hpp" ||
      ext == ".hxx" || ext == ".ipp" || ext == ".inl") {
    return Family::cpp;
  }
  if (ext == ".md" || ext == ".rst" || ext == ".txt" || ext == ".adoc" || name == "LICENSE" || name == "CHANGELOG") {
    return name == "CMakeLists.txt" || name.starts_with("requirements") ? Family::other : Family::docs;
  }
  return Family::other;
}

std::string_view family_name(Family family) {
  switch (family) {
    case Family::python: return "Python";
    case Family::node: return "JavaScript/TypeScript";
    case Family::rust: return "Rust";
    case Family::go: return "Go";
    case Family::cpp: return "C/C++";
    case Family::docs: return "documentation";
    case Family::other: return "other";
    case Family::none: break;
  }
  return "none";
}

bool runner_in_family(RunnerKind runner, Family family) {
  switch (family) {
    case Family::python: return runner == RunnerKind::pytest;
    case Family::node:
      return runner == RunnerKind::node_test || runner == RunnerKind::jest || runner == RunnerKind::vitest ||
             runner == RunnerKind::npm_script;
    case Family::rust: return runner == RunnerKind::cargo_test;
    case Family::go: return runner == RunnerKind::go_test;
    case Family::cpp: return runner == RunnerKind::gtest_ctest;
    default: return false;
  }
}

// The first of `candidates` that exists, or empty.
fs::path first_existing(const std::vector<fs::path>& candidates) {
  for (const auto& candidate : candidates) {
    if (is_file(candidate)) return candidate.lexically_normal();
  }
  return {};
}

// Directories where a project keeps tests for `file`: beside it, in a tests/ folder beside it, and in the
// project's top-level test folders (also mirroring the file's own folder below the first one).
std::vector<fs::path> test_dirs_for(const fs::path& file, const fs::path& root) {
  std::vector<fs::path> dirs;
  const fs::path dir = file.parent_path();
  dirs.push_back(dir);
  for (const char* name : {"tests", "test", "__tests__"}) dirs.push_back(dir / name);
  const fs::path rel = dir.lexically_relative(root);
  fs::path below_first;  // "src/a/b" -> "a/b"
  bool first = true;
  for (const auto& part : rel) {
    if (first) {
      first = false;
      continue;
    }
    below_first /= part;
  }
  for (const char* name : {"tests", "test", "__tests__", "test/unit", "tests/unit"}) {
    dirs.push_back(root / name);
    if (!rel.empty() && rel != ".") dirs.push_back(root / name / rel);
    if (!below_first.empty()) dirs.push_back(root / name / below_first);
  }
  return dirs;
}

bool is_python_test(const fs::path& file) {
  const std::string name = file.filename().string();
  return (name.starts_with("test_") || name.ends_with("_test.py")) && name != "test_.py";
}

fs::path python_test_for(const fs::path& file, const fs::path& root) {
  std::string stem = file.stem().string();
  if (stem == "__init__" || stem == "__main__") stem = file.parent_path().filename().string();
  std::vector<fs::path> candidates;
  for (const auto& dir : test_dirs_for(file, root)) {
    candidates.push_back(dir / ("test_" + stem + ".py"));
    candidates.push_back(dir / (stem + "_test.py"));
  }
  return first_existing(candidates);
}

bool is_node_test(const fs::path& file, const fs::path& root) {
  const std::string name = file.filename().string();
  if (contains(name, ".test.") || contains(name, ".spec.") || name.starts_with("test-") || contains(name, "_test.")) {
    return true;
  }
  const std::string rel = relative_to(file, root);
  return rel.starts_with("test/") || rel.starts_with("tests/") || contains(rel, "/__tests__/") ||
         rel.starts_with("__tests__/");
}

fs::path node_test_for(const fs::path& file, const fs::path& root) {
  const std::string stem = file.stem().string();
  std::vector<fs::path> candidates;
  for (const auto& dir : test_dirs_for(file, root)) {
    for (const char* ext : {".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx"}) {
      candidates.push_back(dir / (stem + ".test" + ext));
      candidates.push_back(dir / (stem + ".spec" + ext));
    }
  }
  return first_existing(candidates);
}

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

const VerificationCommand* first_for_family(const Discovery& discovery, Family family) {
  for (const auto& command : discovery.commands) {
    if (command.purpose == Purpose::test && runner_in_family(command.runner, family)) return &command;
  }
  return nullptr;
}

Suggestion full(const VerificationCommand& command, std::string reason) {
  Suggestion s;
  s.command = command;
  s.base_id = command.id;
  s.narrowed = false;
  s.reason = std::move(reason);
  return s;
}

Suggestion narrowed(const VerificationCommand& base, std::string command_line, std::string reason) {
  Suggestion s;
  s.command = base;
  s.command.command = std::move(command_line);
  s.base_id = base.id;
  s.narrowed = true;
  s.reason = std::move(reason);
  return s;
}

std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    if (i == 4) {
      out += fmt::format("and {} more", names.size() - 4);
      break;
    }
    out += names[i];
  }
  return out;
}

// The nearest directory from `file` up to `stop` that holds `marker`, or empty.
fs::path nearest_with(const fs::path& file, const fs::path& stop, const char* marker) {
  for (fs::path dir = file.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (is_file(dir / marker)) return dir;
    if (dir == stop || dir == dir.parent_path() || relative_to(dir, stop).empty()) break;
  }
  return {};
}

std::string cargo_package_name(const fs::path& dir) {
  const auto text = read_text(dir / "Cargo.toml");
  if (!text) return {};
  bool in_package = false;
  for (std::string_view line : lines_of(*text)) {
    line = support::trim(line);
    if (line.starts_with('[')) {
      in_package = line == "[package]";
      continue;
    }
    if (in_package && line.starts_with("name")) {
      const std::size_t quote = line.find('"');
      const std::size_t end = quote == std::string_view::npos ? quote : line.find('"', quote + 1);
      if (end != std::string_view::npos) return std::string(line.substr(quote + 1, end - quote - 1));
    }
  }
  return {};
}

std::optional<Suggestion> narrow_pytest(const VerificationCommand& base, const std::vector<fs::path>& files) {
  std::vector<std::string> targets;
  std::vector<std::string> mapped;
  for (const auto& file : files) {
    const std::string rel = relative_to(file, base.cwd);
    if (rel.empty())
      return full(base, fmt::format("{} is outside {}: running the full command", file.string(), base.cwd.string()));
    if (file.filename() == "conftest.py") {
      return full(base, fmt::format("{} changed: fixtures there can affect every test", rel));
    }
    if (is_python_test(file)) {
      targets.push_back(rel);
      continue;
    }
    const fs::path test = python_test_for(file, base.cwd);
    if (test.empty()) {
      return full(base, fmt::format("no test file found for {} (looked for test_{}.py and {}_test.py): running the "
                                    "full command",
                                    rel, file.stem().string(), file.stem().string()));
    }
    targets.push_back(relative_to(test, base.cwd));
    mapped.push_back(fmt::format("{} -> {}", rel, targets.back()));
  }
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  std::string reason = fmt::format("pytest runs only {}", list_names(targets));
  if (!mapped.empty()) reason += fmt::format(" (tests of changed sources: {})", list_names(mapped));
  return narrowed(base, base.command + " " + join_quoted(targets), std::move(reason));
}

// `node --test` with flags only (no files of its own), so appended files replace the default search.
bool node_script_takes_files(std::string_view script) {
  if (contains(script, "&&") || contains(script, ";") || contains(script, "|")) return false;
  const auto parts = words(script);
  bool after_node = false;
  for (std::string_view part : parts) {
    if (!after_node) {
      if (part == "node") after_node = true;
      continue;
    }
    if (!part.starts_with('-')) return false;
  }
  return after_node;
}

std::string npm_args(const VerificationCommand& base, const std::vector<std::string>& args) {
  // npm needs `--` before arguments meant for the script; yarn, pnpm and bun pass them on as they are.
  const bool npm = base.command.starts_with("npm ");
  return base.command + (npm ? " -- " : " ") + join_quoted(args);
}

std::optional<Suggestion> narrow_node(const VerificationCommand& base, const std::vector<fs::path>& files) {
  if (base.runner == RunnerKind::npm_script) {
    return full(base,
                fmt::format("the test script ({}) is not a runner agentd can narrow: running it whole", base.script));
  }
  if (base.runner == RunnerKind::node_test && !node_script_takes_files(base.script)) {
    return full(base, fmt::format("the test script ({}) chooses its own files, so a file cannot be added to it: "
                                  "running it whole",
                                  base.script));
  }
  std::vector<std::string> targets;
  std::vector<std::string> sources_without_tests;
  std::vector<std::string> mapped;
  for (const auto& file : files) {
    const std::string rel = relative_to(file, base.cwd);
    if (rel.empty())
      return full(base, fmt::format("{} is outside {}: running the full command", file.string(), base.cwd.string()));
    if (is_node_test(file, base.cwd)) {
      targets.push_back(rel);
      continue;
    }
    const fs::path test = node_test_for(file, base.cwd);
    if (test.empty()) {
      sources_without_tests.push_back(rel);
      continue;
    }
    targets.push_back(relative_to(test, base.cwd));
    mapped.push_back(fmt::format("{} -> {}", rel, targets.back()));
  }
  if (!sources_without_tests.empty()) {
    if (base.runner == RunnerKind::jest) {
      // jest follows imports itself: it runs every test that depends on the changed files.
      std::vector<std::string> args{"--findRelatedTests"};
      for (const auto& file : files) args.push_back(relative_to(file, base.cwd));
      return narrowed(base, npm_args(base, args),
                      fmt::format("jest --findRelatedTests runs the tests that import {}", list_names(args)));
    }
    return full(base, fmt::format("no test file found for {} (looked for <name>.test.* and <name>.spec.*): "
                                  "running the full command",
                                  list_names(sources_without_tests)));
  }
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  std::string reason = fmt::format("{} runs only {}", runner_kind_name(base.runner), list_names(targets));
  if (!mapped.empty()) reason += fmt::format(" (tests of changed sources: {})", list_names(mapped));
  return narrowed(base, npm_args(base, targets), std::move(reason));
}

std::optional<Suggestion> narrow_cargo(const VerificationCommand& base, const std::vector<fs::path>& files) {
  std::set<std::string> packages;
  std::vector<std::string> test_targets;
  std::vector<std::string> filters;
  std::vector<std::string> whole_crate;
  for (const auto& file : files) {
    const fs::path crate = nearest_with(file, base.cwd, "Cargo.toml");
    if (crate.empty()) return full(base, fmt::format("{} is in no crate: running the full command", file.string()));
    const std::string package =
        crate.lexically_normal() == base.cwd.lexically_normal() ? "" : cargo_package_name(crate);
    packages.insert(package);
    const std::string rel = relative_to(file, crate);
    std::vector<std::string> parts;
    for (const auto& part : fs::path(rel)) parts.push_back(part.string());
    if (parts.size() >= 2 && parts[0] == "tests") {
      test_targets.push_back(parts.size() == 2 ? fs::path(parts[1]).stem().string() : parts[1]);
    } else if (parts.size() >= 2 && parts[0] == "src" && parts[1] != "bin" && parts.back() != "lib.rs" &&
               parts.back() != "main.rs") {
      std::string module;
      for (std::size_t i = 1; i < parts.size(); ++i) {
        std::string piece = i + 1 == parts.size() ? fs::path(parts[i]).stem().string() : parts[i];
        if (piece == "mod") continue;
        if (!module.empty()) module += "::";
        module += piece;
      }
      filters.push_back(module + "::");
    } else {
      whole_crate.push_back(rel);
    }
  }
  std::string command = base.command;
  std::string scope;
  if (packages.size() == 1 && !packages.begin()->empty()) {
    command += " -p " + shell_quote(*packages.begin());
    scope = fmt::format(" in package {}", *packages.begin());
  } else if (packages.size() > 1) {
    return full(base, "the changed files are in several crates: running the full command");
  }
  if (!whole_crate.empty()) {
    if (!scope.empty())
      return narrowed(base, command, fmt::format("{} changed: every test{}", list_names(whole_crate), scope));
    return full(base, fmt::format("{} changed: it affects the whole crate", list_names(whole_crate)));
  }
  std::sort(filters.begin(), filters.end());
  filters.erase(std::unique(filters.begin(), filters.end()), filters.end());
  std::sort(test_targets.begin(), test_targets.end());
  test_targets.erase(std::unique(test_targets.begin(), test_targets.end()), test_targets.end());
  if (!filters.empty() && !test_targets.empty()) {
    if (!scope.empty())
      return narrowed(base, command, fmt::format("unit and integration tests changed: every test{}", scope));
    return full(base, "both unit tests (src/) and integration tests (tests/) changed: running the full command");
  }
  if (!test_targets.empty()) {
    for (const auto& target : test_targets) command += " --test " + shell_quote(target);
    return narrowed(base, command,
                    fmt::format("cargo test runs only the integration test{} {}{}", test_targets.size() == 1 ? "" : "s",
                                list_names(test_targets), scope));
  }
  if (filters.size() == 1) {
    command += " " + shell_quote(filters.front());
  } else {
    command += " -- " + join_quoted(filters);
  }
  return narrowed(
      base, command,
      fmt::format("cargo test runs only the tests whose path starts with {}{}", list_names(filters), scope));
}

std::optional<Suggestion> narrow_go(const VerificationCommand& base, const std::vector<fs::path>& files) {
  std::vector<std::string> packages;
  for (const auto& file : files) {
    const fs::path module = nearest_with(file, base.cwd, "go.mod");
    if (module.empty() || module.lexically_normal() != base.cwd.lexically_normal()) {
      return full(base, fmt::format("{} is not in the module at {}: running the full command", file.string(),
                                    base.cwd.string()));
    }
    const std::string dir = relative_to(file.parent_path(), base.cwd);
    packages.push_back(dir.empty() || dir == "." ? "." : "./" + dir + "/...");
  }
  std::sort(packages.begin(), packages.end());
  packages.erase(std::unique(packages.begin(), packages.end()), packages.end());
  return narrowed(base, "go test " + join_quoted(packages),
                  fmt::format("go test runs only the package{} of the changed files: {}",
                              packages.size() == 1 ? "" : "s", list_names(packages)));
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
  return narrowed(base, ctest_command(build, target_list, regex), std::move(reason));
}

}  // namespace

std::string_view runner_kind_name(RunnerKind kind) noexcept {
  switch (kind) {
    case RunnerKind::gtest_ctest: return "gtest_ctest";
    case RunnerKind::pytest: return "pytest";
    case RunnerKind::node_test: return "node_test";
    case RunnerKind::jest: return "jest";
    case RunnerKind::vitest: return "vitest";
    case RunnerKind::go_test: return "go_test";
    case RunnerKind::cargo_test: return "cargo_test";
    case RunnerKind::make: return "make";
    case RunnerKind::npm_script: return "npm_script";
    case RunnerKind::other: return "other";
  }
  return "other";
}

std::optional<RunnerKind> parse_runner_kind(std::string_view name) noexcept {
  for (RunnerKind kind :
       {RunnerKind::gtest_ctest, RunnerKind::pytest, RunnerKind::node_test, RunnerKind::jest, RunnerKind::vitest,
        RunnerKind::go_test, RunnerKind::cargo_test, RunnerKind::make, RunnerKind::npm_script, RunnerKind::other}) {
    if (runner_kind_name(kind) == name) return kind;
  }
  return std::nullopt;
}

RunnerKind guess_runner(std::string_view command) noexcept {
  if (has_word(command, "ctest")) return RunnerKind::gtest_ctest;
  if (has_word(command, "pytest") || has_word(command, "py.test")) return RunnerKind::pytest;
  if (has_word(command, "vitest")) return RunnerKind::vitest;
  if (has_word(command, "jest")) return RunnerKind::jest;
  if (has_word(command, "node") && contains(command, "--test")) return RunnerKind::node_test;
  if (has_word(command, "go") && has_word(command, "test")) return RunnerKind::go_test;
  if (has_word(command, "cargo") && (has_word(command, "test") || has_word(command, "t"))) {
    return RunnerKind::cargo_test;
  }
  const auto parts = words(command);
  if (!parts.empty() && (parts[0] == "make" || parts[0] == "gmake")) return RunnerKind::make;
  if (!parts.empty() && (parts[0] == "npm" || parts[0] == "yarn" || parts[0] == "pnpm" || parts[0] == "bun")) {
    return RunnerKind::npm_script;
  }
  return RunnerKind::other;
}

bool runner_counts_tests(RunnerKind kind) noexcept {
  switch (kind) {
    case RunnerKind::gtest_ctest:
    case RunnerKind::pytest:
    case RunnerKind::node_test:
    case RunnerKind::jest:
    case RunnerKind::vitest:
    case RunnerKind::go_test:
    case RunnerKind::cargo_test: return true;
    case RunnerKind::make:
    case RunnerKind::npm_script:
    case RunnerKind::other: return false;
  }
  return false;
}

std::string_view purpose_name(Purpose purpose) noexcept {
  switch (purpose) {
    case Purpose::test: return "test";
    case Purpose::lint: return "lint";
    case Purpose::typecheck: return "typecheck";
  }
  return "test";
}

const VerificationCommand* Discovery::find(std::string_view id) const noexcept {
  for (const auto& command : commands) {
    if (command.id == id) return &command;
  }
  return nullptr;
}

const VerificationCommand* Discovery::primary() const noexcept {
  for (const auto& command : commands) {
    if (command.purpose == Purpose::test) return &command;
  }
  return nullptr;
}

Discovery discover_verification(const fs::path& workspace) {
  Discovery out;
  std::error_code ec;
  fs::path root = fs::weakly_canonical(workspace, ec);
  if (ec) root = workspace.lexically_normal();
  out.workspace = root;
  if (!is_dir(root)) {
    out.notes.push_back(fmt::format("{} is not a directory", root.string()));
    return out;
  }

  // Test runners first (they can be narrowed), then make targets, then what a README says, then lint
  // and typecheck: the front of the list is what a change is verified with.
  discover_package_json(root, root, out);
  discover_pytest(root, root, out);
  discover_cargo(root, root, out);
  discover_go(root, root, out);
  discover_cmake(root, root, out);
  // A monorepo keeps its projects one level down; look there for kinds the root does not have.
  const bool root_node = is_file(root / "package.json");
  const bool root_python = std::any_of(out.commands.begin(), out.commands.end(),
                                       [](const VerificationCommand& c) { return c.runner == RunnerKind::pytest; });
  const bool root_cargo = is_file(root / "Cargo.toml");
  const bool root_go = is_file(root / "go.mod");
  std::vector<fs::path> subdirs;
  for (const auto& entry : fs::directory_iterator(root, fs::directory_options::skip_permission_denied, ec)) {
    std::error_code entry_ec;
    if (!entry.is_directory(entry_ec)) continue;
    const std::string name = entry.path().filename().string();
    if (name.starts_with('.') || name == "node_modules" || name == "target" || name == "vendor" ||
        name.starts_with("build") || name == "dist" || name == "venv" || name == "__pycache__") {
      continue;
    }
    subdirs.push_back(entry.path());
  }
  std::sort(subdirs.begin(), subdirs.end());
  for (const auto& dir : subdirs) {
    if (!root_node) discover_package_json(dir, root, out);
    if (!root_python) discover_pytest(dir, root, out);
    if (!root_cargo) discover_cargo(dir, root, out);
    if (!root_go) discover_go(dir, root, out);
  }
  discover_make(root, root, out);
  discover_readme(root, root, out);
  std::stable_partition(out.commands.begin(), out.commands.end(),
                        [](const VerificationCommand& c) { return c.purpose == Purpose::test; });
  return out;
}

std::optional<Suggestion> suggest_verification(const Discovery& discovery,
                                               const std::vector<std::string>& changed_files) {
  const VerificationCommand* primary = discovery.primary();
  if (primary == nullptr) return std::nullopt;

  std::vector<fs::path> files;
  std::map<Family, std::vector<fs::path>> by_family;
  std::vector<std::string> others;
  for (const auto& name : changed_files) {
    fs::path path = fs::path(name).is_absolute() ? fs::path(name) : discovery.workspace / name;
    path = path.lexically_normal();
    if (relative_to(path, discovery.workspace).empty()) continue;  // outside the workspace
    const Family family = family_of(path);
    if (family == Family::docs) continue;
    if (family == Family::other) {
      others.push_back(relative_to(path, discovery.workspace));
      continue;
    }
    by_family[family].push_back(path);
  }
  if (changed_files.empty()) return full(*primary, "no files changed: the full test command");
  if (!others.empty()) {
    return full(*primary, fmt::format("{} changed (not source code a runner can narrow to, e.g. build or "
                                      "configuration files): the full test command",
                                      list_names(others)));
  }
  if (by_family.empty())
    return full(*primary, "only documentation or files outside the workspace changed: the full test command");
  if (by_family.size() > 1) {
    std::vector<std::string> names;
    names.reserve(by_family.size());
    for (const auto& [family, paths] : by_family) names.emplace_back(family_name(family));
    return full(*primary, fmt::format("the changed files are {}: one narrowed command cannot cover them all; the full "
                                      "test command",
                                      list_names(names)));
  }
  const auto& [family, paths] = *by_family.begin();
  const VerificationCommand* base = first_for_family(discovery, family);
  if (base == nullptr) {
    return full(*primary, fmt::format("{} files changed but no {} test command was discovered: the full test command",
                                      family_name(family), family_name(family)));
  }
  switch (family) {
    case Family::python: return narrow_pytest(*base, paths);
    case Family::node: return narrow_node(*base, paths);
    case Family::rust: return narrow_cargo(*base, paths);
    case Family::go: return narrow_go(*base, paths);
    case Family::cpp: return narrow_ctest(*base, paths);
    default: break;
  }
  return full(*base, "the full test command");
}

Json to_json(const VerificationCommand& command) {
  Json out = Json::object();
  out.set("id", command.id);
  out.set("command", command.command);
  out.set("runner", runner_kind_name(command.runner));
  out.set("purpose", purpose_name(command.purpose));
  out.set("cwd", command.cwd.string());
  out.set("source", command.source);
  return out;
}

Json to_json(const Discovery& discovery) {
  Json out = Json::object();
  out.set("workspace", discovery.workspace.string());
  Json commands = Json::array();
  for (const auto& command : discovery.commands) commands.push_back(to_json(command));
  out.set("commands", std::move(commands));
  Json notes = Json::array();
  for (const auto& note : discovery.notes) notes.push_back(note);
  out.set("notes", std::move(notes));
  return out;
}

Json to_json(const Suggestion& suggestion) {
  Json out = to_json(suggestion.command);
  out.set("baseId", suggestion.base_id);
  out.set("narrowed", suggestion.narrowed);
  out.set("reason", suggestion.reason);
  return out;
}

}  // namespace agentd::tools::verify
