// Session: one conversation in one workspace, and the agent loop that runs its turns (DESIGN.md section
// 3). A session lives on its own strand and runs one turn at a time; a second prompt while a turn runs
// is refused with a clear error (README says so). Everything it does is logged in SQLite before the
// frontend sees it, so a session survives a crash and can be loaded again with the same id.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>

#include "core/engine/checkpoints.h"
#include "core/engine/engine_store.h"
#include "core/engine/event_log.h"
#include "core/engine/events.h"
#include "core/engine/frontend.h"
#include "core/engine/history.h"
#include "core/engine/mcp_service.h"
#include "core/engine/permissions.h"
#include "core/engine/project_memory.h"
#include "core/engine/project_settings.h"
#include "core/engine/prompt_images.h"
#include "core/engine/session_hooks.h"
#include "core/engine/slash_commands.h"
#include "core/engine/tool_executor.h"
#include "core/engine/turn_context.h"
#include "core/model/credentials.h"
#include "core/model/model_client.h"
#include "core/model/model_config.h"
#include "core/net/http_client.h"
#include "core/support/cancel.h"
#include "core/support/enum_names.h"
#include "core/support/result.h"
#include "core/support/task_group.h"
#include "core/support/trace.h"
#include "core/telemetry/trace_context.h"
#include "tools/mcp/mcp_manager.h"
#include "tools/tool.h"

namespace agentd::tools {
class FileState;
}

namespace agentd::core::telemetry {
class OtlpExporter;
}

namespace agentd::core {

// Why a turn ended (ACP's stop reasons, which are the right vocabulary).
enum class StopReason { end_turn, max_tokens, max_turn_requests, refusal, cancelled };
std::string_view stop_reason_id(StopReason reason) noexcept;
std::span<const support::EnumName<StopReason>> enum_names(StopReason) noexcept;

// Fills a session's tool registry from its project's settings (the shell configuration differs per
// project). The daemon decides which tools exist; the engine only asks.
using ToolInstaller = std::function<support::Result<void>(tools::ToolRegistry&, const ProjectSettings&)>;

// What every session shares: the executor, storage, the HTTP client, how tools are installed, and where
// each session's project settings come from.
struct EngineContext {
  boost::asio::any_io_executor executor;
  EngineStore* store = nullptr;
  net::HttpClient* http = nullptr;
  ToolInstaller install_tools;
  model::ModelClientOptions model_options;
  // The API keys sessions may use (ACP authenticate/logout); null: the environment's, no gating.
  std::shared_ptr<model::Credentials> credentials;
  std::string system_rules;  // the built-in rules text (core/engine/system_rules.md)
  ProjectSettingsLoader project_settings;
  // The warm file index every session's context retrieval shares (keyed by root inside, thread-safe).
  // Shared, because a retrieval thread may still hold it while the daemon shuts down.
  std::shared_ptr<context::WorkspaceIndex> workspace_index;
  // Where turn spans are exported (OTLP), null when nowhere; and the trace every turn joins unless its
  // prompt names another (TRACEPARENT of agentd's environment).
  std::shared_ptr<telemetry::OtlpExporter> otlp;
  std::optional<telemetry::TraceParent> trace_parent;
};

struct Attachment {
  std::string uri;
  std::string text;
};

struct PromptInput {
  std::string text;
  std::vector<Attachment> attachments;                 // embedded resources from the client
  std::vector<PromptImage> images;                     // checked, stored and sent to the model with the text
  std::optional<telemetry::TraceParent> trace_parent;  // the caller's span this turn's spans go under
};

struct TurnOutcome {
  StopReason stop_reason = StopReason::end_turn;
  std::string turn_id;
  // For a model turn that changed files: what verified them, and what did not run.
  std::optional<TurnVerification> verification;
  // The budget that stopped the turn (stop_reason max_turn_requests for dollars, max_tokens for tokens).
  std::optional<BudgetStop> stopped_by;
};

// Tokens and dollars, summed over model calls.
struct CostLedger {
  model::Usage usage;
  double priced_usd = 0;
  std::uint32_t calls = 0;
  std::uint32_t unpriced_calls = 0;
  std::optional<double> total_usd() const {
    if (unpriced_calls > 0) return std::nullopt;
    return priced_usd;
  }
  void add(const model::Usage& u, std::optional<double> cost);
};

struct SessionInfo {
  std::string id;
  std::string cwd;
  std::vector<std::string> additional_dirs;
  std::optional<std::string> title;
  std::int64_t created_at_ms = 0;
  std::int64_t updated_at_ms = 0;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `settings` are the session's project's (EngineContext::project_settings for its cwd).
  Session(EngineContext& engine, SessionInfo info, ProjectSettings settings, model::ModelConfig model,
          std::string model_spec);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::string& id() const noexcept { return info_.id; }
  const SessionInfo& info() const noexcept { return info_; }
  const std::string& model_spec() const noexcept { return model_spec_; }
  const ProjectSettings& settings() const noexcept { return settings_; }
  const model::ModelConfig& model_config() const noexcept { return model_; }
  PermissionMode mode() const noexcept { return policy_.mode(); }
  bool busy() const noexcept { return running_.has_value(); }
  // The id of the turn (or restore) running now, if any.
  std::optional<std::string> running_id() const { return running_ ? std::optional(running_->id) : std::nullopt; }
  std::int64_t last_seq() const noexcept { return events_->last_seq(); }
  const CostLedger& cost() const noexcept { return session_cost_; }
  const CostLedger& last_turn_cost() const noexcept { return previous_turn_cost_; }
  const std::string& last_turn_id() const noexcept { return last_turn_id_; }
  boost::asio::strand<boost::asio::any_io_executor>& strand() noexcept { return strand_; }

