// API keys, named by the environment variable a model's config reads (`api_key_env`): the process
// environment's, or one a client handed agentd through ACP `authenticate` (held in this process's memory
// only: never stored, logged, or passed to tools and their environment). logout() forgets the handed
// keys and stops using the environment's until the next authenticate, so an editor's "log out" really
// stops agentd from spending. Model clients and config loading read keys through lookup(). Used on the
// event loop's thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model_config.h"
#include "core/support/result.h"

namespace agentd::core::model {

class Credentials : public std::enable_shared_from_this<Credentials> {
 public:
  // `key_vars`: the variables agentd offers authentication for (the built-in providers' and the user's
  // config's); `base`: the environment (null: the process's).
  static std::shared_ptr<Credentials> create(std::vector<std::string> key_vars, EnvLookup base = {});

  const std::vector<std::string>& key_vars() const noexcept { return vars_; }

  // Reads through this object: a handed key, else (unless logged out) the environment. Names that are
  // not key variables go straight to the environment. The returned function keeps this object alive.
  EnvLookup lookup();
  const char* get(const char* name) const;

  // `authenticate` with the method of `var`: with `key`, that key from now on (checked: 1 to 4096
  // printable ASCII characters, so it cannot smuggle a header line); without, the environment's, which
  // must be set. Errc::invalid_argument for a variable not offered or a malformed key,
  // Errc::auth_required when there is no key to use.
  support::Result<void> authenticate(std::string_view var, std::optional<std::string> key);
  void logout();

  // Whether a model with `config` can be called now: it needs no key, or its key can be read.
  bool usable(const ModelConfig& config) const;
  // The auth_required error for `config` (spec: how the user named the model).
  support::Error missing(const ModelConfig& config, std::string_view spec) const;

 private:
  Credentials(std::vector<std::string> key_vars, EnvLookup base);
  bool is_key_var(std::string_view name) const;

  std::vector<std::string> vars_;
  EnvLookup base_;
  std::map<std::string, std::string, std::less<>> given_;
  bool logged_out_ = false;
};

// The name a client shows for the method of `var` ("Anthropic API key").
std::string key_var_label(std::string_view var);

}  // namespace agentd::core::model
