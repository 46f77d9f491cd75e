// A plain http server (tests/support/serve_dir.py, `python3 -m http.server` that says when it listens)
// serving a directory for the curl client's tests, stopped (by its pid) when it goes out of scope. The
// constructor returns once the server listens: it writes its port to a readiness pipe the test blocks on.
#pragma once
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "support/ready_pipe.h"

namespace gp::test {

class PythonHttpServer {
 public:
  // Serves `dir` on bind_addr:port (port 0: a free one, see port()); with `log`, the server's request log
  // (its stderr) goes there. Throws when the server is not listening within kReadyTimeout.
  PythonHttpServer(const std::string& dir, const std::string& bind_addr, int port = 0,
                   const std::string& log = "") {
    const std::string script = std::string(GP_SOURCE_DIR) + "/tests/support/serve_dir.py";
    const std::string p = std::to_string(port);
    const std::string fd = std::to_string(ready_.write_fd());
    pid_ = ::fork();
    if (pid_ == 0) {
      if (!log.empty() && !std::freopen(log.c_str(), "w", stderr)) _exit(126);
      ready_.InheritWriteEnd();
      ::execlp("python3", "python3", script.c_str(), dir.c_str(), bind_addr.c_str(), p.c_str(), fd.c_str(),
               static_cast<char*>(nullptr));
      _exit(127);
    }
    ready_.CloseWriteEnd();
    try {
      port_ = std::stoi(ready_.WaitLine("the http server (serve_dir.py)"));
    } catch (...) {
      Stop();
      throw;
    }
  }
  ~PythonHttpServer() { Stop(); }
  PythonHttpServer(const PythonHttpServer&) = delete;
  PythonHttpServer& operator=(const PythonHttpServer&) = delete;

  // The port it listens on.
  int port() const { return port_; }

 private:
  void Stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
  }

  ReadyPipe ready_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace gp::test