  // The frontend that receives events and answers permission prompts; may change (load, resume).
  void attach(std::shared_ptr<Frontend> frontend);
  void detach();

  // Runs one turn to its end (on the session's strand). Errors: a turn already running (conflict),
  // model failures (unavailable, with the model's words), storage failures. Cancellation is not an
  // error: the outcome says cancelled.
  boost::asio::awaitable<support::Result<TurnOutcome>> prompt(PromptInput input, support::CancelToken cancel);
  // Cancels the running turn, if any; the prompt then answers `cancelled`.
  void cancel();

  boost::asio::awaitable<support::Result<void>> set_mode(PermissionMode mode);
  // The budgets in force (config `budgets`, unless set for this session), and setting this session's
  // (`_agentd/session/set_budget`, `agent --max-budget-usd`): kept with the session, so a load keeps
  // them. A dollar budget with a model the price table does not know is refused (invalid_argument).
  const Budgets& budgets() const noexcept { return budgets_; }
  boost::asio::awaitable<support::Result<void>> set_budgets(Budgets budgets);
  void restore_budgets(Budgets budgets) { budgets_ = budgets; }
  boost::asio::awaitable<support::Result<void>> set_model(std::string spec);

  // Fills this session's tool registry (EngineContext::install_tools with its project's settings). Called
  // once, right after construction, by the SessionManager.
  support::Result<void> install_tools();
  const tools::ToolRegistry& tools() const noexcept { return tools_; }

  // Starts this session's MCP servers in the background: the project's (config `mcpServers`), then the
  // client's (session/new, session/load), which win on a name both use. Their tools join the registry
  // as each server becomes ready; a turn waits for servers still starting (up to kMcpReadyTimeout).
  void start_mcp(std::vector<tools::mcp::ServerConfig> from_client);
  std::vector<tools::mcp::ServerStatus> mcp_status() const { return mcp_->status(); }
  // Stops the servers (their process groups, gracefully, then by force). Idempotent.
  boost::asio::awaitable<void> stop_mcp() { return mcp_->stop(); }
  // The same, for a session being closed: runs in `group` (the SessionManager's, joined at shutdown)
  // while the caller goes on, and holds the session until its servers are gone.
  void stop_mcp_in_background(support::TaskGroup& group);

  // `_agentd/verify/plan`: the project's verification commands and the one agentd would run for
  // `files` (absolute or relative to the cwd; default: the files the session's last turn changed),
  // with the session's verify.auto settings. The ACP binding turns it into the wire object.
  struct VerificationReport {
    VerificationPlan plan;
    AutoVerify mode = AutoVerify::off;
    std::uint32_t rounds = 0;
  };
  boost::asio::awaitable<support::Result<VerificationReport>> verification_plan(std::vector<std::string> files);

