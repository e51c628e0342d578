// --demo: starts agentd-mock-model with the bundled script (examples/demo/script.json) so a person can
// watch the whole loop (streaming, a tool call, its result, the answer) without an API key. The model
// is clearly a scripted one: its name is "scripted-demo" and agentd logs that it is not a real provider.
#pragma once

#include <string>

#include <sys/types.h>

#include "core/support/result.h"

namespace agentd::daemon {

class DemoModelServer {
 public:
  // Finds the executable ($AGENTD_MOCK_MODEL, else next to agentd in the build tree) and the script
  // ($AGENTD_DEMO_SCRIPT, else the source tree's examples/demo/script.json), starts it and waits for the
  // line with its URL.
  static support::Result<DemoModelServer> start(const std::string& agentd_path);

  DemoModelServer(DemoModelServer&& other) noexcept;
  DemoModelServer& operator=(DemoModelServer&&) = delete;
  DemoModelServer(const DemoModelServer&) = delete;
  DemoModelServer& operator=(const DemoModelServer&) = delete;
  ~DemoModelServer();  // SIGTERM, then reaps it

  const std::string& url() const noexcept { return url_; }

 private:
  DemoModelServer(pid_t pid, std::string url) : pid_(pid), url_(std::move(url)) {}
  pid_t pid_ = -1;
  std::string url_;
};

}  // namespace agentd::daemon
