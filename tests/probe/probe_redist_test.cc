// gpuprep's redistributable installs under a --root tree: the probe finds the CUDA toolkit in
// /opt/gpuprep/cuda/current (NVIDIA's archives carry no version.json: the version is the name of the
// directory gpuprep switched `current` to), doctor's cuda layer insists on it when the stack says `source:
// redist`, and verify checks its libcudart.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "apply/verify.h"
#include "layers/check.h"
#include "layers/sample.h"
#include "layers/table.h"
#include "manifest/loader.h"
#include "probe/probe.h"
#include "support/fakes.h"

using namespace gp;

namespace {

probe::HostFacts ProbeRoot(test::TempRoot& root) {
  test::FakeCommandRunner runner;
  runner.strict = true;  // a --root probe runs nothing
  probe::ProbeEnv env;
  env.fs = &root.fs();
  env.runner = &runner;
  env.compat = &manifest::EmbeddedCompat();
  env.env = {{"PATH", "/usr/bin:/bin"}};
  auto facts = probe::ProbeHost(env);
  CHECK(runner.calls.empty());
  return facts;
}

// current -> `version`, replacing an earlier link.
void Point(test::TempRoot& root, const std::string& version) {
  ::unlink((root.path() + "/opt/gpuprep/cuda/current").c_str());
  root.Symlink(version, "/opt/gpuprep/cuda/current");
}

// The tree one redist install of CUDA 12.2.2 (cuda_cudart, cuda_nvcc) leaves.
void RedistCuda(test::TempRoot& root, const std::string& version = "12.2.2") {
  const std::string p = "/opt/gpuprep/cuda/" + version;
  root.Write(p + "/include/cuda_runtime_api.h", "#define CUDART_VERSION 12020\n");
  root.Write(p + "/lib/libcudart.so.12.2.140", "ELF");
  root.Symlink("libcudart.so.12.2.140", p + "/lib/libcudart.so.12");
  root.Write(p + "/bin/nvcc", "#!/bin/sh\n");
  Point(root, version);
}

}  // namespace

TEST_CASE("probe --root: the CUDA toolkit of a redist install, before /usr/local/cuda", "[probe][redist]") {
  test::TempRoot root;
  RedistCuda(root);
  auto facts = ProbeRoot(root);
  CHECK(facts.cuda.found);
  CHECK(facts.cuda.version == "12.2.2");
  CHECK(facts.cuda.source == "redist:/opt/gpuprep/cuda/current");
  CHECK(facts.cuda.path == "/opt/gpuprep/cuda/12.2.2");
  CHECK(facts.cuda.cuda_major == std::optional<int>(12));

  SECTION("an apt toolkit beside it does not hide it") {
    root.Write("/usr/local/cuda-12.4/version.json", R"({"cuda_nvcc": {"version": "12.4.131"}})");
    root.Symlink("cuda-12.4", "/usr/local/cuda");
    auto both = ProbeRoot(root);
    CHECK(both.cuda.version == "12.2.2");
    CHECK(both.cuda.path == "/opt/gpuprep/cuda/12.2.2");
  }
  SECTION("a version.json in the prefix is preferred to the directory name") {
    root.Write("/opt/gpuprep/cuda/12.2.2/version.json", R"({"cuda_nvcc": {"version": "12.2.140"}})");
    auto vj = ProbeRoot(root);
    CHECK(vj.cuda.version == "12.2.140");
    CHECK(vj.cuda.source == "version.json");
  }
  SECTION("current pointing at a removed tree is not a toolkit") {
    Point(root, "12.1.1");
    auto gone = ProbeRoot(root);
    CHECK_FALSE(gone.cuda.found);
    CHECK(std::find(
              gone.probe_notes.begin(), gone.probe_notes.end(),
              "cuda: no CUDA toolkit found (/usr/local/cuda*, /opt/gpuprep/cuda, CUDA_HOME, nvcc on PATH, "
              "dpkg)") != gone.probe_notes.end());
  }
}

TEST_CASE("doctor cuda layer: source: redist wants gpuprep's install", "[layers][redist]") {
  test::Inputs t;
  t.stack.cuda.source = "redist";
  // The sample host's toolkit is an apt one in /usr/local/cuda-12.2.
  auto apt = layers::CheckCuda(t.in());
  CHECK(apt.status == verdict::Status::kFail);
  CHECK(
      apt.detail.find("CUDA 12.2.140 is in /usr/local/cuda-12.2, not the stack's redistributable install in "
                      "/opt/gpuprep/cuda (source: redist)") != std::string::npos);
  CHECK(apt.fix == std::optional<std::string>("sudo gpuprep apply --yes --only cuda"));
  bool coded = false;
  for (const auto& f : apt.findings) coded = coded || f.code == "cuda.not-redist";
  CHECK(coded);

  t.host.cuda = {true, "12.2.2", "redist:/opt/gpuprep/cuda/current", "/opt/gpuprep/cuda/12.2.2", 12, {}};
  auto redist = layers::CheckCuda(t.in());
  CHECK(redist.status == verdict::Status::kOk);

  t.stack.cuda.source = "apt";  // an apt stack does not mind where the toolkit came from
  CHECK(layers::CheckCuda(t.in()).status == verdict::Status::kOk);
}

TEST_CASE("verify cuda: source: redist checks /opt/gpuprep/cuda/current and its libcudart",
          "[apply][redist]") {
  test::TempRoot root;
  manifest::Stack stack = test::TestStack();  // CUDA 12.2.2
  stack.cuda.source = "redist";
  stack.cuda.optional = false;
  probe::HostFacts facts = test::BareHost(2);
  test::FakeNative native = test::FakeNative::Healthy(2);
  root.Write("/proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n");
  // An apt toolkit of the right release is not what the stack asked for.
  root.Write("/usr/local/cuda-12.2/version.json", R"({"cuda_nvcc": {"version": "12.2.140"}})");
  auto run = [&] {
    apply::VerifyEnv env{&root.fs(), &native, &stack, &facts};
    return layers::VerifyLayer("cuda", env);
  };
  auto r = run();
  CHECK(r.status == verdict::Status::kFail);
  CHECK(r.detail.find("the CUDA toolkit is not installed in /opt/gpuprep/cuda/current (source: redist)") !=
        std::string::npos);

  RedistCuda(root, "12.1.1");
  r = run();
  CHECK(r.status == verdict::Status::kFail);
  CHECK(r.detail.find("the CUDA toolkit in /opt/gpuprep/cuda/current is 12.1.1 but the stack pins 12.2.2") !=
        std::string::npos);

  RedistCuda(root);
  native.cudart = {true, "/opt/gpuprep/cuda/current/lib/libcudart.so.12", 12020, ""};
  r = run();
  CHECK(r.status == verdict::Status::kOk);
  CHECK(r.detail.find("CUDA toolkit 12.2.2 in /opt/gpuprep/cuda/current; libcudart 12.2 loads") !=
        std::string::npos);
  CHECK(native.cudart_dirs ==
        std::vector<std::string>{"/opt/gpuprep/cuda/current/lib64", "/opt/gpuprep/cuda/current/lib"});
}
