// Frontend: what the engine needs from whoever drives a session (the ACP binding, the CLI, a test):
// somewhere to deliver events, someone to ask for permission, and the client's view of files. The
// engine calls these on the session's strand; an implementation that talks to a peer on another
// executor hops there itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/engine/events.h"
#include "core/engine/permissions.h"
#include "core/support/cancel.h"
#include "core/support/result.h"
#include "tools/tool.h"

namespace agentd::core {

struct PermissionPrompt {
  std::string session_id;
  std::string tool_call_id;
  std::string title;
  tools::ToolKind kind = tools::ToolKind::other;
  support::Json raw_input;
  std::vector<tools::ToolDiff> diffs;  // what an edit would do, when the tool can tell beforehand
  std::string text;                    // what a call does when a diff cannot show it: the command and its cwd
  std::vector<std::string> locations;
  std::string input_digest;  // "sha256:..." of the exact input: the approval is bound to it
  std::string reason;        // why the policy asks, with what the call's risks are
  std::string risk;          // tools::risk_names of the call: "execute|network"
};

class Frontend {
 public:
  virtual ~Frontend() = default;

  // An event is delivered once it is durable in the log, in sequence order.
  virtual void deliver(const std::string& session_id, const SequencedEvent& event) = 0;

  // False when nobody can answer (headless): the policy then decides alone and the model is told why.
  virtual bool can_ask_permission() const = 0;
  // Completes with the user's answer; PermissionAnswer::cancelled when the turn was cancelled.
  virtual boost::asio::awaitable<support::Result<PermissionAnswer>> ask_permission(PermissionPrompt prompt,
                                                                                   support::CancelToken cancel) = 0;

  // True when file reads should go through the client (an editor's unsaved buffer is the truth).
  virtual bool can_read_files() const = 0;
  virtual boost::asio::awaitable<support::Result<std::string>> read_text_file(std::string session_id, std::string path,
                                                                              support::CancelToken cancel) = 0;
  // True when changes to existing files should be written through the client, into the editor's buffer.
  // Only for a client that also serves reads: an edit is built on the buffer's text and read back from it.
  virtual bool can_write_files() const { return false; }
  virtual boost::asio::awaitable<support::Result<void>> write_text_file(std::string session_id, std::string path,
                                                                        std::string content,
                                                                        support::CancelToken cancel);

  // True when commands should run in the client's terminals (ACP terminal/*), shown live in the editor.
  virtual bool can_run_terminals() const { return false; }
  struct TerminalExit {
    std::optional<int> exit_code;
    std::optional<std::string> signal;
  };
  struct TerminalOutput {
    std::string output;
    bool truncated = false;
    std::optional<TerminalExit> exit;
  };
  // terminal/create: the terminal's id. The other calls name it.
  virtual boost::asio::awaitable<support::Result<std::string>> create_terminal(std::string session_id,
                                                                               tools::TerminalCommand command,
                                                                               support::CancelToken cancel);
  virtual boost::asio::awaitable<support::Result<TerminalExit>> wait_for_terminal_exit(std::string session_id,
                                                                                       std::string terminal_id,
                                                                                       support::CancelToken cancel);
  virtual boost::asio::awaitable<support::Result<TerminalOutput>> terminal_output(std::string session_id,
                                                                                  std::string terminal_id);
  virtual boost::asio::awaitable<support::Result<void>> kill_terminal(std::string session_id, std::string terminal_id);
  virtual boost::asio::awaitable<support::Result<void>> release_terminal(std::string session_id,
                                                                         std::string terminal_id);
};

}  // namespace agentd::core
