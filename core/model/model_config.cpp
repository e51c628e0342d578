// ModelConfig defaults, parsing and environment overrides.
#include "core/model/model_config.h"

#include <cstdlib>
#include <map>
#include <utility>

#include "core/model/price_table.h"

namespace agentd::core::model {
namespace {

// For a model the price table does not know: small enough that every current model of the provider
// accepts it, so compaction starts early rather than the provider refusing the prompt.
constexpr std::uint64_t kFallbackContextAnthropic = 200'000;
constexpr std::uint32_t kFallbackOutputAnthropic = 8'192;
constexpr std::uint64_t kFallbackContextOpenAi = 128'000;
constexpr std::uint32_t kFallbackOutputOpenAi = 16'384;

std::string_view default_base_url(Provider provider) noexcept {
  return provider == Provider::anthropic ? kAnthropicDefaultBaseUrl : kOpenAiDefaultBaseUrl;
}

std::optional<Provider> infer_provider(std::string_view model) noexcept {
  if (model.starts_with("claude")) return Provider::anthropic;
  if (model.starts_with("gpt-") || model.starts_with("chatgpt-")) return Provider::openai;
  if (model.size() >= 2 && model[0] == 'o' && model[1] >= '1' && model[1] <= '9') return Provider::openai;
  return std::nullopt;
}

}  // namespace

constexpr support::EnumName<Provider> kProviderNames[] = {
    {Provider::anthropic, "anthropic"},
    {Provider::openai, "openai"},
};
static_assert(support::names_every_value(kProviderNames, Provider::openai));

std::span<const support::EnumName<Provider>> enum_names(Provider) noexcept { return kProviderNames; }

std::string_view provider_name(Provider provider) noexcept { return support::enum_name(provider, "unknown"); }

std::optional<Provider> parse_provider(std::string_view name) noexcept {
  return support::enum_from_name<Provider>(name);
}

void apply_defaults(ModelConfig& config) {
  const bool anthropic = config.provider == Provider::anthropic;
  if (config.base_url.empty()) config.base_url = std::string(default_base_url(config.provider));
  if (config.api_key_env.empty() && !config.keyless) {
    config.api_key_env = anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  }
  if (config.anthropic_version.empty()) config.anthropic_version = std::string(kDefaultAnthropicVersion);
  const ModelInfo* info = find_model_info(config.model);
  if (config.context_window == 0) {
    config.context_window =
        info != nullptr ? info->context_window : (anthropic ? kFallbackContextAnthropic : kFallbackContextOpenAi);
  }
  if (config.max_output_tokens == 0) {
    config.max_output_tokens =
        info != nullptr ? info->max_output_tokens : (anthropic ? kFallbackOutputAnthropic : kFallbackOutputOpenAi);
  }
}

ModelConfig default_model_config(Provider provider, std::string model) {
  ModelConfig config;
  config.provider = provider;
  config.model = std::move(model);
  apply_defaults(config);
  return config;
}

support::Result<ModelConfig> parse_model_spec(std::string_view spec) {
  std::optional<Provider> provider;
  std::string_view model = spec;
  if (const auto colon = spec.find(':'); colon != std::string_view::npos) {
    provider = parse_provider(spec.substr(0, colon));
    if (!provider) {
      return support::make_error(support::Errc::invalid_argument,
                                 "model spec \"{}\": unknown provider \"{}\" (expected anthropic or openai)", spec,
                                 spec.substr(0, colon));
    }
    model = spec.substr(colon + 1);
  } else {
    provider = infer_provider(spec);
    if (!provider) {
      return support::make_error(support::Errc::invalid_argument,
                                 "model spec \"{}\": cannot tell the provider; write anthropic:MODEL or openai:MODEL",
                                 spec);
    }
  }
  if (model.empty()) {
    return support::make_error(support::Errc::invalid_argument, "model spec \"{}\": the model id is empty", spec);
  }
  return default_model_config(*provider, std::string(model));
}

EnvLookup process_env() {
  return [](const char* name) -> const char* { return std::getenv(name); };  // NOLINT(concurrency-mt-unsafe)
}

void apply_env_overrides(ModelConfig& config, const EnvLookup& lookup) {
  if (!lookup) return;
  if (!config.base_url.empty() && config.base_url != default_base_url(config.provider)) return;
  const char* name = config.provider == Provider::anthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL";
  const char* value = lookup(name);
  if (value != nullptr && *value != '\0') config.base_url = value;
}

bool from_json(const support::JsonIn& in, ModelConfig& out) {
  std::string provider;
  if (!in.required("provider", provider)) return false;
  if (auto parsed = parse_provider(provider)) {
    out.provider = *parsed;
  } else {
    return in["provider"].fail("expected \"anthropic\" or \"openai\"");
  }
  if (!in.required("model", out.model)) return false;
  if (out.model.empty()) return in["model"].fail("must not be empty");
  if (!in.optional("base_url", out.base_url)) return false;
  if (!out.base_url.empty() && !net::parse_url(out.base_url)) return in["base_url"].fail("not an http(s) URL");
  if (!in.optional("api_key_env", out.api_key_env)) return false;
  // Said and empty: no key at all (a local server), not the provider's default variable.
  out.keyless = in.json().contains("api_key_env") && out.api_key_env.empty();
  if (!in.optional("context_window", out.context_window)) return false;
  if (!in.optional("max_output_tokens", out.max_output_tokens)) return false;
  if (!in.optional("anthropic_version", out.anthropic_version)) return false;
  std::map<std::string, std::string> headers;
  if (!in.optional("headers", headers)) return false;
  for (auto& [name, value] : headers) out.extra_headers.push_back({name, std::move(value)});
  apply_defaults(out);
  return true;
}

}  // namespace agentd::core::model
