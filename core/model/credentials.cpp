#include "core/model/credentials.h"

#include <algorithm>

#include <fmt/format.h>

namespace agentd::core::model {

using support::Errc;
using support::Error;

constexpr std::size_t kMaxKeyBytes = 4096;

std::shared_ptr<Credentials> Credentials::create(std::vector<std::string> key_vars, EnvLookup base) {
  return std::shared_ptr<Credentials>(new Credentials(std::move(key_vars), std::move(base)));
}

Credentials::Credentials(std::vector<std::string> key_vars, EnvLookup base)
    : vars_(std::move(key_vars)), base_(base ? std::move(base) : process_env()) {
  std::sort(vars_.begin(), vars_.end());
  vars_.erase(std::unique(vars_.begin(), vars_.end()), vars_.end());
  std::erase(vars_, std::string());
}

bool Credentials::is_key_var(std::string_view name) const {
  return std::binary_search(vars_.begin(), vars_.end(), name, std::less<>());
}

EnvLookup Credentials::lookup() {
  return [self = shared_from_this()](const char* name) { return self->get(name); };
}

const char* Credentials::get(const char* name) const {
  if (name == nullptr) return nullptr;
  if (auto it = given_.find(std::string_view(name)); it != given_.end()) return it->second.c_str();
  if (logged_out_ && is_key_var(name)) return nullptr;
  return base_(name);
}

support::Result<void> Credentials::authenticate(std::string_view var, std::optional<std::string> key) {
  if (!is_key_var(var)) {
    std::string offered;
    for (const auto& v : vars_) offered += (offered.empty() ? "" : ", ") + v;
    return Error(Errc::invalid_argument,
                 fmt::format("no authentication method \"{}\"; initialize's authMethods offers {}", var,
                             offered.empty() ? "none" : offered));
  }
  if (key) {
    const bool printable = std::all_of(key->begin(), key->end(), [](char c) { return c > ' ' && c < 0x7F; });
    if (key->empty() || key->size() > kMaxKeyBytes || !printable) {
      // The key is never repeated in a message.
      return Error(
          Errc::invalid_argument,
          fmt::format("the key for {} must be 1 to {} printable ASCII characters without spaces", var, kMaxKeyBytes));
    }
    given_[std::string(var)] = std::move(*key);
    logged_out_ = false;
    return support::ok();
  }
  const char* from_env = base_(std::string(var).c_str());
  if (given_.find(var) == given_.end() && (from_env == nullptr || *from_env == '\0')) {
    return Error(Errc::auth_required,
                 fmt::format("Authentication required: {} is not set in agentd's environment; set it, or pass the "
                             "key as _meta.agentd.apiKey of authenticate (kept in memory for this process only)",
                             var));
  }
  logged_out_ = false;
  return support::ok();
}

void Credentials::logout() {
  given_.clear();
  logged_out_ = true;
}

bool Credentials::usable(const ModelConfig& config) const {
  if (config.api_key_env.empty()) return true;
  const char* key = get(config.api_key_env.c_str());
  return key != nullptr && *key != '\0';
}

support::Error Credentials::missing(const ModelConfig& config, std::string_view spec) const {
  const std::string_view var = config.api_key_env;
  if (logged_out_) {
    return Error(Errc::auth_required,
                 fmt::format("Authentication required: {} needs an API key and the client logged out; call "
                             "authenticate with method {} (and the key as _meta.agentd.apiKey, or none to use {} "
                             "from agentd's environment)",
                             spec, var, var));
  }
  return Error(Errc::auth_required,
               fmt::format("Authentication required: {} needs an API key: set {} in agentd's environment, or call "
                           "authenticate with method {} and the key as _meta.agentd.apiKey",
                           spec, var, var));
}

std::string key_var_label(std::string_view var) {
  if (var == "ANTHROPIC_API_KEY") return "Anthropic API key";
  if (var == "OPENAI_API_KEY") return "OpenAI API key";
  return fmt::format("API key from {}", var);
}

}  // namespace agentd::core::model
