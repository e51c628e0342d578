// API keys through ACP authenticate/logout: a handed key wins over the environment and reaches the
// provider's header, logout stops both, and a malformed key (one that could smuggle a header line) is
// refused without being repeated.
#include "core/model/credentials.h"

#include <map>
#include <string>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "core/model/model_client.h"
#include "core/net/http_client.h"

namespace agentd::core::model {
namespace {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  EnvLookup lookup() {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

ModelConfig anthropic_config() { return default_model_config(Provider::anthropic, "claude-sonnet-4-5"); }

TEST(Credentials, TheEnvironmentIsReadThroughAndOtherNamesPassUntouched) {
  FakeEnv env;
  env.vars = {{"ANTHROPIC_API_KEY", "sk-env"}, {"HOME", "/home/u"}};
  auto credentials = Credentials::create({"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_API_KEY", ""}, env.lookup());
  EXPECT_EQ(credentials->key_vars(), (std::vector<std::string>{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}));
  auto lookup = credentials->lookup();
  EXPECT_STREQ(lookup("ANTHROPIC_API_KEY"), "sk-env");
  EXPECT_STREQ(lookup("HOME"), "/home/u");
  EXPECT_EQ(lookup("OPENAI_API_KEY"), nullptr);
  EXPECT_TRUE(credentials->usable(anthropic_config()));
  EXPECT_FALSE(credentials->usable(default_model_config(Provider::openai, "gpt-4.1")));
  ModelConfig local = default_model_config(Provider::openai, "llama");
  local.api_key_env.clear();  // a local server: no key
  EXPECT_TRUE(credentials->usable(local));
}

TEST(Credentials, AHandedKeyWinsAndReachesTheProvidersHeader) {
  FakeEnv env;
  env.vars = {{"ANTHROPIC_API_KEY", "sk-env"}};
  auto credentials = Credentials::create({"ANTHROPIC_API_KEY"}, env.lookup());
  ASSERT_TRUE(credentials->authenticate("ANTHROPIC_API_KEY", std::string("sk-given")));
  boost::asio::io_context io;
  auto http = net::HttpClient::create(io.get_executor(), net::HttpClientOptions{});
  ASSERT_TRUE(http);
  ModelClientOptions options;
  options.env = credentials->lookup();
  ModelClient client(anthropic_config(), **http, options);
  ModelRequest request;
  request.messages.push_back({Role::user, {TextBlock{"hi"}}});
  auto built = client.build_http_request(request);
  ASSERT_TRUE(built) << built.error().message();
  const std::string* key = net::find_header(built->headers, "x-api-key");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(*key, "sk-given");

  // Logout: neither the handed key nor the environment's is used until the next authenticate.
  credentials->logout();
  EXPECT_FALSE(credentials->usable(anthropic_config()));
  EXPECT_FALSE(client.build_http_request(request));
  auto missing = credentials->missing(anthropic_config(), "anthropic:claude-sonnet-4-5");
  EXPECT_EQ(missing.code(), support::Errc::auth_required);
  EXPECT_NE(missing.message().find("logged out"), std::string::npos) << missing.message();
  // Authenticating without a key goes back to the environment's.
  ASSERT_TRUE(credentials->authenticate("ANTHROPIC_API_KEY", std::nullopt));
  EXPECT_STREQ(credentials->get("ANTHROPIC_API_KEY"), "sk-env");
}

TEST(Credentials, WhatCannotBeUsedIsRefusedAndTheKeyIsNeverRepeated) {
  FakeEnv env;
  auto credentials = Credentials::create({"ANTHROPIC_API_KEY"}, env.lookup());
  // Nothing in the environment and no key given.
  auto none = credentials->authenticate("ANTHROPIC_API_KEY", std::nullopt);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), support::Errc::auth_required);
  EXPECT_NE(none.error().message().find("ANTHROPIC_API_KEY is not set"), std::string::npos);
  // A method that is not offered.
  auto unknown = credentials->authenticate("AWS_SECRET_ACCESS_KEY", std::string("x"));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), support::Errc::invalid_argument);
  EXPECT_NE(unknown.error().message().find("offers ANTHROPIC_API_KEY"), std::string::npos);
  EXPECT_EQ(credentials->get("AWS_SECRET_ACCESS_KEY"), nullptr);
  // Keys that would break (or inject into) the request's header.
  for (std::string bad : {std::string("sk-secret\r\nx-evil: 1"), std::string("sk secret"), std::string(),
                          std::string(5000, 'k'), std::string("sk-\xC3\xA9")}) {
    auto refused = credentials->authenticate("ANTHROPIC_API_KEY", bad);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), support::Errc::invalid_argument);
    EXPECT_EQ(refused.error().message().find("secret"), std::string::npos) << refused.error().message();
  }
  EXPECT_FALSE(credentials->usable(anthropic_config()));
}

}  // namespace
}  // namespace agentd::core::model
