#include "tools/ignore.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test/support/temp_dir.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;

// One case of gitignore(5): the files' text, a path, whether it names a directory, and git's answer.
struct Case {
  std::string top;      // .gitignore at the top
  std::string sub;      // sub/.gitignore
  std::string exclude;  // .git/info/exclude
  std::string path;
  bool is_dir;
  bool ignored;
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << fmt::format("top={:?} sub={:?} exclude={:?} path={:?}{}", c.top, c.sub, c.exclude, c.path,
                      c.is_dir ? " (dir)" : "");
}

const Case kCases[] = {
    // A name without a slash matches at any depth, files and directories alike.
    {"foo", "", "", "foo", false, true},
    {"foo", "", "", "a/b/foo", false, true},
    {"foo", "", "", "foo", true, true},
    {"foo", "", "", "foobar", false, false},
    {"foo", "", "", "a/foo/bar", false, true},  // below an ignored directory
    // A trailing slash matches directories only (and so everything below them).
    {"foo/", "", "", "foo", true, true},
    {"foo/", "", "", "foo", false, false},
    {"foo/", "", "", "a/foo", true, true},
    {"foo/", "", "", "foo/bar", false, true},
    {"frotz/", "", "", "a/frotz", true, true},
    // A slash at the start or in the middle anchors to the .gitignore's directory.
    {"/foo", "", "", "foo", false, true},
    {"/foo", "", "", "a/foo", false, false},
    {"doc/frotz", "", "", "doc/frotz", false, true},
    {"doc/frotz", "", "", "a/doc/frotz", false, false},
    {"doc/frotz/", "", "", "doc/frotz", true, true},
    {"/a/b", "", "", "a/b", false, true},
    // `*`, `?` and brackets; none of them matches a '/'.
    {"*.o", "", "", "a/b/x.o", false, true},
    {"*.o", "", "", "x.oo", false, false},
    {"*.c", "", "", ".c", false, true},
    {"foo*", "", "", "foobar", false, true},
    {"?.c", "", "", "a.c", false, true},
    {"?.c", "", "", "ab.c", false, false},
    {"a?c", "", "", "a/c", false, false},
    {"a/*.c", "", "", "a/b/c.c", false, false},
    {"a/*/b", "", "", "a/x/y/b", false, false},
    {"a/*/b", "", "", "a/x/b", false, true},
    {"[abc].txt", "", "", "b.txt", false, true},
    {"[abc].txt", "", "", "d.txt", false, false},
    {"[a-c].txt", "", "", "b.txt", false, true},
    {"[!a-c].txt", "", "", "d.txt", false, true},
    {"[!a-c].txt", "", "", "a.txt", false, false},
    {"[^a].txt", "", "", "b.txt", false, true},
    {"*.[oa]", "", "", "lib.a", false, true},
    {"[[:digit:]]*", "", "", "1abc", false, true},
    {"[[:digit:]]*", "", "", "abc", false, false},
    // `**`: leading, trailing, middle.
    {"**/foo", "", "", "foo", false, true},
    {"**/foo", "", "", "a/b/foo", false, true},
    {"**/foo/bar", "", "", "x/foo/bar", false, true},
    {"**/foo/bar", "", "", "foo/bar", false, true},
    {"abc/**", "", "", "abc/x/y", false, true},
    {"abc/**", "", "", "abc", false, false},
    {"a/**/b", "", "", "a/b", false, true},
    {"a/**/b", "", "", "a/x/y/b", false, true},
    {"a/**/", "", "", "a/x", true, true},
    {"a/**/", "", "", "a/x", false, false},
    {"**", "", "", "any/thing", false, true},
    // Negation: the last matching pattern wins; a parent directory's exclusion cannot be undone.
    {"*.log\n!keep.log", "", "", "keep.log", false, false},
    {"*.log\n!keep.log", "", "", "x.log", false, true},
    {"!foo\nfoo", "", "", "foo", false, true},
    {"foo\n!foo", "", "", "foo", false, false},
    {"build/\n!build/keep.txt", "", "", "build/keep.txt", false, true},
    {"build/*\n!build/keep.txt", "", "", "build/keep.txt", false, false},
    {"build/*\n!build/keep.txt", "", "", "build/other.txt", false, true},
    // Comments, blank lines, trailing spaces, escapes, CRLF.
    {"# comment", "", "", "# comment", false, false},
    {"\\#hash", "", "", "#hash", false, true},
    {"\\!bang", "", "", "!bang", false, true},
    {"\\*star", "", "", "*star", false, true},
    {"\\*star", "", "", "xstar", false, false},
    {"foo   ", "", "", "foo", false, true},
    {"foo\\ ", "", "", "foo ", false, true},
    {"foo\\ ", "", "", "foo", false, false},
    {"\n\n   \n", "", "", "foo", false, false},
    {"foo\r\nbar\r\n", "", "", "bar", false, true},
    // Nested files: relative to their directory, and deeper ones take precedence.
    {"", "*.txt", "", "sub/a.txt", false, true},
    {"", "*.txt", "", "a.txt", false, false},
    {"*.txt", "!keep.txt", "", "sub/keep.txt", false, false},
    {"*.txt", "!keep.txt", "", "keep.txt", false, true},
    {"", "/x", "", "sub/x", false, true},
    {"", "/x", "", "sub/y/x", false, false},
    {"!sub/x", "x", "", "sub/x", false, true},
    // .git/info/exclude comes below every .gitignore.
    {"!a.tmp", "", "*.tmp", "a.tmp", false, false},
    {"!a.tmp", "", "*.tmp", "b.tmp", false, true},
    {"", "", "sub/", "sub/file", false, true},
};

