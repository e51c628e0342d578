// Script parsing, expectation checks and response bodies for the mock model server (see mock_script.h).
#include "test/mock_model/mock_script.h"

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "core/support/json_reader.h"
#include "core/support/json_writer.h"

namespace agentd::mock_model {

using support::Json;
using support::JsonIn;

namespace {

// A misspelt option silently doing nothing is the worst failure a script can have, so unknown keys fail.
bool check_keys(const JsonIn& in, std::initializer_list<std::string_view> allowed) {
  if (!in.require_object()) return false;
  for (const auto& [key, value] : in.json().as_object()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string names;
      for (const auto name : allowed) names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
      return in[key].fail(fmt::format("unknown field (known: {})", names));
    }
  }
  return true;
}

Result<std::string> read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return support::make_error(support::Errc::not_found, "cannot read {}", path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The largest prefix of `text` of at most `max` bytes that does not end inside a UTF-8 sequence (at
// least one whole character, so progress is always made).
std::size_t utf8_cut(std::string_view text, std::size_t max) {
  const auto continuation = [&](std::size_t i) {
    return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
  };
  if (max >= text.size()) return text.size();
  std::size_t cut = max;
  while (cut > 0 && continuation(cut)) --cut;
  if (cut == 0) {
    // `max` is smaller than the first character: take that character whole.
    cut = 1;
    while (continuation(cut)) ++cut;
  }
  return cut;
}

// Splits into pieces of about `piece_bytes`, or into three pieces when 0, never inside a character.
std::vector<std::string> split_text(std::string_view text, std::size_t piece_bytes) {
  std::vector<std::string> pieces;
  if (piece_bytes == 0) {
    // Thirds, each cut moved back to a character boundary (short texts give fewer pieces).
    std::size_t start = 0;
    for (std::size_t k = 1; k <= 3; ++k) {
      std::size_t end = text.size() * k / 3;
      while (end > start && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
      if (end > start) pieces.emplace_back(text.substr(start, end - start));
      start = std::max(start, end);
    }
    return pieces;
  }
  while (!text.empty()) {
    const std::size_t n = utf8_cut(text, piece_bytes);
    pieces.emplace_back(text.substr(0, n));
    text.remove_prefix(n);
  }
  return pieces;
}

std::string json_text(const Json& value) { return value.dump(); }

bool read_string_list(const JsonIn& in, std::vector<std::string>& out) {
  if (in.json().is_string()) {
    out.push_back(in.json().as_string());
    return true;
  }
  return support::from_json(in, out);
}

bool read_expectation(const JsonIn& in, Expectation& out) {
  if (!check_keys(in, {"method", "path", "model", "body_contains", "body_matches"})) return false;
  out.source = in.json();
  if (!in.optional("method", out.method) || !in.optional("path", out.path) || !in.optional("model", out.model)) {
    return false;
  }
  if (const Json* contains = in.json().find("body_contains"); contains != nullptr) {
    if (!read_string_list(in["body_contains"], out.body_contains)) return false;
  }
  if (const Json* matches = in.json().find("body_matches"); matches != nullptr) {
    if (!matches->is_object()) return in["body_matches"].expected("object of JSON pointer -> value");
    for (const auto& [pointer, value] : matches->as_object()) {
      if (!pointer.empty() && pointer.front() != '/') {
        return in["body_matches"][pointer].fail("a JSON pointer starts with '/' (or is \"\" for the whole body)");
      }
      out.body_matches.emplace_back(pointer, value);
    }
  }
  return true;
}

bool read_generate(const JsonIn& in, GenerateSpec& out) {
  if (!check_keys(in, {"provider", "text", "thinking", "signature", "tool_calls", "usage", "stop_reason", "model",
                       "text_piece_bytes"})) {
    return false;
  }
  if (!in.optional("provider", out.provider) || !in.optional("text", out.text) ||
      !in.optional("thinking", out.thinking) || !in.optional("signature", out.signature) ||
      !in.optional("stop_reason", out.stop_reason) || !in.optional("model", out.model)) {
    return false;
  }
  if (out.provider && *out.provider != "anthropic" && *out.provider != "openai") {
    return in["provider"].fail("expected \"anthropic\" or \"openai\"");
  }
  std::uint64_t piece = 0;
  if (!in.optional("text_piece_bytes", piece)) return false;
  out.text_piece_bytes = static_cast<std::size_t>(piece);
  if (const Json* calls = in.json().find("tool_calls"); calls != nullptr) {
    const JsonIn calls_in = in["tool_calls"];
    if (!calls->is_array()) return calls_in.expected("array");
    for (std::size_t i = 0; i < calls->size(); ++i) {
      const JsonIn call_in = calls_in.at(i);
      if (!check_keys(call_in, {"id", "name", "input"})) return false;
      GeneratedToolCall call;
      if (!call_in.required("name", call.name) || !call_in.optional("id", call.id) ||
          !call_in.optional("input", call.input)) {
        return false;
      }
      out.tool_calls.push_back(std::move(call));
    }
  }
  if (in.json().find("usage") != nullptr) {
    const JsonIn usage = in["usage"];
    if (!check_keys(usage,
                    {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}) ||
        !usage.optional("input_tokens", out.usage.input_tokens) ||
        !usage.optional("output_tokens", out.usage.output_tokens) ||
        !usage.optional("cache_creation_input_tokens", out.usage.cache_creation_input_tokens) ||
        !usage.optional("cache_read_input_tokens", out.usage.cache_read_input_tokens)) {
      return false;
    }
  }
  return true;
}

bool read_response(const JsonIn& in, const std::filesystem::path& base_dir, Response& out) {
  if (!check_keys(in, {"status", "headers", "body", "events", "sse_file", "http_file", "generate", "chunked",
                       "chunk_size", "random_chunks", "headers_delay_ms", "chunk_delay_ms", "end_delay_ms",
                       "disconnect_before_headers", "disconnect_after_bytes", "stall_after_bytes"})) {
    return false;
  }
  const Json& json = in.json();
  int sources = 0;
  for (const auto key : {"body", "events", "sse_file", "http_file", "generate"}) sources += json.contains(key) ? 1 : 0;
  if (sources > 1) return in.fail("give at most one of body, events, sse_file, http_file, generate");

  if (!in.optional("status", out.status)) return false;
  if (out.status < 100 || out.status > 999) return in["status"].fail("expected an HTTP status (100-999)");
  if (json.contains("headers")) {
    const JsonIn headers = in["headers"];
    if (!headers.require_object()) return false;
    for (const auto& [name, value] : json["headers"].as_object()) {
      if (value.is_string()) {
        out.headers.emplace_back(name, value.as_string());
      } else if (value.is_number()) {
        out.headers.emplace_back(name, value.dump());
      } else {
        return headers[name].expected("string or number");
      }
    }
  }

  if (const Json* body = json.find("body"); body != nullptr) {
    out.kind = Response::BodyKind::inline_body;
    out.body_is_json = !body->is_string();
    out.body = body->is_string() ? body->as_string() : json_text(*body);
  } else if (const Json* events = json.find("events"); events != nullptr) {
    out.kind = Response::BodyKind::events;
    const JsonIn events_in = in["events"];
    if (!events->is_array()) return events_in.expected("array");
    for (std::size_t i = 0; i < events->size(); ++i) {
      const JsonIn event_in = events_in.at(i);
      if (!check_keys(event_in, {"event", "data", "raw"})) return false;
      const Json& event = event_in.json();
      if (const Json* raw = event.find("raw"); raw != nullptr) {
        if (!raw->is_string()) return event_in["raw"].expected("string");
        out.events.push_back(raw->as_string());
        continue;
      }
      std::string name;
      if (!event_in.optional("event", name)) return false;
      const Json* data = event.find("data");
      if (data == nullptr) return event_in.fail("needs \"data\" (a string or a JSON value) or \"raw\"");
      out.events.push_back(frame_sse_event(name, data->is_string() ? data->as_string() : json_text(*data)));
    }
  } else if (json.contains("sse_file") || json.contains("http_file")) {
    const bool http = json.contains("http_file");
    const char* key = http ? "http_file" : "sse_file";
    std::string file;
    if (!in.required(key, file)) return false;
    auto contents = read_whole_file(base_dir / file);
    if (!contents) return in[key].fail(contents.error().message());
    out.kind = http ? Response::BodyKind::http_file : Response::BodyKind::sse_file;
    out.body = std::move(contents).value();
  } else if (json.contains("generate")) {
    out.kind = Response::BodyKind::generate;
    GenerateSpec spec;
    if (!read_generate(in["generate"], spec)) return false;
    out.generate = std::move(spec);
  }

  std::uint64_t chunk_size = 0;
  if (!in.optional("chunked", out.chunked) || !in.optional("headers_delay_ms", out.headers_delay_ms) ||
      !in.optional("chunk_delay_ms", out.chunk_delay_ms) || !in.optional("end_delay_ms", out.end_delay_ms) ||
      !in.optional("disconnect_before_headers", out.disconnect_before_headers) ||
      !in.optional("disconnect_after_bytes", out.disconnect_after_bytes) ||
      !in.optional("stall_after_bytes", out.stall_after_bytes)) {
    return false;
  }
  if (json.contains("chunk_size")) {
    if (!in.required("chunk_size", chunk_size)) return false;
    if (chunk_size == 0) return in["chunk_size"].fail("must be at least 1");
    out.chunk_size = static_cast<std::size_t>(chunk_size);
  }
  if (json.contains("random_chunks")) {
    const JsonIn random = in["random_chunks"];
    RandomChunks chunks;
    std::uint64_t max_bytes = chunks.max_bytes;
    if (!check_keys(random, {"seed", "max_bytes"}) || !random.optional("seed", chunks.seed) ||
        !random.optional("max_bytes", max_bytes)) {
      return false;
    }
    if (max_bytes == 0) return random["max_bytes"].fail("must be at least 1");
    chunks.max_bytes = static_cast<std::size_t>(max_bytes);
    out.random_chunks = chunks;
  }
  if (out.kind == Response::BodyKind::http_file && out.chunked) {
    return in["chunked"].fail("an http_file is written as it is; framing is up to the file");
  }
  return true;
}

bool read_exchange(const JsonIn& in, const std::filesystem::path& base_dir, Exchange& out) {
  if (!check_keys(in, {"name", "expect", "response"})) return false;
  if (!in.optional("name", out.name)) return false;
  if (in.json().contains("expect")) {
    Expectation expect;
    if (!read_expectation(in["expect"], expect)) return false;
    out.expect = std::move(expect);
  }
  if (!in.json().contains("response")) return in["response"].fail("required field is missing");
  return read_response(in["response"], base_dir, out.response);
}

void write_usage_anthropic(support::JsonWriter& w, const GeneratedUsage& usage, std::uint64_t output_tokens) {
  w.begin_object()
      .member("input_tokens", usage.input_tokens)
      .member("cache_creation_input_tokens", usage.cache_creation_input_tokens)
      .member("cache_read_input_tokens", usage.cache_read_input_tokens)
      .member("output_tokens", output_tokens)
      .end_object();
}

}  // namespace

const Json* resolve_json_pointer(const Json& root, std::string_view pointer) {
  const Json* at = &root;
  while (!pointer.empty()) {
    if (pointer.front() != '/') return nullptr;
    pointer.remove_prefix(1);
    const std::size_t end = std::min(pointer.find('/'), pointer.size());
    std::string token;
    for (std::size_t i = 0; i < end; ++i) {
      if (pointer[i] == '~' && i + 1 < end && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
        token += pointer[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += pointer[i];
      }
    }
    pointer.remove_prefix(end);
    if (at->is_object()) {
      at = at->find(token);
    } else if (at->is_array()) {
      if (token.empty() || token.size() > 9 || !std::all_of(token.begin(), token.end(), ::isdigit) ||
          (token.size() > 1 && token.front() == '0')) {
        return nullptr;
      }
      const std::size_t index = std::stoul(token);
      at = index < at->size() ? &at->as_array()[index] : nullptr;
    } else {
      return nullptr;
    }
    if (at == nullptr) return nullptr;
  }
  return at;
}

std::vector<std::string> check_expectation(const Expectation& expect, const ReceivedRequest& request) {
  std::vector<std::string> failures;
  const auto quoted = [](std::string_view s) { return Json(s).dump(); };
  if (expect.method && *expect.method != request.method) {
    failures.push_back(fmt::format("method: expected {}, got {}", *expect.method, request.method));
  }
  if (expect.path && *expect.path != request.path) {
    failures.push_back(fmt::format("path: expected {}, got {}", quoted(*expect.path), quoted(request.path)));
  }
  if (expect.model) {
    const Json* model = request.body_json ? request.body_json->find("model") : nullptr;
    if (model == nullptr) {
      failures.push_back(fmt::format("model: expected {}, but the body has no \"model\"", quoted(*expect.model)));
    } else if (!model->is_string() || model->as_string() != *expect.model) {
      failures.push_back(fmt::format("model: expected {}, got {}", quoted(*expect.model), model->dump()));
    }
  }
  for (const auto& needle : expect.body_contains) {
    if (request.body.find(needle) == std::string::npos) {
      failures.push_back(fmt::format("body_contains: the body does not contain {}", quoted(needle)));
    }
  }
  for (const auto& [pointer, expected] : expect.body_matches) {
    if (!request.body_json) {
      failures.push_back(fmt::format("body_matches {}: the body is not JSON", quoted(pointer)));
      continue;
    }
    const Json* actual = resolve_json_pointer(*request.body_json, pointer);
    if (actual == nullptr) {
      failures.push_back(fmt::format("body_matches {}: expected {}, but the body has nothing there", quoted(pointer),
                                     expected.dump()));
    } else if (!(*actual == expected)) {
      failures.push_back(
          fmt::format("body_matches {}: expected {}, got {}", quoted(pointer), expected.dump(), actual->dump()));
    }
  }
  return failures;
}

Result<Script> parse_script(const Json& json, const std::filesystem::path& base_dir) {
  // A bare array is the list of exchanges.
  Json wrapped;
  const Json* root = &json;
  if (json.is_array()) {
    wrapped = Json::object();
    wrapped.set("exchanges", json);
    root = &wrapped;
  }
  JsonIn in(*root, "script");
  Script script;
  if (!check_keys(in, {"exchanges", "loop", "description"}) || !in.optional("loop", script.loop)) return in.error();
  const Json* exchanges = root->find("exchanges");
  if (exchanges == nullptr || !exchanges->is_array()) {
    in["exchanges"].expected("array");
    return in.error();
  }
  for (std::size_t i = 0; i < exchanges->size(); ++i) {
    Exchange exchange;
    if (!read_exchange(in["exchanges"].at(i), base_dir, exchange)) return in.error();
    if (exchange.name.empty()) exchange.name = fmt::format("exchange {}", i + 1);
    script.exchanges.push_back(std::move(exchange));
  }
  if (script.loop && script.exchanges.empty()) {
    return support::make_error(support::Errc::invalid_argument, "script.loop: a looping script needs exchanges");
  }
  return script;
}

Result<Script> load_script_file(const std::filesystem::path& path) {
  auto text = read_whole_file(path);
  if (!text) return std::move(text).error();
  auto json = support::parse_json(*text);
  if (!json) return std::move(json).error().context(path.string());
  auto script = parse_script(*json, path.parent_path());
  if (!script) return std::move(script).error().context(path.string());
  return script;
}

std::string frame_sse_event(std::string_view event, std::string_view data) {
  std::string out;
  if (!event.empty()) fmt::format_to(std::back_inserter(out), "event: {}\n", event);
  // One data: line per line of data, as the SSE grammar joins them back with '\n'.
  std::size_t start = 0;
  while (true) {
    const std::size_t end = data.find('\n', start);
    fmt::format_to(std::back_inserter(out), "data: {}\n",
                   data.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  out += '\n';
  return out;
}

std::vector<std::string> generate_anthropic_stream(const GenerateSpec& spec, std::string_view model,
                                                   std::size_t exchange_number) {
  std::vector<std::string> events;
  const auto emit = [&](std::string_view name, const std::string& data) {
    events.push_back(frame_sse_event(name, data));
  };
  const auto json = [](auto&& build) {
    std::string out;
    support::JsonWriter w(out);
    build(w);
    return out;
  };
  const std::string message_id = fmt::format("msg_mock_{:04}", exchange_number);

  emit("message_start", json([&](support::JsonWriter& w) {
         w.begin_object().member("type", "message_start").key("message").begin_object();
         w.member("id", message_id).member("type", "message").member("role", "assistant").member("model", model);
         w.key("content").begin_array().end_array();
         w.key("stop_reason").null().key("stop_sequence").null().key("usage");
         write_usage_anthropic(w, spec.usage, 1);
         w.end_object().end_object();
       }));

  std::uint32_t index = 0;
  const auto block_stop = [&] {
    emit("content_block_stop", json([&](support::JsonWriter& w) {
           w.begin_object().member("type", "content_block_stop").member("index", index).end_object();
         }));
    ++index;
  };
  const auto delta = [&](std::string_view type, std::string_view field, std::string_view value) {
    emit("content_block_delta", json([&](support::JsonWriter& w) {
           w.begin_object().member("type", "content_block_delta").member("index", index).key("delta").begin_object();
           w.member("type", type).member(field, value).end_object().end_object();
         }));
  };

  if (spec.thinking) {
    emit("content_block_start", json([&](support::JsonWriter& w) {
           w.begin_object().member("type", "content_block_start").member("index", index).key("content_block");
           w.begin_object().member("type", "thinking").member("thinking", "").end_object().end_object();
         }));
    for (const auto& piece : split_text(*spec.thinking, spec.text_piece_bytes)) {
      delta("thinking_delta", "thinking", piece);
    }
    delta("signature_delta", "signature", spec.signature);
    block_stop();
  }
  if (!spec.text.empty() || spec.tool_calls.empty()) {
    emit("content_block_start", json([&](support::JsonWriter& w) {
           w.begin_object().member("type", "content_block_start").member("index", index).key("content_block");
           w.begin_object().member("type", "text").member("text", "").end_object().end_object();
         }));
    emit("ping", R"({"type":"ping"})");
    for (const auto& piece : split_text(spec.text, spec.text_piece_bytes)) delta("text_delta", "text", piece);
    block_stop();
  }
  for (std::size_t i = 0; i < spec.tool_calls.size(); ++i) {
    const auto& call = spec.tool_calls[i];
    const std::string id = call.id.empty() ? fmt::format("toolu_mock_{:04}_{}", exchange_number, i + 1) : call.id;
    emit("content_block_start", json([&](support::JsonWriter& w) {
           w.begin_object().member("type", "content_block_start").member("index", index).key("content_block");
           w.begin_object().member("type", "tool_use").member("id", id).member("name", call.name);
           w.key("input").begin_object().end_object().end_object().end_object();
         }));
    // The API opens every tool input with an empty fragment.
    delta("input_json_delta", "partial_json", "");
    for (const auto& piece : split_text(call.input.dump(), 0)) delta("input_json_delta", "partial_json", piece);
    block_stop();
  }

  const std::string stop_reason = spec.stop_reason.value_or(spec.tool_calls.empty() ? "end_turn" : "tool_use");
  emit("message_delta", json([&](support::JsonWriter& w) {
         w.begin_object().member("type", "message_delta").key("delta").begin_object();
         w.member("stop_reason", stop_reason).key("stop_sequence").null().end_object().key("usage");
         write_usage_anthropic(w, spec.usage, spec.usage.output_tokens);
         w.end_object();
       }));
  emit("message_stop", R"({"type":"message_stop"})");
  return events;
}

std::vector<std::string> generate_openai_stream(const GenerateSpec& spec, std::string_view model,
                                                std::size_t exchange_number) {
  std::vector<std::string> events;
  const std::string id = fmt::format("chatcmpl-mock-{:04}", exchange_number);
  // Every chunk repeats the same envelope; `fill` writes the choice's delta and finish_reason.
  const auto chunk = [&](auto&& fill) {
    std::string out;
    support::JsonWriter w(out);
    w.begin_object().member("id", id).member("object", "chat.completion.chunk").member("created", 1767225600);
    w.member("model", model).key("choices").begin_array().begin_object().member("index", 0).key("delta");
    fill(w);
    w.end_object().end_array().end_object();
    events.push_back(frame_sse_event("", out));
  };
  const auto no_finish = [](support::JsonWriter& w) { w.key("logprobs").null().key("finish_reason").null(); };

  chunk([&](support::JsonWriter& w) {
    w.begin_object().member("role", "assistant").member("content", "").end_object();
    no_finish(w);
  });
  if (spec.thinking) {
    for (const auto& piece : split_text(*spec.thinking, spec.text_piece_bytes)) {
      chunk([&](support::JsonWriter& w) {
        w.begin_object().member("reasoning_content", piece).end_object();
        no_finish(w);
      });
    }
  }
  for (const auto& piece : split_text(spec.text, spec.text_piece_bytes)) {
    chunk([&](support::JsonWriter& w) {
      w.begin_object().member("content", piece).end_object();
      no_finish(w);
    });
  }
  for (std::size_t i = 0; i < spec.tool_calls.size(); ++i) {
    const auto& call = spec.tool_calls[i];
    const std::string call_id = call.id.empty() ? fmt::format("call_mock_{:04}_{}", exchange_number, i + 1) : call.id;
    chunk([&](support::JsonWriter& w) {
      w.begin_object().key("tool_calls").begin_array().begin_object().member("index", i).member("id", call_id);
      w.member("type", "function").key("function").begin_object().member("name", call.name).member("arguments", "");
      w.end_object().end_object().end_array().end_object();
      no_finish(w);
    });
    for (const auto& piece : split_text(call.input.dump(), 0)) {
      chunk([&](support::JsonWriter& w) {
        w.begin_object().key("tool_calls").begin_array().begin_object().member("index", i).key("function");
        w.begin_object().member("arguments", piece).end_object().end_object().end_array().end_object();
        no_finish(w);
      });
    }
  }
  const std::string finish = spec.stop_reason.value_or(spec.tool_calls.empty() ? "stop" : "tool_calls");
  chunk([&](support::JsonWriter& w) {
    w.begin_object().end_object().key("logprobs").null().member("finish_reason", finish);
  });

  // The include_usage chunk: no choices, usage only.
  const auto& usage = spec.usage;
  const std::uint64_t prompt_tokens = usage.input_tokens + usage.cache_read_input_tokens;
  std::string out;
  support::JsonWriter w(out);
  w.begin_object().member("id", id).member("object", "chat.completion.chunk").member("created", 1767225600);
  w.member("model", model).key("choices").begin_array().end_array().key("usage").begin_object();
  w.member("prompt_tokens", prompt_tokens).member("completion_tokens", usage.output_tokens);
  w.member("total_tokens", prompt_tokens + usage.output_tokens);
  w.key("prompt_tokens_details").begin_object().member("cached_tokens", usage.cache_read_input_tokens).end_object();
  w.end_object().end_object();
  events.push_back(frame_sse_event("", out));
  events.push_back("data: [DONE]\n\n");
  return events;
}

PreparedBody prepare_body(const Response& response, const ReceivedRequest& request, std::size_t exchange_number) {
  PreparedBody prepared;
  std::string whole;
  switch (response.kind) {
    case Response::BodyKind::none: break;
    case Response::BodyKind::inline_body:
      whole = response.body;
      prepared.content_type = response.body_is_json ? "application/json" : "text/plain; charset=utf-8";
      break;
    case Response::BodyKind::sse_file:
      whole = response.body;
      prepared.content_type = "text/event-stream; charset=utf-8";
      prepared.stream = true;
      break;
    case Response::BodyKind::http_file: whole = response.body; break;
    case Response::BodyKind::events:
      prepared.pieces = response.events;
      prepared.content_type = "text/event-stream; charset=utf-8";
      prepared.stream = true;
      break;
    case Response::BodyKind::generate: {
      const GenerateSpec& spec = *response.generate;
      std::string model = spec.model.value_or("");
      if (model.empty() && request.body_json) {
        if (const Json* m = request.body_json->find("model"); m != nullptr && m->is_string()) model = m->as_string();
      }
      if (model.empty()) model = "mock-model";
      const bool openai = spec.provider ? *spec.provider == "openai" : request.path.ends_with("/chat/completions");
      prepared.pieces = openai ? generate_openai_stream(spec, model, exchange_number)
                               : generate_anthropic_stream(spec, model, exchange_number);
      prepared.content_type = "text/event-stream; charset=utf-8";
      prepared.stream = true;
      break;
    }
  }
  // Explicit chunking re-cuts the whole body, whatever its natural pieces were.
  if (response.chunk_size || response.random_chunks) {
    for (const auto& piece : prepared.pieces) whole += piece;
    prepared.pieces.clear();
  }
  if (!whole.empty()) {
    std::string_view rest = whole;
    std::mt19937 rng(response.random_chunks ? response.random_chunks->seed : 0);
    while (!rest.empty()) {
      std::size_t n = rest.size();
      if (response.chunk_size) n = std::min(n, *response.chunk_size);
      if (response.random_chunks) n = std::min<std::size_t>(n, 1 + rng() % response.random_chunks->max_bytes);
      prepared.pieces.emplace_back(rest.substr(0, n));
      rest.remove_prefix(n);
    }
  }
  return prepared;
}

}  // namespace agentd::mock_model
