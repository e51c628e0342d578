// The hooks of one session (tools/hooks.h): which run at each point of a turn, with what input, and what
// their combined answer is. Each hook run is a span (`hook.<Event>`) under the step it belongs to; a hook
// that fails is said to the user (an agent message) and the session goes on. Owned by a Session; lives
// on its strand.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>

#include "core/engine/event_log.h"
#include "core/engine/project_settings.h"
#include "core/support/cancel.h"
#include "core/support/json.h"
#include "core/support/result.h"
#include "core/support/trace.h"
#include "tools/hooks.h"

namespace agentd::core {

struct HookServices {
  std::string session_id;
  std::string cwd;
  std::vector<std::string> additional_dirs;
  const ProjectSettings* settings = nullptr;  // hooks, the shell's sandbox and environment, deny-paths
  std::shared_ptr<EventLog> events;           // where failures are said
  std::function<std::string()> permission_mode;
};

class SessionHooks {
 public:
  SessionHooks(HookServices services, boost::asio::strand<boost::asio::any_io_executor> strand);

  // Whether any hook is configured for `event` (nothing is built or run otherwise).
  bool any(tools::HookEvent event) const;

  // Runs the hooks of `event` that match `subject` (a tool name, or SessionStart's source), one after
  // another in configuration order, each with `input` plus the common fields (session_id, cwd,
  // hook_event_name, permission_mode, transcript_path). The first that blocks ends the run. The
  // outcome combines them: blocked with the reasons, contexts joined, the strictest permission (deny,
  // ask, allow), stop when any asked to. Errc::cancelled when `cancel` fired.
  boost::asio::awaitable<support::Result<tools::HookOutcome>> run(tools::HookEvent event, std::string_view subject,
                                                                  support::Json input, support::CancelToken cancel,
                                                                  support::Span& span);

  // A `continue: false` answer of a hook, for the turn loop to end the turn on: taken once.
  std::optional<std::string> take_stop() { return std::exchange(stop_, std::nullopt); }

 private:
  HookServices s_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  std::optional<std::string> stop_;
};

}  // namespace agentd::core
