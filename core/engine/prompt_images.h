// Images of a prompt, from what the client sent to what the model gets: inline base64 (an ACP image
// block, or an embedded blob resource) or a file in the workspace (a `file://` resource link, read
// through the PathGuard like a tool's read, so a link cannot reach a secret or leave the workspace),
// checked by their bytes (core/model/image.h: the declared type is not trusted), and hashed: the session
// stores each under its SHA-256, and its history keeps only the hash.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/model/model_client.h"
#include "core/support/result.h"
#include "tools/path_guard.h"

namespace agentd::core {

// At most this many images in one prompt (Anthropic takes 100 per request, but every later call of the
// session sends them again).
inline constexpr std::size_t kMaxPromptImages = 20;

struct PromptImage {
  std::string data;           // base64, for an inline image
  std::string uri;            // a file:// URI, for a linked one
  std::string declared_type;  // what the client said the type is
  std::string where;          // names the block in errors: "params.prompt[2]"
};

struct LoadedImage {
  model::ImageBlock block;  // data, type (from the bytes), hash, size
  std::string bytes;        // decoded, for the blob
};

// Whether a resource link names an image agentd would read: a file:// URI with an image type declared or
// an image file's extension. Other links stay text the model sees.
bool is_image_link(std::string_view uri, std::string_view mime_type);

// Reads, decodes and checks every image; the first that fails is the error (Errc::invalid_argument or
// Errc::not_found, its message naming `where`), so a prompt is run with all its images or not at all.
// Blocking (file reads, hashing): run off the event loop.
support::Result<std::vector<LoadedImage>> load_prompt_images(const std::vector<PromptImage>& images,
                                                             const tools::PathGuard& guard);

}  // namespace agentd::core
