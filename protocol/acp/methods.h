// ACP v1 method names, as the stable schema's meta.json lists them. The dispatch table and the calls
// we make spell methods through these constants only.
#pragma once

#include <string_view>

namespace agentd::protocol::acp::method {

// Handled by the agent (us).
inline constexpr std::string_view kInitialize = "initialize";
inline constexpr std::string_view kAuthenticate = "authenticate";
inline constexpr std::string_view kLogout = "logout";
inline constexpr std::string_view kSessionNew = "session/new";
inline constexpr std::string_view kSessionLoad = "session/load";
inline constexpr std::string_view kSessionList = "session/list";
inline constexpr std::string_view kSessionResume = "session/resume";
inline constexpr std::string_view kSessionClose = "session/close";
// Unstable in v1 (schema.unstable.json), advertised as sessionCapabilities.fork; Zed uses it.
inline constexpr std::string_view kSessionFork = "session/fork";
inline constexpr std::string_view kSessionDelete = "session/delete";
inline constexpr std::string_view kSessionSetMode = "session/set_mode";
inline constexpr std::string_view kSessionSetConfigOption = "session/set_config_option";
inline constexpr std::string_view kSessionPrompt = "session/prompt";
inline constexpr std::string_view kSessionCancel = "session/cancel";  // notification

// Handled by the client.
inline constexpr std::string_view kSessionUpdate = "session/update";  // notification
inline constexpr std::string_view kSessionRequestPermission = "session/request_permission";
inline constexpr std::string_view kFsReadTextFile = "fs/read_text_file";
inline constexpr std::string_view kFsWriteTextFile = "fs/write_text_file";
inline constexpr std::string_view kTerminalCreate = "terminal/create";
inline constexpr std::string_view kTerminalOutput = "terminal/output";
inline constexpr std::string_view kTerminalWaitForExit = "terminal/wait_for_exit";
inline constexpr std::string_view kTerminalKill = "terminal/kill";
inline constexpr std::string_view kTerminalRelease = "terminal/release";

}  // namespace agentd::protocol::acp::method
