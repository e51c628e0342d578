#include "tools/verify/discovery.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/support/temp_dir.h"
#include "test/unit/verify/verify_test_util.h"

namespace agentd::tools::verify {
namespace {

namespace fs = std::filesystem;
using testing::copy_fixture;
using ::testing::HasSubstr;
using testing::write_all;

class DiscoveryTest : public ::testing::Test {
 protected:
  // PATH has a python3 and the pytest it runs (these tests must not depend on the machine's): discovery
  // then proposes `python3 -m pytest`.
  DiscoveryTest() : ws_(fs::canonical(temp_.path()) / "ws") {
    fs::create_directories(ws_);
    const fs::path bin = temp_.path() / "fixture-bin";
    testing::write_script(bin / "python3", "#!/bin/sh\nexit 0\n");
    testing::write_script(bin / "pytest", "#!/usr/bin/env python3\nimport pytest\n");
    path_.emplace(bin.string());
  }

  void write(const std::string& relative, std::string_view text) const { write_all(ws_ / relative, text); }
  Discovery discover() const { return discover_verification(ws_); }
  std::vector<std::string> ids(const Discovery& d) const {
    std::vector<std::string> out;
    for (const auto& c : d.commands) out.push_back(c.id);
    return out;
  }
  Suggestion suggest(const std::vector<std::string>& files) const {
    auto s = suggest_verification(discover(), files);
    EXPECT_TRUE(s.has_value());
    return s.value_or(Suggestion{});
  }

  agentd::testing::TempDir temp_;
  fs::path ws_;
  std::optional<testing::ScopedPath> path_;
};

// The python3 and pytest discovery finds on PATH: a bin folder of scripts (they are only read, never run).
class PytestOnPath {
 public:
  explicit PytestOnPath(const fs::path& bin) : bin_(bin) { fs::create_directories(bin); }
  void python3() const { testing::write_script(bin_ / "python3", "#!/bin/sh\nexit 0\n"); }
  void pytest(std::string_view shebang) const {
    testing::write_script(bin_ / "pytest", std::string(shebang) + "\nimport pytest\n");
  }
  const fs::path& bin() const { return bin_; }

