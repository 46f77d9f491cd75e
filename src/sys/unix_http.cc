// RealUnixHttp: one HTTP/1.1 GET over an AF_UNIX stream socket (the Docker Engine API), with a single
// deadline covering connect, send and read (poll-based, non-blocking socket). Handles Content-Length,
// chunked transfer coding and read-until-close bodies.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>

#include "sys/http.h"
#include "util/strings.h"

namespace gp::sys {
namespace {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
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

// Decodes a chunked body; nullopt-like false when incomplete or malformed.
bool Dechunk(const std::string& in, std::string& out) {
  size_t pos = 0;
  out.clear();
  for (;;) {
    size_t eol = in.find("\r\n", pos);
    if (eol == std::string::npos) return false;
    std::string size_text = in.substr(pos, eol - pos);
    size_text = size_text.substr(0, size_text.find(';'));
    size_t size = 0;
    try {
      size = std::stoul(size_text, nullptr, 16);
    } catch (...) {
      return false;
    }
    pos = eol + 2;
    if (size == 0) return true;  // trailers ignored
    if (in.size() < pos + size + 2) return false;
    out.append(in, pos, size);
    pos += size + 2;
  }
}

}  // namespace

HttpResponse RealUnixHttp::Get(const std::string& socket_path, const std::string& path,
                               std::chrono::milliseconds timeout) {
  HttpResponse r;
  const auto deadline = Clock::now() + timeout;
  struct sockaddr_un addr;
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    r.error = "socket path too long: " + socket_path;
    return r;
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size());
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
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

  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: docker\r\nUser-Agent: gpuprep\r\n"
                              "Accept: application/json\r\nConnection: close\r\n\r\n";
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

  std::string data;
  size_t header_end = std::string::npos;
  bool has_length = false;
  size_t content_length = 0;
  bool chunked = false;
  char buf[16384];
  for (;;) {
    if (header_end != std::string::npos) {
      size_t body_len = data.size() - header_end;
      if (has_length && body_len >= content_length) break;
      if (chunked) {
        std::string body;
        if (Dechunk(data.substr(header_end), body)) break;
      }
    }
    std::string err;
    if (!Wait(fd.get(), POLLIN, deadline, err)) {
      r.error = "read: " + err;
      return r;
    }
    ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      r.error = std::string("read: ") + std::strerror(errno);
      return r;
    }
    if (n == 0) break;  // peer closed: the body ends here
    data.append(buf, static_cast<size_t>(n));
    if (header_end == std::string::npos) {
      size_t at = data.find("\r\n\r\n");
      if (at == std::string::npos) continue;
      header_end = at + 4;
      // Status line "HTTP/1.1 200 OK", then headers.
      auto lines = Split(std::string_view(data).substr(0, at), '\n');
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
    }
  }
  if (header_end == std::string::npos) {
    r.error = data.empty() ? "empty response" : "incomplete response headers";
    r.status = 0;
    return r;
  }
  std::string body = data.substr(header_end);
  if (chunked) {
    if (!Dechunk(body, r.body)) {
      r.error = "incomplete chunked body";
      return r;
    }
  } else if (has_length) {
    if (body.size() < content_length) {
      r.error = "incomplete body (" + std::to_string(body.size()) + " of " + std::to_string(content_length) + " bytes)";
      return r;
    }
    r.body = body.substr(0, content_length);
  } else {
    r.body = std::move(body);
  }
  return r;
}

}  // namespace gp::sys
