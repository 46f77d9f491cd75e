// Hand-built Compat, Stack and HostFacts for the layer tests: a healthy 8x H100 host on a CUDA 12.2 stack,
// which each test breaks in one way. The Compat rows are copies of manifests/compat.yaml entries.
#pragma once
#include <utility>
#include <vector>

#include "layers/check.h"
#include "manifest/model.h"
#include "probe/host.h"
#include "support/hosts.h"

namespace gp::test {

using manifest::GpuModel;
using V = Version;

inline manifest::Compat SampleCompat() {
  manifest::Compat c;
  for (auto [cuda, drv] : std::vector<std::pair<const char*, const char*>>{{"13.0.2", "580.95.05"},
                                                                           {"13.0.1", "580.82.07"},
                                                                           {"13.0.0", "580.65.06"},
                                                                           {"12.9.0", "575.51.03"},
                                                                           {"12.8.0", "570.26"},
                                                                           {"12.4.0", "550.54.14"},
                                                                           {"12.2.2", "535.104.05"},
                                                                           {"12.2.0", "535.54.03"},
                                                                           {"12.0.0", "525.60.13"},
                                                                           {"11.8.0", "520.61.05"}})
    c.cuda_min_driver.push_back({V::Must(cuda), V::Must(drv)});
  c.minor_compat = {
      {13, 580, std::nullopt}, {12, 525, V::Must("525.60.13")}, {11, 450, V::Must("450.80.02")}};
  auto gpu = [](const char* name, const char* id, const char* arch, const char* cc, bool dc,
                const char* min_cuda, int min_branch) {
    GpuModel g;
    g.name = name;
    g.pci_ids = {id};
    g.arch = arch;
    g.cc = V::Must(cc);
    g.datacenter = dc;
    g.min_cuda = V::Must(min_cuda);
    g.min_driver_branch = min_branch;
    return g;
  };
  GpuModel h100 = gpu("H100 SXM5 80GB", "0x2330", "hopper", "9.0", true, "11.8", 520);
  // Per-release support as compat.yaml gives it: R525 lists it from 525.60.11, R535 from its first release.
  h100.support = {{525, V::Must("525.60.11")}, {535, V::Must("535.54.03")}, {545, std::nullopt}};
  c.gpus.push_back(h100);
  // One device id, boards the open modules' README listed at different times (compat.yaml's A30 rows).
  GpuModel a30 = gpu("A30", "0x20b7", "ampere", "8.0", true, "11.0", 450);
  a30.subsystems = {"10de:1852"};
  a30.support = {{525, V::Must("525.147.05")}, {535, V::Must("535.129.03")}};
  c.gpus.push_back(a30);
  a30.subsystems = {};
  a30.support = {{515, V::Must("515.48.07")}, {525, V::Must("525.60.11")}, {535, V::Must("535.54.03")}};
  c.gpus.push_back(a30);
  GpuModel b200 = gpu("B200", "0x2901", "blackwell", "10.0", true, "12.8", 570);
  b200.requires_open = true;
  c.gpus.push_back(b200);
  c.gpus.push_back(gpu("B300", "0x3182", "blackwell", "10.3", true, "12.9", 575));
  c.gpus.push_back(gpu("RTX 4090", "0x2684", "ada", "8.9", false, "11.8", 520));
  GpuModel v100 = gpu("V100", "0x1db5", "volta", "7.0", true, "9.0", 384);
  v100.last_driver_branch = 580;
  v100.max_cuda_major = 12;
  v100.open_modules = false;
  c.gpus.push_back(v100);
  c.nvswitch_pci_ids = {"0x22a3"};
  c.toolkit_advisories = {{{"CVE-2024-0132", "CVE-2024-0133"}, V::Must("1.16.2")},
                          {{"CVE-2024-0134"}, V::Must("1.17.0")},
                          {{"CVE-2024-0135", "CVE-2024-0136", "CVE-2024-0137"}, V::Must("1.17.3")},
                          {{"CVE-2025-23359"}, V::Must("1.17.4")}};
  manifest::ImageFacts img;
  img.ref = "nvcr.io/nvidia/pytorch:24.06-py3";
  img.cuda.version = V::Must("12.5.0.23");
  img.forward_compat = {V::Must("470.57"), V::Must("525.85"), V::Must("535.86"), V::Must("545.23")};
  c.images.push_back(img);
  return c;
}

inline manifest::Stack SampleStack() {
  manifest::Stack s;
  s.name = "ubuntu22-r535-cuda12.2";
  s.os = {{"ubuntu", "22.04"}};
  s.architectures = {"ampere", "hopper", "ada"};
  s.driver.branch = 535;
  s.driver.version.version = V::Must("535.129.03");
  s.driver.packages = {{"nvidia-driver-535", "535.129.03-0ubuntu1"}};
  s.cuda.version.version = V::Must("12.2.2");
  s.cudnn.version.version = V::Must("8.9.7");
  s.cudnn.cuda_major = 12;
  s.nccl.version.version = V::Must("2.18.5");
  s.nccl.cuda_major = 12;
  s.container_toolkit.version.version = V::Must("1.17.8");
  s.image.ref = "nvcr.io/nvidia/pytorch:23.10-py3";
  s.image.cuda.version = V::Must("12.2.2");
  s.workload.profile = "llm-finetune";
  return s;
}

inline probe::HostFacts HealthyH100Host() {
  probe::HostFacts h;
  h.os = {"ubuntu", "22.04", "Ubuntu 22.04.4 LTS", "jammy"};
  h.kernel = "5.15.0-105-generic";
  h.arch = "x86_64";
  h.cpus = 128;
  h.memory_bytes = 2048ULL << 30;
  h.shm_bytes = 1024ULL << 30;
  for (int i = 0; i < 8; ++i) {
    h.gpus.push_back(test::H100Gpu(i, "nvidia"));
  }
  h.nvswitch_count = 4;
  h.driver.module = {true, "535.129.03", false, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03"};
  h.driver.userspace_version = "535.129.03";
  h.driver.secure_boot = false;
  h.driver.kernel_headers = true;
  h.driver.dkms_module = true;
  h.driver.persistenced_enabled = true;
  h.cuda = {true, "12.2.140", "version.json", "/usr/local/cuda-12.2", std::nullopt, {}};
  h.cudnn = {true, "8.9.7.29", "dpkg:libcudnn8", "/usr/lib/x86_64-linux-gnu", 12, {}};
  h.nccl = {true, "2.18.5", "dpkg:libnccl2", "/usr/lib/x86_64-linux-gnu", 12, {}};
  h.packages["nvidia-driver-535"] = {"nvidia-driver-535", "535.129.03-0ubuntu1", "install ok installed",
                                     true};
  for (const char* p : {"nvidia-container-toolkit", "nvidia-container-toolkit-base",
                        "libnvidia-container-tools", "libnvidia-container1"})
    h.toolkit.packages[p] = "1.17.8-1";
  h.docker.cli_found = true;
  h.docker.engine_reachable = true;
  h.docker.version = "24.0.7";
  h.docker.runtimes = {"nvidia", "runc"};
  h.docker.default_runtime = "runc";
  h.fabricmanager = {true, "535.129.03-1", true, true};
  h.live = true;
  return h;
}

inline const verdict::Finding* FindingWith(const verdict::LayerReport& r, verdict::Status status) {
  for (const auto& f : r.findings)
    if (f.status == status) return &f;
  return nullptr;
}

// Holds the three inputs so a CheckInput can refer to them.
struct Inputs {
  manifest::Compat compat = SampleCompat();
  manifest::Stack stack = SampleStack();
  probe::HostFacts host = HealthyH100Host();
  layers::CheckInput in() const { return layers::CheckInput{stack, compat, host}; }
};

}  // namespace gp::test