 private:
  fs::path bin_;
};

TEST_F(DiscoveryTest, PythonFixture) {
  // python3 on PATH runs the pytest on PATH (the fixture's): `python3 -m pytest`, nothing to note.
  copy_fixture("python", ws_);
  const Discovery d = discover();
  ASSERT_EQ(ids(d), std::vector<std::string>{"pytest"});
  const VerificationCommand& c = d.commands[0];
  EXPECT_EQ(c.command, "python3 -m pytest");
  EXPECT_EQ(c.runner, RunnerKind::pytest);
  EXPECT_EQ(c.purpose, Purpose::test);
  EXPECT_EQ(c.cwd, ws_);
  EXPECT_EQ(c.source, "pyproject.toml [tool.pytest.ini_options]");
  EXPECT_EQ(d.primary(), &d.commands[0]);
  EXPECT_EQ(d.find("pytest"), &d.commands[0]);
  EXPECT_EQ(d.find("nope"), nullptr);
  EXPECT_TRUE(d.notes.empty());
}

// python3 -m pytest only where that python3 has pytest: the pytest on PATH says which interpreter it runs
// under (pyenv's or conda's python3 first on PATH often has none).
TEST_F(DiscoveryTest, PytestRunsUnderTheInterpreterThatHasIt) {
  copy_fixture("python", ws_);
  const PytestOnPath on_path(temp_.path() / "bin");
  on_path.python3();
  on_path.pytest("#!" + (on_path.bin() / "python3").string());
  {
    const testing::ScopedPath path(on_path.bin().string());
    EXPECT_EQ(discover().commands.at(0).command, "python3 -m pytest");
  }
  const fs::path other = temp_.path() / "other-python3";
  testing::write_script(other, "#!/bin/sh\n");
  on_path.pytest("#!" + other.string() + " -I");
  {
    const testing::ScopedPath path(on_path.bin().string());
    const Discovery d = discover();
    EXPECT_EQ(d.commands.at(0).command, other.string() + " -m pytest");
    ASSERT_EQ(d.notes.size(), 1U);
    EXPECT_THAT(d.notes[0], HasSubstr("runs under " + other.string()));
    // Narrowing keeps the invocation.
    EXPECT_EQ(suggest({"tests/test_calc.py"}).command.command, other.string() + " -m pytest tests/test_calc.py");
  }
  fs::remove(on_path.bin() / "pytest");
  {
    const testing::ScopedPath path(on_path.bin().string());
    const Discovery d = discover();
    EXPECT_EQ(d.commands.at(0).command, "python3 -m pytest");
    ASSERT_EQ(d.notes.size(), 1U);
    EXPECT_THAT(d.notes[0], HasSubstr("no pytest on PATH"));
  }
  // A project virtualenv wins over anything on PATH.
  write(".venv/bin/python", "");
  EXPECT_EQ(discover().commands.at(0).command, ".venv/bin/python -m pytest");
}

TEST_F(DiscoveryTest, PytestConfigurationSources) {
  write("tox.ini", "[tox]\nenvlist = py311\n\n[pytest]\naddopts = -q\n");
  EXPECT_EQ(discover().commands.at(0).source, "tox.ini [pytest]");
  fs::remove(ws_ / "tox.ini");
  write("setup.cfg", "[metadata]\nname = x\n\n[tool:pytest]\ntestpaths = tests\n");
  EXPECT_EQ(discover().commands.at(0).source, "setup.cfg [tool:pytest]");
  write("pytest.ini", "[pytest]\n");
  EXPECT_EQ(discover().commands.at(0).source, "pytest.ini");
  // A project virtualenv's python has the project's pytest.
  write(".venv/bin/python", "");
  EXPECT_EQ(discover().commands.at(0).command, ".venv/bin/python -m pytest");
}

TEST_F(DiscoveryTest, NodeFixtureScripts) {
  copy_fixture("node", ws_);
  const Discovery d = discover();
  ASSERT_EQ(ids(d), (std::vector<std::string>{"npm:test", "npm:lint"}));
  EXPECT_EQ(d.commands[0].command, "npm test");
  EXPECT_EQ(d.commands[0].runner, RunnerKind::node_test);
  EXPECT_EQ(d.commands[0].source, "package.json scripts.test");
  EXPECT_EQ(d.commands[0].script, "node --test");
  EXPECT_EQ(d.commands[1].command, "npm run lint");
  EXPECT_EQ(d.commands[1].runner, RunnerKind::npm_script);
  EXPECT_EQ(d.commands[1].purpose, Purpose::lint);
  EXPECT_EQ(d.commands[1].source, "package.json scripts.lint");
}

TEST_F(DiscoveryTest, NodeRunnersAndPackageManagers) {
  write("package.json", R"({"scripts": {"test": "jest --ci", "typecheck": "tsc --noEmit"}})");
  write("yarn.lock", "");
  Discovery d = discover();
  ASSERT_EQ(ids(d), (std::vector<std::string>{"npm:test", "npm:typecheck"}));
  EXPECT_EQ(d.commands[0].runner, RunnerKind::jest);
  EXPECT_EQ(d.commands[0].command, "yarn test");
  EXPECT_EQ(d.commands[1].command, "yarn run typecheck");
  EXPECT_EQ(d.commands[1].purpose, Purpose::typecheck);
  write("package.json", R"({"scripts": {"test": "vitest run"}})");
  fs::remove(ws_ / "yarn.lock");
  write("pnpm-lock.yaml", "");
  d = discover();
  EXPECT_EQ(d.commands.at(0).runner, RunnerKind::vitest);
  EXPECT_EQ(d.commands.at(0).command, "pnpm test");
  // npm init's placeholder is not a test command.
  write("package.json", R"({"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}})");
  EXPECT_TRUE(discover().commands.empty());
  write("package.json", "{not json");
  d = discover();
  EXPECT_TRUE(d.commands.empty());
  ASSERT_EQ(d.notes.size(), 1U);
  EXPECT_THAT(d.notes[0], HasSubstr("package.json is not valid JSON"));
}

TEST_F(DiscoveryTest, RustAndGoFixtures) {
  copy_fixture("rust", ws_ / "rust");
  copy_fixture("go", ws_ / "go");
  // Both sit one level down, as in a monorepo.
  const Discovery d = discover();
  ASSERT_EQ(ids(d), (std::vector<std::string>{"go/go:test", "rust/cargo:test"}));
  EXPECT_EQ(d.commands[0].command, "go test ./...");
  EXPECT_EQ(d.commands[0].runner, RunnerKind::go_test);
  EXPECT_EQ(d.commands[0].cwd, ws_ / "go");
  EXPECT_EQ(d.commands[0].source, "go/go.mod");
  EXPECT_EQ(d.commands[1].command, "cargo test");
  EXPECT_EQ(d.commands[1].runner, RunnerKind::cargo_test);
  EXPECT_EQ(d.commands[1].source, "rust/Cargo.toml");
}

