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

// Values shaped like credentials, under names that say nothing.
const std::vector<std::string>& secret_values() {
  static const std::vector<std::string> kValues = {
      "https://deploy:hunter2pass@registry.example.com/simple",
      "redis://:s3cret@cache.internal:6379/0",
      "https://mirror.example.org/a https://ci:Tok3n@pypi.example.com/simple",  // a list of URLs
      "git+ssh://user:pw@host/repo",
      "sk-AbCdEf0123456789GhIjKlMnOpQrStUv",
      "sk-proj-AbCdEf0123456789GhIjKlMnOp_qr-st",
      "sk-ant-api03-AbCdEf0123456789GhIjKlMnOpQrStUvWx",
      "Bearer sk-ant-api03-AbCdEf0123456789GhIjKlMnOp",
      "ghp_AbCdEf0123456789GhIjKlMnOpQrStUvWxYz",
      "gho_AbCdEf0123456789GhIjKlMnOpQrStUvWxYz",
      "ghu_AbCdEf0123456789GhIjKlMnOpQrStUvWxYz",
      "ghs_AbCdEf0123456789GhIjKlMnOpQrStUvWxYz",
      "ghr_AbCdEf0123456789GhIjKlMnOpQrStUvWxYz",
      "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP",
      "https://x-access-token@github.com/ghp_AbCdEf0123456789GhIjKlMnOpQrStUvWxYz",
      "glpat-AbCdEf0123456789GhIj",
      "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
      "xoxp-123456789012-1234567890123-1234567890123-abcdef0123456789",
      "xoxa-2-123456789012-abcdef",
      "xoxs-123456789012-abcdefghij",
      "AKIAIOSFODNN7EXAMPLE",
      "id=ASIAY34FZKBOKMUTVV7A;",
      "AIzaSyA-1234567890abcdefghijklmnopqrstu",
      "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
      "token=eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.",  // alg none: no signature
      "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n",
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
      "-----BEGIN PRIVATE KEY-----",
      "-----BEGIN PGP PRIVATE KEY BLOCK-----",
  };
  return kValues;
}

TEST(Environment, SecretValues) {
  for (const auto& value : secret_values()) EXPECT_TRUE(is_secret_value(value)) << value;
}

TEST(Environment, OrdinaryValuesPass) {
  for (const char* value : {"",
                            "/usr/local/bin:/usr/bin:/bin",
                            "/home/u/.cargo/bin",
                            "en_US.UTF-8",
                            "C",
                            "12345",
                            "-1",
                            "xterm-256color",
                            "https://example.com",
                            "https://example.com/path?q=1#frag",
                            "https://example.com/@scope/package",
                            "http://proxy.internal:3128",
                            "http://user@proxy.internal:3128",  // a user name alone
                            "ssh://git@github.com/org/repo.git",
                            "https://user:@host/",  // an empty password
                            "http://[::1]:8080/",
                            "postgres://localhost:5432/app",
                            "file:///tmp/x",
                            "localhost,127.0.0.1,.internal",
                            "user:password",  // no scheme: not a URL
                            "desk-top",
                            "sk-learn",
                            "sk-some-long-hyphenated-package-name",  // no digit, no capital
                            "task-sk-AbCdEf0123456789GhIjKlMnOp",    // no boundary before sk-
                            "ghp_short",
                            "glpat-",
                            "xoxb-",
                            "AKIA",
                            "AKIAIOSFODNN7EXAMPLEX",  // 17, not 16
                            "AKIAiosfodnn7example",
                            "AIza",
                            "eyJhbGciOiJIUzI1NiJ9",  // a header alone
                            "eyJhbGciOiJIUzI1NiJ9.notjson.sig",
                            "-----BEGIN CERTIFICATE-----",
                            "-----BEGIN PUBLIC KEY-----",
                            "/run/user/1000/bus",
                            "0123456789abcdef0123456789abcdef01234567"}) {
    EXPECT_FALSE(is_secret_value(value)) << value;
  }
}

TEST(Environment, SessionVariables) {
  for (const char* name :
       {"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "GNUPGHOME", "DBUS_SESSION_BUS_ADDRESS",
        "DBUS_SYSTEM_BUS_ADDRESS", "XDG_RUNTIME_DIR", "KRB5CCNAME", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY",
        "DOCKER_HOST", "NOTIFY_SOCKET", "TMUX", "STY", "GIT_ASKPASS", "SSH_ASKPASS", "VSCODE_GIT_IPC_HANDLE"}) {
    EXPECT_TRUE(is_session_variable(name)) << name;
  }
  for (const char* name : {"PATH", "HOME", "TERM", "LANG", "SYSTEMD_PAGER", "SYSTEMD_COLORS", "SSH_CONNECTION",
                           "HTTPS_PROXY", "XDG_CONFIG_HOME", "ssh_auth_sock"}) {
    EXPECT_FALSE(is_session_variable(name)) << name;
  }
}

TEST(Environment, ScrubDropsByValueSessionAndExtraNames) {
  std::vector<std::string> entries = {"PATH=/usr/bin",
                                      "LANG=C.UTF-8",
                                      "SHLVL=1",
                                      "HOMEPAGE=https://example.com",
                                      "PIP_INDEX_URL=https://u:p4ss@pypi.example.com/simple",
                                      "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1",
                                      "DISPLAY=:0",
                                      "MODEL_AUTH=plain-looking",
                                      "SYSTEMD_PAGER=cat"};
  for (std::size_t i = 0; i < secret_values().size(); ++i) {
    entries.push_back("PLANTED_" + std::to_string(i) + "=" + secret_values()[i]);
  }
  const std::vector<std::string> kept = {"PATH=/usr/bin", "LANG=C.UTF-8", "SHLVL=1", "HOMEPAGE=https://example.com",
                                         "SYSTEMD_PAGER=cat"};
  EXPECT_EQ(scrub_environment(entries, {}, {"model_auth"}), kept);
  // Without the extra name the plain-looking value stays; the allow list brings back anything by name.
  auto without = kept;
  without.insert(without.end() - 1, "MODEL_AUTH=plain-looking");
  EXPECT_EQ(scrub_environment(entries, {}, {}), without);
  EXPECT_EQ(scrub_environment(entries, {"pip_index_url", "SSH_AUTH_SOCK", "MODEL_AUTH", "PLANTED_0"}, {"MODEL_AUTH"}),
            (std::vector<std::string>{"PATH=/usr/bin", "LANG=C.UTF-8", "SHLVL=1", "HOMEPAGE=https://example.com",
                                      "PIP_INDEX_URL=https://u:p4ss@pypi.example.com/simple",
                                      "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "MODEL_AUTH=plain-looking",
                                      "SYSTEMD_PAGER=cat", "PLANTED_0=" + secret_values()[0]}));
}

TEST(Environment, ScrubbedProcessEnvironmentTakesExtraNames) {
  ::setenv("AGENTD_ENV_TEST_MODEL", "looks-plain", 1);
  ::setenv("AGENTD_ENV_TEST_URL", "https://me:pa55word@example.com", 1);
  EXPECT_EQ(find_variable(scrubbed_environment({}), "AGENTD_ENV_TEST_MODEL"), "looks-plain");
  EXPECT_EQ(find_variable(scrubbed_environment({}, {"AGENTD_ENV_TEST_MODEL"}), "AGENTD_ENV_TEST_MODEL"), "");
  EXPECT_EQ(find_variable(scrubbed_environment({}), "AGENTD_ENV_TEST_URL"), "");
  ::unsetenv("AGENTD_ENV_TEST_MODEL");
  ::unsetenv("AGENTD_ENV_TEST_URL");
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