class IgnoreCaseTest : public ::testing::TestWithParam<Case> {};

TEST_P(IgnoreCaseTest, MatchesGitSemantics) {
  const Case& c = GetParam();
  IgnoreRules rules;
  rules.add_gitignore("", c.top);
  rules.add_gitignore("sub", c.sub);
  rules.set_exclude(c.exclude);
  EXPECT_EQ(rules.check(c.path, c.is_dir).ignored, c.ignored);
}

INSTANTIATE_TEST_SUITE_P(GitignoreManual, IgnoreCaseTest, ::testing::ValuesIn(kCases));

TEST(IgnoreFileTest, ParsesLikeGit) {
  const IgnoreFile file("\xEF\xBB\xBF# c\n\n!neg/\n/anchored\nmid/dle\n*.ends\nlit\\ \n");
  ASSERT_EQ(file.patterns().size(), 5U);
  const auto& p = file.patterns();
  EXPECT_EQ(p[0].text, "!neg/");
  EXPECT_EQ(p[0].pattern, "neg");
  EXPECT_EQ(p[0].line, 3U);
  EXPECT_TRUE(p[0].negative);
  EXPECT_TRUE(p[0].directory_only);
  EXPECT_TRUE(p[0].basename_only);
  EXPECT_FALSE(p[1].basename_only);
  EXPECT_FALSE(p[2].basename_only);
  EXPECT_TRUE(p[3].ends_with);
  EXPECT_EQ(p[4].pattern, "lit\\ ");
  EXPECT_EQ(p[4].literal_prefix, 3U);
}

TEST(IgnoreFileTest, ReportsTheDecidingPattern) {
  IgnoreRules rules;
  rules.add_gitignore("", "build/\n*.log\n");
  rules.add_gitignore("src", "!debug.log\n");
  rules.set_exclude("*.swp\n");
  auto verdict = rules.check("build/out/x.o", false);
  EXPECT_TRUE(verdict.ignored);
  ASSERT_NE(verdict.pattern, nullptr);
  EXPECT_EQ(verdict.pattern->text, "build/");
  EXPECT_EQ(verdict.source, ".gitignore");
  verdict = rules.check("src/debug.log", false);
  EXPECT_FALSE(verdict.ignored);
  ASSERT_NE(verdict.pattern, nullptr);
  EXPECT_EQ(verdict.pattern->text, "!debug.log");
  EXPECT_EQ(verdict.source, "src/.gitignore");
  verdict = rules.check("a.swp", false);
  EXPECT_EQ(verdict.source, ".git/info/exclude");
  EXPECT_EQ(verdict.pattern->line, 1U);
  EXPECT_EQ(rules.check("readme", false).pattern, nullptr);
}

