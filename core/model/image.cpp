#include "core/model/image.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace agentd::core::model {

using support::Errc;
using support::Error;

namespace {

std::uint32_t byte_at(std::string_view b, std::size_t i) noexcept { return static_cast<unsigned char>(b[i]); }
std::uint32_t be16(std::string_view b, std::size_t i) noexcept { return (byte_at(b, i) << 8) | byte_at(b, i + 1); }
std::uint32_t le16(std::string_view b, std::size_t i) noexcept { return byte_at(b, i) | (byte_at(b, i + 1) << 8); }
std::uint32_t le24(std::string_view b, std::size_t i) noexcept { return le16(b, i) | (byte_at(b, i + 2) << 16); }
std::uint32_t be32(std::string_view b, std::size_t i) noexcept { return (be16(b, i) << 16) | be16(b, i + 2); }

std::optional<ImageInfo> png(std::string_view b) noexcept {
  // Signature, then the IHDR chunk first: length, "IHDR", width, height (big-endian).
  if (b.size() < 24 || b.substr(0, 8) != std::string_view("\x89PNG\r\n\x1a\n", 8) || b.substr(12, 4) != "IHDR") {
    return std::nullopt;
  }
  return ImageInfo{"image/png", be32(b, 16), be32(b, 20)};
}

std::optional<ImageInfo> gif(std::string_view b) noexcept {
  if (b.size() < 10 || (b.substr(0, 6) != "GIF87a" && b.substr(0, 6) != "GIF89a")) return std::nullopt;
  return ImageInfo{"image/gif", le16(b, 6), le16(b, 8)};
}

std::optional<ImageInfo> jpeg(std::string_view b) noexcept {
  if (b.size() < 4 || byte_at(b, 0) != 0xFF || byte_at(b, 1) != 0xD8 || byte_at(b, 2) != 0xFF) return std::nullopt;
  // Segments up to the first start-of-frame, whose header holds the size.
  std::size_t i = 2;
  while (i + 1 < b.size()) {
    if (byte_at(b, i) != 0xFF) return std::nullopt;
    while (i < b.size() && byte_at(b, i) == 0xFF) ++i;  // fill bytes
    if (i >= b.size()) return std::nullopt;
    const std::uint32_t marker = byte_at(b, i++);
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) continue;  // no length of their own
    if (marker == 0xD9 || marker == 0xDA) return std::nullopt;           // end of image, or scan, before a frame
    if (i + 2 > b.size()) return std::nullopt;
    const std::uint32_t length = be16(b, i);
    if (length < 2) return std::nullopt;
    const bool frame = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (frame) {
      if (length < 7 || i + 7 > b.size()) return std::nullopt;
      return ImageInfo{"image/jpeg", be16(b, i + 5), be16(b, i + 3)};
    }
    i += length;
  }
  return std::nullopt;
}

std::optional<ImageInfo> webp(std::string_view b) noexcept {
  if (b.size() < 30 || b.substr(0, 4) != "RIFF" || b.substr(8, 4) != "WEBP") return std::nullopt;
  const std::string_view chunk = b.substr(12, 4);
  if (chunk == "VP8 ") {
    // Lossy: a frame tag, the start code 9d 01 2a, then 14-bit width and height.
    if (byte_at(b, 23) != 0x9D || byte_at(b, 24) != 0x01 || byte_at(b, 25) != 0x2A) return std::nullopt;
    return ImageInfo{"image/webp", le16(b, 26) & 0x3FFF, le16(b, 28) & 0x3FFF};
  }
  if (chunk == "VP8L") {
    // Lossless: the signature 0x2f, then width - 1 and height - 1 in 14 bits each.
    if (byte_at(b, 20) != 0x2F) return std::nullopt;
    const std::uint32_t bits = byte_at(b, 21) | (byte_at(b, 22) << 8) | (byte_at(b, 23) << 16) | (byte_at(b, 24) << 24);
    return ImageInfo{"image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1};
  }
  if (chunk == "VP8X") {
    // Extended: the canvas's width - 1 and height - 1 in 24 bits each.
    return ImageInfo{"image/webp", le24(b, 24) + 1, le24(b, 27) + 1};
  }
  return std::nullopt;
}

}  // namespace

std::optional<ImageInfo> sniff_image(std::string_view bytes) noexcept {
  if (auto info = png(bytes)) return info;
  if (auto info = jpeg(bytes)) return info;
  if (auto info = gif(bytes)) return info;
  return webp(bytes);
}

support::Result<ImageInfo> check_image(std::string_view bytes) {
  if (bytes.size() > kMaxImageBytes) {
    return Error(Errc::invalid_argument,
                 fmt::format("the image is {:.1f} MiB; at most {} MiB are sent to a model (scale it down, or crop it)",
                             static_cast<double>(bytes.size()) / (1 << 20), kMaxImageBytes >> 20));
  }
  auto info = sniff_image(bytes);
  if (!info) {
    return Error(Errc::invalid_argument,
                 "the image is not a PNG, JPEG, GIF or WebP file (its bytes say so, whatever its name or type); "
                 "convert it to one of those");
  }
  if (info->width == 0 || info->height == 0 || info->width > kMaxImageSide || info->height > kMaxImageSide) {
    return Error(Errc::invalid_argument, fmt::format("the image is {}x{} pixels; each side must be 1 to {} pixels",
                                                     info->width, info->height, kMaxImageSide));
  }
  return *info;
}

std::uint64_t image_tokens(std::uint32_t width, std::uint32_t height) noexcept {
  constexpr double kLongSide = 1568;
  constexpr std::uint64_t kMaxTokens = 1600;
  if (width == 0 || height == 0) return kMaxTokens;
  double w = width;
  double h = height;
  if (const double scale = kLongSide / std::max(w, h); scale < 1) {
    w *= scale;
    h *= scale;
  }
  return std::min<std::uint64_t>(kMaxTokens, static_cast<std::uint64_t>(std::ceil(w * h / 750)));
}

}  // namespace agentd::core::model
