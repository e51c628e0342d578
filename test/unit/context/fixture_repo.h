// Fixture repositories for the context tests: a copy of test/fixtures/repos/<name> in a temp dir, made
// a git repository with one commit when asked, plus small helpers to change files and run git.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "test/support/temp_dir.h"

namespace agentd::core::context::testing {

inline std::filesystem::path fixture_source(const std::string& name) {
  return std::filesystem::path(AGENTD_SOURCE_DIR) / "test" / "fixtures" / "repos" / name;
}

inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class FixtureRepo {
 public:
  explicit FixtureRepo(const std::string& name, bool git = true) {
    root_ = std::filesystem::canonical(temp_.path()) / name;
    std::filesystem::copy(fixture_source(name), root_, std::filesystem::copy_options::recursive);
    if (git) {
      this->git("init -q -b main");
      this->git("config user.name 'Context Test'");
      this->git("config user.email context-test@example.com");
      this->git("config commit.gpgsign false");
      this->git("add -A");
      this->git("commit -q -m 'fixture'");
    }
  }

  const std::filesystem::path& root() const { return root_; }
  std::string path() const { return root_.string(); }

  // Runs `git <args>` in the repository; fails the test if git does.
  void git(const std::string& args) const {
    const std::string command = "cd '" + root_.string() + "' && git " + args + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << "git " << args;
  }

  void write(const std::string& relative, const std::string& text) const { write_file(root_ / relative, text); }
  void append(const std::string& relative, const std::string& text) const {
    write_file(root_ / relative, read_file(root_ / relative) + text);
  }

 private:
  agentd::testing::TempDir temp_;
  std::filesystem::path root_;
};

}  // namespace agentd::core::context::testing