TEST(WildmatchTest, PathnameRules) {
  EXPECT_TRUE(wildmatch("a/**/b", "a/b", true));
  EXPECT_TRUE(wildmatch("**/*.c", "x/y/z.c", true));
  EXPECT_TRUE(wildmatch("**/*.c", "z.c", true));
  EXPECT_FALSE(wildmatch("*.c", "x/z.c", true));
  EXPECT_TRUE(wildmatch("*.c", "x/z.c", false));
  EXPECT_TRUE(wildmatch("a**b", "axxb", true));
  EXPECT_FALSE(wildmatch("a**b", "ax/xb", true));  // `**` inside a name is a plain `*`
  EXPECT_TRUE(wildmatch("[a-]", "-", true));
  EXPECT_TRUE(wildmatch("[]]", "]", true));
  EXPECT_FALSE(wildmatch("[", "[", true));  // an unterminated class matches nothing
  EXPECT_FALSE(wildmatch("a\\", "a", true));
  EXPECT_FALSE(wildmatch("[[:nope:]]", "a", true));
  // A hostile pattern stays fast thanks to git's abort rules.
  EXPECT_FALSE(wildmatch("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", std::string(200, 'a'), true));
  EXPECT_FALSE(wildmatch("**/**/**/**/**/**/**/**/**/x", std::string(60, 'a') + "/" + std::string(60, 'a'), true));
}

// --- Oracle: our answers against `git check-ignore` on generated repositories ---------------------------

bool have_git() { return std::system("git --version >/dev/null 2>&1") == 0; }

void write_file(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A tiny deterministic generator (the tests must not depend on the standard library's distributions).
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ULL + 1) {}
  std::uint64_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[below(items.size())];
  }

 private:
  std::uint64_t state_;
};

const std::vector<std::string> kNames = {"a", "b", "ab", "x.txt", "y.log", "build", "doc", "Foo", "a b", ".hid"};

// A pattern built from the pieces gitignore(5) describes, so most of them match something in the tree.
std::string random_pattern(Random& random) {
  static const std::vector<std::string> pieces = {"a",  "b",   "ab",          "*",    "?",     "**",    "x",   ".txt",
                                                  "*.", "log", "[ab]",        "[!a]", "[a-c]", "build", "doc", "\\ ",
                                                  "Fo", "o",   "[[:alpha:]]", "\\*",  "\\[",   ".h"};
  std::string pattern;
  if (random.below(5) == 0) pattern += '!';
  if (random.below(4) == 0) pattern += '/';
  const std::size_t components = 1 + random.below(3);
  for (std::size_t c = 0; c < components; ++c) {
    if (c > 0) pattern += '/';
    const std::size_t pieces_in = 1 + random.below(3);
    for (std::size_t i = 0; i < pieces_in; ++i) pattern += random.pick(pieces);
  }
  if (random.below(4) == 0) pattern += '/';
  if (random.below(8) == 0) pattern += "  ";
  return pattern;
}

struct Repo {
  fs::path root;
  IgnoreRules rules;
  std::vector<std::pair<std::string, bool>> paths;  // every path below the root but .git, with is_dir
};

void collect(const fs::path& root, Repo& repo) {
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path relative = it->path().lexically_relative(root);
    if (relative.begin()->string() == ".git") {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    repo.paths.emplace_back(relative.generic_string(), it->is_directory() && !it->is_symlink());
  }
  std::sort(repo.paths.begin(), repo.paths.end());
}

// Builds a repository under `dir`: a tree of the names above three deep, random .gitignore files at the top
// and in a few directories, and a random info/exclude.
Repo make_repo(const fs::path& dir, std::uint64_t seed) {
  Random random(seed);
  Repo repo;
  repo.root = dir;
  fs::create_directories(dir);
  const std::string init = fmt::format("git -C '{}' init -q 2>/dev/null", dir.string());
  EXPECT_EQ(std::system(init.c_str()), 0);
  for (const auto& a : kNames) {
    if (random.below(3) == 0) {
      write_file(dir / a, "x");
      continue;
    }
    for (const auto& b : kNames) {
      if (random.below(3) != 0) continue;
      if (random.below(2) == 0) {
        write_file(dir / a / b, "x");
        continue;
      }
      for (const auto& c : kNames) {
        if (random.below(3) == 0) write_file(dir / a / b / c, "x");
      }
    }
  }
  auto random_file = [&random] {
    std::string text;
    const std::size_t lines = 1 + random.below(8);
    for (std::size_t i = 0; i < lines; ++i) text += random_pattern(random) + (random.below(6) == 0 ? "\r\n" : "\n");
    return text;
  };
  // The directories of the tree (before the .gitignore files are added, so none of those is missed).
  std::vector<std::string> directories{""};
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string relative = it->path().lexically_relative(dir).generic_string();
    if (relative.starts_with(".git")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory()) directories.push_back(relative);
  }
  for (const auto& directory : directories) {
    if (!directory.empty() && random.below(3) != 0) continue;
    const std::string text = random_file();
    write_file(dir / directory / ".gitignore", text);
    repo.rules.add_gitignore(directory, text);
  }
  const std::string exclude = random_file();
  write_file(dir / ".git" / "info" / "exclude", exclude);
  repo.rules.set_exclude(exclude);
  collect(dir, repo);
  return repo;
}

