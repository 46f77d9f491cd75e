// `python3 -m http.server` serving a directory over plain http for the curl client's tests, stopped (by its
// pid) when it goes out of scope; and a GET that waits for it to listen.
#pragma once
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "sys/http.h"

namespace gp::test {

class PythonHttpServer {
 public:
  // Serves `dir` on bind_addr:port; with `log`, the server's request log (its stderr) goes there.
  PythonHttpServer(const std::string& dir, const std::string& bind_addr, int port,
                   const std::string& log = "") {
    pid_ = ::fork();
    if (pid_ == 0) {
      if (!log.empty() && !std::freopen(log.c_str(), "w", stderr)) _exit(126);
      const std::string p = std::to_string(port);
      ::execlp("python3", "python3", "-m", "http.server", "--bind", bind_addr.c_str(), "--directory",
               dir.c_str(), p.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~PythonHttpServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  PythonHttpServer(const PythonHttpServer&) = delete;
  PythonHttpServer& operator=(const PythonHttpServer&) = delete;

 private:
  pid_t pid_ = -1;
};

// GET `url`, again every 100 ms for up to 10 s until it succeeds (the server needs a moment to listen).
inline sys::HttpResponse GetOnceListening(sys::HttpClient& http, const std::string& url) {
  sys::HttpResponse r;
  for (int i = 0; i < 100 && !r.ok(); ++i) {
    if (i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    r = http.Get(url, std::chrono::seconds(5));
  }
  return r;
}

}  // namespace gp::test
