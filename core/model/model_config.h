// ModelConfig: which provider and model a session talks to, where, and with which key. The key itself is
// never held here: only the NAME of the environment variable that holds it, read at call time, so the
// config can be stored and logged without leaking a secret.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/net/http_client.h"
#include "core/support/enum_names.h"
#include "core/support/json_reader.h"
#include "core/support/result.h"

namespace agentd::core::model {

enum class Provider { anthropic, openai };
std::string_view provider_name(Provider provider) noexcept;
std::span<const support::EnumName<Provider>> enum_names(Provider) noexcept;
std::optional<Provider> parse_provider(std::string_view name) noexcept;

inline constexpr std::string_view kAnthropicDefaultBaseUrl = "https://api.anthropic.com";
inline constexpr std::string_view kOpenAiDefaultBaseUrl = "https://api.openai.com/v1";
inline constexpr std::string_view kDefaultAnthropicVersion = "2023-06-01";

struct ModelConfig {
  Provider provider = Provider::anthropic;
  std::string model;
  // Anthropic: the host root ("/v1/messages" is appended). OpenAI: the API root including "/v1"
  // ("/chat/completions" is appended), as the SDKs and local servers spell it.
  std::string base_url;
  std::string api_key_env;  // empty after apply_defaults only for a keyless model
  bool keyless = false;     // the config said "api_key_env": "": send no key (a local server)
  std::uint64_t context_window = 0;
  std::uint32_t max_output_tokens = 0;
  std::string anthropic_version{kDefaultAnthropicVersion};
  net::HttpHeaders extra_headers;  // sent with every request, after ours
};

// A config for `model` with the provider's defaults: base URL, key variable, and the limits from the
// price table (or conservative ones for a model it does not know).
ModelConfig default_model_config(Provider provider, std::string model);

// Fills the fields left empty/zero with the provider's defaults (see default_model_config).
void apply_defaults(ModelConfig& config);

// "anthropic:claude-sonnet-4-5", "openai:gpt-4.1". Without a provider prefix, "claude-*" means
// Anthropic and "gpt-*", "o<digit>*" OpenAI; anything else is an error naming the spec.
support::Result<ModelConfig> parse_model_spec(std::string_view spec);

// Returns the variable's value or null when unset; std::getenv in the daemon, a map in tests.
using EnvLookup = std::function<const char*(const char*)>;
EnvLookup process_env();

// ANTHROPIC_BASE_URL / OPENAI_BASE_URL (the SDKs' names) replace the base URL, unless the config chose
// its own one (anything other than the provider's default).
void apply_env_overrides(ModelConfig& config, const EnvLookup& lookup);

// {"provider", "model", "base_url", "api_key_env", "context_window", "max_output_tokens",
//  "anthropic_version", "headers": {"name": "value"}}. provider and model are required; the rest
// default (apply_defaults runs afterwards). Errors name the field ("model.provider: ...").
bool from_json(const support::JsonIn& in, ModelConfig& out);

}  // namespace agentd::core::model
