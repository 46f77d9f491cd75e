// The gate before measuring: doctor's gpu, driver and fabricmanager layers (and docker and
// container_toolkit for the container runtime) must not fail; image never blocks.
#include "accept/gate.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <string>

#include "apply/harness.h"
#include "sys/process.h"

namespace {

std::vector<gp::verdict::LayerReport> Layers(const std::string& failing) {
  std::vector<gp::verdict::LayerReport> out;
  for (const char* n : {"os", "gpu", "driver", "fabricmanager", "docker", "container_toolkit", "image"}) {
    gp::verdict::LayerReport r;
    r.name = n;
    r.status = n == failing ? gp::verdict::Status::kFail : gp::verdict::Status::kOk;
    r.detail = n == failing ? "broken" : "";
    out.push_back(r);
  }
  return out;
}

}  // namespace

TEST_CASE("accept gate: the layers that block measuring", "[accept]") {
  CHECK_FALSE(gp::accept::CheckGate(Layers(""), "container"));
  CHECK_FALSE(gp::accept::CheckGate(Layers("image"), "container"));
  CHECK_FALSE(gp::accept::CheckGate(Layers("os"), "container"));
  CHECK(gp::accept::CheckGate(Layers("driver"), "container")->layer == "driver");
  CHECK(gp::accept::CheckGate(Layers("fabricmanager"), "host")->layer == "fabricmanager");
  CHECK(gp::accept::CheckGate(Layers("docker"), "container")->layer == "docker");
  CHECK_FALSE(gp::accept::CheckGate(Layers("docker"), "host"));
  auto fewer = Layers("");
  fewer.erase(fewer.begin() + 1);  // no gpu layer at all
  CHECK(gp::accept::CheckGate(fewer, "host")->layer == "gpu");
  // A host without NVSwitches: doctor does not show the fabricmanager layer, and it does not block.
  auto no_fm = Layers("");
  no_fm.erase(no_fm.begin() + 3);
  REQUIRE(no_fm[2].name == "driver");
  CHECK_FALSE(gp::accept::CheckGate(no_fm, "host"));
}

namespace {

// A stand-in python3 first on PATH for the life of the object: a shell script that answers as a case needs.
class StandinPython {
 public:
  explicit StandinPython(const std::string& body, bool with_python = true) {
    if (with_python) {
      const std::string path = root_.path() + "/python3";
      root_.Write("/python3", "#!/bin/sh\n" + body + "\n");
      ::chmod(path.c_str(), 0755);
    }
    const char* old = std::getenv("PATH");
    old_path_ = old ? old : "";
    ::setenv("PATH", with_python ? (root_.path() + ":" + old_path_).c_str() : root_.path().c_str(), 1);
  }
  ~StandinPython() { ::setenv("PATH", old_path_.c_str(), 1); }
  StandinPython(const StandinPython&) = delete;
  StandinPython& operator=(const StandinPython&) = delete;

 private:
  gp::test::TempRoot root_;
  std::string old_path_;
};

std::string TorchGate(const std::string& body, int nvml_gpus, bool with_python = true) {
  StandinPython python(body, with_python);
  gp::sys::RealCommandRunner runner;
  auto fail = gp::accept::CheckHostTorch(runner, nvml_gpus, std::chrono::milliseconds(1000));
  if (!fail) return "holds";
  CHECK(fail->layer == "torch");
  return fail->detail;
}

}  // namespace

TEST_CASE("accept gate: with --runtime host, python3 imports torch and sees NVML's GPUs", "[accept]") {
  // The stand-in answers only the gate's own question: python3 -c '...import torch...'.
  const std::string counts = R"(case "$1 $2" in "-c "*"import torch"*) echo "$GPUS";; *) exit 9;; esac)";
  CHECK(TorchGate("GPUS=8; " + counts, 8) == "holds");
  CHECK(TorchGate("GPUS=7; " + counts, 8) == "torch sees 7 GPUs, NVML 8");
  CHECK(TorchGate("GPUS=0; " + counts, 8) == "torch sees 0 GPUs, NVML 8");
  CHECK(TorchGate("echo 'Traceback (most recent call last):' >&2; "
                  "echo \"ModuleNotFoundError: No module named 'torch'\" >&2; exit 1",
                  8) ==
        "python3 -c 'import torch' failed (exit 1): ModuleNotFoundError: No module named 'torch'");
  CHECK(TorchGate("echo eight", 8) == "python3 -c 'import torch' printed no GPU count");
  CHECK(TorchGate("", 8, /*with_python=*/false) == "python3 is not on PATH");
  // Bounded in time and in output.
  CHECK(TorchGate("exec sleep 30", 8) == "python3 -c 'import torch' did not finish in 1 s");
  CHECK(TorchGate("head -c 5000000 /dev/zero | tr '\\0' x; echo; echo 8", 8) ==
        "python3 -c 'import torch' printed more than 65536 bytes");
  // Its words reach a terminal: control characters are not passed through.
  CHECK(TorchGate("printf 'bad\\033[31m red\\n' >&2; exit 2", 8).find('\033') == std::string::npos);
}
