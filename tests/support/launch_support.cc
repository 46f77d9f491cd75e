#include "support/launch_support.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cli/context.h"
#include "sys/fs.h"
#include "sys/process.h"

namespace gp::test {

std::string Snapshot(const std::string& name) { return std::string(GP_FIXTURES) + "/snapshots/" + name; }

FakeDockerd::FakeDockerd() {
  socket_ = dir_.path + "/docker.sock";
  record_ = dir_.path + "/requests.jsonl";
  const std::string script = std::string(GP_SOURCE_DIR) + "/tests/support/fake_dockerd.py";
  pid_ = fork();
  if (pid_ == 0) {
    execlp("python3", "python3", script.c_str(), socket_.c_str(), record_.c_str(),
           static_cast<char*>(nullptr));
    _exit(127);
  }
  WaitAccepting(socket_);
}

void WaitAccepting(const std::string& socket_path) {
  // The socket file appears at bind(), before listen(): a client that connects in between (a loaded
  // machine) is refused and would see no engine at all, so readiness is an accepted connection.
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path)
    throw std::runtime_error("socket path too long: " + socket_path);
  socket_path.copy(addr.sun_path, socket_path.size());
  for (int i = 0; i < 400; ++i) {  // up to 20 s
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool up = fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    if (fd >= 0) close(fd);
    if (up) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("nothing accepts connections on " + socket_path);
}

FakeDockerd::~FakeDockerd() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

int FakeDockerd::RunShell(const std::string& script, std::string* err) {
  std::ofstream(record_, std::ios::trunc).close();
  sys::Command cmd;
  cmd.argv = {"sh", "-c", script};
  cmd.env = {
      {"DOCKER_HOST", "unix://" + socket_}, {"DOCKER_CONFIG", dir_.path + "/config"}, {"HOME", dir_.path}};
  cmd.timeout = std::chrono::milliseconds(60000);
  sys::RealCommandRunner runner;
  sys::CommandResult r = runner.Run(cmd);
  if (err) *err = r.err;
  return r.exit_code;
}

nlohmann::json FakeDockerd::LastCreate() const {
  std::ifstream in(record_);
  std::string line;
  nlohmann::json last;
  while (std::getline(in, line)) {
    auto e = nlohmann::json::parse(line);
    if (e["method"] == "POST" && e["path"].get<std::string>().find("/containers/create") != std::string::npos)
      last = e;
  }
  return last;
}

}  // namespace gp::test
