// The environment a command runs with: agentd's own, minus secrets and the user's session. A model that
// runs `env` (or a script that logs its environment) would otherwise copy API keys into a transcript
// and a provider's logs, and a command could reach the user's SSH agent, D-Bus session or display from
// inside the sandbox; what a command legitimately needs (PATH, HOME, LANG, proxies) stays.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agentd::tools {

// True when a variable of this name is taken for a secret: ANTHROPIC_API_KEY, OPENAI_API_KEY,
// AWS_ACCESS_KEY_ID, or a name ending in _TOKEN, _KEY, _SECRET, _PASSWORD, _PASSWD or _CREDENTIALS, or
// one of those words alone. Case-insensitive: `github_token` is as secret as `GITHUB_TOKEN`, and a
// false positive costs a variable the user can allow back, while a miss leaks a key.
bool is_secret_variable(std::string_view name) noexcept;

// True for a variable that leads into the user's session rather than holding a secret itself: agent
// sockets (SSH_AUTH_SOCK, GPG_AGENT_INFO, GNUPGHOME), message buses (DBUS_SESSION_BUS_ADDRESS), the
// runtime dir that holds them (XDG_RUNTIME_DIR), the display (DISPLAY, WAYLAND_DISPLAY, XAUTHORITY), a
// Kerberos ticket cache, a Docker daemon, a terminal multiplexer, an editor's credential helper. The
// list and why each is on it: environment.cpp. Exact names, case-sensitive (SYSTEMD_PAGER stays).
bool is_session_variable(std::string_view name) noexcept;

// True when a value is shaped like a credential, whatever its variable is called: a URL with a
// password (`scheme://user:password@host`), a provider key or token (`sk-`, `ghp_`, `github_pat_`,
// `glpat-`, `xoxb-`, `AKIA`..., `AIza`...), a JWT, a PEM private key. The rule, kept narrow so that a
// path, a number or an ordinary word passes:
// - a token prefix counts at the start of the value or after a character other than a letter, a
//   digit, '_' or '-', and only when enough token characters follow (20 or more for most; exactly 16
//   upper-case letters and digits after AKIA/ASIA) that mix in a digit or an upper-case letter:
//   `sk-some-long-package-name` and `task-sk-...` pass, `Bearer sk-` and 20 random characters do not;
// - a URL counts when its authority has a non-empty password: `ssh://git@host` passes;
// - a JWT is two base64 JSON objects (`eyJ`) and a signature, joined by dots;
// - a PEM block counts when its BEGIN line says PRIVATE KEY: certificates pass.
bool is_secret_value(std::string_view value) noexcept;

// `entries` ("NAME=value") without the secret ones: a secret name, a name in `secret_names` (more
// names to drop, such as each model's api_key_env), a session variable, or a secret-shaped value.
// Names in `allow` are kept whatever they hold: the user's own word. Names compare case-insensitively,
// like the patterns. Order is kept; an entry without '=' is dropped.
std::vector<std::string> scrub_environment(const std::vector<std::string>& entries,
                                           const std::vector<std::string>& allow,
                                           const std::vector<std::string>& secret_names = {});

// This process's environment, scrubbed.
std::vector<std::string> scrubbed_environment(const std::vector<std::string>& allow,
                                              const std::vector<std::string>& secret_names = {});

// Sets NAME=value in `entries`, replacing any entry of that name.
void set_variable(std::vector<std::string>& entries, std::string_view name, std::string_view value);

// The value of NAME in `entries`, or empty.
std::string_view find_variable(const std::vector<std::string>& entries, std::string_view name) noexcept;

}  // namespace agentd::tools