struct GitAnswer {
  std::string source;
  std::string line;
  std::string pattern;
};

// `git check-ignore --no-index -v -n -z` on every path of the repo: the deciding pattern of each, or none.
std::map<std::string, GitAnswer> ask_git(const Repo& repo, const fs::path& scratch) {
  std::string input;
  for (const auto& [path, is_dir] : repo.paths) {
    input += path;
    input += '\0';
  }
  write_file(scratch / "in", input);
  // Isolated from the machine's configuration: no global excludes file, no system config.
  const std::string command = fmt::format(
      "cd '{}' && HOME='{}' XDG_CONFIG_HOME='{}' GIT_CONFIG_NOSYSTEM=1 git -c core.excludesFile='{}' check-ignore "
      "--no-index -v -n -z --stdin <'{}' >'{}' 2>'{}'",
      repo.root.string(), scratch.string(), scratch.string(), (scratch / "none").string(), (scratch / "in").string(),
      (scratch / "out").string(), (scratch / "err").string());
  const int status = std::system(command.c_str());
  EXPECT_TRUE(status == 0 || WEXITSTATUS(status) == 1) << command << "\n" << read_file(scratch / "err");
  const std::string out = read_file(scratch / "out");
  std::vector<std::string> fields;
  for (std::size_t start = 0; start < out.size();) {
    const std::size_t end = out.find('\0', start);
    if (end == std::string::npos) break;
    fields.push_back(out.substr(start, end - start));
    start = end + 1;
  }
  std::map<std::string, GitAnswer> answers;
  for (std::size_t i = 0; i + 3 < fields.size(); i += 4)
    answers[fields[i + 3]] = {fields[i], fields[i + 1], fields[i + 2]};
  return answers;
}

TEST(IgnoreOracleTest, AgreesWithGitCheckIgnore) {
  if (!have_git()) GTEST_SKIP() << "git is not installed: the check-ignore oracle cannot run";
  agentd::testing::TempDir temp;
  std::size_t compared = 0, ignored = 0, negated = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const fs::path dir = temp.path() / fmt::format("repo{}", seed);
    const fs::path scratch = temp.path() / fmt::format("scratch{}", seed);
    fs::create_directories(scratch);
    const Repo repo = make_repo(dir, seed);
    const auto answers = ask_git(repo, scratch);
    ASSERT_EQ(answers.size(), repo.paths.size()) << "seed " << seed;
    for (const auto& [path, is_dir] : repo.paths) {
      const auto verdict = repo.rules.check(path, is_dir);
      const GitAnswer& git = answers.at(path);
      const std::string ours = verdict.pattern == nullptr ? "::"
                                                          : fmt::format("{}:{}:{}", verdict.source,
                                                                        verdict.pattern->line, verdict.pattern->text);
      EXPECT_EQ(ours, fmt::format("{}:{}:{}", git.source, git.line, git.pattern))
          << "seed " << seed << ", path \"" << path << "\"" << (is_dir ? " (dir)" : "") << "; files:\n"
          << read_file(dir / ".gitignore") << "--- exclude:\n"
          << read_file(dir / ".git/info/exclude");
      ++compared;
      if (verdict.ignored) ++ignored;
      if (verdict.pattern != nullptr && verdict.pattern->negative) ++negated;
    }
  }
  // The generator must exercise all three answers, or the comparison proves little.
  EXPECT_GT(compared, 1500U);
  EXPECT_GT(ignored, compared / 10);
  EXPECT_GT(negated, 20U);
  RecordProperty("compared", static_cast<int>(compared));
}

}  // namespace
}  // namespace agentd::tools
