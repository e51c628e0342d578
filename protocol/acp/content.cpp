#include "protocol/acp/content.h"

#include <array>

#include "protocol/acp/wire_util.h"

namespace agentd::protocol::acp {

using support::Json;
using support::JsonIn;
using support::JsonWriter;

namespace {

constexpr std::array<std::string_view, 5> kContentTypes = {"text", "image", "audio", "resource_link", "resource"};
static_assert(std::variant_size_v<ContentBlock> == kContentTypes.size());

bool read_block(const JsonIn& in, TextContent& out) {
  if (!in.required("text", out.text)) return false;
  detail::read_object_or_drop(in, "annotations", out.annotations);
  detail::read_meta(in, out.meta);
  return true;
}

bool read_block(const JsonIn& in, ImageContent& out) {
  if (!in.required("data", out.data) || !in.required("mimeType", out.mime_type)) return false;
  detail::read_lenient(in, "uri", out.uri);
  detail::read_object_or_drop(in, "annotations", out.annotations);
  detail::read_meta(in, out.meta);
  return true;
}

bool read_block(const JsonIn& in, AudioContent& out) {
  if (!in.required("data", out.data) || !in.required("mimeType", out.mime_type)) return false;
  detail::read_object_or_drop(in, "annotations", out.annotations);
  detail::read_meta(in, out.meta);
  return true;
}

bool read_block(const JsonIn& in, ResourceLink& out) {
  if (!in.required("uri", out.uri) || !in.required("name", out.name)) return false;
  detail::read_lenient(in, "title", out.title);
  detail::read_lenient(in, "description", out.description);
  detail::read_lenient(in, "mimeType", out.mime_type);
  detail::read_lenient(in, "size", out.size);
  detail::read_object_or_drop(in, "annotations", out.annotations);
  detail::read_meta(in, out.meta);
  return true;
}

bool read_block(const JsonIn& in, EmbeddedResource& out) {
  if (!in.required("resource", out.resource)) return false;
  detail::read_object_or_drop(in, "annotations", out.annotations);
  detail::read_meta(in, out.meta);
  return true;
}

void write_annotations(JsonWriter& w, const Json& annotations) {
  if (annotations.is_object()) w.member("annotations", annotations);
}

void write_block(JsonWriter& w, const TextContent& v) {
  w.member("text", v.text);
  write_annotations(w, v.annotations);
  detail::write_meta(w, v.meta);
}

void write_block(JsonWriter& w, const ImageContent& v) {
  w.member("data", v.data).member("mimeType", v.mime_type);
  w.optional_member("uri", v.uri);
  write_annotations(w, v.annotations);
  detail::write_meta(w, v.meta);
}

void write_block(JsonWriter& w, const AudioContent& v) {
  w.member("data", v.data).member("mimeType", v.mime_type);
  write_annotations(w, v.annotations);
  detail::write_meta(w, v.meta);
}

void write_block(JsonWriter& w, const ResourceLink& v) {
  w.member("uri", v.uri).member("name", v.name);
  w.optional_member("title", v.title);
  w.optional_member("description", v.description);
  w.optional_member("mimeType", v.mime_type);
  w.optional_member("size", v.size);
  write_annotations(w, v.annotations);
  detail::write_meta(w, v.meta);
}

void write_block(JsonWriter& w, const EmbeddedResource& v) {
  w.member("resource", v.resource);
  write_annotations(w, v.annotations);
  detail::write_meta(w, v.meta);
}

template <std::size_t I = 0>
bool read_alternative(const JsonIn& in, std::size_t index, ContentBlock& out) {
  if constexpr (I < std::variant_size_v<ContentBlock>) {
    if (index != I) return read_alternative<I + 1>(in, index, out);
    std::variant_alternative_t<I, ContentBlock> value{};
    if (!read_block(in, value)) return false;
    out = std::move(value);
    return true;
  } else {
    return false;
  }
}

}  // namespace

std::string_view content_type_name(const ContentBlock& block) noexcept { return kContentTypes[block.index()]; }

bool from_json(const JsonIn& in, TextResourceContents& out) {
  if (!in.required("uri", out.uri) || !in.required("text", out.text)) return false;
  detail::read_lenient(in, "mimeType", out.mime_type);
  detail::read_meta(in, out.meta);
  return true;
}

bool from_json(const JsonIn& in, BlobResourceContents& out) {
  if (!in.required("uri", out.uri) || !in.required("blob", out.blob)) return false;
  detail::read_lenient(in, "mimeType", out.mime_type);
  detail::read_meta(in, out.meta);
  return true;
}

bool from_json(const JsonIn& in, EmbeddedResourceResource& out) {
  if (!in.require_object()) return false;
  if (in.json().contains("text")) {
    TextResourceContents text;
    if (!from_json(in, text)) return false;
    out = std::move(text);
    return true;
  }
  if (in.json().contains("blob")) {
    BlobResourceContents blob;
    if (!from_json(in, blob)) return false;
    out = std::move(blob);
    return true;
  }
  return in.fail("expected a text resource (with \"text\") or a blob resource (with \"blob\")");
}

bool from_json(const JsonIn& in, ContentBlock& out) {
  std::string type;
  if (!in.required("type", type)) return false;
  for (std::size_t i = 0; i < kContentTypes.size(); ++i) {
    if (kContentTypes[i] == type) return read_alternative(in, i, out);
  }
  return detail::unknown_tag(in["type"], "content block type", type);
}

void to_json(JsonWriter& w, const TextResourceContents& v) {
  w.begin_object().member("uri", v.uri).member("text", v.text);
  w.optional_member("mimeType", v.mime_type);
  detail::write_meta(w, v.meta);
  w.end_object();
}

void to_json(JsonWriter& w, const BlobResourceContents& v) {
  w.begin_object().member("uri", v.uri).member("blob", v.blob);
  w.optional_member("mimeType", v.mime_type);
  detail::write_meta(w, v.meta);
  w.end_object();
}

void to_json(JsonWriter& w, const EmbeddedResourceResource& v) {
  std::visit([&w](const auto& r) { to_json(w, r); }, v);
}

void to_json(JsonWriter& w, const ContentBlock& v) {
  w.begin_object().member("type", content_type_name(v));
  std::visit([&w](const auto& block) { write_block(w, block); }, v);
  w.end_object();
}

}  // namespace agentd::protocol::acp
