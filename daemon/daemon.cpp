#include "daemon/daemon.h"

#include <csignal>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/support/log.h"
#include "daemon/acp_server.h"
#include "daemon/stdio_transport.h"
#include "protocol/peer.h"
#include "storage/database.h"

namespace agentd::daemon {

namespace asio = boost::asio;
namespace log = support::log;
using namespace boost::asio::experimental::awaitable_operators;

namespace {
constexpr auto kShutdownGrace = std::chrono::milliseconds(2000);
}

int run_daemon(const Options& options, int in_fd, int out_fd) {
  // A client that goes away must show up as EPIPE on write, not kill us mid-flush.
  std::signal(SIGPIPE, SIG_IGN);

  std::string db_path;
  if (options.db_path) {
    db_path = *options.db_path;
  } else {
    auto path = storage::default_database_path();
    if (!path) {
      log::error("{}", path.error().message());
      return 1;
    }
    db_path = *path;
  }
  auto db = storage::open_database(storage::DatabaseOptions{db_path});
  if (!db) {
    log::error("{}", db.error().message());
    return 1;
  }
  log::debug("database {} ready", db_path);

  asio::io_context io(1);
  StdioTransport transport(io, in_fd, out_fd, options.max_frame_bytes);
  protocol::Peer peer(io.get_executor(), [&transport](const std::string& message) { transport.send(message); });
  AcpServer server(peer);

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code ec, int signo) {
    if (ec) return;
    log::info("received {}, shutting down", signo == SIGINT ? "SIGINT" : "SIGTERM");
    transport.stop_reading();
  });

  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await transport.read_until_eof([&peer](const protocol::FrameEvent& event) {
          if (event.kind == protocol::FrameEvent::Kind::message) {
            peer.handle_frame(event.payload);
          } else {
            peer.handle_frame_error(event);
          }
        });
        log::debug("input closed; cancelling work in progress");
        peer.shutdown();
        // Handlers were cancelled; one that ignores it must not keep the process alive. After the
        // grace period the loop stops and destroys what is left.
        asio::steady_timer grace(io, kShutdownGrace);
        const auto joined = co_await (peer.join() || grace.async_wait(asio::use_awaitable));
        if (joined.index() == 1)
          log::warn("handlers still running {} ms after cancellation; stopping anyway", kShutdownGrace.count());
        co_await transport.flush(kShutdownGrace);
        signals.cancel();
      },
      [&io](const std::exception_ptr& e) {
        if (e) {
          try {
            std::rethrow_exception(e);
          } catch (const std::exception& ex) {
            log::error("main loop failed: {}", ex.what());
          }
        }
        io.stop();
      });

  io.run();
  log::debug("stopped");
  return 0;
}

}  // namespace agentd::daemon
