// Shared by the [launch] tests: run `gpuprep` in-process with real file seams, and drive the stand-in
// Docker Engine API (tests/support/fake_dockerd.py) with the real docker CLI through a real shell.
#pragma once
#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/cli.h"
#include "support/ready_pipe.h"
#include "support/temp_dir.h"

namespace gp::test {

// A snapshot under tests/fixtures/snapshots.
std::string Snapshot(const std::string& name);
// The two-GPU H100 host the launch tests target, and the image they start.
inline const std::string kH100x2 = Snapshot("h100x2-runtime.json");
inline const std::string kImage = "nvcr.io/nvidia/pytorch:24.06-py3";

// Starts `python3 fake_dockerd.py ARGS... --ready-fd N` with `ready`'s write end as N, and returns its pid
// once it has written "ready" (it accepts connections); throws (after stopping it) when it does not within
// kReadyTimeout. `ready` stays open for the lines it writes later.
pid_t StartFakeDockerd(const std::vector<std::string>& args, ReadyPipe& ready);

// fake_dockerd.py on a unix socket in a temp dir, killed on destruction.
class FakeDockerd {
 public:
  FakeDockerd();
  ~FakeDockerd();
  FakeDockerd(const FakeDockerd&) = delete;
  FakeDockerd& operator=(const FakeDockerd&) = delete;

  // Runs `sh -c script` with DOCKER_HOST pointing here; returns the exit code (docker run exits 125
  // when the stand-in refuses the create it recorded). Clears earlier records first.
  int RunShell(const std::string& script, std::string* err = nullptr);
  // The last POST /containers/create as recorded: {"method","path","query","body"} (null when none).
  nlohmann::json LastCreate() const;

 private:
  TempDir dir_{"gpuprep-launch"};  // removed after the stand-in is stopped
  std::string socket_, record_;
  ReadyPipe ready_;  // open while it runs: a later write does not meet a closed pipe
  int pid_ = -1;
};

}  // namespace gp::test