TEST_F(DiscoveryTest, CmakeWithoutABuildTreeConfiguresOne) {
  copy_fixture("cmake", ws_);
  Discovery d = discover();
  ASSERT_EQ(ids(d), std::vector<std::string>{"ctest:build"});
  EXPECT_EQ(
      d.commands[0].command,
      "cmake -S . -B build && cmake --build build && ctest --test-dir build --output-on-failure --no-tests=error");
  EXPECT_EQ(d.commands[0].source, "CMakeLists.txt (CTest), no build tree yet: configures build/ first");
  EXPECT_TRUE(d.notes.empty());
  // Narrowed, it still configures first, and says so.
  Suggestion s = suggest({"calc_test.cpp"});
  EXPECT_TRUE(s.narrowed);
  EXPECT_EQ(s.command.command,
            "cmake -S . -B build && cmake --build build && ctest --test-dir build --output-on-failure "
            "--no-tests=error -R '^(Calc)\\.'");
  EXPECT_THAT(s.reason, HasSubstr("after configuring build"));

  // A configured tree is used as it is.
  write("build/default/CTestTestfile.cmake", "# CMake generated\n");
  d = discover();
  ASSERT_EQ(ids(d), std::vector<std::string>{"ctest:build/default"});
  EXPECT_EQ(d.commands[0].command,
            "cmake --build build/default && ctest --test-dir build/default --output-on-failure --no-tests=error");
  EXPECT_EQ(d.commands[0].runner, RunnerKind::gtest_ctest);
  EXPECT_EQ(d.commands[0].source, "CMakeLists.txt (CTest), build tree build/default");
  EXPECT_TRUE(d.notes.empty());
}

TEST_F(DiscoveryTest, MakefileTargets) {
  write("Makefile",
        "CC := gcc\n.PHONY: test check lint\n\nall: prog\n\ntest check: prog\n\t./run-tests\n\nlint:\n\tcheck-style\n"
        "install:\n\tcp prog /usr/bin\n");
  const Discovery d = discover();
  ASSERT_EQ(ids(d), (std::vector<std::string>{"make:test", "make:check", "make:lint"}));
  EXPECT_EQ(d.commands[0].command, "make test");
  EXPECT_EQ(d.commands[0].runner, RunnerKind::make);
  EXPECT_EQ(d.commands[0].source, "Makefile target test");
  EXPECT_EQ(d.commands[1].source, "Makefile target check");
  EXPECT_EQ(d.commands[2].purpose, Purpose::lint);
}

TEST_F(DiscoveryTest, ReadmeTestingSection) {
  write("Makefile", "test:\n\t./t\n");
  write("README.md",
        "# Project\n\nSome text.\n\n```sh\nmake install\n```\n\n## Testing\n\nRun:\n\n```sh\n$ make test\n"
        "# only the fast ones\n$ pytest -q tests/fast\n```\n\n    cargo test --all\n\n## License\n\n```\nnot a "
        "command\n```\n");
  const Discovery d = discover();
  // `make test` is already known from the Makefile; `make install` is outside the section.
  ASSERT_EQ(ids(d), (std::vector<std::string>{"make:test", "readme:1", "readme:2"}));
  EXPECT_EQ(d.commands[1].command, "pytest -q tests/fast");
  EXPECT_EQ(d.commands[1].runner, RunnerKind::pytest);
  EXPECT_EQ(d.commands[1].source, "README.md section \"Testing\"");
  EXPECT_EQ(d.commands[2].command, "cargo test --all");
  EXPECT_EQ(d.commands[2].runner, RunnerKind::cargo_test);
  // Setext headings count too.
  fs::remove(ws_ / "README.md");
  fs::remove(ws_ / "Makefile");
  write("README.rst", "Title\n=====\n\nRunning the tests\n-----------------\n\n::\n\n    tox -e py311\n");
  const Discovery rst = discover();
  ASSERT_EQ(ids(rst), std::vector<std::string>{"readme:1"});
  EXPECT_EQ(rst.commands[0].command, "tox -e py311");
  EXPECT_EQ(rst.commands[0].runner, RunnerKind::other);
  EXPECT_EQ(rst.commands[0].source, "README.rst section \"Running the tests\"");
}

