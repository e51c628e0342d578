#include "test/support/acp_client.h"

#include <cstdlib>
#include <exception>
#include <stdexcept>

#include <boost/asio/co_spawn.hpp>

#include "protocol/peer.h"

namespace agentd::testing {

namespace asio = boost::asio;

AcpClient::AcpClient(const Options& options) {
  for (const auto& [name, value] : options.env) {
    ::setenv(name.c_str(), value.c_str(), 1);  // NOLINT(concurrency-mt-unsafe): before the engine's threads
  }
  daemon::HostOptions host_options;
  host_options.db_path = options.db_path;
  auto host = daemon::Host::create(host_options);
  if (!host) throw std::runtime_error("in-process agentd did not start: " + host.error().message());
  host_ = std::move(*host);
  host_->connect([this](const std::string& message) { out_.push_back(message); });
  work_.emplace(host_->io().get_executor());
}

AcpClient::~AcpClient() {
  try {
    close_stdin();
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
  }
  work_.reset();
  host_.reset();
}

bool AcpClient::write(std::string_view bytes) {
  if (closed_) return false;
  decoder_.feed(bytes);
  protocol::Peer& peer = host_->peer();
  while (auto event = decoder_.next()) {
    if (event->kind == protocol::FrameEvent::Kind::message) {
      peer.handle_frame(event->payload);
    } else {
      peer.handle_frame_error(*event);
    }
  }
  return true;
}

std::optional<std::string> AcpClient::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  asio::io_context& io = host_->io();
  while (out_.empty()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::nullopt;
    if (io.stopped()) io.restart();
    io.run_one_for(deadline - now);
  }
  std::string message = std::move(out_.front());
  out_.pop_front();
  return message;
}

void AcpClient::run_for(std::chrono::milliseconds duration) {
  asio::io_context& io = host_->io();
  if (io.stopped()) io.restart();
  io.run_for(duration);
}

void AcpClient::close_stdin() {
  if (closed_) return;
  closed_ = true;
  asio::io_context& io = host_->io();
  if (auto last = decoder_.finish(); last && last->kind == protocol::FrameEvent::Kind::message) {
    host_->peer().handle_frame(last->payload);
  }
  bool done = false;
  asio::co_spawn(io, host_->shutdown(), [&done](const std::exception_ptr&) { done = true; });
  while (!done) {
    if (io.stopped()) io.restart();
    io.run_one();
  }
}

}  // namespace agentd::testing
