// A deliberately small HTTP/1.1 client over POSIX sockets for the mock model server's tests: it sees
// the raw bytes (chunk framing, cut bodies, stalls) that a real client would hide, and every read has a
// deadline. The product's client lives in core/model/; these tests must not depend on it.
#pragma once

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace agentd::mock_model::testing {

struct HttpResponse {
  int status = 0;                                            // 0 when no status line arrived
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;        // decoded (chunk framing removed); what arrived when incomplete
  bool complete = false;   // the body ended as its framing said
  bool closed = false;     // the server closed the connection
  bool timed_out = false;  // the deadline passed first
  bool chunked = false;

  std::optional<std::string> header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return std::nullopt;
  }
};

class TestConnection {
 public:
  explicit TestConnection(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  TestConnection(const TestConnection&) = delete;
  TestConnection& operator=(const TestConnection&) = delete;
  ~TestConnection() { close(); }

  bool connected() const noexcept { return fd_ >= 0; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  bool send_raw(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  bool send_request(std::string_view method, std::string_view target, std::string_view body = {},
                    std::string_view extra_headers = {}, bool keep_alive = true) {
    std::string request = std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nhost: 127.0.0.1\r\n";
    if (!body.empty() || method == "POST") {
      request += "content-type: application/json\r\ncontent-length: " + std::to_string(body.size()) + "\r\n";
    }
    request += extra_headers;
    if (!keep_alive) request += "connection: close\r\n";
    request += "\r\n";
    request += body;
    return send_raw(request);
  }

  // Reads one response, stopping at its end, at the server's close, or at the deadline.
  HttpResponse read_response(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    HttpResponse response;
    std::size_t head_end = std::string::npos;
    while ((head_end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill(deadline, response)) return response;
    }
    parse_head(std::string_view(buf_).substr(0, head_end), response);
    buf_.erase(0, head_end + 4);
    if (response.status / 100 == 1) {  // an interim response (100 Continue) has no body
      response.complete = true;
      return response;
    }

    const auto length = response.header("content-length");
    const auto encoding = response.header("transfer-encoding");
    response.chunked = encoding && lower(*encoding).find("chunked") != std::string::npos;
    if (response.chunked) {
      while (true) {
        std::size_t line_end;
        while ((line_end = buf_.find("\r\n")) == std::string::npos) {
          if (!fill(deadline, response)) return response;
        }
        const std::size_t size = std::stoul(buf_.substr(0, line_end), nullptr, 16);
        buf_.erase(0, line_end + 2);
        while (buf_.size() < size + 2) {
          if (!fill(deadline, response)) {
            response.body += buf_.substr(0, std::min(size, buf_.size()));
            buf_.clear();
            return response;
          }
        }
        response.body += buf_.substr(0, size);
        buf_.erase(0, size + 2);  // the data and its CRLF (after the last chunk: the empty trailer)
        if (size == 0) break;
      }
      response.complete = true;
    } else if (length) {
      const std::size_t size = std::stoul(*length);
      while (buf_.size() < size) {
        if (!fill(deadline, response)) {
          response.body = std::move(buf_);
          buf_.clear();
          return response;
        }
      }
      response.body = buf_.substr(0, size);
      buf_.erase(0, size);
      response.complete = true;
    } else {
      // No framing: the body runs to the close.
      while (fill(deadline, response)) {
      }
      response.body = std::move(buf_);
      buf_.clear();
      response.complete = response.closed;
    }
    return response;
  }

  // True when the server closed the connection within `timeout` (data before the close is discarded).
  bool wait_closed(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    HttpResponse scratch;
    while (fill(deadline, scratch)) buf_.clear();
    return scratch.closed;
  }

 private:
  static std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  }

  static void parse_head(std::string_view head, HttpResponse& response) {
    std::size_t line_end = head.find("\r\n");
    const std::string_view status_line = head.substr(0, line_end);
    if (status_line.size() >= 12) response.status = std::stoi(std::string(status_line.substr(9, 3)));
    while (line_end != std::string_view::npos) {
      head.remove_prefix(line_end + 2);
      line_end = head.find("\r\n");
      const std::string_view line = head.substr(0, line_end);
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      response.headers.emplace_back(lower(line.substr(0, colon)), std::string(value));
    }
  }

  // One read into buf_; false on close or deadline (recorded in `response`).
  bool fill(std::chrono::steady_clock::time_point deadline, HttpResponse& response) {
    if (fd_ < 0) {
      response.closed = true;
      return false;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      response.timed_out = true;
      return false;
    }
    pollfd pfd{fd_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready == 0) {
      response.timed_out = true;
      return false;
    }
    char chunk[16384];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) {
      response.closed = true;
      return false;
    }
    buf_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string buf_;
};

}  // namespace agentd::mock_model::testing
