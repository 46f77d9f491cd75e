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

// Connects the non-blocking socket `fd` to `addr` (the socket at `socket_path`), waiting for the connection
// until the deadline; the error to report, or "" when connected.
std::string UnixHttpConnect(int fd, struct sockaddr_un& addr, const std::string& socket_path,
                            Clock::time_point deadline) {
  if (::connect(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS && errno != EAGAIN)
      return "connect " + socket_path + ": " + std::strerror(errno);
    std::string err;
    if (!Wait(fd, POLLOUT, deadline, err)) return "connect " + socket_path + ": " + err;
    int so_error = 0;
    socklen_t len = sizeof so_error;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
    if (so_error != 0) return "connect " + socket_path + ": " + std::strerror(so_error);
  }
  return "";
}

// The request's bytes: request line, headers (a JSON body's type and length) and body.
std::string UnixHttpRequestText(const UnixRequest& req) {
  std::string request = req.method + " " + req.path +
                        " HTTP/1.1\r\nHost: docker\r\nUser-Agent: gpuprep\r\nAccept: application/json\r\n";
  if (!req.body.empty() || req.method == "POST")
    request +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(req.body.size()) + "\r\n";
  request += "Connection: close\r\n\r\n" + req.body;
  return request;
}

// Sends all of `request` on the non-blocking socket `fd` before the deadline; the error to report, or "".
std::string UnixHttpSend(int fd, const std::string& request, Clock::time_point deadline) {
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    std::string err = std::strerror(errno);
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || !Wait(fd, POLLOUT, deadline, err)) return "send: " + err;
  }
  return "";
}

// Reads one response into an HttpResponse: the head up to its blank line, then the body (Content-Length,
// chunked or until close), kept in the response and handed to the request's on_data as it comes, within
// gpuprep's bounds.
class UnixResponseReader {
 public:
  UnixResponseReader(const UnixRequest& req, HttpResponse& r) : req_(req), r_(r) {}

