#include "protocol/acp/client_methods.h"

#include <array>

#include "protocol/acp/wire_util.h"

namespace agentd::protocol::acp {

using support::Json;
using support::JsonIn;
using support::JsonWriter;

namespace {

constexpr std::array<std::string_view, 4> kPermissionOptionKinds = {"allow_once", "allow_always", "reject_once",
                                                                    "reject_always"};

}  // namespace

std::string_view name(PermissionOptionKind v) noexcept { return detail::enum_name(v, kPermissionOptionKinds); }
bool parse(std::string_view text, PermissionOptionKind& out) noexcept {
  return detail::parse_enum(text, kPermissionOptionKinds, out);
}
bool from_json(const JsonIn& in, PermissionOptionKind& out) {
  return detail::read_enum(in, kPermissionOptionKinds, "permission option kind", out);
}
void to_json(JsonWriter& w, PermissionOptionKind v) { w.value(name(v)); }

bool from_json(const JsonIn& in, PermissionOption& out) {
  if (!in.required("optionId", out.option_id) || !in.required("name", out.name) || !in.required("kind", out.kind)) {
    return false;
  }
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const PermissionOption& v) {
  w.begin_object().member("optionId", v.option_id).member("name", v.name).member("kind", v.kind);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, RequestPermissionRequest& out) {
  if (!in.required("sessionId", out.session_id) || !in.required("toolCall", out.tool_call) ||
      !in.required("options", out.options)) {
    return false;
  }
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const RequestPermissionRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("toolCall", v.tool_call).member("options", v.options);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, RequestPermissionOutcome& out) {
  std::string outcome;
  if (!in.required("outcome", outcome)) return false;
  if (outcome == "cancelled") {
    out = CancelledPermissionOutcome{};
    return true;
  }
  if (outcome == "selected") {
    SelectedPermissionOutcome selected;
    if (!in.required("optionId", selected.option_id)) return false;
    detail::read_meta(in, selected.meta);
    out = std::move(selected);
    return true;
  }
  return detail::unknown_tag(in["outcome"], "permission outcome", outcome);
}

void to_json(JsonWriter& w, const RequestPermissionOutcome& v) {
  w.begin_object();
  if (const auto* selected = std::get_if<SelectedPermissionOutcome>(&v)) {
    w.member("outcome", "selected").member("optionId", selected->option_id);
    detail::write_meta(w, selected->meta);
  } else {
    w.member("outcome", "cancelled");
  }
  w.end_object();
}

bool from_json(const JsonIn& in, RequestPermissionResponse& out) {
  if (!in.required("outcome", out.outcome)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const RequestPermissionResponse& v) {
  w.begin_object().member("outcome", v.outcome);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, ReadTextFileRequest& out) {
  if (!in.required("sessionId", out.session_id) || !in.required("path", out.path)) return false;
  if (!in.optional("line", out.line) || !in.optional("limit", out.limit)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const ReadTextFileRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("path", v.path);
  w.optional_member("line", v.line);
  w.optional_member("limit", v.limit);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, ReadTextFileResponse& out) {
  if (!in.required("content", out.content)) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const ReadTextFileResponse& v) {
  w.begin_object().member("content", v.content);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, WriteTextFileRequest& out) {
  if (!in.required("sessionId", out.session_id) || !in.required("path", out.path) ||
      !in.required("content", out.content)) {
    return false;
  }
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const WriteTextFileRequest& v) {
  w.begin_object().member("sessionId", v.session_id).member("path", v.path).member("content", v.content);
  detail::write_meta(w, v.meta);
  w.end_object();
}

bool from_json(const JsonIn& in, WriteTextFileResponse& out) {
  // Clients answer with {} or null.
  if (!in.json().is_null() && !in.require_object()) return false;
  detail::read_meta(in, out.meta);
  return true;
}

void to_json(JsonWriter& w, const WriteTextFileResponse& v) {
  w.begin_object();
  detail::write_meta(w, v.meta);
  w.end_object();
}

}  // namespace agentd::protocol::acp
