// RealUnixHttp: one HTTP/1.1 request over an AF_UNIX stream socket (the Docker Engine API), with a single
// deadline covering connect, send and read (poll-based, non-blocking socket). Handles Content-Length,
// chunked transfer coding and read-until-close bodies.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "sys/http.h"
#include "util/strings.h"

namespace gp::sys {
namespace {

using Clock = std::chrono::steady_clock;
// gpuprep's own bounds on what an engine answers: its replies gpuprep reads are kilobytes (version, an
// image's inspect, a verify container's log); a pull's progress stream is read line by line as it comes and
// only its first 64 KiB kept (for an error's words), up to kMaxStream in all.
constexpr size_t kMaxHead = 64u << 10;
constexpr size_t kMaxEngineBody = 16u << 20;
constexpr size_t kMaxKeptStream = 64u << 10;
constexpr uint64_t kMaxStream = uint64_t{1} << 30;

class SocketFd {
 public:
  explicit SocketFd(int fd) : fd_(fd) {}
  ~SocketFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  SocketFd(const SocketFd&) = delete;
  SocketFd& operator=(const SocketFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Waits for `events` until the deadline; false on timeout or poll error (`err` says which).
bool Wait(int fd, short events, Clock::time_point deadline, std::string& err) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      err = "timed out";
      return false;
    }
    struct pollfd p = {fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left));
    if (n > 0) return true;
    if (n == 0) {
      err = "timed out";
      return false;
    }
    if (errno != EINTR) {
      err = std::string("poll: ") + std::strerror(errno);
      return false;
    }
  }
}

constexpr const char* kStopped = "stopped by gpuprep";

// Waits for input like Wait, asking `keep_running` (when set) at least every UnixRequest::kPollSlice; false
// with `err` kStopped when it says stop.
bool WaitOrStop(int fd, Clock::time_point deadline, const std::function<bool()>& keep_running,
                std::string& err) {
  if (!keep_running) return Wait(fd, POLLIN, deadline, err);
  for (;;) {
    if (!keep_running()) {
      err = kStopped;
      return false;
    }
    const auto slice = std::min(deadline, Clock::now() + UnixRequest::kPollSlice);
    if (Wait(fd, POLLIN, slice, err)) return true;
    if (err != "timed out" || Clock::now() >= deadline) return false;
  }
}

// Incremental chunked-coding decoder: Feed() takes raw bytes and returns the decoded bytes that became
// complete; done() after the last (zero-size) chunk; failed() on malformed input.
class Dechunker {
 public:
  std::string Feed(std::string_view in) {
    raw_.append(in);
    std::string out;
    while (!done_ && !failed_) {
      if (left_ == 0) {  // expecting a size line (after the CRLF that ends the previous chunk)
        size_t eol = raw_.find("\r\n", pos_);
        if (eol == std::string::npos) break;
        std::string size_text = raw_.substr(pos_, eol - pos_);
        size_text = size_text.substr(0, size_text.find(';'));
        size_t size = 0;
        try {
          size = std::stoul(size_text, nullptr, 16);
        } catch (...) {
          failed_ = true;
          break;
        }
        pos_ = eol + 2;
        if (size == 0) {
          done_ = true;  // trailers ignored
          break;
        }
        left_ = size + 2;  // data + CRLF
      }
      size_t avail = raw_.size() - pos_;
      if (avail == 0) break;
      size_t take = std::min(avail, left_);
      size_t data = left_ > 2 ? std::min(take, left_ - 2) : 0;
      out.append(raw_, pos_, data);
      pos_ += take;
      left_ -= take;
    }
    if (pos_ > 65536) {
      raw_.erase(0, pos_);
      pos_ = 0;
    }
    return out;
  }
  bool done() const { return done_; }
  bool failed() const { return failed_; }

 private:
  std::string raw_;
  size_t pos_ = 0;
  size_t left_ = 0;
  bool done_ = false, failed_ = false;
};

}  // namespace

HttpResponse RealUnixHttp::Get(const std::string& socket_path, const std::string& path,
                               std::chrono::milliseconds timeout) {
  UnixRequest req;
  req.path = path;
  req.timeout = timeout;
  return Request(socket_path, req);
}

