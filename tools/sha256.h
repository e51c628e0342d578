// SHA-256 through OpenSSL's libcrypto (already linked for TLS): file-state tracking, checkpoints, the
// permission audit and project trust hash with it. libcrypto uses the CPU's SHA extensions where there
// are any, several times faster than a portable implementation; only libcrypto's digest interface is
// used here, nothing of TLS.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace agentd::tools {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256();  // throws std::bad_alloc when libcrypto cannot allocate its context
  Sha256(Sha256&&) noexcept = default;
  Sha256& operator=(Sha256&&) noexcept = default;
  ~Sha256();
  void update(std::string_view bytes) noexcept;
  // Pads and returns the digest; the object must not be updated afterwards.
  Digest finish() noexcept;

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// Lowercase hex of the digest of `bytes`: what FileState stores and EditResult reports.
std::string sha256_hex(std::string_view bytes);
std::string to_hex(const Sha256::Digest& digest);

}  // namespace agentd::tools