  // Announces the slash commands (available_commands_update), stored and delivered when it returns: a
  // client answered session/new or session/load afterwards has seen them before the answer (ACP: nothing
  // of a loaded session after the response). An error when the event could not be stored.
  boost::asio::awaitable<support::Result<void>> announce_commands();

  // Restores state from storage: history (after the last /clear), counters, cost. Called once, right
  // after construction, by the SessionManager.
  boost::asio::awaitable<support::Result<void>> restore(std::int64_t cleared_after_turn);
  void restore_mode(PermissionMode mode) { policy_.set_mode(mode); }

  // The project's persisted approvals (keyed by the cwd) join the configured rules. Called by the
  // SessionManager once the session exists.
  boost::asio::awaitable<support::Result<void>> load_permissions();
  // The rules in force: configured ones, then approvals ("always" answers of this project).
  boost::asio::awaitable<std::vector<PermissionRule>> permission_rules();
  // Forgets a persisted approval of this project. Errc::not_found for an unknown id.
  boost::asio::awaitable<support::Result<void>> revoke_approval(std::int64_t approval_id);

  // Every write queued so far is durable.
  boost::asio::awaitable<support::Result<void>> flush();

  // The project the session's remembered facts belong to: its workspace root.
  const std::string& project() const noexcept { return project_; }
  // `_agentd/context/preview`: what a turn with `input` would add to the request (pinned instructions,
  // skills, facts, the workspace context package) and the system prompt, without calling the model.
  // Ends with Errc::cancelled soon after `cancel` fires or session/cancel (cancel()) arrives.
  struct ContextPreview {
    std::shared_ptr<const TurnContext> context;  // never null
    std::string system_prompt;
  };
  boost::asio::awaitable<support::Result<ContextPreview>> preview_context(std::string input,
                                                                          support::CancelToken cancel);
  // The project's remembered facts (/remember, /forget, `_agentd/memory/*`).
  ProjectMemory& memory() noexcept { return *memory_; }

  // The file checkpoints of this session's turns, oldest first (_agentd/checkpoints/list).
  boost::asio::awaitable<support::Result<std::vector<CheckpointInfo>>> checkpoints();
  // Puts back the files turn `turn_id` and every later turn changed (_agentd/checkpoints/restore); the
  // restore is a checkpoint too. Errc::conflict while a turn runs, not_found for a turn without changes.
  boost::asio::awaitable<support::Result<RestoreReport>> restore_checkpoint(std::string turn_id);

 private:
  struct RunningTurn {
    std::string id;
    std::unique_ptr<support::CancelSource> cancel;
  };

  friend std::span<const SlashCommandInfo> slash_commands() noexcept;  // its rows name the cmd_* handlers

  void emit(EngineEvent event) { events_->emit(std::move(event)); }
  // Persists an "always" answer for the project and adds it to the policy.
  void persist_approval(PermissionRule rule);
  void persist_message(const model::Message& message, const std::string& turn_id);
  void persist_metadata();