HttpResponse RealUnixHttp::Request(const std::string& socket_path, const UnixRequest& req) {
  HttpResponse r;
  auto deadline = Clock::now() + req.timeout;
  struct sockaddr_un addr;
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    r.error = "socket path too long: " + socket_path;
    return r;
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size());
  SocketFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) {
    r.error = std::string("socket: ") + std::strerror(errno);
    return r;
  }
  if (::connect(fd.get(), reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS && errno != EAGAIN) {
      r.error = "connect " + socket_path + ": " + std::strerror(errno);
      return r;
    }
    std::string err;
    if (!Wait(fd.get(), POLLOUT, deadline, err)) {
      r.error = "connect " + socket_path + ": " + err;
      return r;
    }
    int so_error = 0;
    socklen_t len = sizeof so_error;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &len);
    if (so_error != 0) {
      r.error = "connect " + socket_path + ": " + std::strerror(so_error);
      return r;
    }
  }

  std::string request = req.method + " " + req.path +
                        " HTTP/1.1\r\nHost: docker\r\nUser-Agent: gpuprep\r\nAccept: application/json\r\n";
  if (!req.body.empty() || req.method == "POST")
    request +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(req.body.size()) + "\r\n";
  request += "Connection: close\r\n\r\n" + req.body;
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    std::string err = std::strerror(errno);
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || !Wait(fd.get(), POLLOUT, deadline, err)) {
      r.error = "send: " + err;
      return r;
    }
  }

  std::string head;
  bool in_body = false;
  bool has_length = false;
  size_t content_length = 0;
  size_t body_raw = 0;  // body bytes received (before chunk decoding)
  bool chunked = false;
  Dechunker dechunk;
  uint64_t delivered = 0;
  bool too_big = false;
  auto deliver = [&](std::string_view piece) {
    if (piece.empty() || too_big) return;
    delivered += piece.size();
    if (req.on_data ? delivered > kMaxStream : r.body.size() + piece.size() > kMaxEngineBody) {
      too_big = true;
      return;
    }
    if (!req.on_data || r.body.size() < kMaxKeptStream)
      r.body.append(piece.substr(0, req.on_data ? kMaxKeptStream - r.body.size() : piece.size()));
    if (req.on_data) req.on_data(piece);
  };
  auto take_body = [&](std::string_view raw) {
    if (has_length && !chunked) raw = raw.substr(0, content_length - std::min(content_length, body_raw));
    body_raw += raw.size();
    if (chunked)
      deliver(dechunk.Feed(raw));
    else
      deliver(raw);
  };
  char buf[16384];
  for (;;) {
    if (in_body) {
      if (has_length && !chunked && body_raw >= content_length) break;
      if (chunked && (dechunk.done() || dechunk.failed())) break;
    }
    std::string err;
    if (!WaitOrStop(fd.get(), deadline, req.keep_running, err)) {
      r.stopped = err == kStopped;
      r.error = r.stopped ? err : "read: " + err;
      return r;
    }
    ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      r.error = std::string("read: ") + std::strerror(errno);
      return r;
    }
    if (n == 0) break;                                       // peer closed: the body ends here
    if (req.on_data) deadline = Clock::now() + req.timeout;  // a stream: the timeout bounds silence
    if (in_body) {
      take_body(std::string_view(buf, static_cast<size_t>(n)));
      if (too_big) break;
      continue;
    }
    head.append(buf, static_cast<size_t>(n));
    size_t at = head.find("\r\n\r\n");
    if ((at == std::string::npos ? head.size() : at) > kMaxHead) {
      r.error = "response headers larger than " + std::to_string(kMaxHead >> 10) + " KiB";
      r.status = 0;
      return r;
    }
    if (at == std::string::npos) continue;
    in_body = true;
    // Status line "HTTP/1.1 200 OK", then headers.
    auto lines = Split(std::string_view(head).substr(0, at), '\n');
    auto words = SplitWords(lines[0]);
    if (words.size() < 2 || !StartsWith(words[0], "HTTP/")) {
      r.error = "not an HTTP response";
      return r;
    }
    r.status = static_cast<int>(ParseUnsigned(words[1]).value_or(0));
    for (size_t i = 1; i < lines.size(); ++i) {
      std::string line(Trim(lines[i]));
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = ToLower(Trim(std::string_view(line).substr(0, colon)));
      std::string value = ToLower(Trim(std::string_view(line).substr(colon + 1)));
      if (key == "content-length") {
        auto len = ParseUnsigned(value);
        has_length = len.has_value();
        content_length = len.value_or(0);
      }
      if (key == "transfer-encoding" && value.find("chunked") != std::string::npos) chunked = true;
    }
    if (req.on_head) req.on_head(r.status);
    take_body(std::string_view(head).substr(at + 4));
    if (too_big) break;
  }
  if (too_big) {
    r.error = "response larger than " + (req.on_data ? std::to_string(kMaxStream >> 30) + " GiB"
                                                     : std::to_string(kMaxEngineBody >> 20) + " MiB");
    r.body.clear();
    return r;
  }
  if (!in_body) {
    r.error = head.empty() ? "empty response" : "incomplete response headers";
    r.status = 0;
    return r;
  }
  if (chunked && !dechunk.done()) {
    r.error = dechunk.failed() ? "malformed chunked body" : "incomplete chunked body";
    return r;
  }
  if (has_length && !chunked && body_raw < content_length) {
    r.error =
        "incomplete body (" + std::to_string(body_raw) + " of " + std::to_string(content_length) + " bytes)";
    return r;
  }
  return r;
}

}  // namespace gp::sys
