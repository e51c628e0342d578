#include "core/engine/prompt_images.h"

#include <array>

#include <fmt/format.h>

#include "core/model/image.h"
#include "core/support/base64.h"
#include "core/support/log.h"
#include "core/support/text.h"
#include "tools/disk_file_access.h"
#include "tools/sha256.h"

namespace agentd::core {

using support::Errc;
using support::Error;
using support::Result;

namespace {

constexpr std::array<std::string_view, 5> kImageExtensions = {".png", ".jpg", ".jpeg", ".gif", ".webp"};

// The local path of a file:// URI ("file:///a/b%20c.png", "file://localhost/a"); empty when it is not one.
std::string file_uri_path(std::string_view uri) {
  constexpr std::string_view kScheme = "file://";
  if (uri.size() < kScheme.size() || support::ascii_lower_copy(uri.substr(0, kScheme.size())) != kScheme) return {};
  std::string_view rest = uri.substr(kScheme.size());
  if (rest.starts_with("localhost/")) rest.remove_prefix(9);
  if (!rest.starts_with('/')) return {};  // another host's file
  if (const auto query = rest.find_first_of("?#"); query != std::string_view::npos) rest = rest.substr(0, query);
  return support::percent_decode(rest);
}

Result<std::string> read_linked(const PromptImage& image, const tools::PathGuard& guard) {
  const std::string path = file_uri_path(image.uri);
  if (path.empty() || path.find('\0') != std::string::npos) {
    return Error(Errc::invalid_argument,
                 fmt::format("{}: {} is not a local file:// URI; send the image itself as an image block", image.where,
                             image.uri));
  }
  auto resolved = guard.resolve(path, tools::PathAccess::read);
  if (!resolved) return std::move(resolved).error().context(image.where);
  // One byte over the limit is enough to say it is too large.
  auto bytes = tools::read_disk_file(resolved->absolute, model::kMaxImageBytes + 1);
  if (!bytes) return std::move(bytes).error().context(fmt::format("{}: reading {}", image.where, resolved->display));
  return bytes;
}

Result<LoadedImage> load_one(const PromptImage& image, const tools::PathGuard& guard) {
  LoadedImage out;
  if (!image.uri.empty() && image.data.empty()) {
    auto bytes = read_linked(image, guard);
    if (!bytes) return std::move(bytes).error();
    out.bytes = std::move(*bytes);
  } else {
    if (support::base64_decoded_size(image.data) > model::kMaxImageBytes) {
      // Said before decoding: a 60 MiB paste is not copied to find that out.
      return Error(Errc::invalid_argument,
                   fmt::format("{}: the image is {:.1f} MiB; at most {} MiB are sent to a model", image.where,
                               static_cast<double>(support::base64_decoded_size(image.data)) / (1 << 20),
                               model::kMaxImageBytes >> 20));
    }
    auto bytes = support::base64_decode(image.data);
    if (!bytes) return Error(Errc::invalid_argument, fmt::format("{}: the image's data is not base64", image.where));
    out.bytes = std::move(*bytes);
  }
  auto info = model::check_image(out.bytes);
  if (!info) return std::move(info).error().context(image.where);
  if (!image.declared_type.empty() && support::ascii_lower_copy(image.declared_type) != info->media_type) {
    support::log::info("{}: declared {}, but the bytes are {}; sent as {}", image.where, image.declared_type,
                       info->media_type, info->media_type);
  }
  out.block.media_type = std::string(info->media_type);
  out.block.width = info->width;
  out.block.height = info->height;
  out.block.bytes = out.bytes.size();
  out.block.hash = tools::sha256_hex(out.bytes);
  out.block.data = support::base64_encode(out.bytes);  // canonical: no line breaks, padded
  return out;
}

}  // namespace

bool is_image_link(std::string_view uri, std::string_view mime_type) {
  if (file_uri_path(uri).empty()) return false;
  if (mime_type.starts_with("image/")) return true;
  const std::string lower = support::ascii_lower_copy(uri);
  for (auto ext : kImageExtensions) {
    if (lower.ends_with(ext)) return true;
  }
  return false;
}

Result<std::vector<LoadedImage>> load_prompt_images(const std::vector<PromptImage>& images,
                                                    const tools::PathGuard& guard) {
  if (images.size() > kMaxPromptImages) {
    return Error(Errc::invalid_argument,
                 fmt::format("params.prompt: {} images; a prompt takes at most {}", images.size(), kMaxPromptImages));
  }
  std::vector<LoadedImage> out;
  out.reserve(images.size());
  for (const auto& image : images) {
    auto loaded = load_one(image, guard);
    if (!loaded) return std::move(loaded).error();
    out.push_back(std::move(*loaded));
  }
  return out;
}

}  // namespace agentd::core
