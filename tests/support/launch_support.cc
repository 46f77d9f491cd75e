#include "support/launch_support.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "cli/context.h"
#include "sys/fs.h"
#include "sys/process.h"

namespace gp::test {

std::string Snapshot(const std::string& name) { return std::string(GP_FIXTURES) + "/snapshots/" + name; }

pid_t StartFakeDockerd(const std::vector<std::string>& args, ReadyPipe& ready) {
  std::vector<std::string> argv = {"python3", std::string(GP_SOURCE_DIR) + "/tests/support/fake_dockerd.py"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--ready-fd", std::to_string(ready.write_fd())});
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    ready.InheritWriteEnd();
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  ready.CloseWriteEnd();
  try {
    // Written once the socket accepts connections (after listen(), not just bind()).
    const std::string line = ready.WaitLine("fake_dockerd.py");
    if (line != "ready") throw std::runtime_error("fake_dockerd.py said \"" + line + "\", not \"ready\"");
  } catch (...) {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    throw;
  }
  return pid;
}

FakeDockerd::FakeDockerd() {
  socket_ = dir_.path + "/docker.sock";
  record_ = dir_.path + "/requests.jsonl";
  pid_ = StartFakeDockerd({socket_, record_}, ready_);
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
