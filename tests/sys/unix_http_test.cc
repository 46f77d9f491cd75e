// RealUnixHttp against a tiny HTTP server on a unix socket (a thread): the request it sends, the bodies
// it reads (Content-Length, chunked, until close), and its timeouts and transport errors.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "sys/http.h"

using namespace gp;
using namespace std::chrono_literals;

namespace {

// Accepts one connection, reads the request head, optionally sleeps, writes `reply` in pieces, closes.
class OneShotServer {
 public:
  OneShotServer(std::string reply, std::chrono::milliseconds delay = 0ms) {
    path = "/tmp/gpuprep-http-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".sock";
    ::unlink(path.c_str());
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr;
    std::memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 1) == 0);
    thread = std::thread([this, reply = std::move(reply), delay] {
      int c = ::accept(fd, nullptr, nullptr);
      if (c < 0) return;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      std::this_thread::sleep_for(delay);
      // Several writes, so the client must assemble the response.
      for (size_t off = 0; off < reply.size(); off += 7) {
        (void)::send(c, reply.data() + off, std::min<size_t>(7, reply.size() - off), MSG_NOSIGNAL);
      }
      ::close(c);
    });
  }
  // The request the server read (waits for the server to finish).
  std::string Request() {
    if (thread.joinable()) thread.join();
    return request;
  }
  ~OneShotServer() {
    ::shutdown(fd, SHUT_RDWR);
    if (thread.joinable()) thread.join();
    ::close(fd);
    ::unlink(path.c_str());
  }
  std::string path;
  std::string request;
  int fd = -1;
  std::thread thread;
  static inline int counter = 0;
};

}  // namespace

TEST_CASE("RealUnixHttp: request line and a Content-Length body", "[probe][sys]") {
  std::string body = R"({"Version":"28.3.2"})";
  OneShotServer server("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\n\r\n" + body + "trailing garbage");
  sys::RealUnixHttp http;
  auto r = http.Get(server.path, "/v1.41/version", 2000ms);
  CHECK(r.error == "");
  CHECK(r.status == 200);
  CHECK(r.ok());
  CHECK(r.body == body);
}

TEST_CASE("RealUnixHttp: sends a plain HTTP/1.1 GET with Host and Connection: close", "[probe][sys]") {
  OneShotServer server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
  sys::RealUnixHttp http;
  auto r = http.Get(server.path, "/info", 2000ms);
  CHECK(r.body == "{}");
  std::string request = server.Request();
  CHECK(request.rfind("GET /info HTTP/1.1\r\nHost: docker\r\n", 0) == 0);
  CHECK(request.find("\r\nConnection: close\r\n") != std::string::npos);
}

TEST_CASE("RealUnixHttp: chunked and read-until-close bodies", "[probe][sys]") {
  sys::RealUnixHttp http;
  {
    OneShotServer server(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5\r\n{\"a\":\r\n4;ext=1\r\n1234\r\n1\r\n}\r\n0\r\n\r\n");
    auto r = http.Get(server.path, "/info", 2000ms);
    CHECK(r.error == "");
    CHECK(r.body == "{\"a\":1234}");
  }
  {
    OneShotServer server("HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\n\r\npage not found\n");
    auto r = http.Get(server.path, "/nope", 2000ms);
    CHECK(r.error == "");
    CHECK(r.status == 404);
    CHECK_FALSE(r.ok());
    CHECK(r.body == "page not found\n");
  }
  {
    OneShotServer server("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort");
    auto r = http.Get(server.path, "/info", 2000ms);
    CHECK(r.error == "incomplete body (5 of 100 bytes)");
  }
}

TEST_CASE("RealUnixHttp: a server that does not answer in time", "[probe][sys]") {
  OneShotServer server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", 1500ms);
  sys::RealUnixHttp http;
  auto start = std::chrono::steady_clock::now();
  auto r = http.Get(server.path, "/info", 200ms);
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.error == "read: timed out");
  CHECK(r.status == 0);
  CHECK_FALSE(r.ok());
  CHECK(took < 1000ms);
}

