// The stdio transport: frames in from stdin, frames out to stdout, on the daemon's io_context.
// Pipes, sockets and terminals are read and written asynchronously; a regular file or /dev/null on
// stdin (which epoll refuses) is read by a helper thread, and on stdout written directly. This class
// is the only code that writes to stdout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "protocol/framing.h"

namespace agentd::daemon {

class StdioTransport {
 public:
  using FrameHandler = std::function<void(const protocol::FrameEvent&)>;

  StdioTransport(boost::asio::io_context& io, int in_fd, int out_fd, std::size_t max_frame_bytes);
  StdioTransport(const StdioTransport&) = delete;
  StdioTransport& operator=(const StdioTransport&) = delete;
  // Joins the reader thread, gives the descriptors back in blocking mode as they were found.
  ~StdioTransport();

  // Reads until end of input, a read error or stop_reading(), handing every frame to `handler`.
  boost::asio::awaitable<void> read_until_eof(FrameHandler handler);
  void stop_reading();

  // Frames `message` (in the framing the client used) and queues it; never blocks the loop.
  void send(std::string_view message);
  // Waits until everything queued is written, the output fails, or `limit` passes.
  boost::asio::awaitable<void> flush(std::chrono::milliseconds limit);

  bool output_broken() const noexcept { return output_broken_; }
  bool threaded_input() const noexcept { return reader_thread_.joinable(); }

 private:
  void start_write();
  void write_direct(std::string_view bytes);
  void reader_thread_main();
  void wake_reader_side();

  boost::asio::io_context& io_;
  int in_fd_;
  int out_fd_;
  int in_flags_ = -1;
  int out_flags_ = -1;
  protocol::FrameDecoder decoder_;

  boost::asio::posix::stream_descriptor in_;
  bool in_async_ = false;
  bool stop_reading_ = false;

  // Threaded input: the thread hands over chunks through this bounded queue.
  std::thread reader_thread_;
  std::mutex queue_mutex_;
  std::condition_variable queue_space_;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  bool thread_eof_ = false;
  bool thread_stop_ = false;
  boost::asio::steady_timer input_ready_;

  boost::asio::posix::stream_descriptor out_;
  bool out_async_ = false;
  bool writing_ = false;
  bool output_broken_ = false;
  std::string pending_;   // framed bytes not yet handed to the kernel
  std::string inflight_;  // bytes of the write in progress
  boost::asio::steady_timer drained_;
};

}  // namespace agentd::daemon