  // The turn loop (turn_loop.cpp), top to bottom: gather the turn's context, make room in the window,
  // then call the model and run its tool calls until it stops.
  struct TurnStart;
  struct ModelResponse;
  TurnStart begin_turn(const PromptInput& input, const support::CancelToken& cancel);
  boost::asio::awaitable<support::Result<void>> end_turn(const TurnStart& turn,
                                                         const support::Result<TurnOutcome>& outcome,
                                                         support::Span& span);
  boost::asio::awaitable<support::Result<TurnOutcome>> run_turn(PromptInput input,
                                                                std::vector<model::ImageBlock> images,
                                                                std::string turn_id, support::CancelToken cancel,
                                                                support::Span& span);
  // The prompt's images read, checked and hashed off the loop; large ones go to blob files there.
  boost::asio::awaitable<support::Result<std::vector<LoadedImage>>> load_images(std::vector<PromptImage> images);
  // Queues the images' blobs and the session's hold on them, ahead of the turn's rows that name them.
  void store_images(std::vector<LoadedImage>& images);
  boost::asio::awaitable<support::Result<std::shared_ptr<const TurnContext>>> retrieve_context(
      const std::string& input, support::CancelToken cancel, support::Span& span);
  // The turn's user message: what this turn adds (skills, facts, the workspace context, the hooks' and MCP
  // notes), then the input.
  model::Message turn_message(const TurnContext& context, std::vector<std::string> notes, const PromptInput& input,
                              std::vector<model::ImageBlock> images) const;
  // The history that fits the window with the system prompt, the tools and the answer's reserve; an
  // error when even the current turn does not fit
  // (Errc::limit_exceeded, its message for the user).
  support::Result<model::ModelRequest> next_request(const std::string& system,
                                                    const std::vector<model::ToolDefinition>& tools,
                                                    std::uint64_t fixed_tokens) const;
  // One model call: streams its text, thoughts and tool-call starts to the client as they arrive.
  boost::asio::awaitable<ModelResponse> call_model(model::ModelRequest request, const std::string& turn_id,
                                                   support::CancelToken cancel, support::Span& span);
  // A stream that failed: keeps the partial text, fails the calls it announced, and says why.
  support::Result<TurnOutcome> stream_failed(const ModelResponse& response, HistoryTurn& current,
                                             const std::string& turn_id, const support::CancelToken& cancel);
  void append(HistoryTurn& current, model::Message message, const std::string& turn_id);
  // What this turn verified, when it changed files (session_verify.cpp).
  boost::asio::awaitable<std::optional<TurnVerification>> verification_of_turn();
  // A slash command's turn: its row's handler answers, without the model (session_commands.cpp).
  boost::asio::awaitable<support::Result<TurnOutcome>> run_command(const std::string& text, std::string turn_id,
                                                                   support::CancelToken cancel, support::Span& span);
  // A response cut at the output limit (`cut`) or refused: its calls get an error result each (stored,
  // and said to the client as failed), so the history stays valid for the next request.
  void close_unrun_calls(const std::vector<model::ToolCallDone>& calls, bool cut, HistoryTurn& current,
                         const std::string& turn_id);
  // At the end of a turn that edited files and did not verify them (verify.auto): a note with the
  // suggested command, or the verification run as a tool call. Returns the message to send back to the
  // model when the run failed in the changed code and fix rounds remain; nullopt ends the turn.
  boost::asio::awaitable<std::optional<model::Message>> auto_verify(const std::string& turn_id,
                                                                    support::CancelToken cancel, support::Span& span);
  // SessionStart (when due) and UserPromptSubmit, before the turn's context is gathered: what they add to
  // the turn's message, or the reason a UserPromptSubmit hook blocked the prompt.
  struct PromptHooks {
    std::string context;
    std::optional<std::string> blocked;
  };
  boost::asio::awaitable<support::Result<PromptHooks>> run_prompt_hooks(const std::string& text,
                                                                        support::CancelToken cancel,
                                                                        support::Span& span);
  std::string build_system_prompt(const TurnContext* context) const;
  // Gathers the turn's context off the event loop (facts read from storage first).
  boost::asio::awaitable<support::Result<std::shared_ptr<const TurnContext>>> gather_context(
      std::string input, bool retrieve, support::CancelToken cancel);
  struct CompactionOutcome {
    bool compacted = false;
    bool cannot_fit = false;  // no compaction can make the request fit
    std::string message;      // for the user
  };
  // Summarizes older turns when the next request would pass the threshold (or always when `forced`),
  // with one model call; stores the record and replaces the turns in history_ by the summary. Never
  // more than once per call; errors are the model's or storage's.
  boost::asio::awaitable<support::Result<CompactionOutcome>> compact(bool forced, std::uint64_t pinned_tokens,
                                                                     std::uint64_t new_input_tokens,
                                                                     const std::string& turn_id,
                                                                     support::CancelToken cancel, support::Span& span);
  // The slash commands' handlers, one per row of slash_commands(): each returns the reply text.
  boost::asio::awaitable<std::string> cmd_help(const CommandCall& call);
  boost::asio::awaitable<std::string> cmd_cost(const CommandCall& call);
  boost::asio::awaitable<std::string> cmd_model(const CommandCall& call);
  boost::asio::awaitable<std::string> cmd_mode(const CommandCall& call);
  boost::asio::awaitable<std::string> cmd_clear(const CommandCall& call);
  boost::asio::awaitable<std::string> cmd_permissions(const CommandCall& call);
  boost::asio::awaitable<std::string> cmd_undo(const CommandCall& call);
  boost::asio::awaitable<std::string> cmd_compact(const CommandCall& call);   // session_context.cpp
  boost::asio::awaitable<std::string> cmd_memory(const CommandCall& call);    // session_context.cpp
  boost::asio::awaitable<std::string> cmd_remember(const CommandCall& call);  // session_context.cpp
  boost::asio::awaitable<std::string> cmd_forget(const CommandCall& call);    // session_context.cpp
  boost::asio::awaitable<std::string> cmd_skills(const CommandCall& call);    // session_context.cpp
  boost::asio::awaitable<std::string> cmd_mcp(const CommandCall& call);
  // Switches the model (session/set_model, /model); the error says why a spec cannot be used.
  support::Result<void> switch_model(const std::string& spec);
  void switch_mode(PermissionMode mode);
  std::vector<model::ToolDefinition> tool_definitions() const;
  void record_usage(const model::Usage& usage, const std::string& turn_id, support::Span& span);

