#include "tools/sha256.h"

#include <new>

#include <openssl/evp.h>

#include "core/support/preempt.h"

namespace agentd::tools {

struct Sha256::Context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  Context() {
    if (ctx == nullptr || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) {
      EVP_MD_CTX_free(ctx);
      throw std::bad_alloc();
    }
  }
  ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {}
Sha256::~Sha256() = default;

void Sha256::update(std::string_view bytes) noexcept {
  // Cannot fail for an initialised SHA-256 context in the default provider.
  EVP_DigestUpdate(context_->ctx, bytes.data(), bytes.size());
}

Sha256::Digest Sha256::finish() noexcept {
  Digest digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(context_->ctx, digest.data(), &length);
  return digest;
}

std::string to_hex(const Sha256::Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(digest.size() * 2, '\0');
  for (std::size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xF];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  if (bytes.size() > support::kPreemptSliceBytes && support::on_background_thread()) {
    // Slice by slice, so a worker hashing a large file lets the event loop in between (preempt.h).
    Sha256 hasher;
    support::for_each_slice(bytes, [&hasher](std::string_view slice) { hasher.update(slice); });
    return to_hex(hasher.finish());
  }
  Sha256::Digest digest{};
  unsigned int length = 0;
  // One shot: no context to allocate for the common case of hashing one buffer.
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1) {
    throw std::bad_alloc();
  }
  return to_hex(digest);
}

}  // namespace agentd::tools