TEST_F(DiscoveryTest, TestCommandsComeFirst) {
  write("package.json", R"({"scripts": {"lint": "eslint .", "test": "node --test"}})");
  write("Makefile", "check:\n\tnpm test\n");
  const Discovery d = discover();
  EXPECT_EQ(ids(d), (std::vector<std::string>{"npm:test", "make:check", "npm:lint"}));
  EXPECT_EQ(d.primary()->id, "npm:test");
}

TEST_F(DiscoveryTest, EmptyAndMissingWorkspaces) {
  EXPECT_TRUE(discover().commands.empty());
  EXPECT_FALSE(suggest_verification(discover(), {"a.py"}).has_value());
  const Discovery missing = discover_verification(ws_ / "nope");
  EXPECT_TRUE(missing.commands.empty());
  ASSERT_EQ(missing.notes.size(), 1U);
  EXPECT_THAT(missing.notes[0], HasSubstr("is not a directory"));
}

TEST_F(DiscoveryTest, GuessRunner) {
  EXPECT_EQ(guess_runner("python3 -m pytest -x tests"), RunnerKind::pytest);
  EXPECT_EQ(guess_runner("ctest --test-dir build"), RunnerKind::gtest_ctest);
  EXPECT_EQ(guess_runner("cmake --build b && ctest --test-dir b"), RunnerKind::gtest_ctest);
  EXPECT_EQ(guess_runner("node --test test/"), RunnerKind::node_test);
  EXPECT_EQ(guess_runner("npx jest src"), RunnerKind::jest);
  EXPECT_EQ(guess_runner("./node_modules/.bin/vitest run"), RunnerKind::vitest);
  EXPECT_EQ(guess_runner("go test ./..."), RunnerKind::go_test);
  EXPECT_EQ(guess_runner("cargo test --workspace"), RunnerKind::cargo_test);
  EXPECT_EQ(guess_runner("make check"), RunnerKind::make);
  EXPECT_EQ(guess_runner("npm run lint"), RunnerKind::npm_script);
  EXPECT_EQ(guess_runner("./run-tests.sh"), RunnerKind::other);
  for (RunnerKind kind :
       {RunnerKind::gtest_ctest, RunnerKind::pytest, RunnerKind::node_test, RunnerKind::jest, RunnerKind::vitest,
        RunnerKind::go_test, RunnerKind::cargo_test, RunnerKind::make, RunnerKind::npm_script, RunnerKind::other}) {
    EXPECT_EQ(parse_runner_kind(runner_kind_name(kind)), kind);
  }
  EXPECT_FALSE(parse_runner_kind("mocha").has_value());
}

TEST_F(DiscoveryTest, JsonShape) {
  copy_fixture("python", ws_);
  const Discovery d = discover();
  support::Json expected = support::Json::object();
  expected.set("id", "pytest");
  expected.set("command", "python3 -m pytest");
  expected.set("runner", "pytest");
  expected.set("purpose", "test");
  expected.set("cwd", ws_.string());
  expected.set("source", "pyproject.toml [tool.pytest.ini_options]");
  EXPECT_EQ(to_json(d.commands[0]).dump(), expected.dump());
  EXPECT_EQ(to_json(d).dump(),
            R"({"workspace":")" + ws_.string() + R"(","commands":[)" + expected.dump() + R"(],"notes":[]})");
  const Suggestion s = suggest({"tests/test_calc.py"});
  support::Json with = expected;
  with.set("command", "python3 -m pytest tests/test_calc.py");
  with.set("baseId", "pytest");
  with.set("narrowed", true);
  with.set("reason", "pytest runs only tests/test_calc.py");
  EXPECT_EQ(to_json(s).dump(), with.dump());
}

// ---- narrowing ----

