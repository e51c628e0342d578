// libFuzzer target: a config file's text -> apply_config_text, over defaults and over a first layer (as
// the project's file goes over the user's). Checks that nothing crashes or hangs and that a refusal
// says why: a config file is a stranger's text when it comes with a cloned repository.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "daemon/config.h"
#include "test/fuzz/fuzz_support.h"

namespace {

using agentd::fuzz::check;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  agentd::daemon::Config config;
  auto applied = agentd::daemon::apply_config_text(config, text, "fuzz.json");
  if (!applied) {
    check(!applied.error().message().empty());
    return 0;
  }
  // The same text again, as a second layer over the first.
  auto layered = agentd::daemon::apply_config_text(config, text, "fuzz.json");
  if (!layered) check(!layered.error().message().empty());
  return 0;
}
