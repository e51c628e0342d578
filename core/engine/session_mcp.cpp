// The parts of Session about MCP servers: starting them with the session, keeping the registry's
// mcp__ tools in step with the servers, waiting for slow starters at the beginning of a turn, telling
// the model and the client when one failed, and /mcp. The client itself is tools/mcp's.
#include <algorithm>
#include <filesystem>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/engine/session.h"
#include "core/support/log.h"

namespace agentd::core {

namespace asio = boost::asio;
namespace mcp = tools::mcp;
using support::CancelToken;
namespace log = support::log;

namespace {
constexpr std::string_view kMcpPrefix = "mcp__";

// Holds the session for as long as its servers take to stop.
asio::awaitable<void> stop_mcp_of(std::shared_ptr<Session> session) { co_await session->stop_mcp(); }
}  // namespace

void Session::start_mcp(std::vector<mcp::ServerConfig> from_client) {
  std::vector<mcp::ServerConfig> servers;
  for (const auto& configured : settings_.mcp_servers) {
    const bool overridden = std::any_of(from_client.begin(), from_client.end(),
                                        [&](const mcp::ServerConfig& c) { return c.name == configured.name; });
    if (!overridden) servers.push_back(configured);
  }
  for (auto& c : from_client) servers.push_back(std::move(c));
  if (servers.empty()) return;
  for (auto& s : servers) {
    // A server runs in the session's cwd, or in its own directory given relative to it.
    if (s.cwd.empty()) {
      s.cwd = info_.cwd;
    } else if (!std::filesystem::path(s.cwd).is_absolute()) {
      s.cwd = (std::filesystem::path(info_.cwd) / s.cwd).lexically_normal().string();
    }
  }
  mcp_ = mcp::McpManager::create(strand_, mcp::ClientOptions{});
  std::weak_ptr<Session> weak = weak_from_this();
  mcp_->on_tools_changed([weak] {
    if (auto self = weak.lock()) self->sync_mcp_tools();
  });
  log::info("session {}: starting {} MCP server(s)", info_.id, servers.size());
  mcp_->start(std::move(servers));
}

std::vector<mcp::ServerStatus> Session::mcp_status() const {
  return mcp_ ? mcp_->status() : std::vector<mcp::ServerStatus>{};
}

asio::awaitable<void> Session::stop_mcp() {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!mcp_) co_return;
  auto manager = mcp_;  // the session may let go of it meanwhile
  co_await manager->shutdown();
}

void Session::stop_mcp_in_background(support::TaskGroup& group) {
  if (!mcp_) return;
  auto self = shared_from_this();
  group.spawn(stop_mcp_of(self), fmt::format("stopping the MCP servers of session {}", info_.id));
}

void Session::sync_mcp_tools() {
  for (const auto& name : tools_.names()) {
    if (name.starts_with(kMcpPrefix)) tools_.remove(name);
  }
  if (!mcp_) return;
  for (auto& tool : mcp_->tools()) {
    const std::string name = tool->spec().name;
    if (auto added = tools_.add(std::move(tool)); !added) {
      log::warn("session {}: MCP tool {} left out: {}", info_.id, name, added.error().message());
    }
  }
}

asio::awaitable<std::string> Session::prepare_mcp(CancelToken cancel, support::Span& span) {
  if (!mcp_) co_return std::string();
  const auto starting = [this] {
    std::vector<std::string> names;
    for (const auto& s : mcp_->status()) {
      if (s.state == mcp::ServerState::starting || s.state == mcp::ServerState::restarting) names.push_back(s.name);
    }
    return names;
  };
  if (auto waiting = starting(); !waiting.empty()) {
    support::Span wait = span.child("mcp.wait");
    wait.set_attribute("servers", fmt::format("{}", fmt::join(waiting, ",")));
    wait.set_attribute("timeout_ms", static_cast<std::int64_t>(kMcpReadyTimeout.count()));
    co_await mcp_->wait_ready(kMcpReadyTimeout, cancel);
    co_await asio::dispatch(strand_, asio::use_awaitable);
    if (auto still = starting(); !still.empty()) {
      wait.set_attribute("still_starting", fmt::format("{}", fmt::join(still, ",")));
      wait.set_status(support::SpanStatus::error, "MCP servers still starting after the readiness timeout");
      log::warn("session {}: MCP server(s) {} still starting after {} ms; this turn goes on without their tools",
                info_.id, fmt::join(still, ", "), kMcpReadyTimeout.count());
    }
  }
  sync_mcp_tools();
  std::string note;
  for (const auto& s : mcp_->status()) {
    if (s.state != mcp::ServerState::failed || mcp_failures_told_.contains(s.name)) continue;
    mcp_failures_told_.insert(s.name);
    note += fmt::format("MCP server \"{}\" is unavailable ({}); its tools (mcp__{}__*) cannot be called.\n", s.name,
                        s.error.empty() ? std::string("it failed") : s.error, s.name);
  }
  if (!note.empty()) emit(AgentTextEvent{fmt::format("[agentd: {}]\n\n", note.substr(0, note.size() - 1))});
  co_return note;
}

asio::awaitable<std::string> Session::cmd_mcp(const CommandCall& /*call*/) {
  const auto servers = mcp_status();
  if (servers.empty()) {
    co_return "No MCP servers. Add them to session/new's mcpServers, or to the config file's mcpServers "
           "({\"name\": {\"command\": ..., \"args\": [...], \"env\": {...}}}).";
  }
  std::string out = "MCP servers:";
  for (const auto& s : servers) {
    out += fmt::format("\n  {}: {}", s.name, mcp::server_state_name(s.state));
    if (!s.server_info.empty() || !s.protocol_version.empty()) {
      out += fmt::format(" ({}, protocol {})", s.server_info.empty() ? "?" : s.server_info,
                         s.protocol_version.empty() ? "?" : s.protocol_version);
    }
    if (s.restarts > 0) out += fmt::format(", restarted {} time{}", s.restarts, s.restarts == 1 ? "" : "s");
    if (!s.error.empty()) out += fmt::format("\n    {}", s.error);
    if (!s.tools.empty())
      out += fmt::format("\n    {} tool{}: {}", s.tools.size(), s.tools.size() == 1 ? "" : "s",
                         fmt::format("{}", fmt::join(s.tools, ", ")));
  }
  co_return out;
}

}  // namespace agentd::core
