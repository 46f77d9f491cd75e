#include "support/fake_engine.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include "support/launch_support.h"

namespace gp::test {

FakeEngine::FakeEngine(nlohmann::json state) {
  socket_ = dir_.path + "/docker.sock";
  record_ = dir_.path + "/requests.jsonl";
  if (!state.contains("daemon_json")) state["daemon_json"] = daemon_json();
  if (!state.contains("hook")) state["hook"] = hook();
  if (!state.contains("cdi_dirs")) state["cdi_dirs"] = {cdi_dir()};
  state["reload_acks"] = dir_.path + "/reloads";
  std::ofstream(dir_.path + "/state.json") << state.dump(2);
  const std::string script = std::string(GP_SOURCE_DIR) + "/tests/support/fake_dockerd.py";
  const std::string state_path = dir_.path + "/state.json";
  pid_ = fork();
  if (pid_ == 0) {
    execlp("python3", "python3", script.c_str(), socket_.c_str(), record_.c_str(), state_path.c_str(),
           static_cast<char*>(nullptr));
    _exit(127);
  }
  WaitAccepting(socket_);
}

FakeEngine::~FakeEngine() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

void FakeEngine::Hup() {
  // The engine appends a line to its acknowledgements after each re-read: wait for this one's.
  const auto acks = [this] {
    std::ifstream in(dir_.path + "/reloads");
    return std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
  };
  const auto before = acks();
  kill(pid_, SIGHUP);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (acks() == before) {
    if (std::chrono::steady_clock::now() > give_up)
      throw std::runtime_error("the fake engine did not reload");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::vector<nlohmann::json> FakeEngine::Requests() const {
  std::vector<nlohmann::json> out;
  std::ifstream in(record_);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

void WriteScript(const std::string& dir, const std::string& name, const std::string& body) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
}

}  // namespace gp::test