TEST_F(DiscoveryTest, SuggestPytest) {
  copy_fixture("python", ws_);
  Suggestion s = suggest({"tests/test_calc.py"});
  EXPECT_TRUE(s.narrowed);
  EXPECT_EQ(s.command.command, "python3 -m pytest tests/test_calc.py");
  EXPECT_EQ(s.base_id, "pytest");
  // A package's __init__.py is tested by test_<package>.py; absolute paths work the same.
  s = suggest({(ws_ / "calc/__init__.py").string(), "tests/test_more.py"});
  EXPECT_TRUE(s.narrowed);
  EXPECT_EQ(s.command.command, "python3 -m pytest tests/test_calc.py tests/test_more.py");
  EXPECT_EQ(s.reason,
            "pytest runs only tests/test_calc.py, tests/test_more.py (tests of changed sources: calc/__init__.py -> "
            "tests/test_calc.py)");
  write("calc/extra.py", "X = 1\n");
  s = suggest({"calc/extra.py"});
  EXPECT_FALSE(s.narrowed);
  EXPECT_EQ(s.command.command, "python3 -m pytest");
  EXPECT_THAT(s.reason, HasSubstr("no test file found for calc/extra.py"));
  write("tests/conftest.py", "");
  s = suggest({"tests/conftest.py"});
  EXPECT_FALSE(s.narrowed);
  EXPECT_THAT(s.reason, HasSubstr("fixtures there can affect every test"));
}

TEST_F(DiscoveryTest, SuggestNodeTest) {
  copy_fixture("node", ws_);
  Suggestion s = suggest({"src/calc.js"});
  EXPECT_TRUE(s.narrowed);
  EXPECT_EQ(s.command.command, "npm test -- test/calc.test.js");
  EXPECT_EQ(s.reason,
            "node_test runs only test/calc.test.js (tests of changed sources: src/calc.js -> test/calc.test.js)");
  s = suggest({"test/more.test.js", "test/calc.test.js"});
  EXPECT_EQ(s.command.command, "npm test -- test/calc.test.js test/more.test.js");
  // A script that names its own files cannot take one more.
  write("package.json", R"({"scripts": {"test": "node --test test/"}})");
  s = suggest({"test/calc.test.js"});
  EXPECT_FALSE(s.narrowed);
  EXPECT_EQ(s.command.command, "npm test");
  EXPECT_THAT(s.reason, HasSubstr("chooses its own files"));
  write("package.json", R"({"scripts": {"test": "node --test"}})");
  write("src/other.js", "");
  s = suggest({"src/other.js"});
  EXPECT_FALSE(s.narrowed);
  EXPECT_THAT(s.reason, HasSubstr("no test file found for src/other.js"));
}

TEST_F(DiscoveryTest, SuggestJestAndVitest) {
  write("package.json", R"({"scripts": {"test": "jest"}})");
  write("src/a.js", "");
  write("src/a.test.js", "");
  write("src/b.js", "");
  Suggestion s = suggest({"src/a.js"});
  EXPECT_EQ(s.command.command, "npm test -- src/a.test.js");
  // jest can find the tests of a source that has no test file of its own name.
  s = suggest({"src/b.js"});
  EXPECT_TRUE(s.narrowed);
  EXPECT_EQ(s.command.command, "npm test -- --findRelatedTests src/b.js");
  write("package.json", R"({"scripts": {"test": "vitest run"}})");
  s = suggest({"src/a.js"});
  EXPECT_EQ(s.command.command, "npm test -- src/a.test.js");
  s = suggest({"src/b.js"});
  EXPECT_FALSE(s.narrowed);
  write("package.json", R"({"scripts": {"test": "mocha"}})");
  s = suggest({"src/a.test.js"});
  EXPECT_FALSE(s.narrowed);
  EXPECT_THAT(s.reason, HasSubstr("not a runner agentd can narrow"));
}

TEST_F(DiscoveryTest, SuggestCargo) {
  copy_fixture("rust", ws_);
  Suggestion s = suggest({"src/ops.rs"});
  EXPECT_TRUE(s.narrowed);
  EXPECT_EQ(s.command.command, "cargo test ops::");
  s = suggest({"tests/integration.rs"});
  EXPECT_EQ(s.command.command, "cargo test --test integration");
  s = suggest({"src/lib.rs"});
  EXPECT_FALSE(s.narrowed);
  EXPECT_EQ(s.command.command, "cargo test");
  write("src/net/mod.rs", "");
  write("src/net/http.rs", "");
  s = suggest({"src/net/http.rs", "src/net/mod.rs"});
  EXPECT_EQ(s.command.command, "cargo test -- net:: net::http::");
  // A workspace member is tested with -p.
  write("crates/util/Cargo.toml", "[package]\nname = \"util\"\nversion = \"0.1.0\"\n");
  write("crates/util/src/strings.rs", "");
  s = suggest({"crates/util/src/strings.rs"});
  EXPECT_EQ(s.command.command, "cargo test -p util strings::");
}