  EngineContext& engine_;
  const ProjectSettings settings_;
  tools::ToolRegistry tools_;        // this session's: builtin tools with its project's settings, then MCP tools
  std::unique_ptr<McpService> mcp_;  // the session's MCP servers, whose tools join tools_
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  SessionInfo info_;
  model::ModelConfig model_;
  std::string model_spec_;
  PermissionPolicy policy_;
  std::shared_ptr<EventLog> events_;  // emits, stores, and delivers to the attached frontend once durable
  std::unique_ptr<tools::FileAccess> files_;
  std::unique_ptr<model::ModelClient> client_;  // for model_; reset when the model changes

  Budgets budgets_;
  std::vector<HistoryTurn> history_;
  std::int64_t turn_count_ = 0;
  std::int64_t cleared_after_ = 0;  // message seq of the last /clear
  std::int64_t last_message_seq_ = 0;
  std::optional<RunningTurn> running_;
  // Work outside a turn that session/cancel ends too (a context preview): cancel() fires it and puts a
  // fresh source in its place.
  std::unique_ptr<support::CancelSource> side_cancel_ = std::make_unique<support::CancelSource>();
  std::string last_turn_id_;
  // Verification bookkeeping of the running turn: how many auto-verify fix rounds and runs it used
  // (whether it changed files since the last verification is the executor's). Reset when a turn starts.
  std::uint32_t verify_rounds_ = 0;
  std::uint32_t verify_runs_ = 0;
  std::vector<std::string> last_turn_changed_;  // of the last turn that changed files (verify plan)
  CostLedger session_cost_;
  CostLedger turn_cost_;           // the turn running now
  CostLedger previous_turn_cost_;  // the last turn that called the model, for /cost
  std::unique_ptr<tools::FileState> file_state_;
  std::unique_ptr<Checkpoints> checkpoints_;    // the tools' ChangeJournal; after file_state_, which it uses
  std::unique_ptr<SessionHooks> hooks_;         // the configured hooks; before the executor, which runs some
  std::unique_ptr<ToolCallExecutor> executor_;  // after everything it uses
  // SessionStart runs before the first model turn this process runs for the session, and again after
  // /clear or a compaction: with this source ("startup", "resume", "clear", "compact"); empty once run.
  std::string session_start_source_ = "startup";

  std::string project_;                    // workspace root of the cwd
  std::unique_ptr<ProjectMemory> memory_;  // the facts remembered for project_
  std::shared_ptr<context::WorkspaceIndex> index_;
  std::shared_ptr<const TurnContext> last_context_;  // of the last model turn, for /skills and /memory
  std::string summary_text_;                         // the latest compaction's summary, rendered; empty when none
  std::string summary_first_turn_;                   // the oldest turn it covers
  std::uint64_t summary_turns_ = 0;
};

}  // namespace agentd::core
