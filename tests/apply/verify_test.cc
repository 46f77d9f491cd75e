// Active verification verdicts, word for word, with fake NVML/libcuda/cuDNN/NCCL answers.
#include "apply/verify.h"

#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "layers/table.h"

using namespace gp;

namespace {
struct V {
  test::TempRoot root;
  manifest::Stack stack = test::TestStack();
  probe::HostFacts facts = test::BareHost(2);
  test::FakeNative native = test::FakeNative::Healthy(2);
  V() {
    root.Write("/proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n");
  }
  verdict::LayerReport Run(const std::string& layer, bool live = true) {
    apply::VerifyEnv env{&root.fs(), live ? &native : nullptr, &stack, &facts};
    return layers::VerifyLayer(layer, env);
  }
};
}  // namespace

TEST_CASE("verify: a healthy host passes every layer", "[apply]") {
  V v;
  for (const auto& l : {"driver", "cuda", "cudnn", "nccl"}) {
    auto r = v.Run(l);
    INFO(l << ": " << r.detail);
    CHECK(r.status == verdict::Status::kOk);
  }
  CHECK(v.Run("driver").detail == "kernel module and NVML agree on 535.129.03; NVML sees 2 of 2 GPUs");
  CHECK(v.Run("cudnn").detail == "cuDNN 8.9.7 loads (/usr/lib/x86_64-linux-gnu/libcudnn.so.8)");
  CHECK(v.Run("fabricmanager").status == verdict::Status::kSkip);
}

TEST_CASE("verify: mismatch, missing module, wrong library versions, no CUDA device", "[apply]") {
  V v;
  v.native.nvml.error = "RM has detected an NVML/RM version mismatch.";
  auto r = v.Run("driver");
  CHECK(r.status == verdict::Status::kFail);
  CHECK(r.detail == "NVML: RM has detected an NVML/RM version mismatch.");
  CHECK(r.fix == std::optional<std::string>("reboot so the kernel module matches the libraries"));

  v.root.fs().Remove("/proc/driver/nvidia/version");
  r = v.Run("driver");
  CHECK(r.detail == "no nvidia kernel module is loaded");

  v.native.cudnn.value = 8905;
  r = v.Run("cudnn");
  CHECK(r.status == verdict::Status::kFail);
  CHECK(r.detail ==
        "cuDNN 8.9.5 loaded from /usr/lib/x86_64-linux-gnu/libcudnn.so.8 but the stack pins 8.9.7.29");
  CHECK(r.fix == std::optional<std::string>("sudo gpuprep apply --yes --only cudnn"));

  v.native.nccl = {false, "", std::nullopt, "libnccl.so.2: cannot open shared object file"};
  CHECK(v.Run("nccl").detail == "NCCL could not be loaded: libnccl.so.2: cannot open shared object file");

  v.native.cuda.device_count.reset();
  v.native.cuda.error = "CUDA_ERROR_NO_DEVICE";
  CHECK(v.Run("cuda").detail == "cuInit failed: CUDA_ERROR_NO_DEVICE");
}

TEST_CASE("verify with --root loads nothing: library checks are skip", "[apply]") {
  V v;
  CHECK(v.Run("cuda", false).status == verdict::Status::kSkip);
  CHECK(v.Run("nccl", false).detail == "NCCL not loaded (--root: nothing of the live host is loaded)");
  auto d = v.Run("driver", false);
  CHECK(d.status == verdict::Status::kOk);  // the module file agrees with the pin; NVML part skipped
}

TEST_CASE("verify fabricmanager: the probed version against the loaded driver, never the stack's pin",
          "[apply]") {
  V v;
  v.facts.nvswitch_count = 4;
  v.stack.driver.version.version = Version::Must("580.95.05");  // an R580 stack: no fabric manager pins
  v.stack.driver.fabricmanager_packages.clear();
  const std::string manual =
      "install NVIDIA's fabric manager at the loaded driver's version (535.129.03) (the stack pins no fabric "
      "manager package), then: sudo systemctl enable --now nvidia-fabricmanager.service";
  auto none = v.Run("fabricmanager");
  CHECK(none.status == verdict::Status::kFail);
  CHECK(none.detail == "no fabric manager is installed");
  CHECK(none.fix == std::optional<std::string>(manual));

  v.facts.fabricmanager = {true, "535.129.03", true, true};
  v.root.Write("/etc/systemd/system/multi-user.target.wants/nvidia-fabricmanager.service", "");
  auto ok = v.Run("fabricmanager");
  CHECK(ok.status == verdict::Status::kOk);
  CHECK(ok.detail == "fabric manager 535.129.03 installed, matches the loaded driver and is enabled");
  CHECK(ok.found == std::optional<std::string>("535.129.03"));

  v.facts.fabricmanager.version = "535.104.05";
  auto apart = v.Run("fabricmanager");
  CHECK(apart.status == verdict::Status::kFail);
  CHECK(apart.detail == "fabric manager 535.104.05 does not match the loaded driver 535.129.03");
  CHECK(apart.fix == std::optional<std::string>(manual));

  v.facts.fabricmanager.version = "535.129.03";
  v.root.fs().Remove("/etc/systemd/system/multi-user.target.wants/nvidia-fabricmanager.service");
  auto off = v.Run("fabricmanager");
  CHECK(off.status == verdict::Status::kFail);
  CHECK(off.detail == "nvidia-fabricmanager.service is not enabled");
}

TEST_CASE("verify fabricmanager: pinned packages read from dpkg", "[apply]") {
  V v;
  v.facts.nvswitch_count = 4;
  auto missing = v.Run("fabricmanager");
  CHECK(missing.detail == "nvidia-fabricmanager-535 is not installed");
  CHECK(missing.fix == std::optional<std::string>("sudo gpuprep apply --yes --only fabricmanager"));
  v.root.Write("/var/lib/dpkg/status",
               "Package: nvidia-fabricmanager-535\nStatus: hold ok installed\nVersion: 535.104.05-1\n\n");
  auto apart = v.Run("fabricmanager");
  CHECK(
      apart.detail.find("nvidia-fabricmanager-535 535.104.05 does not match the loaded driver 535.129.03") !=
      std::string::npos);
  CHECK(apart.detail.find(
            "not pinned in /etc/apt/preferences.d/gpuprep: nvidia-fabricmanager-535=535.104.05-1") !=
        std::string::npos);
  CHECK(apart.found == std::optional<std::string>("535.104.05"));
}
