// Images a user attaches to a prompt, checked before any provider sees them: the type comes from the
// bytes' signature (a declared MIME type is not trusted), and only what both Anthropic and OpenAI take is
// accepted: PNG, JPEG, GIF and WebP, at most kMaxImageBytes, each side 1 to kMaxImageSide pixels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/support/result.h"

namespace agentd::core::model {

// Anthropic's per-image limit (OpenAI's is larger).
inline constexpr std::size_t kMaxImageBytes = std::size_t{5} << 20;
inline constexpr std::uint32_t kMaxImageSide = 8000;

struct ImageInfo {
  std::string_view media_type;  // "image/png", "image/jpeg", "image/gif", "image/webp"
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};

// The type and size the bytes say they have; nothing when they are none of the four formats, or their
// header is cut short.
std::optional<ImageInfo> sniff_image(std::string_view bytes) noexcept;

// sniff_image, then the limits. Errc::invalid_argument with a message that says what is wrong and what is
// accepted.
support::Result<ImageInfo> check_image(std::string_view bytes);

// About what a provider charges for the image, in input tokens (Anthropic's rule: width * height / 750,
// after the image is scaled to fit 1568 pixels on its long side, so at most about 1600).
std::uint64_t image_tokens(std::uint32_t width, std::uint32_t height) noexcept;

}  // namespace agentd::core::model
