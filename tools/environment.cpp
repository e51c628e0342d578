#include "tools/environment.h"

#include <algorithm>
#include <array>
#include <cctype>

extern char** environ;  // NOLINT: POSIX declares it nowhere in C++ headers

namespace agentd::tools {
namespace {

// The keys agentd itself is configured with, and AWS's key id (half a credential, and no suffix says so).
constexpr std::array<std::string_view, 3> kSecretNames = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AWS_ACCESS_KEY_ID"};
// `_KEY` covers *_API_KEY, *_ACCESS_KEY, *_PRIVATE_KEY.
constexpr std::array<std::string_view, 6> kSecretWords = {"TOKEN",    "KEY",    "SECRET",
                                                          "PASSWORD", "PASSWD", "CREDENTIALS"};

bool iequals(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
         });
}

std::string_view name_of(std::string_view entry) noexcept {
  const std::size_t eq = entry.find('=');
  return eq == std::string_view::npos ? std::string_view() : entry.substr(0, eq);
}

// Variables that lead into the user's session, and why each goes. Dropping a name does not close the
// socket it names (a command that searches may still find one at its default path, and Landlock does
// not mediate connecting to a named socket); it keeps ordinary tools from using it without trying.
constexpr std::array<std::string_view, 21> kSessionVariables = {
    "SSH_AUTH_SOCK",             // the SSH agent: signs as the user, for any host
    "SSH_AGENT_PID",             // its pid, dropped with it
    "GPG_AGENT_INFO",            // the GnuPG agent (gpg 1 and 2.0): signs and decrypts as the user
    "GNUPGHOME",                 // the keyring and, in it, the agent's socket (allow it back to verify signatures)
    "DBUS_SESSION_BUS_ADDRESS",  // the session bus: the keyring (Secret Service), `systemd-run --user`
                                 // (a process outside the sandbox), the desktop's portals
    "DBUS_SYSTEM_BUS_ADDRESS",   // the system bus: polkit, logind, NetworkManager
    "XDG_RUNTIME_DIR",           // the directory of the session's sockets: bus, agents, Wayland,
                                 // PipeWire, rootless Podman and Docker
    "DISPLAY",                   // X11: read the screen, type into the user's terminal
    "WAYLAND_DISPLAY",           // the same under Wayland
    "XAUTHORITY",                // the X11 cookie that opens the display
    "KRB5CCNAME",                // a Kerberos ticket cache: network services as the user
    "DOCKER_HOST",               // a Docker daemon: root on its host
    "NOTIFY_SOCKET",             // systemd's socket for agentd's own service: "ready", "stopping", MAINPID=
    "TMUX",                      // the tmux server: send keys to the user's other shells
    "STY",                       // the same for screen
    "GIT_ASKPASS",               // credential prompts; an editor's answers with its stored tokens
    "SSH_ASKPASS",               //
    "VSCODE_GIT_IPC_HANDLE",     // VS Code's socket behind its GIT_ASKPASS
    "VSCODE_IPC_HOOK_CLI",       // VS Code's socket for its CLI: opens windows and files
    "GNOME_KEYRING_CONTROL",     // the GNOME keyring's socket dir
    "GNOME_KEYRING_PID",         //
};
// Kept on purpose: SYSTEMD_* (SYSTEMD_PAGER, SYSTEMD_COLORS, SYSTEMD_LOG_LEVEL: preferences for
// systemctl's output; the bus it needs is what is dropped), SSH_CONNECTION and SSH_TTY (where the user
// logged in from, no way in), TERM and COLORTERM, proxies (the user's network path, not a credential;
// one with a password in its URL goes by value).

