// What the verify tests share: the fixture folders, copying a fixture project into a workspace, editing
// a file in place, and finding a program on PATH (tests that need a toolchain skip without it).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

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
  if (path == nullptr) return {};
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

}  // namespace agentd::tools::verify::testing