TEST_CASE("RealUnixHttp: no socket, or nobody listening", "[probe][sys]") {
  sys::RealUnixHttp http;
  auto missing = http.Get("/tmp/gpuprep-no-such-socket.sock", "/version", 200ms);
  CHECK(missing.error == "connect /tmp/gpuprep-no-such-socket.sock: No such file or directory");
  CHECK(missing.status == 0);

  // A socket file whose listener is gone.
  std::string path = "/tmp/gpuprep-http-dead-" + std::to_string(::getpid()) + ".sock";
  ::unlink(path.c_str());
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr;
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::bind(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) == 0);
  ::close(fd);
  auto refused = http.Get(path, "/version", 200ms);
  CHECK(refused.error == "connect " + path + ": Connection refused");
  ::unlink(path.c_str());
}

namespace {
// Writes `head` and then `body_bytes` bytes of 'x' in large pieces, as fast as the client reads.
class FloodServer {
 public:
  FloodServer(std::string head, size_t body_bytes) {
    path = "/tmp/gpuprep-flood-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".sock";
    ::unlink(path.c_str());
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr;
    std::memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 1) == 0);
    thread = std::thread([this, head = std::move(head), body_bytes] {
      int c = ::accept(fd, nullptr, nullptr);
      if (c < 0) return;
      std::string piece(1u << 16, 'x');
      bool ok = ::send(c, head.data(), head.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(head.size());
      for (size_t sent = 0; ok && sent < body_bytes; sent += piece.size())
        ok = ::send(c, piece.data(), std::min(piece.size(), body_bytes - sent), MSG_NOSIGNAL) > 0;
      ::close(c);
    });
  }
  ~FloodServer() {
    ::shutdown(fd, SHUT_RDWR);
    if (thread.joinable()) thread.join();
    ::close(fd);
    ::unlink(path.c_str());
  }
  std::string path;
  int fd = -1;
  std::thread thread;
  static inline int counter = 0;
};
}  // namespace

TEST_CASE("RealUnixHttp: a flooding engine's body and headers are cut at their limits", "[probe][sys]") {
  sys::RealUnixHttp http;
  {
    FloodServer body("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n", 40u << 20);
    auto r = http.Get(body.path, "/info", 5000ms);
    CHECK(r.error == "response larger than 16 MiB");
    CHECK(r.body.size() <= (16u << 20));
  }
  {
    FloodServer head("HTTP/1.1 200 OK\r\nX-Flood: ", 8u << 20);
    auto r = http.Get(head.path, "/info", 5000ms);
    CHECK(r.error == "response headers larger than 64 KiB");
  }
}

TEST_CASE("RealUnixHttp: on_head comes before the body, once", "[probe][sys]") {
  OneShotServer server(
      "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.multiplexed-stream\r\n\r\nabcdefghij");
  sys::RealUnixHttp http;
  sys::UnixRequest req;
  req.method = "POST";
  req.path = "/containers/abc/attach?stream=1";
  std::string seen;
  req.on_head = [&](int status) { seen += "head " + std::to_string(status) + ";"; };
  req.on_data = [&](std::string_view d) { seen += std::string(d); };
  auto r = http.Request(server.path, req);
  CHECK(r.error == "");
  CHECK(seen == "head 200;abcdefghij");
}

TEST_CASE("RealUnixHttp: keep_running ends a silent request at once", "[probe][sys]") {
  OneShotServer server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 1500ms);
  sys::RealUnixHttp http;
  sys::UnixRequest req;
  req.path = "/containers/abc/wait";
  req.timeout = 10000ms;
  const auto t0 = std::chrono::steady_clock::now();
  req.keep_running = [&] { return std::chrono::steady_clock::now() - t0 < 300ms; };
  auto r = http.Request(server.path, req);
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK(r.stopped);
  CHECK_FALSE(r.ok());
  CHECK(took < 1200ms);  // one poll slice past the 300 ms, not the server's 1.5 s
  // Without it, the same answer is read whole.
  OneShotServer again("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 100ms);
  req.keep_running = [] { return true; };
  r = http.Request(again.path, req);
  CHECK_FALSE(r.stopped);
  CHECK(r.body == "ok");
}
