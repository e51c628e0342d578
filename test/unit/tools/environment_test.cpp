#include "tools/environment.h"

#include <stdlib.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace agentd::tools {
namespace {

TEST(Environment, SecretNames) {
  for (const char* name : {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                           "GITHUB_TOKEN", "github_token", "Npm_Token", "DB_PASSWORD", "SMTP_PASSWD", "MY_SECRET",
                           "GOOGLE_APPLICATION_CREDENTIALS", "TOKEN", "secret", "SSH_PRIVATE_KEY"}) {
    EXPECT_TRUE(is_secret_variable(name)) << name;
  }
  for (const char* name : {"PATH", "HOME", "LANG", "HTTPS_PROXY", "KEYBOARD", "MONKEY", "TOKENIZERS_PARALLELISM",
                           "SSH_AUTH_SOCK", "_KEY", "TERM", "XDG_RUNTIME_DIR", "EDITOR"}) {
    EXPECT_FALSE(is_secret_variable(name)) << name;
  }
}

TEST(Environment, ScrubKeepsOrderAndHonoursTheAllowList) {
  const std::vector<std::string> entries = {"PATH=/usr/bin", "OPENAI_API_KEY=sk-1", "HOME=/home/u", "GH_TOKEN=ghp_2",
                                            "NOEQUALS",      "NPM_TOKEN=npm_3",     "EMPTY=",       "A=b=c"};
  EXPECT_EQ(scrub_environment(entries, {}),
            (std::vector<std::string>{"PATH=/usr/bin", "HOME=/home/u", "EMPTY=", "A=b=c"}));
  EXPECT_EQ(scrub_environment(entries, {"npm_token"}),
            (std::vector<std::string>{"PATH=/usr/bin", "HOME=/home/u", "NPM_TOKEN=npm_3", "EMPTY=", "A=b=c"}));
}

TEST(Environment, ScrubbedProcessEnvironment) {
  ::setenv("AGENTD_ENV_TEST_TOKEN", "t0ps3cret", 1);
  ::setenv("AGENTD_ENV_TEST_PLAIN", "visible", 1);
  const auto env = scrubbed_environment({});
  EXPECT_EQ(find_variable(env, "AGENTD_ENV_TEST_TOKEN"), "");
  EXPECT_EQ(find_variable(env, "AGENTD_ENV_TEST_PLAIN"), "visible");
  const auto allowed = scrubbed_environment({"AGENTD_ENV_TEST_TOKEN"});
  EXPECT_EQ(find_variable(allowed, "AGENTD_ENV_TEST_TOKEN"), "t0ps3cret");
  ::unsetenv("AGENTD_ENV_TEST_TOKEN");
  ::unsetenv("AGENTD_ENV_TEST_PLAIN");
}

TEST(Environment, SetVariableReplacesOrAppends) {
  std::vector<std::string> env = {"TMPDIR=/tmp", "TMPDIRX=1"};
  set_variable(env, "TMPDIR", "/tmp/private");
  set_variable(env, "NEW", "v");
  EXPECT_EQ(env, (std::vector<std::string>{"TMPDIR=/tmp/private", "TMPDIRX=1", "NEW=v"}));
  EXPECT_EQ(find_variable(env, "TMPDIRX"), "1");
  EXPECT_EQ(find_variable(env, "MISSING"), "");
}

}  // namespace
}  // namespace agentd::tools
