// ACP v1 ContentBlock: what a prompt is made of (from the client) and what message chunks and tool
// results carry (from us). Image and audio are read too, so the binding can refuse them by name rather
// than failing to parse. `annotations` are carried untouched and never interpreted.
// Throughout protocol/acp, members default to `{}` so callers build messages with designated
// initializers, naming only what they set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "core/support/json.h"
#include "core/support/json_reader.h"
#include "core/support/json_writer.h"

namespace agentd::protocol::acp {

// {"type":"text"}
struct TextContent {
  std::string text{};
  support::Json annotations{};  // an object, or null when absent
  support::Json meta{};
};

// {"type":"image"}: base64 `data`.
struct ImageContent {
  std::string data{};
  std::string mime_type{};
  std::optional<std::string> uri{};
  support::Json annotations{};
  support::Json meta{};
};

// {"type":"audio"}: base64 `data`.
struct AudioContent {
  std::string data{};
  std::string mime_type{};
  support::Json annotations{};
  support::Json meta{};
};

// {"type":"resource_link"}: a reference the agent may fetch itself.
struct ResourceLink {
  std::string uri{};
  std::string name{};
  std::optional<std::string> title{};
  std::optional<std::string> description{};
  std::optional<std::string> mime_type{};
  std::optional<std::int64_t> size{};
  support::Json annotations{};
  support::Json meta{};
};

struct TextResourceContents {
  std::string uri{};
  std::string text{};
  std::optional<std::string> mime_type{};
  support::Json meta{};
};

struct BlobResourceContents {
  std::string uri{};
  std::string blob{};  // base64
  std::optional<std::string> mime_type{};
  support::Json meta{};
};

// No tag on the wire: a resource with `text` is a text resource, one with `blob` a blob.
using EmbeddedResourceResource = std::variant<TextResourceContents, BlobResourceContents>;

// {"type":"resource"}: the contents come inline (an editor's @-mention of a file or selection).
struct EmbeddedResource {
  EmbeddedResourceResource resource{};
  support::Json annotations{};
  support::Json meta{};
};

using ContentBlock = std::variant<TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource>;

// The block's wire tag: "text", "image", "audio", "resource_link", "resource".
std::string_view content_type_name(const ContentBlock& block) noexcept;

bool from_json(const support::JsonIn& in, TextResourceContents& out);
bool from_json(const support::JsonIn& in, BlobResourceContents& out);
bool from_json(const support::JsonIn& in, EmbeddedResourceResource& out);
bool from_json(const support::JsonIn& in, ContentBlock& out);
void to_json(support::JsonWriter& w, const TextResourceContents& v);
void to_json(support::JsonWriter& w, const BlobResourceContents& v);
void to_json(support::JsonWriter& w, const EmbeddedResourceResource& v);
void to_json(support::JsonWriter& w, const ContentBlock& v);

}  // namespace agentd::protocol::acp
