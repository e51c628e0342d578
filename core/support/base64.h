// Base64 (RFC 4648, the standard alphabet), the one codec of the tree: images in prompts and in stored
// sessions, MCP content sizes, proxy credentials.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace agentd::support {

// With `=` padding, no line breaks.
std::string base64_encode(std::string_view bytes);

// The bytes `text` encodes, or nothing when it is not base64: a character outside the alphabet, a length
// that no encoding has, padding anywhere but at the end, or bits set past the last byte. Padding may be
// left out; whitespace (line breaks of MIME-style encoders) is skipped.
std::optional<std::string> base64_decode(std::string_view text);

// How many bytes `text` encodes, counted without decoding (padding and whitespace carry none). Exact for
// valid base64.
std::size_t base64_decoded_size(std::string_view text) noexcept;

}  // namespace agentd::support
