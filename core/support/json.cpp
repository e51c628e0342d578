#include "core/support/json.h"

#include <simdjson.h>

#include <cassert>
#include <cmath>
#include <limits>

#include "core/support/enum_names.h"
#include "core/support/json_writer.h"

namespace agentd::support {

Json::Type Json::type() const noexcept {
  switch (v_.index()) {
    case 0: return Type::null;
    case 1: return Type::boolean;
    case 2:
    case 3: return Type::integer;
    case 4: return Type::number;
    case 5: return Type::string;
    case 6: return Type::array;
    default: return Type::object;
  }
}

constexpr EnumName<Json::Type> kTypeNames[] = {
    {Json::Type::null, "null"},     {Json::Type::boolean, "boolean"}, {Json::Type::integer, "integer"},
    {Json::Type::number, "number"}, {Json::Type::string, "string"},   {Json::Type::array, "array"},
    {Json::Type::object, "object"},
};
static_assert(names_every_value(kTypeNames, Json::Type::object));

std::string_view Json::type_name(Type t) noexcept { return enum_name<Type>(kTypeNames, t); }

std::int64_t Json::as_int64() const {
  if (const auto* i = std::get_if<std::int64_t>(&v_)) return *i;
  const auto u = std::get<std::uint64_t>(v_);
  assert(u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  return static_cast<std::int64_t>(u);
}

std::uint64_t Json::as_uint64() const {
  if (const auto* u = std::get_if<std::uint64_t>(&v_)) return *u;
  const auto i = std::get<std::int64_t>(v_);
  assert(i >= 0);
  return static_cast<std::uint64_t>(i);
}

double Json::as_double() const {
  switch (v_.index()) {
    case 2: return static_cast<double>(std::get<std::int64_t>(v_));
    case 3: return static_cast<double>(std::get<std::uint64_t>(v_));
    default: return std::get<double>(v_);
  }
}

const Json* Json::find(std::string_view key) const noexcept {
  const auto* obj = std::get_if<Object>(&v_);
  if (obj == nullptr) return nullptr;
  for (const auto& [k, v] : *obj) {
    if (k == key) return &v;
  }
  return nullptr;
}

Json* Json::find(std::string_view key) noexcept { return const_cast<Json*>(static_cast<const Json*>(this)->find(key)); }

Json& Json::set(std::string_view key, Json value) {
  if (is_null()) v_ = Object{};
  if (Json* existing = find(key)) {
    *existing = std::move(value);
    return *existing;
  }
  auto& obj = std::get<Object>(v_);
  obj.emplace_back(std::string(key), std::move(value));
  return obj.back().second;
}

Json& Json::operator[](std::string_view key) {
  if (is_null()) v_ = Object{};
  if (Json* existing = find(key)) return *existing;
  return set(key, Json());
}

const Json& Json::operator[](std::string_view key) const noexcept {
  static const Json kNull;
  const Json* member = find(key);
  return member != nullptr ? *member : kNull;
}

Json& Json::push_back(Json value) {
  if (is_null()) v_ = Array{};
  auto& arr = std::get<Array>(v_);
  arr.push_back(std::move(value));
  return arr.back();
}

std::size_t Json::size() const noexcept {
  if (const auto* a = std::get_if<Array>(&v_)) return a->size();
  if (const auto* o = std::get_if<Object>(&v_)) return o->size();
  return 0;
}

std::string Json::dump() const {
  std::string out;
  JsonWriter writer(out);
  writer.value(*this);
  return out;
}

bool operator==(const Json& a, const Json& b) noexcept {
  if (a.is_number() && b.is_number()) {
    if (a.is_integer() && b.is_integer()) {
      const auto* ai = a.if_int64();
      const auto* bi = b.if_int64();
      if (ai != nullptr && bi != nullptr) return *ai == *bi;
      const auto* au = a.if_uint64();
      const auto* bu = b.if_uint64();
      if (au != nullptr && bu != nullptr) return *au == *bu;
      return false;  // one negative/int64, the other beyond int64: never equal
    }
    return a.as_double() == b.as_double();
  }
  if (a.v_.index() != b.v_.index()) return false;
  if (a.is_object()) {
    const auto& ao = a.as_object();
    const auto& bo = b.as_object();
    if (ao.size() != bo.size()) return false;
    for (const auto& [k, v] : ao) {
      const Json* other = b.find(k);
      if (other == nullptr || !(*other == v)) return false;
    }
    return true;
  }
  return a.v_ == b.v_;
}

namespace {

namespace dom = simdjson::dom;

Json convert(dom::element element) {
  switch (element.type()) {
    case dom::element_type::OBJECT: {
      Json::Object obj;
      dom::object o = element.get_object().value_unsafe();
      obj.reserve(o.size());
      for (auto field : o) obj.emplace_back(std::string(field.key), convert(field.value));
      return Json(std::move(obj));
    }
    case dom::element_type::ARRAY: {
      Json::Array arr;
      dom::array a = element.get_array().value_unsafe();
      arr.reserve(a.size());
      for (auto item : a) arr.push_back(convert(item));
      return Json(std::move(arr));
    }
    case dom::element_type::STRING: return Json(std::string(element.get_string().value_unsafe()));
    case dom::element_type::INT64: return Json(element.get_int64().value_unsafe());
    case dom::element_type::UINT64: return Json(element.get_uint64().value_unsafe());
    case dom::element_type::DOUBLE: return Json(element.get_double().value_unsafe());
    case dom::element_type::BOOL: return Json(element.get_bool().value_unsafe());
    case dom::element_type::NULL_VALUE: return Json();
  }
  return Json();
}

std::string_view describe(simdjson::error_code code) {
  switch (code) {
    case simdjson::UTF8_ERROR: return "invalid UTF-8";
    case simdjson::DEPTH_ERROR: return "nesting too deep";
    case simdjson::EMPTY: return "empty input";
    case simdjson::UNCLOSED_STRING: return "unclosed string";
    case simdjson::TAPE_ERROR: return "malformed JSON";
    case simdjson::NUMBER_ERROR: return "malformed or out-of-range number";
    case simdjson::STRING_ERROR: return "malformed string";
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR: return "malformed literal";
    case simdjson::UNESCAPED_CHARS: return "unescaped control character in string";
    case simdjson::CAPACITY: return "document too large";
    default: return simdjson::error_message(code);
  }
}

}  // namespace

Result<Json> parse_json(std::string_view text, std::size_t max_depth) {
  // One parser per thread: it keeps its buffers between calls, so small messages allocate nothing
  // beyond the Json they produce.
  thread_local dom::parser parser;
  if (parser.max_depth() != max_depth) {
    if (auto err = parser.allocate(parser.capacity() == 0 ? 4096 : parser.capacity(), max_depth); err) {
      return make_error(Errc::internal, "JSON parser allocation failed: {}", simdjson::error_message(err));
    }
  }
  // simdjson copies from text.data(), which is null for a default string_view.
  if (text.empty()) return Error(Errc::parse_error, "empty input");
  dom::element root;
  // parse() copies into a padded buffer when the input lacks SIMDJSON_PADDING bytes after it.
  if (auto err = parser.parse(text.data(), text.size(), true).get(root); err) {
    return Error(Errc::parse_error, std::string(describe(err)));
  }
  return convert(root);
}

}  // namespace agentd::support
