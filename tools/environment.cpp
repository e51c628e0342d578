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

std::vector<std::string> scrub_environment(const std::vector<std::string>& entries,
                                           const std::vector<std::string>& allow) {
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (const auto& entry : entries) {
    const std::string_view name = name_of(entry);
    if (name.empty()) continue;
    const bool allowed =
        std::any_of(allow.begin(), allow.end(), [name](const std::string& a) { return iequals(a, name); });
    if (allowed || !is_secret_variable(name)) out.push_back(entry);
  }
  return out;
}

std::vector<std::string> scrubbed_environment(const std::vector<std::string>& allow) {
  std::vector<std::string> entries;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) entries.emplace_back(*e);
  return scrub_environment(entries, allow);
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
