// What the verify tests share: the fixture folders, copying a fixture project into a workspace, editing
// a file in place, and finding a program on PATH (tests that need a toolchain skip without it).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "core/support/spawn.h"

namespace agentd::tools::verify::testing {

inline std::filesystem::path fixture_dir(std::string_view name) {
  return std::filesystem::path(AGENTD_SOURCE_DIR) / "test/fixtures/verify" / name;
}

inline std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_all(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Copies a fixture project's files into `to` (which may exist).
inline void copy_fixture(std::string_view name, const std::filesystem::path& to) {
  std::filesystem::create_directories(to);
  std::filesystem::copy(fixture_dir(name), to,
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
}

// Replaces the first `from` in the file with `to`; false when `from` is not there.
inline bool replace_in_file(const std::filesystem::path& path, std::string_view from, std::string_view to) {
  std::string text = read_all(path);
  const std::size_t at = text.find(from);
  if (at == std::string::npos) return false;
  text.replace(at, from.size(), to);
  write_all(path, text);
  return true;
}

// The program's path on PATH, or empty.
inline std::string find_program(std::string_view name) {
  const char* path = ::getenv("PATH");
  return path == nullptr ? std::string() : support::find_in_path(name, path).value_or(std::string());
}

// An executable file (a "#!" script) at `path`.
inline void write_script(const std::filesystem::path& path, std::string_view text) {
  write_all(path, text);
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

// PATH set to `value` for the life of this object (children started meanwhile get it too).
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) {
    if (const char* old = ::getenv("PATH")) old_ = old;
    ::setenv("PATH", value.c_str(), 1);
  }
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;
  ~ScopedPath() {
    if (old_) {
      ::setenv("PATH", old_->c_str(), 1);
    } else {
      ::unsetenv("PATH");
    }
  }

 private:
  std::optional<std::string> old_;
};

}  // namespace agentd::tools::verify::testing
