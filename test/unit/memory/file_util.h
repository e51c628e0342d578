// Writing fixture files byte for byte (binary mode: CRLF stays CRLF) under a test's temp dir.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace agentd::testing {

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace agentd::testing
