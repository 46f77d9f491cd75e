// The container layers' verify (layers/docker, container_toolkit and image verify.cc, over the kit of
// apply/verify_container.h) against the stand-in Engine API: every GPU listed by nvidia-smi -L in a
// container, the torch check, and the classic failures named with their fix.
#include "apply/verify_container.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "apply/harness.h"
#include "layers/table.h"
#include "support/fake_engine.h"
#include "support/launch_support.h"
#include "support/temp_dir.h"
#include "sys/http.h"

using namespace gp;
using verdict::Status;

namespace {

const std::string kRef = "nvcr.io/nvidia/pytorch:23.10-py3";

struct Setup {
  test::TempDir bin_dir;
  std::string bin = bin_dir.path;
  manifest::Stack stack = test::TestStack();
  probe::HostFacts facts = test::BareHost(2);
  sys::RealUnixHttp http;
  Setup() {
    stack.image.ref = kRef;
    test::WriteScript(bin, "nvidia-smi",
                      "[ \"$NVIDIA_VISIBLE_DEVICES\" = void ] && exit 9\n"
                      "echo 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)'; echo 'GPU 1: NVIDIA H100 80GB HBM3 "
                      "(UUID: GPU-1)'");
    test::WriteScript(bin, "python",
                      "n=$(nvidia-smi -L | grep -c '^GPU ') || { echo 'RuntimeError: No CUDA GPUs are "
                      "available' >&2; exit 1; }\n"
                      "echo \"$n NVIDIA H100 80GB HBM3\"");
  }
  nlohmann::json State(bool pulled) const {
    nlohmann::json img = {
        {"digest", "sha256:" + std::string(64, 'a')},
        {"env",
         {"CUDA_VERSION=12.2.2.009", "PYTORCH_VERSION=2.1.0a0+32f93b1", "NVIDIA_PYTORCH_VERSION=23.10"}},
        {"bin", bin}};
    return pulled ? nlohmann::json{{"images", {{kRef, img}}}} : nlohmann::json{{"registry", {{kRef, img}}}};
  }
  verdict::LayerReport Verify(const std::string& layer, const test::FakeEngine& fake) {
    facts.docker.socket = fake.socket();
    apply::VerifyEnv env{nullptr, nullptr, &stack, &facts, &http};
    return layers::VerifyLayer(layer, env);
  }
};

}  // namespace

TEST_CASE("verify containers: every GPU in a container, torch counts them", "[apply][verify][docker]") {
  Setup s;
  test::FakeEngine fake(s.State(true));
  test::WriteScript(fake.dir(), "nvidia-container-runtime-hook", "exit 0");
  auto d = s.Verify("docker", fake);
  CHECK(d.status == Status::kOk);
  CHECK(d.detail == "Docker 28.3.0 answers on its socket");
  auto tk = s.Verify("container_toolkit", fake);
  CHECK(tk.status == Status::kOk);
  CHECK(tk.detail == "a container sees every GPU (2, nvidia-smi -L)");
  auto img = s.Verify("image", fake);
  CHECK(img.status == Status::kOk);
  CHECK(img.detail == "torch in " + kRef + " sees 2 GPUs (NVIDIA H100 80GB HBM3)");
  s.facts = test::BareHost(4);  // the host has more GPUs than a container sees
  auto few = s.Verify("container_toolkit", fake);
  CHECK(few.status == Status::kFail);
  CHECK(few.detail == "a container lists 2 GPUs but the host has 4");
}

TEST_CASE("verify containers: an image without PyTorch gets no torch check", "[apply][verify][docker]") {
  Setup s;
  // A CUDA base image (nvcr.io/nvidia/cuda): CUDA_VERSION and no PYTORCH_VERSION in its config; its python
  // would fail.
  const std::string ref = "nvcr.io/nvidia/cuda:12.9.1-cudnn-runtime-ubuntu22.04";
  s.stack.image.ref = ref;
  test::WriteScript(s.bin, "python", "echo 'ModuleNotFoundError: No module named torch' >&2; exit 1");
  nlohmann::json img = {
      {"digest", "sha256:" + std::string(64, 'b')}, {"env", {"CUDA_VERSION=12.9.1"}}, {"bin", s.bin}};
  test::FakeEngine fake(nlohmann::json{{"images", {{ref, img}}}});
  test::WriteScript(fake.dir(), "nvidia-container-runtime-hook", "exit 0");
  auto tk = s.Verify("container_toolkit", fake);
  CHECK(tk.status == Status::kOk);
  CHECK(tk.detail == "a container sees every GPU (2, nvidia-smi -L)");
  auto r = s.Verify("image", fake);
  CHECK(r.status == Status::kSkip);
  CHECK(r.detail == ref + " carries no PyTorch (no PYTORCH_VERSION in its config): no torch check");
}

TEST_CASE("verify containers: the classic failures by name, with their fix", "[apply][verify][docker]") {
  Setup s;
  {
    test::FakeEngine fake(s.State(false));
    auto r = s.Verify("container_toolkit", fake);
    CHECK(r.status == Status::kFail);
    CHECK(r.detail == kRef + " is not pulled (verify never pulls)");
    CHECK(r.fix == std::optional<std::string>("sudo gpuprep apply --yes --only image"));
  }
  test::FakeEngine fake(s.State(true));  // no toolkit hook: Docker has no driver for --gpus
  auto r = s.Verify("container_toolkit", fake);
  CHECK(r.status == Status::kFail);
  CHECK(r.detail ==
        "nvidia-smi -L in a container: Docker has no GPU device driver: the NVIDIA Container Toolkit is "
        "not installed, or Docker started before it was (could not select device driver \"\" with "
        "capabilities: [[gpu]])");
  CHECK(r.fix ==
        std::optional<std::string>(
            "sudo gpuprep apply --yes --only container_toolkit, then: sudo systemctl restart docker"));
  s.stack.docker.gpu_access = "cdi";
  r = s.Verify("image", fake);
  CHECK(r.detail ==
        "the torch check in " + kRef +
            ": no CDI spec names the GPUs (failed to inject CDI devices: unresolvable CDI devices "
            "nvidia.com/gpu=all)");
}

TEST_CASE("DiagnoseContainerError names the first-boot failures", "[apply][verify][docker]") {
  auto d =
      apply::DiagnoseContainerError("Error response from daemon: unknown or invalid runtime name: nvidia");
  REQUIRE(d);
  CHECK(d->fix == "sudo gpuprep apply --yes --only container_toolkit");
  d = apply::DiagnoseContainerError(
      "failed to create task for container: failed to create shim task: OCI runtime create failed: runc "
      "create "
      "failed: unable to start container process: error during container init: error running hook #0: error "
      "running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: "
      "initialization error: nvml error: driver/library version mismatch: unknown");
  REQUIRE(d);
  CHECK(d->fix == "reboot so the kernel module matches the installed driver libraries");
  CHECK(apply::DiagnoseContainerError("could not select device driver \"cdi\" with capabilities: []"));
  CHECK_FALSE(apply::DiagnoseContainerError("something else entirely"));
}
