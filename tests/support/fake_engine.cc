#include "support/fake_engine.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>

#include "support/launch_support.h"

namespace gp::test {

FakeEngine::FakeEngine(nlohmann::json state) {
  socket_ = dir_.path + "/docker.sock";
  record_ = dir_.path + "/requests.jsonl";
  if (!state.contains("daemon_json")) state["daemon_json"] = daemon_json();
  if (!state.contains("hook")) state["hook"] = hook();
  if (!state.contains("cdi_dirs")) state["cdi_dirs"] = {cdi_dir()};
  std::ofstream(dir_.path + "/state.json") << state.dump(2);
  pid_ = StartFakeDockerd({socket_, record_, dir_.path + "/state.json"}, ready_);
}

FakeEngine::~FakeEngine() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

void FakeEngine::Hup() {
  // The engine writes a line to its readiness pipe after each re-read: wait for this one's.
  kill(pid_, SIGHUP);
  const std::string line = ready_.WaitLine("the fake engine's reload");
  if (line != "reloaded") throw std::runtime_error("the fake engine said \"" + line + "\", not \"reloaded\"");
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
