// The environment a command runs with: agentd's own, minus secrets. A model that runs `env` (or a
// script that logs its environment) would otherwise copy API keys into a transcript and a provider's
// logs; what a command legitimately needs (PATH, HOME, LANG, proxies) stays.
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

// `entries` ("NAME=value") without the secret ones, except names in `allow` (compared
// case-insensitively, like the patterns). Order is kept; an entry without '=' is dropped.
std::vector<std::string> scrub_environment(const std::vector<std::string>& entries,
                                           const std::vector<std::string>& allow);

// This process's environment, scrubbed.
std::vector<std::string> scrubbed_environment(const std::vector<std::string>& allow);

// Sets NAME=value in `entries`, replacing any entry of that name.
void set_variable(std::vector<std::string>& entries, std::string_view name, std::string_view value);

// The value of NAME in `entries`, or empty.
std::string_view find_variable(const std::vector<std::string>& entries, std::string_view name) noexcept;

}  // namespace agentd::tools
