// The engine's Frontend over ACP: engine events become session/update notifications (numbered with
// `_meta.agentd.seq`), permission prompts become session/request_permission, and file reads become
// fs/read_text_file when the client offers it (an editor's unsaved buffer is the truth).
#pragma once

#include <string>
#include <vector>

#include "core/engine/frontend.h"
#include "core/engine/session_manager.h"
#include "protocol/acp/initialize.h"
#include "protocol/acp/session_update.h"
#include "protocol/peer.h"

namespace agentd::daemon {

class AcpFrontend final : public core::Frontend {
 public:
  AcpFrontend(protocol::Peer& peer, core::SessionManager& sessions) : peer_(&peer), sessions_(sessions) {}

  // The client is gone (shutdown): nothing more is sent, prompts answer "unavailable".
  void disconnect() { peer_ = nullptr; }
  void set_client(const protocol::acp::ClientCapabilities& caps) { caps_ = caps; }

  void deliver(const std::string& session_id, const core::SequencedEvent& event) override;
  // Replays logged events (session/load): the same notifications, user messages included.
  void replay(const std::string& session_id, const std::vector<core::SequencedEvent>& events);

  bool can_ask_permission() const override { return peer_ != nullptr; }
  boost::asio::awaitable<support::Result<core::PermissionAnswer>> ask_permission(core::PermissionPrompt prompt,
                                                                                 support::CancelToken cancel) override;

  bool can_read_files() const override { return peer_ != nullptr && caps_.fs.read_text_file; }
  boost::asio::awaitable<support::Result<std::string>> read_text_file(std::string session_id, std::string path,
                                                                      support::CancelToken cancel) override;
  bool can_write_files() const override { return can_read_files() && caps_.fs.write_text_file; }
  boost::asio::awaitable<support::Result<void>> write_text_file(std::string session_id, std::string path,
                                                                std::string content,
                                                                support::CancelToken cancel) override;

  // terminal/*, when the client said `terminal: true`.
  bool can_run_terminals() const override { return peer_ != nullptr && caps_.terminal; }
  boost::asio::awaitable<support::Result<std::string>> create_terminal(std::string session_id,
                                                                       tools::TerminalCommand command,
                                                                       support::CancelToken cancel) override;
  boost::asio::awaitable<support::Result<TerminalExit>> wait_for_terminal_exit(std::string session_id,
                                                                               std::string terminal_id,
                                                                               support::CancelToken cancel) override;
  boost::asio::awaitable<support::Result<TerminalOutput>> terminal_output(std::string session_id,
                                                                          std::string terminal_id) override;
  boost::asio::awaitable<support::Result<void>> kill_terminal(std::string session_id, std::string terminal_id) override;
  boost::asio::awaitable<support::Result<void>> release_terminal(std::string session_id,
                                                                 std::string terminal_id) override;

 private:
  // One terminal/* call with {sessionId, terminalId} and what else `params` holds; its result.
  boost::asio::awaitable<support::Result<support::Json>> terminal_call(std::string_view method, support::Json params,
                                                                       support::CancelToken cancel);
  void send_update(const std::string& session_id, std::int64_t seq, protocol::acp::SessionUpdate update);

  protocol::Peer* peer_;
  core::SessionManager& sessions_;
  protocol::acp::ClientCapabilities caps_;
};

}  // namespace agentd::daemon
