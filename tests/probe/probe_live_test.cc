// The real probe on the build machine (Debian 12, no GPU, CUDA 13.0 from pip wheels under
// /usr/local/cuda-13.0): invariants, not exact versions.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "manifest/loader.h"
#include "probe/probe.h"
#include "sys/fs.h"
#include "sys/http.h"
#include "sys/native.h"
#include "sys/process.h"

extern char** environ;

using namespace gp;

namespace {

// Records what the probe runs, then runs it for real.
class RecordingRunner : public sys::CommandRunner {
 public:
  sys::CommandResult Run(const sys::Command& cmd) override {
    argv0.push_back(cmd.argv.empty() ? "" : cmd.argv[0]);
    return real.Run(cmd);
  }
  sys::RealCommandRunner real;
  std::vector<std::string> argv0;
};

}  // namespace

TEST_CASE("live probe of the build machine: CUDA 13 toolkit, cuDNN 9, NCCL 2, no GPU, no driver", "[probe][live]") {
  if (::access("/usr/local/cuda-13.0", F_OK) != 0) {
    WARN("not the build machine (no /usr/local/cuda-13.0): skipped");
    return;
  }
  sys::DiskFs fs("/");
  RecordingRunner runner;
  sys::DlopenNativeLibs native;
  sys::RealUnixHttp docker;
  probe::ProbeEnv env;
  env.fs = &fs;
  env.runner = &runner;
  env.native = &native;
  env.docker = &docker;
  env.compat = &manifest::EmbeddedCompat();
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  auto start = std::chrono::steady_clock::now();
  auto h = probe::ProbeHost(env);
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  WARN("live ProbeHost took " << ms << " ms (first call, cold dlopen)");

  CHECK(h.live);
  CHECK(h.os.id == "debian");
  CHECK_FALSE(h.kernel.empty());
  CHECK(h.arch == "x86_64");
  CHECK(h.cpus > 0);
  CHECK(h.memory_bytes > 0);
  CHECK(h.shm_bytes > 0);
  CHECK(h.disk_free_bytes.has_value());
  CHECK(h.gpus.empty());
  CHECK(h.nvswitch_count == 0);
  CHECK_FALSE(h.driver.module.loaded);
  CHECK(h.driver.userspace_version.empty());

  CHECK(h.cuda.found);
  CHECK(h.cuda.version.rfind("13.", 0) == 0);
  CHECK(h.cuda.version.size() > 4);  // the full version (13.0.x), not only 13.0
  CHECK(h.cuda.path == "/usr/local/cuda-13.0");
  CHECK(h.cuda.cuda_major == 13);
  // The wheels' dist-info names give nvcc's version: nothing is spawned for it.
  CHECK(h.cuda.source == "pip:nvidia_cuda_nvcc");
  CHECK(runner.argv0.empty());

  CHECK(h.cudnn.found);
  CHECK(h.cudnn.version.rfind("9.", 0) == 0);
  CHECK(h.cudnn.cuda_major == 13);
  CHECK(h.nccl.found);
  CHECK(h.nccl.version.rfind("2.", 0) == 0);
  CHECK(h.nccl.cuda_major == 13);

  CHECK(h.docker.cli_found);
  CHECK_FALSE(h.docker.engine_reachable);
  CHECK_FALSE(h.docker.detail.empty());
}
