// ToolCallExecutor: runs a model's tool calls (the seed's executeToolCall). One call goes through named
// steps: look it up and check its input, resolve what will actually run, judge it (policy, then the
// person), audit the decision, run it, and turn the outcome into the result the model reads. A call
// never ends a turn: every failure is a result the model can recover from. Owned by a Session; lives on
// its strand.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>

#include "core/engine/checkpoints.h"
#include "core/engine/engine_store.h"
#include "core/engine/event_log.h"
#include "core/engine/permissions.h"
#include "core/engine/project_settings.h"
#include "core/engine/session_hooks.h"
#include "core/engine/verification.h"
#include "core/model/model_client.h"
#include "core/model/model_event.h"
#include "core/support/cancel.h"
#include "core/support/trace.h"
#include "tools/tool.h"

namespace agentd::tools {
class FileState;
}

namespace agentd::core {

// What executing a call uses; everything is owned by the Session and outlives the executor.
struct ToolCallServices {
  std::string session_id;
  std::string cwd;
  std::vector<std::string> additional_dirs;
  const ProjectSettings* settings = nullptr;
  const tools::ToolRegistry* tools = nullptr;
  PermissionPolicy* policy = nullptr;
  std::shared_ptr<EventLog> events;
  EngineStore* store = nullptr;
  tools::FileAccess* files = nullptr;
  tools::FileState* file_state = nullptr;
  Checkpoints* checkpoints = nullptr;
  // Persists an "always" answer for the project and adds it to the policy.
  std::function<void(PermissionRule)> remember_approval;
  SessionHooks* hooks = nullptr;  // PreToolUse and PostToolUse
};

class ToolCallExecutor {
 public:
  ToolCallExecutor(ToolCallServices services, boost::asio::strand<boost::asio::any_io_executor> strand);

  // Runs a response's calls and returns their results in the calls' order. Read-only calls next to each
  // other run in parallel; a mutating call runs alone, in order.
  boost::asio::awaitable<std::vector<model::ToolResultBlock>> run_all(const std::vector<model::ToolCallDone>& calls,
                                                                      support::CancelToken cancel, support::Span& span);
  // One call, start to end. `full`, when given, receives the whole ToolResult (metadata included) of a
  // call that ran.
  boost::asio::awaitable<model::ToolResultBlock> execute(const model::ToolCallDone& call, support::CancelToken cancel,
                                                         support::Span& span, tools::ToolResult* full = nullptr);

  // Whether calls since the last verification changed files (verify.auto at the turn's end).
  bool unverified_edits() const noexcept { return unverified_edits_; }
  void set_unverified_edits(bool value) noexcept { unverified_edits_ = value; }
  // The verifications run since the last take (the turn's, when taken at its start and its end).
  std::vector<VerificationRun> take_verification_runs() noexcept { return std::exchange(verification_runs_, {}); }

 private:
  struct Decision;
  struct CallRun;

  bool is_mutating(const model::ToolCallDone& call) const;
  // The call's failure before anything ran: an unknown tool, arguments that are not JSON, or input
  // that breaks the tool's schema.
  std::optional<tools::ToolResult> check_input(const model::ToolCallDone& call, const tools::Tool* tool) const;
  tools::ToolContext make_context(const model::ToolCallDone& call, const tools::Tool& tool,
                                  support::CancelToken cancel) const;
  // The title, input and locations the client shows, once the input is final.
  void announce(const model::ToolCallDone& call, const tools::Tool& tool, const support::Json& input,
                const tools::ToolContext& context);
  // The policy's verdict, and the person's answer when it asks and someone can answer.
  boost::asio::awaitable<Decision> decide(const model::ToolCallDone& call, const tools::Tool& tool,
                                          const support::Json& input, const tools::ToolContext& context,
                                          const tools::RiskAssessment& risk, std::string_view hook_permission,
                                          support::CancelToken cancel, support::Span& span);
  // PostToolUse: what the hooks say about a finished call is added to its result for the model.
  boost::asio::awaitable<void> after_call(const model::ToolCallDone& call, const support::Json& input,
                                          tools::ToolResult& result, support::CancelToken cancel, support::Span& span);
  // The audit trail: every decision, whoever made it, about exactly this input.
  void audit(const model::ToolCallDone& call, const Decision& decision, const tools::RiskAssessment& risk);
  // Says the call is in progress, and runs it; an exception is an internal error.
  boost::asio::awaitable<support::Result<tools::ToolResult>> run(const model::ToolCallDone& call, tools::Tool& tool,
                                                                 const support::Json& input,
                                                                 tools::ToolContext& context);
  // Tells the client how the call ended, closes its span, and returns what the model reads.
  model::ToolResultBlock finish(CallRun& run, const tools::ToolResult& result, bool cancelled = false);

  ToolCallServices s_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  bool unverified_edits_ = false;
  std::vector<VerificationRun> verification_runs_;
};

}  // namespace agentd::core