bool is_alnum(char c) noexcept { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_upper_or_digit(char c) noexcept { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool is_token_char(char c) noexcept { return is_alnum(c) || c == '_' || c == '-'; }

// A key's or token's prefix, and how much must follow it to count.
struct TokenShape {
  std::string_view prefix;
  std::size_t min_body;  // token characters after the prefix
  bool aws = false;      // AKIA/ASIA: exactly 16 upper-case letters and digits, then no letter or digit
};

constexpr std::array<TokenShape, 15> kTokenShapes = {{
    {"sk-", 20},          // OpenAI (sk-, sk-proj-) and Anthropic (sk-ant-api03-)
    {"ghp_", 30},         // GitHub: personal, OAuth, user-to-server, server-to-server, refresh
    {"gho_", 30},         //
    {"ghu_", 30},         //
    {"ghs_", 30},         //
    {"ghr_", 30},         //
    {"github_pat_", 40},  // GitHub fine-grained personal tokens
    {"glpat-", 20},       // GitLab personal tokens
    {"xoxb-", 10},        // Slack: bot, user, app, session
    {"xoxp-", 10},        //
    {"xoxa-", 10},        //
    {"xoxs-", 10},        //
    {"AKIA", 16, true},   // AWS access key ids: long-term
    {"ASIA", 16, true},   // and temporary
    {"AIza", 30},         // Google API keys
}};

// Whether `at` starts a token: the value's start, or after a character that cannot be part of one
// (`desk-top` and `task-sk-...` hold "sk-" but not at a boundary; `Bearer sk-...` and `=sk-...` do).
bool at_boundary(std::string_view text, std::size_t at) noexcept { return at == 0 || !is_token_char(text[at - 1]); }

bool token_at(std::string_view text, std::size_t at, const TokenShape& shape) noexcept {
  std::size_t end = at + shape.prefix.size();
  if (shape.aws) {
    std::size_t n = 0;
    while (end + n < text.size() && is_upper_or_digit(text[end + n])) ++n;
    return n == shape.min_body && (end + n == text.size() || !is_alnum(text[end + n]));
  }
  bool mixed = false;  // a digit or an upper-case letter: random, not a hyphenated word
  std::size_t n = 0;
  for (; end + n < text.size() && is_token_char(text[end + n]); ++n) {
    const char c = text[end + n];
    mixed = mixed || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
  }
  return n >= shape.min_body && mixed;
}

bool has_token(std::string_view value) noexcept {
  for (const TokenShape& shape : kTokenShapes) {
    for (std::size_t at = value.find(shape.prefix); at != std::string_view::npos;
         at = value.find(shape.prefix, at + 1)) {
      if (at_boundary(value, at) && token_at(value, at, shape)) return true;
    }
  }
  return false;
}

// base64url characters from `at`, and how many.
std::size_t base64url_run(std::string_view text, std::size_t at) noexcept {
  std::size_t n = 0;
  while (at + n < text.size() && is_token_char(text[at + n])) ++n;
  return n;
}

// header.payload.signature, both JSON objects ("eyJ" is base64 for `{"`); the signature may be empty
// (alg none).
bool has_jwt(std::string_view value) noexcept {
  for (std::size_t at = value.find("eyJ"); at != std::string_view::npos; at = value.find("eyJ", at + 1)) {
    if (!at_boundary(value, at)) continue;
    const std::size_t header = base64url_run(value, at);
    const std::size_t dot = at + header;
    if (header < 10 || dot >= value.size() || value[dot] != '.') continue;
    if (value.substr(dot + 1, 3) != "eyJ") continue;
    const std::size_t payload = base64url_run(value, dot + 1);
    const std::size_t second = dot + 1 + payload;
    if (payload >= 10 && second < value.size() && value[second] == '.') return true;
  }
  return false;
}

// "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----", "-----BEGIN PGP PRIVATE
// KEY BLOCK-----"... (certificates and public keys are not secret).
bool has_private_key(std::string_view value) noexcept {
  for (std::size_t at = value.find("-----BEGIN "); at != std::string_view::npos;
       at = value.find("-----BEGIN ", at + 1)) {
    const std::size_t end = value.find("-----", at + 11);
    if (end != std::string_view::npos && value.substr(at, end - at).find("PRIVATE KEY") != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

// scheme://user:password@host anywhere in the value (it may be a list of URLs); a user name alone
// (`ssh://git@host`) or an empty password is no secret.
bool has_url_password(std::string_view value) noexcept {
  for (std::size_t sep = value.find("://"); sep != std::string_view::npos; sep = value.find("://", sep + 1)) {
    std::size_t scheme = sep;
    while (scheme > 0 && (is_alnum(value[scheme - 1]) || value[scheme - 1] == '+' || value[scheme - 1] == '-' ||
                          value[scheme - 1] == '.')) {
      --scheme;
    }
    if (scheme == sep || !std::isalpha(static_cast<unsigned char>(value[scheme]))) continue;
    const std::size_t start = sep + 3;
    const std::size_t end = value.find_first_of("/?#\"' \t\r\n", start);
    const std::string_view authority =
        value.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    const std::size_t at = authority.rfind('@');
    if (at == std::string_view::npos) continue;
    const std::string_view userinfo = authority.substr(0, at);
    const std::size_t colon = userinfo.find(':');
    if (colon != std::string_view::npos && colon + 1 < userinfo.size()) return true;
  }
  return false;
}

}  // namespace

bool is_secret_variable(std::string_view name) noexcept {
  for (std::string_view secret : kSecretNames) {
    if (iequals(name, secret)) return true;
  }
  for (std::string_view word : kSecretWords) {
    if (iequals(name, word)) return true;
    if (name.size() > word.size() + 1 && name[name.size() - word.size() - 1] == '_' &&
        iequals(name.substr(name.size() - word.size()), word)) {
      return true;
    }
  }
  return false;
}

bool is_session_variable(std::string_view name) noexcept {
  return std::find(kSessionVariables.begin(), kSessionVariables.end(), name) != kSessionVariables.end();
}

bool is_secret_value(std::string_view value) noexcept {
  return has_url_password(value) || has_token(value) || has_jwt(value) || has_private_key(value);
}

std::vector<std::string> scrub_environment(const std::vector<std::string>& entries,
                                           const std::vector<std::string>& allow,
                                           const std::vector<std::string>& secret_names) {
  const auto listed = [](const std::vector<std::string>& names, std::string_view name) {
    return std::any_of(names.begin(), names.end(), [name](const std::string& n) { return iequals(n, name); });
  };
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (const auto& entry : entries) {
    const std::string_view name = name_of(entry);
    if (name.empty()) continue;
    if (!listed(allow, name)) {
      if (is_secret_variable(name) || listed(secret_names, name) || is_session_variable(name)) continue;
      if (is_secret_value(std::string_view(entry).substr(name.size() + 1))) continue;
    }
    out.push_back(entry);
  }
  return out;
}

std::vector<std::string> scrubbed_environment(const std::vector<std::string>& allow,
                                              const std::vector<std::string>& secret_names) {
  std::vector<std::string> entries;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) entries.emplace_back(*e);
  return scrub_environment(entries, allow, secret_names);
}

void set_variable(std::vector<std::string>& entries, std::string_view name, std::string_view value) {
  std::string entry = std::string(name) + "=" + std::string(value);
  for (auto& existing : entries) {
    if (name_of(existing) == name) {
      existing = std::move(entry);
      return;
    }
  }
  entries.push_back(std::move(entry));
}

std::string_view find_variable(const std::vector<std::string>& entries, std::string_view name) noexcept {
  for (const auto& entry : entries) {
    if (name_of(entry) == name) return std::string_view(entry).substr(name.size() + 1);
  }
  return {};
}

}  // namespace agentd::tools
