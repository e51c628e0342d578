// The smallest byte strings that are images to agentd's sniffer (core/model/image.h): a signature and a
// header with the size, padded; no pixel data, which nothing here decodes.
#pragma once

#include <cstdint>
#include <string>

namespace agentd::testing {

inline std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}
inline std::string le16(std::uint32_t v) { return {static_cast<char>(v), static_cast<char>(v >> 8)}; }
inline std::string le24(std::uint32_t v) { return le16(v) + std::string(1, static_cast<char>(v >> 16)); }
inline std::string le32(std::uint32_t v) { return le16(v) + le16(v >> 16); }

inline std::string png_image(std::uint32_t width, std::uint32_t height) {
  return std::string("\x89PNG\r\n\x1a\n", 8) + be32(13) + "IHDR" + be32(width) + be32(height) +
         std::string("\x08\x06\0\0\0", 5) + be32(0) + std::string(64, '\0');
}

inline std::string gif_image(std::uint32_t width, std::uint32_t height) {
  return "GIF89a" + le16(width) + le16(height) + std::string(16, '\0');
}

// An APP0 segment before the frame, as JFIF files have.
inline std::string jpeg_image(std::uint32_t width, std::uint32_t height) {
  std::string app0 =
      std::string("\xFF\xE0", 2) + std::string("\0\x10", 2) + std::string("JFIF\0\x01\x01\0\0\x01\0\x01\0\0", 14);
  std::string sof = std::string("\xFF\xC0", 2) + std::string("\0\x11\x08", 3);
  sof += static_cast<char>(height >> 8);
  sof += static_cast<char>(height);
  sof += static_cast<char>(width >> 8);
  sof += static_cast<char>(width);
  sof += std::string(10, '\x01');
  return std::string("\xFF\xD8", 2) + app0 + sof + std::string(32, '\0');
}

inline std::string webp_vp8x_image(std::uint32_t width, std::uint32_t height) {
  return "RIFF" + le32(22) + "WEBP" + "VP8X" + le32(10) + std::string(4, '\0') + le24(width - 1) + le24(height - 1) +
         std::string(8, '\0');
}

inline std::string webp_vp8l_image(std::uint32_t width, std::uint32_t height) {
  const std::uint32_t bits = (width - 1) | ((height - 1) << 14);
  return "RIFF" + le32(22) + "WEBP" + "VP8L" + le32(5) + "\x2F" + le32(bits) + std::string(12, '\0');
}

inline std::string webp_vp8_image(std::uint32_t width, std::uint32_t height) {
  return "RIFF" + le32(22) + "WEBP" + "VP8 " + le32(10) + std::string(3, '\0') + "\x9D\x01\x2A" + le16(width) +
         le16(height) + std::string(8, '\0');
}

}  // namespace agentd::testing