TEST_F(DiscoveryTest, SuggestGo) {
  copy_fixture("go", ws_);
  Suggestion s = suggest({"calc/calc.go"});
  EXPECT_TRUE(s.narrowed);
  EXPECT_EQ(s.command.command, "go test ./calc/...");
  write("main.go", "package main\n");
  s = suggest({"main.go", "calc/calc_test.go"});
  EXPECT_EQ(s.command.command, "go test . ./calc/...");
}

TEST_F(DiscoveryTest, SuggestCtestFromSuites) {
  copy_fixture("cmake", ws_);
  write("build/CTestTestfile.cmake", "");
  Suggestion s = suggest({"calc_test.cpp"});
  EXPECT_TRUE(s.narrowed);
  EXPECT_EQ(s.command.command,
            "cmake --build build && ctest --test-dir build --output-on-failure --no-tests=error -R '^(Calc)\\.'");
  // A source's tests are found by name; a header has the same stem.
  s = suggest({"calc.h", "other_test.cpp"});
  EXPECT_EQ(s.command.command,
            "cmake --build build && ctest --test-dir build --output-on-failure --no-tests=error -R '^(Calc|Other)\\.'");
  // With the build tree's test lists (what gtest_discover_tests writes), only the test binaries are built.
  const std::string lists = (ws_ / "build/calc_test[1]_tests.cmake").string();
  write("build/CTestTestfile.cmake", "include(\"" + (ws_ / "build/calc_test[1]_include.cmake").string() + "\")\n");
  write("build/calc_test[1]_include.cmake", "if(EXISTS \"" + lists + "\")\n  include(\"" + lists + "\")\nendif()\n");
  write("build/calc_test[1]_tests.cmake", "add_test( [==[Calc.Adds]==] " + (ws_ / "build/calc_test").string() +
                                              " [==[--gtest_filter=Calc.Adds]==])\nadd_test( [==[Calc.Subtracts]==] " +
                                              (ws_ / "build/calc_test").string() +
                                              " [==[--gtest_filter=Calc.Subtracts]==])\n");
  s = suggest({"calc.cpp"});
  EXPECT_EQ(s.command.command,
            "cmake --build build --target calc_test && ctest --test-dir build --output-on-failure --no-tests=error -R "
            "'^(Calc)\\.'");
  EXPECT_EQ(s.reason,
            "ctest runs only the GoogleTest suite Calc (tests of changed sources: calc.cpp -> calc_test.cpp), after "
            "building calc_test");
  write("util.cpp", "int f() { return 1; }\n");
  s = suggest({"util.cpp"});
  EXPECT_FALSE(s.narrowed);
  EXPECT_THAT(s.reason, HasSubstr("no GoogleTest suite found for util.cpp"));
}

TEST_F(DiscoveryTest, SuggestFallsBackWithAReason) {
  copy_fixture("python", ws_);
  write("package.json", R"({"scripts": {"test": "node --test"}})");
  write("src/x.js", "");
  Suggestion s = suggest({});
  EXPECT_FALSE(s.narrowed);
  EXPECT_EQ(s.base_id, "npm:test");
  EXPECT_EQ(s.reason, "no files changed: the full test command");
  s = suggest({"tests/test_calc.py", "src/x.js"});
  EXPECT_FALSE(s.narrowed);
  EXPECT_THAT(s.reason, HasSubstr("the changed files are Python, JavaScript/TypeScript"));
  s = suggest({"pyproject.toml"});
  EXPECT_FALSE(s.narrowed);
  EXPECT_THAT(s.reason, HasSubstr("pyproject.toml changed (not source code"));
  s = suggest({"README.md", "docs/guide.md"});
  EXPECT_FALSE(s.narrowed);
  EXPECT_THAT(s.reason, HasSubstr("only documentation"));
  // Documentation beside code does not stop narrowing.
  s = suggest({"README.md", "tests/test_calc.py"});
  EXPECT_TRUE(s.narrowed);
  EXPECT_EQ(s.command.command, "python3 -m pytest tests/test_calc.py");
  s = suggest({"main.go"});
  EXPECT_FALSE(s.narrowed);
  EXPECT_THAT(s.reason, HasSubstr("Go files changed but no Go test command was discovered"));
}

}  // namespace
}  // namespace agentd::tools::verify
