#include "protocol/acp/wire_util.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace agentd::protocol::acp::detail {

using support::Json;
using support::JsonIn;
using support::JsonWriter;

void read_meta(const JsonIn& in, Json& out) { read_object_or_drop(in, "_meta", out); }

void write_meta(JsonWriter& w, const Json& meta) {
  if (meta.is_object() && meta.size() > 0) w.member("_meta", meta);
}

void read_object_or_drop(const JsonIn& in, std::string_view key, Json& out) {
  const Json* member = in.json().find(key);
  out = member != nullptr && member->is_object() ? *member : Json();
}

bool read_enum_index(const JsonIn& in, std::span<const std::string_view> names, std::string_view what,
                     std::size_t& index) {
  if (!in.json().is_string()) return in.expected("string");
  const std::string& text = in.json().as_string();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) {
      index = i;
      return true;
    }
  }
  return in.fail(fmt::format("unknown {} {} (expected one of {})", what, Json(text).dump(), fmt::join(names, ", ")));
}

bool unknown_tag(const JsonIn& tag, std::string_view what, std::string_view value) {
  return tag.fail(fmt::format("unknown {} {}", what, Json(value).dump()));
}

}  // namespace agentd::protocol::acp::detail
