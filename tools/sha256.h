// SHA-256 (FIPS 180-4), small and dependency-free: tools/ may not link OpenSSL (DESIGN.md section 2),
// and file-state tracking only needs to hash file contents to notice that a file changed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace agentd::tools {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256() noexcept;
  void update(std::string_view bytes) noexcept;
  // Pads and returns the digest; the object must not be updated afterwards.
  Digest finish() noexcept;

 private:
  void compress(const std::uint8_t* block) noexcept;

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

// Lowercase hex of the digest of `bytes`: what FileState stores and EditResult reports.
std::string sha256_hex(std::string_view bytes);
std::string to_hex(const Sha256::Digest& digest);

}  // namespace agentd::tools
