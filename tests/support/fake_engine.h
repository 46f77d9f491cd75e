// The stateful stand-in Engine API (tests/support/fake_dockerd.py with a STATE file) in a temp dir, for the
// [docker] tests: images in a stand-in registry, daemon.json read at start and on SIGHUP, containers run.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/ready_pipe.h"
#include "support/temp_dir.h"

namespace gp::test {

class FakeEngine {
 public:
  // `state` as documented in fake_dockerd.py; "daemon_json", "hook" and "cdi_dirs" default to paths under
  // dir().
  explicit FakeEngine(nlohmann::json state);
  ~FakeEngine();
  FakeEngine(const FakeEngine&) = delete;
  FakeEngine& operator=(const FakeEngine&) = delete;

  const std::string& dir() const { return dir_.path; }
  const std::string& socket() const { return socket_; }
  std::string daemon_json() const { return dir_.path + "/daemon.json"; }
  std::string hook() const { return dir_.path + "/nvidia-container-runtime-hook"; }
  std::string cdi_dir() const { return dir_.path + "/cdi"; }
  void Hup();                                    // SIGHUP, then waits until the engine has re-read its config
  std::vector<nlohmann::json> Requests() const;  // every recorded request, in order

 private:
  TempDir dir_{"gpuprep-engine"};  // removed after the stand-in is stopped
  std::string socket_, record_;
  ReadyPipe ready_;  // "ready" once it accepts connections, then "reloaded" after each SIGHUP
  int pid_ = -1;
};

// A shell script `name` in `dir` (mode 0755) whose body is `body`.
void WriteScript(const std::string& dir, const std::string& name, const std::string& body);

}  // namespace gp::test