  // Reads until the body is complete, the peer closes or the body grows too big; false when the response
  // already holds the error to return (a read error, a stop, a bad head).
  bool Read(int fd, Clock::time_point deadline) {
    char buf[16384];
    for (;;) {
      if (BodyComplete()) break;
      std::string err;
      if (!WaitOrStop(fd, deadline, req_.keep_running, err)) {
        r_.stopped = err == kStopped;
        r_.error = r_.stopped ? err : "read: " + err;
        return false;
      }
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
        r_.error = std::string("read: ") + std::strerror(errno);
        return false;
      }
      if (n == 0) break;                                         // peer closed: the body ends here
      if (req_.on_data) deadline = Clock::now() + req_.timeout;  // a stream: the timeout bounds silence
      std::string_view got(buf, static_cast<size_t>(n));
      if (in_body_) {
        TakeBody(got);
      } else if (!TakeHead(got)) {
        return false;
      }
      if (too_big_) break;
    }
    return true;
  }

  // Sets the response's error when what was read is not a whole response (too big, no head, a body cut
  // short).
  void Finish() {
    if (too_big_) {
      r_.error = "response larger than " + (req_.on_data ? std::to_string(kMaxStream >> 30) + " GiB"
                                                         : std::to_string(kMaxEngineBody >> 20) + " MiB");
      r_.body.clear();
      return;
    }
    if (!in_body_) {
      r_.error = head_.empty() ? "empty response" : "incomplete response headers";
      r_.status = 0;
      return;
    }
    if (chunked_ && !dechunk_.done()) {
      r_.error = dechunk_.failed() ? "malformed chunked body" : "incomplete chunked body";
      return;
    }
    if (has_length_ && !chunked_ && body_raw_ < content_length_) {
      r_.error = "incomplete body (" + std::to_string(body_raw_) + " of " + std::to_string(content_length_) +
                 " bytes)";
    }
  }

 private:
  // Whether the body has ended by its own framing (its Content-Length read, or the last chunk).
  bool BodyComplete() const {
    if (!in_body_) return false;
    if (has_length_ && !chunked_ && body_raw_ >= content_length_) return true;
    return chunked_ && (dechunk_.done() || dechunk_.failed());
  }

  // Adds received head bytes; once the head is whole, reads its status and headers and takes the body bytes
  // after it. False when the response holds the error to return.
  bool TakeHead(std::string_view got) {
    head_.append(got);
    size_t at = head_.find("\r\n\r\n");
    if ((at == std::string::npos ? head_.size() : at) > kMaxHead) {
      r_.error = "response headers larger than " + std::to_string(kMaxHead >> 10) + " KiB";
      r_.status = 0;
      return false;
    }
    if (at == std::string::npos) return true;
    in_body_ = true;
    // Status line "HTTP/1.1 200 OK", then headers.
    auto lines = Split(std::string_view(head_).substr(0, at), '\n');
    auto words = SplitWords(lines[0]);
    if (words.size() < 2 || !StartsWith(words[0], "HTTP/")) {
      r_.error = "not an HTTP response";
      return false;
    }
    r_.status = static_cast<int>(ParseUnsigned(words[1]).value_or(0));
    for (size_t i = 1; i < lines.size(); ++i) TakeHeader(lines[i]);
    if (req_.on_head) req_.on_head(r_.status);
    TakeBody(std::string_view(head_).substr(at + 4));
    return true;
  }

  // Notes the framing a header line sets (Content-Length, chunked Transfer-Encoding).
  void TakeHeader(std::string_view header_line) {
    std::string line(Trim(header_line));
    auto colon = line.find(':');
    if (colon == std::string::npos) return;
    std::string key = ToLower(Trim(std::string_view(line).substr(0, colon)));
    std::string value = ToLower(Trim(std::string_view(line).substr(colon + 1)));
    if (key == "content-length") {
      auto len = ParseUnsigned(value);
      has_length_ = len.has_value();
      content_length_ = len.value_or(0);
    }
    if (key == "transfer-encoding" && value.find("chunked") != std::string::npos) chunked_ = true;
  }

  // Takes raw body bytes: cut at Content-Length, chunk coding removed, then delivered.
  void TakeBody(std::string_view raw) {
    if (has_length_ && !chunked_) raw = raw.substr(0, content_length_ - std::min(content_length_, body_raw_));
    body_raw_ += raw.size();
    if (chunked_)
      Deliver(dechunk_.Feed(raw));
    else
      Deliver(raw);
  }

  // Keeps decoded body bytes (a stream's first kMaxKeptStream only) and hands them to on_data; past the
  // bound, marks the response too big.
  void Deliver(std::string_view piece) {
    if (piece.empty() || too_big_) return;
    delivered_ += piece.size();
    if (req_.on_data ? delivered_ > kMaxStream : r_.body.size() + piece.size() > kMaxEngineBody) {
      too_big_ = true;
      return;
    }
    if (!req_.on_data || r_.body.size() < kMaxKeptStream)
      r_.body.append(piece.substr(0, req_.on_data ? kMaxKeptStream - r_.body.size() : piece.size()));
    if (req_.on_data) req_.on_data(piece);
  }

  const UnixRequest& req_;
  HttpResponse& r_;
  std::string head_;
  bool in_body_ = false;
  bool has_length_ = false;
  size_t content_length_ = 0;
  size_t body_raw_ = 0;  // body bytes received (before chunk decoding)
  bool chunked_ = false;
  Dechunker dechunk_;
  uint64_t delivered_ = 0;
  bool too_big_ = false;
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
  r.error = UnixHttpConnect(fd.get(), addr, socket_path, deadline);
  if (!r.error.empty()) return r;
  r.error = UnixHttpSend(fd.get(), UnixHttpRequestText(req), deadline);
  if (!r.error.empty()) return r;
  UnixResponseReader reader(req, r);
  if (reader.Read(fd.get(), deadline)) reader.Finish();
  return r;
}

}  // namespace gp::sys
