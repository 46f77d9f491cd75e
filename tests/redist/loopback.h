// The loopback HTTPS server of the redist tests (redist_server.py) with a throwaway certificate for
// 127.0.0.1, and the archive maker (make_redist.py): real TLS, real byte ranges, real .tar.xz files.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/ready_pipe.h"

namespace gp::test {

inline std::string RedistScript(const std::string& name) {
  return std::string(GP_SOURCE_DIR) + "/tests/redist/" + name;
}

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs argv (no shell) and waits; returns the exit status. With `ready`, the child keeps the pipe's write
// end (its number is on argv) and the parent drops its own copy.
inline int Spawn(const std::vector<std::string>& argv, bool wait = true, pid_t* out_pid = nullptr,
                 ReadyPipe* ready = nullptr) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (ready) ready->InheritWriteEnd();
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  if (ready) ready->CloseWriteEnd();
  if (out_pid) *out_pid = pid;
  if (!wait) return 0;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// make_redist.py OUT --release R --version V --cuda N [--variant X] [extra...]
inline void MakeRedist(const std::string& out, const std::string& variant,
                       const std::string& version = "9.12.0.46", std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {"python3", RedistScript("make_redist.py"),
                                   out,       "--release",
                                   "9.12.0",  "--version",
                                   version,   "--cuda",
                                   "12",      "--variant",
                                   variant};
  argv.insert(argv.end(), extra.begin(), extra.end());
  if (Spawn(argv) != 0) throw std::runtime_error("make_redist.py failed");
}

class LoopbackServer {
 public:
  // Serves `root` over HTTPS (a fresh certificate under `dir`); `extra` goes to redist_server.py.
  LoopbackServer(const std::string& dir, const std::string& root, std::vector<std::string> extra = {})
      : dir_(dir) {
    ca_ = dir + "/tls.crt";
    if (Spawn({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
               "-nodes", "-days", "1", "-subj", "/CN=gpuprep redist test", "-addext",
               "subjectAltName=IP:127.0.0.1", "-keyout", dir + "/tls.key", "-out", ca_}) != 0)
      throw std::runtime_error("openssl req failed");
    std::vector<std::string> argv = {"python3",
                                     RedistScript("redist_server.py"),
                                     root,
                                     dir + "/port",
                                     dir + "/log",
                                     "--cert",
                                     ca_,
                                     "--key",
                                     dir + "/tls.key"};
    ReadyPipe ready;
    argv.insert(argv.end(), {"--ready-fd", std::to_string(ready.write_fd())});
    argv.insert(argv.end(), extra.begin(), extra.end());
    Spawn(argv, false, &pid_, &ready);
    try {
      port_ = ready.WaitLine("redist_server.py");  // written once it listens
    } catch (...) {
      Stop();
      throw;
    }
  }
  ~LoopbackServer() { Stop(); }
  std::string Url(const std::string& path = "") const { return "https://127.0.0.1:" + port_ + "/" + path; }
  const std::string& ca() const { return ca_; }
  std::string Log() const { return Slurp(dir_ + "/log"); }

 private:
  void Stop() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }

  std::string dir_, ca_, port_;
  pid_t pid_ = -1;
};

}  // namespace gp::test
