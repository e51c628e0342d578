#include "tools/json_schema.h"

#include <cmath>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "core/support/text.h"

namespace agentd::tools {
namespace {

using support::Json;

// Enough for any input a model can fix in one go; beyond it the list stops helping.
constexpr std::size_t kMaxViolations = 20;
// Long values are cut in messages: the model needs to recognize the value, not read it back.
constexpr std::size_t kMaxRenderedValue = 60;

bool is_integral_number(const Json& value) {
  if (value.is_integer()) return true;
  if (!value.is_number()) return false;
  const double d = value.as_double();
  return std::isfinite(d) && std::floor(d) == d;
}

bool type_matches(std::string_view type, const Json& value) {
  if (type == "integer") return is_integral_number(value);
  if (type == "number") return value.is_number();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_bool();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "null") return value.is_null();
  return true;  // an unknown type name is the schema's problem, not the input's
}

std::string render_value(const Json& value) {
  if (value.is_array()) return "array";
  if (value.is_object()) return "object";
  std::string text = value.dump();
  if (text.size() > kMaxRenderedValue) {
    // Cut on a UTF-8 boundary so the message stays valid text.
    std::size_t cut = kMaxRenderedValue;
    cut = support::utf8_floor(text, cut);
    text.resize(cut);
    text += value.is_string() ? "...\"" : "...";
  }
  return text;
}

// "string \"5\"", "number 3.5", "null", "array": the type, and the value when it is short enough to help.
std::string render_typed(const Json& value) {
  if (value.is_null() || value.is_array() || value.is_object()) return std::string(value.type_name());
  return fmt::format("{} {}", value.type_name(), render_value(value));
}

// Exact when both sides are integers (int64 and uint64 mix correctly), by double otherwise.
int compare_numbers(const Json& a, const Json& b) {
  if (a.is_integer() && b.is_integer()) {
    const bool a_negative = a.if_int64() != nullptr && *a.if_int64() < 0;
    const bool b_negative = b.if_int64() != nullptr && *b.if_int64() < 0;
    if (a_negative != b_negative) return a_negative ? -1 : 1;
    if (a_negative) {
      const std::int64_t x = *a.if_int64(), y = *b.if_int64();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    const std::uint64_t x = a.as_uint64(), y = b.as_uint64();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  const double x = a.as_double(), y = b.as_double();
  return x < y ? -1 : (x > y ? 1 : 0);
}

std::size_t code_points(std::string_view text) {
  std::size_t count = 0;
  for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return count;
}

const Json* number_keyword(const Json& schema, std::string_view key) {
  const Json* found = schema.find(key);
  return found != nullptr && found->is_number() ? found : nullptr;
}

std::optional<std::uint64_t> count_keyword(const Json& schema, std::string_view key) {
  const Json* found = schema.find(key);
  if (found == nullptr || !found->is_integer() || (found->if_int64() != nullptr && *found->if_int64() < 0)) {
    return std::nullopt;
  }
  return found->as_uint64();
}

std::string plural(std::uint64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// The bounds of a number schema as the model should read them: ">= 1", "from 1 to 100", "> 0".
std::string describe_number_bounds(const Json& schema) {
  const Json* min = number_keyword(schema, "minimum");
  const Json* max = number_keyword(schema, "maximum");
  const Json* xmin = number_keyword(schema, "exclusiveMinimum");
  const Json* xmax = number_keyword(schema, "exclusiveMaximum");
  if (min != nullptr && max != nullptr) return fmt::format(" from {} to {}", min->dump(), max->dump());
  std::string out;
  if (min != nullptr) out += fmt::format(" >= {}", min->dump());
  if (xmin != nullptr) out += fmt::format(" > {}", xmin->dump());
  if (max != nullptr) out += fmt::format("{} <= {}", out.empty() ? "" : " and", max->dump());
  if (xmax != nullptr) out += fmt::format("{} < {}", out.empty() ? "" : " and", xmax->dump());
  return out;
}

// "string", "non-empty string", "string of 2 to 3 characters".
std::string describe_string(const Json& schema) {
  const auto min = count_keyword(schema, "minLength");
  const auto max = count_keyword(schema, "maxLength");
  if (min && max) return fmt::format("string of {} to {} characters", *min, *max);
  if (min && *min == 1) return "non-empty string";
  if (min) return fmt::format("string of at least {}", plural(*min, "character"));
  if (max) return fmt::format("string of at most {}", plural(*max, "character"));
  return "string";
}

std::string describe_enum(const Json& values) {
  std::string out = "one of ";
  bool first = true;
  for (const Json& v : values.as_array()) {
    if (!first) out += ", ";
    first = false;
    out += render_value(v);
  }
  return out;
}

// What the schema expects, for a type mismatch: "integer >= 1", "string or null", "one of \"a\", \"b\"".
std::string describe_expected(const Json& schema) {
  if (const Json* values = schema.find("enum"); values != nullptr && values->is_array()) return describe_enum(*values);
  const Json* type = schema.find("type");
  if (type == nullptr) return "a different value";
  if (type->is_string()) {
    const std::string& name = type->as_string();
    if (name == "integer" || name == "number") return name + describe_number_bounds(schema);
    if (name == "string") return describe_string(schema);
    return name;
  }
  std::string out;
  if (type->is_array()) {
    for (const Json& t : type->as_array()) {
      if (!t.is_string()) continue;
      if (!out.empty()) out += " or ";
      out += t.as_string();
    }
  }
  return out.empty() ? "a different value" : out;
}

class Validator {
 public:
  std::vector<std::string> take() && {
    if (dropped_ > 0) violations_.push_back(fmt::format("(and {} more problems not listed)", dropped_));
    return std::move(violations_);
  }

  void check(const Json& schema, const Json& value, const std::string& path) {
    if (schema.is_bool()) {
      if (!schema.as_bool()) report(path, "this field is not allowed here; remove it");
      return;
    }
    if (!schema.is_object()) return;

    if (const Json* type = schema.find("type"); type != nullptr && !check_type(*type, value)) {
      report(path, fmt::format("expected {}, got {}", describe_expected(schema), render_typed(value)));
      return;  // the other keywords only make sense for the right type
    }
    if (const Json* values = schema.find("enum"); values != nullptr && values->is_array()) {
      bool found = false;
      for (const Json& v : values->as_array()) found = found || v == value;
      if (!found) {
        report(path, fmt::format("expected {}, got {}", describe_enum(*values), render_value(value)));
        return;
      }
    }
    if (const Json* expected = schema.find("const"); expected != nullptr && !(*expected == value)) {
      report(path, fmt::format("expected {}, got {}", render_value(*expected), render_value(value)));
      return;
    }
    if (value.is_number()) check_number(schema, value, path);
    if (value.is_string()) check_string(schema, value.as_string(), path);
    if (value.is_array()) check_array(schema, value.as_array(), path);
    if (value.is_object()) check_object(schema, value, path);
  }

 private:
  void report(const std::string& path, std::string message) {
    if (violations_.size() >= kMaxViolations) {
      ++dropped_;
      return;
    }
    violations_.push_back(fmt::format("{}: {}", path, message));
  }

  static bool check_type(const Json& type, const Json& value) {
    if (type.is_string()) return type_matches(type.as_string(), value);
    if (!type.is_array()) return true;
    for (const Json& t : type.as_array()) {
      if (t.is_string() && type_matches(t.as_string(), value)) return true;
    }
    return type.as_array().empty();
  }

  void check_number(const Json& schema, const Json& value, const std::string& path) {
    const Json* min = number_keyword(schema, "minimum");
    const Json* max = number_keyword(schema, "maximum");
    const Json* xmin = number_keyword(schema, "exclusiveMinimum");
    const Json* xmax = number_keyword(schema, "exclusiveMaximum");
    const bool bad = (min != nullptr && compare_numbers(value, *min) < 0) ||
                     (max != nullptr && compare_numbers(value, *max) > 0) ||
                     (xmin != nullptr && compare_numbers(value, *xmin) <= 0) ||
                     (xmax != nullptr && compare_numbers(value, *xmax) >= 0);
    if (bad) report(path, fmt::format("expected {}, got {}", describe_expected(schema), render_value(value)));
  }

  void check_string(const Json& schema, const std::string& value, const std::string& path) {
    const auto min = count_keyword(schema, "minLength");
    const auto max = count_keyword(schema, "maxLength");
    const std::size_t length = code_points(value);
    if ((min && length < *min) || (max && length > *max)) {
      const std::string got = length == 0 ? "an empty string" : fmt::format("{}", plural(length, "character"));
      report(path, fmt::format("expected a {}, got {}", describe_string(schema), got));
    }
  }

  void check_array(const Json& schema, const Json::Array& items, const std::string& path) {
    const auto min = count_keyword(schema, "minItems");
    const auto max = count_keyword(schema, "maxItems");
    if (min && items.size() < *min) {
      report(path, fmt::format("expected at least {}, got {}", plural(*min, "item"), items.size()));
    }
    if (max && items.size() > *max) {
      report(path, fmt::format("expected at most {}, got {}", plural(*max, "item"), items.size()));
    }
    const Json* item_schema = schema.find("items");
    if (item_schema == nullptr || !(item_schema->is_object() || item_schema->is_bool())) return;
    for (std::size_t i = 0; i < items.size(); ++i) check(*item_schema, items[i], fmt::format("{}[{}]", path, i));
  }

  void check_object(const Json& schema, const Json& value, const std::string& path) {
    const Json* properties = schema.find("properties");
    if (properties != nullptr && !properties->is_object()) properties = nullptr;
    if (const Json* required = schema.find("required"); required != nullptr && required->is_array()) {
      for (const Json& name : required->as_array()) {
        if (name.is_string() && !value.contains(name.as_string())) {
          report(path, fmt::format("missing required field \"{}\"", name.as_string()));
        }
      }
    }
    const Json* additional = schema.find("additionalProperties");
    for (const auto& [key, member] : value.as_object()) {
      const std::string child = fmt::format("{}.{}", path, key);
      if (const Json* property = properties != nullptr ? properties->find(key) : nullptr) {
        check(*property, member, child);
      } else if (additional != nullptr && additional->is_bool() && !additional->as_bool()) {
        report(path, fmt::format("unknown field \"{}\"; {}", key, allowed_fields(properties)));
      } else if (additional != nullptr && additional->is_object()) {
        check(*additional, member, child);
      }
    }
  }

  static std::string allowed_fields(const Json* properties) {
    if (properties == nullptr || properties->size() == 0) return "this object takes no fields";
    std::string out = "allowed fields: ";
    bool first = true;
    for (const auto& [key, unused] : properties->as_object()) {
      if (!first) out += ", ";
      first = false;
      out += key;
    }
    return out;
  }

  std::vector<std::string> violations_;
  std::size_t dropped_ = 0;
};

}  // namespace

std::vector<std::string> schema_violations(const Json& schema, const Json& value, std::string_view root) {
  Validator validator;
  validator.check(schema, value, std::string(root));
  return std::move(validator).take();
}

support::Result<void> validate_against_schema(const Json& schema, const Json& value, std::string_view root) {
  const auto violations = schema_violations(schema, value, root);
  if (violations.empty()) return support::ok();
  std::string message;
  for (const auto& violation : violations) {
    if (!message.empty()) message += '\n';
    message += violation;
  }
  return support::Error(support::Errc::invalid_argument, std::move(message));
}

}  // namespace agentd::tools
