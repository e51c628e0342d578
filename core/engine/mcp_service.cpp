#include "core/engine/mcp_service.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/support/log.h"

namespace agentd::core {

namespace asio = boost::asio;
namespace mcp = tools::mcp;
using support::CancelToken;
namespace log = support::log;

namespace {
constexpr std::string_view kMcpPrefix = "mcp__";
}  // namespace

McpService::McpService(asio::strand<asio::any_io_executor> strand, tools::ToolRegistry& tools, std::string session_id)
    : strand_(std::move(strand)), tools_(tools), session_id_(std::move(session_id)) {}

McpService::~McpService() = default;

void McpService::start(const std::vector<mcp::ServerConfig>& configured, std::vector<mcp::ServerConfig> from_client,
                       const std::string& cwd) {
  std::vector<mcp::ServerConfig> servers;
  for (const auto& c : configured) {
    const bool overridden = std::any_of(from_client.begin(), from_client.end(),
                                        [&](const mcp::ServerConfig& given) { return given.name == c.name; });
    if (!overridden) servers.push_back(c);
  }
  for (auto& c : from_client) servers.push_back(std::move(c));
  if (servers.empty()) return;
  for (auto& s : servers) {
    if (s.cwd.empty()) {
      s.cwd = cwd;
    } else if (!std::filesystem::path(s.cwd).is_absolute()) {
      s.cwd = (std::filesystem::path(cwd) / s.cwd).lexically_normal().string();
    }
  }
  manager_ = mcp::McpManager::create(strand_, mcp::ClientOptions{});
  manager_->on_tools_changed([weak = std::weak_ptr<McpService*>(self_)] {
    if (auto self = weak.lock()) (*self)->sync_tools();
  });
  log::info("session {}: starting {} MCP server(s)", session_id_, servers.size());
  manager_->start(std::move(servers));
}

std::vector<mcp::ServerStatus> McpService::status() const {
  return manager_ ? manager_->status() : std::vector<mcp::ServerStatus>{};
}

asio::awaitable<void> McpService::stop() {
  co_await asio::dispatch(strand_, asio::use_awaitable);
  if (!manager_) co_return;
  auto manager = manager_;  // the session may let go of it meanwhile
  co_await manager->shutdown();
}

void McpService::sync_tools() {
  for (const auto& name : tools_.names()) {
    if (name.starts_with(kMcpPrefix)) tools_.remove(name);
  }
  if (!manager_) return;
  for (auto& tool : manager_->tools()) {
    const std::string name = tool->spec().name;
    if (auto added = tools_.add(std::move(tool)); !added) {
      log::warn("session {}: MCP tool {} left out: {}", session_id_, name, added.error().message());
    }
  }
}

asio::awaitable<std::string> McpService::prepare_turn(CancelToken cancel, support::Span& span) {
  if (!manager_) co_return std::string();
  const auto starting = [this] {
    std::vector<std::string> names;
    for (const auto& s : manager_->status()) {
      if (s.state == mcp::ServerState::starting || s.state == mcp::ServerState::restarting) names.push_back(s.name);
    }
    return names;
  };
  if (auto waiting = starting(); !waiting.empty()) {
    support::Span wait = span.child("mcp.wait");
    wait.set_attribute("servers", fmt::format("{}", fmt::join(waiting, ",")));
    wait.set_attribute("timeout_ms", static_cast<std::int64_t>(kMcpReadyTimeout.count()));
    co_await manager_->wait_ready(kMcpReadyTimeout, cancel);
    co_await asio::dispatch(strand_, asio::use_awaitable);
    if (auto still = starting(); !still.empty()) {
      wait.set_attribute("still_starting", fmt::format("{}", fmt::join(still, ",")));
      wait.set_status(support::SpanStatus::error, "MCP servers still starting after the readiness timeout");
      log::warn("session {}: MCP server(s) {} still starting after {} ms; this turn goes on without their tools",
                session_id_, fmt::join(still, ", "), kMcpReadyTimeout.count());
    }
  }
  sync_tools();
  std::string note;
  for (const auto& s : manager_->status()) {
    if (s.state != mcp::ServerState::failed || failures_told_.contains(s.name)) continue;
    failures_told_.insert(s.name);
    note += fmt::format("MCP server \"{}\" is unavailable ({}); its tools (mcp__{}__*) cannot be called.\n", s.name,
                        s.error.empty() ? std::string("it failed") : s.error, s.name);
  }
  co_return note;
}

std::string McpService::report() const {
  const auto servers = status();
  if (servers.empty()) {
    return "No MCP servers. Add them to session/new's mcpServers, or to the config file's mcpServers "
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
    if (!s.tools.empty()) {
      out += fmt::format("\n    {} tool{}: {}", s.tools.size(), s.tools.size() == 1 ? "" : "s",
                         fmt::format("{}", fmt::join(s.tools, ", ")));
    }
  }
  return out;
}

}  // namespace agentd::core
