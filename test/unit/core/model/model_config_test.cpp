// ModelConfig: provider defaults, model specs, JSON parsing with field-naming errors, and the base-URL
// environment overrides (through a lookup callback, so nothing here reads the real environment).
#include "core/model/model_config.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "core/support/json.h"

namespace agentd::core::model {
namespace {

EnvLookup fake_env(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

support::Json parse(const char* text) {
  auto json = support::parse_json(text);
  EXPECT_TRUE(json) << text;
  return json ? *json : support::Json();
}

TEST(ModelConfig, ProviderDefaults) {
  auto anthropic = default_model_config(Provider::anthropic, "claude-sonnet-4-5-20250929");
  EXPECT_EQ(anthropic.base_url, "https://api.anthropic.com");
  EXPECT_EQ(anthropic.api_key_env, "ANTHROPIC_API_KEY");
  EXPECT_EQ(anthropic.anthropic_version, "2023-06-01");
  EXPECT_EQ(anthropic.context_window, 200'000U);
  EXPECT_EQ(anthropic.max_output_tokens, 64'000U);

  auto openai = default_model_config(Provider::openai, "gpt-4.1");
  EXPECT_EQ(openai.base_url, "https://api.openai.com/v1");
  EXPECT_EQ(openai.api_key_env, "OPENAI_API_KEY");
  EXPECT_EQ(openai.context_window, 1'047'576U);
  EXPECT_EQ(openai.max_output_tokens, 32'768U);

  auto unknown = default_model_config(Provider::openai, "llama3.1:8b");
  EXPECT_EQ(unknown.context_window, 128'000U);
  EXPECT_GT(unknown.max_output_tokens, 0U);
}

TEST(ModelConfig, ParseModelSpec) {
  auto spec = parse_model_spec("anthropic:claude-sonnet-4-5");
  ASSERT_TRUE(spec) << spec.error().message();
  EXPECT_EQ(spec->provider, Provider::anthropic);
  EXPECT_EQ(spec->model, "claude-sonnet-4-5");

  spec = parse_model_spec("openai:llama3.1:8b");  // only the first colon separates the provider
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->provider, Provider::openai);
  EXPECT_EQ(spec->model, "llama3.1:8b");

  spec = parse_model_spec("gpt-4o-mini");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->provider, Provider::openai);
  spec = parse_model_spec("o4-mini");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->provider, Provider::openai);
  spec = parse_model_spec("claude-haiku-4-5");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->provider, Provider::anthropic);

  auto bad = parse_model_spec("gemini:flash");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("unknown provider \"gemini\""), std::string::npos) << bad.error().message();
  EXPECT_FALSE(parse_model_spec("anthropic:"));
  EXPECT_FALSE(parse_model_spec("mystery-model"));
}

TEST(ModelConfig, FromJsonFillsDefaultsAndKeepsChoices) {
  auto config = support::read_json<ModelConfig>(
      parse(R"({"provider":"openai","model":"qwen2.5-coder","base_url":"http://127.0.0.1:11434/v1",
                "api_key_env":"","context_window":32768,"headers":{"x-team":"core"}})"),
      "model");
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->provider, Provider::openai);
  EXPECT_EQ(config->base_url, "http://127.0.0.1:11434/v1");
  EXPECT_EQ(config->context_window, 32768U);
  EXPECT_EQ(config->max_output_tokens, 16'384U);
  // "api_key_env": "" is a keyless local server, also after defaults are applied again (resolve_model).
  EXPECT_EQ(config->api_key_env, "");
  EXPECT_TRUE(config->keyless);
  apply_defaults(*config);
  EXPECT_EQ(config->api_key_env, "");
  // Left out, the provider's variable.
  auto keyed = support::read_json<ModelConfig>(parse(R"({"provider":"openai","model":"gpt-4.1"})"), "model");
  ASSERT_TRUE(keyed);
  EXPECT_EQ(keyed->api_key_env, "OPENAI_API_KEY");
  EXPECT_FALSE(keyed->keyless);
  ASSERT_EQ(config->extra_headers.size(), 1U);
  EXPECT_EQ(config->extra_headers[0], (net::HttpHeader{"x-team", "core"}));
}

TEST(ModelConfig, FromJsonErrorsNameTheField) {
  auto missing = support::read_json<ModelConfig>(parse(R"({"provider":"anthropic"})"), "model");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), "model.model: required field is missing");

  auto bad_provider = support::read_json<ModelConfig>(parse(R"({"provider":"gemini","model":"x"})"), "model");
  ASSERT_FALSE(bad_provider);
  EXPECT_NE(bad_provider.error().message().find("model.provider"), std::string::npos) << bad_provider.error().message();

  auto bad_window =
      support::read_json<ModelConfig>(parse(R"({"provider":"anthropic","model":"x","context_window":"big"})"), "model");
  ASSERT_FALSE(bad_window);
  EXPECT_NE(bad_window.error().message().find("model.context_window"), std::string::npos);

  auto bad_url =
      support::read_json<ModelConfig>(parse(R"({"provider":"anthropic","model":"x","base_url":"ftp://x"})"), "model");
  ASSERT_FALSE(bad_url);
  EXPECT_NE(bad_url.error().message().find("model.base_url"), std::string::npos);
}

TEST(ModelConfig, EnvOverridesBaseUrlOnlyWhenConfigKeptTheDefault) {
  auto anthropic = default_model_config(Provider::anthropic, "claude-sonnet-4-5");
  apply_env_overrides(anthropic,
                      fake_env({{"ANTHROPIC_BASE_URL", "http://127.0.0.1:4000"}, {"OPENAI_BASE_URL", "http://wrong"}}));
  EXPECT_EQ(anthropic.base_url, "http://127.0.0.1:4000");

  auto openai = default_model_config(Provider::openai, "gpt-4.1");
  apply_env_overrides(openai, fake_env({}));
  EXPECT_EQ(openai.base_url, "https://api.openai.com/v1");
  apply_env_overrides(openai, fake_env({{"OPENAI_BASE_URL", "http://127.0.0.1:5000/v1"}}));
  EXPECT_EQ(openai.base_url, "http://127.0.0.1:5000/v1");

  auto chosen = default_model_config(Provider::openai, "gpt-4.1");
  chosen.base_url = "http://proxy.internal/v1";
  apply_env_overrides(chosen, fake_env({{"OPENAI_BASE_URL", "http://127.0.0.1:5000/v1"}}));
  EXPECT_EQ(chosen.base_url, "http://proxy.internal/v1");
}

}  // namespace
}  // namespace agentd::core::model
