#include "daemon/stdio_transport.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "core/support/log.h"

namespace agentd::daemon {

namespace asio = boost::asio;
namespace log = support::log;

namespace {
constexpr std::size_t kReadChunk = std::size_t{64} * 1024;
constexpr std::size_t kMaxQueuedInput = std::size_t{4} * 1024 * 1024;  // threaded input: read ahead at most this much
}  // namespace

StdioTransport::StdioTransport(asio::io_context& io, int in_fd, int out_fd, std::size_t max_frame_bytes)
    : io_(io),
      in_fd_(in_fd),
      out_fd_(out_fd),
      in_flags_(::fcntl(in_fd, F_GETFL)),
      out_flags_(::fcntl(out_fd, F_GETFL)),
      decoder_(max_frame_bytes),
      in_(io),
      input_ready_(io, asio::steady_timer::time_point::max()),
      out_(io),
      drained_(io, asio::steady_timer::time_point::max()) {
  boost::system::error_code ec;
  in_.assign(in_fd_, ec);
  in_async_ = !ec;
  if (!in_async_) {
    // epoll refuses regular files and /dev/null (EPERM): read those on a thread instead.
    log::debug("stdin is not pollable ({}); reading it on a helper thread", ec.message());
    reader_thread_ = std::thread([this] { reader_thread_main(); });
  }
  out_.assign(out_fd_, ec);
  out_async_ = !ec;
  if (!out_async_) log::debug("stdout is not pollable ({}); writing it directly", ec.message());
}

StdioTransport::~StdioTransport() {
  {
    std::lock_guard lock(queue_mutex_);
    thread_stop_ = true;
  }
  queue_space_.notify_all();
  if (reader_thread_.joinable()) reader_thread_.join();
  // Asio made the descriptors non-blocking; a shell sharing them would then see EAGAIN.
  if (in_async_) in_.release();
  if (out_async_) out_.release();
  if (in_flags_ != -1) ::fcntl(in_fd_, F_SETFL, in_flags_);
  if (out_flags_ != -1) ::fcntl(out_fd_, F_SETFL, out_flags_);
}

void StdioTransport::stop_reading() {
  stop_reading_ = true;
  if (in_async_) {
    boost::system::error_code ignored;
    in_.cancel(ignored);
  }
  input_ready_.cancel();
}

void StdioTransport::reader_thread_main() {
  std::string chunk;
  while (true) {
    {
      std::unique_lock lock(queue_mutex_);
      queue_space_.wait(lock, [&] { return thread_stop_ || queued_bytes_ < kMaxQueuedInput; });
      if (thread_stop_) return;
    }
    chunk.resize(kReadChunk);
    const ssize_t n = ::read(in_fd_, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    std::lock_guard lock(queue_mutex_);
    if (n <= 0) {
      if (n < 0) log::error("reading stdin: {}", std::strerror(errno));
      thread_eof_ = true;
    } else {
      chunk.resize(static_cast<std::size_t>(n));
      queued_bytes_ += chunk.size();
      queue_.push_back(std::move(chunk));
      chunk = std::string();
    }
    // Wake the loop; the timer is only touched on the loop's thread.
    asio::post(io_, [this] { input_ready_.cancel(); });
    if (thread_eof_) return;
  }
}

asio::awaitable<void> StdioTransport::read_until_eof(FrameHandler handler) {
  auto drain = [&] {
    while (auto event = decoder_.next()) {
      handler(*event);
      if (stop_reading_) return;
    }
  };
  if (in_async_) {
    std::array<char, kReadChunk> buffer{};
    while (!stop_reading_) {
      auto [ec, n] = co_await in_.async_read_some(asio::buffer(buffer), asio::as_tuple(asio::use_awaitable));
      if (n > 0) {
        decoder_.feed(std::string_view(buffer.data(), n));
        drain();
      }
      if (ec) {
        if (ec != asio::error::eof && ec != asio::error::operation_aborted) {
          log::error("reading stdin: {}", ec.message());
        }
        break;
      }
    }
  } else {
    bool eof = false;
    while (!stop_reading_ && !eof) {
      std::deque<std::string> chunks;
      {
        std::lock_guard lock(queue_mutex_);
        chunks.swap(queue_);
        queued_bytes_ = 0;
        eof = thread_eof_;
      }
      queue_space_.notify_all();
      for (auto& chunk : chunks) {
        decoder_.feed(chunk);
        drain();
        if (stop_reading_) break;
      }
      if (chunks.empty() && !eof) {
        input_ready_.expires_at(asio::steady_timer::time_point::max());
        co_await input_ready_.async_wait(asio::as_tuple(asio::use_awaitable));
      }
    }
  }
  if (!stop_reading_) {
    if (auto last = decoder_.finish()) handler(*last);
  }
}

void StdioTransport::send(std::string_view message) {
  if (output_broken_) return;
  protocol::append_frame(pending_, decoder_.framing(), message);
  if (!out_async_) {
    std::string bytes;
    bytes.swap(pending_);
    write_direct(bytes);
    return;
  }
  if (!writing_) start_write();
}

void StdioTransport::write_direct(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(out_fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      log::error("writing stdout: {}", std::strerror(errno));
      output_broken_ = true;
      return;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void StdioTransport::start_write() {
  // Everything queued since the last write goes out in one write: batching under load for free.
  inflight_.clear();
  inflight_.swap(pending_);
  writing_ = true;
  asio::async_write(out_, asio::buffer(inflight_), [this](boost::system::error_code ec, std::size_t) {
    writing_ = false;
    if (ec) {
      if (ec != asio::error::operation_aborted) log::error("writing stdout: {}", ec.message());
      output_broken_ = true;
      pending_.clear();
      drained_.cancel();
      return;
    }
    if (!pending_.empty()) {
      start_write();
    } else {
      drained_.cancel();
    }
  });
}

asio::awaitable<void> StdioTransport::flush(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while ((writing_ || !pending_.empty()) && !output_broken_) {
    if (std::chrono::steady_clock::now() >= deadline) {
      log::warn("stdout not drained after {} ms; {} bytes dropped", limit.count(), pending_.size() + inflight_.size());
      co_return;
    }
    drained_.expires_at(deadline);
    co_await drained_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

}  // namespace agentd::daemon
