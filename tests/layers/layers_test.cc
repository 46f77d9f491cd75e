// Every non-driver layer verdict with its fix word for word, and CheckAll's shape.
#include <catch2/catch.hpp>

#include "layers/sample.h"
#include "layers/table.h"

using namespace gp;
using verdict::Status;

TEST_CASE("CheckAll: a healthy host is ok on every layer, in order, fabricmanager and network included",
          "[layers][doctor]") {
  test::Inputs t;
  probe::RdmaDevice ib;  // one NDR InfiniBand port, the peer-memory module loaded: the network row shows
  ib.name = "mlx5_0";
  probe::RdmaPort port;
  port.number = 1;
  port.state = "ACTIVE";
  port.phys_state = "LinkUp";
  port.link_layer = "InfiniBand";
  port.rate = "400 Gb/sec (4X NDR)";
  ib.ports.push_back(port);
  t.host.network.rdma.push_back(ib);
  t.host.network.peermem = true;
  t.host.network.peermem_path = "/sys/module/nvidia_peermem/version";
  auto all = layers::CheckAll(t.in());
  std::vector<std::string> names;
  for (const auto& r : all) {
    names.push_back(r.name);
    INFO(r.name << ": " << r.detail);
    CHECK(r.status == Status::kOk);
    CHECK_FALSE(r.fix.has_value());
  }
  CHECK(names == layers::ReportNames());  // the stack row, then every layer
}

TEST_CASE("CheckAll: fabricmanager only with NVSwitches, network only with RDMA devices",
          "[layers][doctor]") {
  test::Inputs t;
  t.host.nvswitch_count = 0;
  auto all = layers::CheckAll(t.in());
  CHECK(all.size() == layers::ReportNames().size() - 2);
  for (const auto& r : all) CHECK((r.name != "fabricmanager" && r.name != "network"));
}

TEST_CASE("os: unsupported system, interrupted dpkg, pending reboot", "[layers][doctor]") {
  test::Inputs t;
  t.host.os = {"debian", "12", "Debian GNU/Linux 12 (bookworm)", "bookworm"};
  auto r = layers::CheckOs(t.in());
  CHECK(r.status == Status::kFail);
  CHECK(r.found == std::optional<std::string>("Debian GNU/Linux 12 (bookworm)"));
  CHECK(r.detail == "debian 12 is not a system of stack ubuntu22-r535-cuda12.2 (ubuntu 22.04)");
  CHECK(r.fix == std::optional<std::string>("choose a stack for debian 12: gpuprep manifest list"));

  test::Inputs d;
  d.host.dpkg_interrupted = {"nvidia-dkms-535"};
  d.host.reboot_required = true;
  auto r2 = layers::CheckOs(d.in());
  CHECK(r2.status == Status::kFail);
  CHECK(r2.fix == std::optional<std::string>("sudo dpkg --configure -a; sudo reboot"));
  CHECK(r2.detail ==
        "ubuntu 22.04 is supported by stack ubuntu22-r535-cuda12.2; dpkg was interrupted with packages "
        "half-configured (nvidia-dkms-535); a reboot is pending (/var/run/reboot-required)");
}

TEST_CASE("host: CPU cores and RAM against the sourced ratios, or the stack's numbers (warnings only)",
          "[layers][doctor][host]") {
  test::Inputs t;  // 8 H100s, profile llm-finetune without numbers
  for (auto& g : t.host.gpus) g.memory_bytes = 81559ULL << 20;
  t.host.cpus = 24;
  t.host.memory_bytes = 512ULL << 30;
  auto r = layers::CheckHost(t.in());
  CHECK(r.status == Status::kWarn);
  CHECK(r.wanted ==
        "for 8 GPUs (llm-finetune): >= 28 CPUs (8 x (2 + 1) + 4: 2 DataLoader workers per GPU for llm), "
        ">= 637.2 GiB RAM (the GPUs' memory)");
  REQUIRE(r.findings.size() == 2);
  CHECK(r.findings[0].code == "host.cpus");
  CHECK(r.findings[0].message ==
        "24 CPU cores for 8 GPUs: below 28 (8 x (2 + 1) + 4: 2 DataLoader workers per GPU for llm) for the "
        "llm-finetune workload");
  CHECK(r.findings[0].fix ==
        std::optional<std::string>("use a host with at least 28 CPU cores, or fewer GPUs"));
  CHECK(r.findings[1].code == "host.memory");
  CHECK(r.findings[1].message ==
        "512 GiB RAM for 8 GPUs: below 637.2 GiB (the GPUs' memory) for the llm-finetune workload");
  CHECK(r.findings[1].fix ==
        std::optional<std::string>("use a host with at least 637.2 GiB RAM, or fewer GPUs"));

  // What 8-GPU data-center servers ship (192 vCPUs, 2 TiB) meets the floor.
  t.host.cpus = 192;
  t.host.memory_bytes = 2048ULL << 30;
  CHECK(layers::CheckHost(t.in()).status == Status::kOk);

  // A vision profile needs 4 workers per GPU: 8 x (4 + 1) + 4 = 44.
  t.stack.workload.profile = "vision";
  t.host.cpus = 40;
  auto vision = layers::CheckHost(t.in());
  REQUIRE(vision.findings.size() == 1);
  CHECK(vision.findings[0].message.find("below 44 (8 x (4 + 1) + 4") != std::string::npos);

  // Manifest-given numbers win over the ratios, shm included.
  t.stack.workload.profile = "llm-finetune";
  t.stack.workload.min_cpus_per_gpu = 8;
  t.stack.workload.min_shm_per_gpu = 16ULL << 30;
  t.host.cpus = 128;
  t.host.shm_bytes = 64ULL << 20;
  auto shm = layers::CheckHost(t.in());
  CHECK(shm.status == Status::kWarn);
  REQUIRE(shm.findings.size() == 1);
  CHECK(shm.detail == "8 MiB /dev/shm per GPU: below 16 GiB per GPU for the llm-finetune workload");
  CHECK(shm.fix == std::optional<std::string>("sudo mount -o remount,size=128G /dev/shm"));
  t.host.cpus = 32;
  auto cpus = layers::CheckHost(t.in());
  CHECK(cpus.findings[0].message ==
        "32 CPU cores for 8 GPUs: below 64 (8 per GPU, the stack's) for the "
        "llm-finetune workload");

  // The general profile gets the floor (the fewest workers a source gives); GPU memory unknown to NVML and
  // the catalogue leaves RAM unchecked; without GPUs there is nothing to size against.
  test::Inputs g;
  g.stack.workload = {};
  g.host.cpus = 28;
  g.host.memory_bytes = 1ULL << 30;
  auto general = layers::CheckHost(g.in());
  CHECK(general.status == Status::kOk);
  CHECK(general.wanted.find("RAM unchecked (the GPUs' memory is unknown)") != std::string::npos);
  g.host.cpus = 27;
  CHECK(layers::CheckHost(g.in()).status == Status::kWarn);
  g.host.gpus.clear();
  CHECK(layers::CheckHost(g.in()).status == Status::kSkip);
}

TEST_CASE("gpu: none, unknown, not in the stack's architectures", "[layers][doctor]") {
  test::Inputs t;
  t.host.gpus.clear();
  auto none = layers::CheckGpu(t.in());
  CHECK(none.status == Status::kFail);
  CHECK(none.detail == "no NVIDIA GPU found on the PCI bus");
  CHECK(none.fix ==
        std::optional<std::string>("run on a host with an NVIDIA GPU (check with: lspci -d 10de:)"));

  test::Inputs u;
  u.host.gpus.resize(1);
  u.host.gpus[0].device_id = "0x1234";
  u.host.gpus[0].pci = "0000:18:00.0";
  u.host.gpus[0].name = "unknown NVIDIA GPU 0x1234";
  auto unknown = layers::CheckGpu(u.in());
  CHECK(unknown.status == Status::kWarn);
  CHECK(unknown.found == std::optional<std::string>("1x unknown NVIDIA GPU 0x1234"));
  CHECK(unknown.detail ==
        "GPU 0 (0000:18:00.0, device 0x1234) is not in gpuprep's catalogue: its driver and CUDA "
        "needs cannot be checked");
  CHECK(unknown.fix == std::optional<std::string>(
                           "check NVIDIA's support for device 0x1234 and add it to manifests/compat.yaml"));

  test::Inputs b;
  for (auto& g : b.host.gpus) g.device_id = "0x2901", g.name = "B200";
  auto bw = layers::CheckGpu(b.in());
  CHECK(bw.status == Status::kFail);  // the stack's proprietary flavour cannot drive Blackwell at all
  CHECK(bw.found == std::optional<std::string>("8x B200"));
  CHECK(bw.detail ==
        "stack ubuntu22-r535-cuda12.2 cannot run here: B200 runs only on NVIDIA's open kernel modules; the "
        "newest "
        "that can is blackwell-r580.173.02-cuda13.0.3-nvlsm");
  CHECK(bw.fix == std::optional<std::string>(
                      "sudo gpuprep apply --yes --manifest blackwell-r580.173.02-cuda13.0.3-nvlsm"));
  // A stack whose pins could run the board but that does not claim its architecture only warns.
  b.stack.driver.flavour = "open";
  b.stack.driver.branch = 580;
  b.stack.driver.version.version = gp::Version::Must("580.95.05");
  auto open = layers::CheckGpu(b.in());
  CHECK(open.status == Status::kWarn);
  CHECK(open.detail ==
        "stack ubuntu22-r535-cuda12.2 is not made for B200 (blackwell; it claims ampere, hopper, ada); "
        "the newest that can is blackwell-r580.173.02-cuda13.0.3-nvlsm");
}

TEST_CASE("fabricmanager: missing, wrong version, not enabled", "[layers][doctor]") {
  test::Inputs t;
  t.host.fabricmanager = {};
  auto none = layers::CheckFabricManager(t.in());
  CHECK(none.status == Status::kFail);
  CHECK(none.detail == "4 NVSwitches but no fabric manager: CUDA finds no usable GPU until it runs");
  CHECK(none.fix == std::optional<std::string>("sudo gpuprep apply --yes --only fabricmanager"));

  test::Inputs v;
  v.host.fabricmanager.version = "535.104.05-1";
  auto wrong = layers::CheckFabricManager(v.in());
  CHECK(wrong.status == Status::kFail);
  CHECK(wrong.found == std::optional<std::string>("535.104.05"));
  CHECK(wrong.wanted == "= 535.129.03 (the driver's version)");
  CHECK(wrong.detail == "fabric manager 535.104.05 != driver 535.129.03 (they must be the same version)");

  test::Inputs e;
  e.host.fabricmanager.enabled = e.host.fabricmanager.running = false;
  auto off = layers::CheckFabricManager(e.in());
  CHECK(off.status == Status::kFail);
  CHECK(off.fix == std::optional<std::string>("sudo systemctl enable --now nvidia-fabricmanager"));

  // Running (started by hand) but not enabled: it will not come back after a reboot.
  test::Inputs m;
  m.host.fabricmanager.enabled = false;
  auto manual = layers::CheckFabricManager(m.in());
  CHECK(manual.status == Status::kWarn);
  REQUIRE(manual.findings.size() == 2);
  CHECK(manual.findings[1].code == "fabricmanager.not-enabled");
  CHECK(
      manual.detail ==
      "fabric manager 535.129.03 matches the driver; fabric manager is running but "
      "nvidia-fabricmanager.service "
      "is not enabled: it will not start after the next reboot, and CUDA finds no usable GPU until it runs");
  CHECK(manual.fix == std::optional<std::string>("sudo systemctl enable nvidia-fabricmanager"));
  // Enabled and running is ok; not running with --root (nothing of the live host is read) stays ok too.
  test::Inputs ok;
  CHECK(layers::CheckFabricManager(ok.in()).status == Status::kOk);
  ok.host.fabricmanager.running = false;
  ok.host.live = false;
  CHECK(layers::CheckFabricManager(ok.in()).status == Status::kOk);
}

TEST_CASE("cuda: missing, other release, too old for a GPU, dropped a GPU", "[layers][doctor]") {
  test::Inputs t;
  t.host.cuda = {};
  auto missing = layers::CheckCuda(t.in());
  CHECK(missing.status == Status::kFail);
  CHECK(missing.detail == "CUDA toolkit not installed");
  CHECK(missing.fix == std::optional<std::string>("sudo gpuprep apply --yes --only cuda"));
  t.stack.cuda.optional = true;
  CHECK(layers::CheckCuda(t.in()).status == Status::kSkip);

  test::Inputs o;
  o.host.cuda.version = "12.4.131";
  auto other = layers::CheckCuda(o.in());
  CHECK(other.status == Status::kWarn);
  CHECK(other.detail ==
        "installed CUDA 12.4.131 differs from the stack's 12.2.2; driver 535.129.03 is below "
        "installed CUDA 12.4.131's minimum 550.54.14: it runs under CUDA 12.x minor-version "
        "compatibility, without features that need a newer driver");
  o.host.cuda.version = "13.0.88";
  auto major = layers::CheckCuda(o.in());
  CHECK(major.status == Status::kFail);
  CHECK(major.findings[0].message == "installed CUDA 13.0.88 is another major than the stack's 12.2.2");
  // ...and the driver is checked against the installed CUDA too.
  CHECK(major.findings[1].message ==
        "driver 535.129.03 is too old for installed CUDA 13.0.88 (needs >= 580.65.06)");
  CHECK(major.findings[1].fix == std::optional<std::string>("sudo gpuprep apply --yes --only driver"));

  test::Inputs b;
  for (auto& g : b.host.gpus) g.device_id = "0x2901";
  auto bw = layers::CheckCuda(b.in());
  CHECK(bw.status == Status::kFail);
  CHECK(bw.findings[0].message ==
        "the stack's CUDA 12.2.2 does not support B200 (compute capability 10.0 needs CUDA 12.8 or later)");
  CHECK(bw.findings[0].fix ==
        std::optional<std::string>("choose a stack whose CUDA supports these GPUs: gpuprep manifest list"));

  test::Inputs v;
  for (auto& g : v.host.gpus) g.device_id = "0x1db5";
  v.stack.cuda.version.version = Version::Must("13.0.0");
  v.host.cuda.version = "13.0.88";
  auto volta = layers::CheckCuda(v.in());
  CHECK(volta.status == Status::kFail);
  CHECK(volta.findings[0].message ==
        "the stack's CUDA 13.0.0 no longer supports V100 (compute capability 7.0; the last CUDA for it is "
        "12.x)");
}

TEST_CASE("cudnn and nccl: missing, other version, built for another CUDA major, unknown",
          "[layers][doctor]") {
  test::Inputs t;
  t.host.cudnn = {};
  auto missing = layers::CheckCudnn(t.in());
  CHECK(missing.status == Status::kFail);
  CHECK(missing.detail == "cuDNN not installed");
  CHECK(missing.fix == std::optional<std::string>("sudo gpuprep apply --yes --only cudnn"));

  test::Inputs m;
  m.host.cudnn.cuda_major = 11;
  auto cuda11 = layers::CheckCudnn(m.in());
  CHECK(cuda11.status == Status::kFail);
  CHECK(cuda11.detail ==
        "cuDNN 8.9.7.29 matches the stack's 8.9.7; cuDNN 8.9.7.29 is built for CUDA 11; the stack's "
        "is CUDA 12");
  CHECK(cuda11.fix == std::optional<std::string>("sudo gpuprep apply --yes --only cudnn"));

  test::Inputs v;
  v.host.cudnn.version = "8.9.4";
  CHECK(layers::CheckCudnn(v.in()).status == Status::kWarn);
  v.host.cudnn.version = "9.1.0";
  CHECK(layers::CheckCudnn(v.in()).detail == "cuDNN 9.1.0 is another major than the stack's 8.9.7");

  test::Inputs n;
  n.host.nccl.cuda_major = 13;
  n.stack.nccl.cuda_major.reset();  // falls back to the stack CUDA's major
  auto nccl = layers::CheckNccl(n.in());
  CHECK(nccl.status == Status::kFail);
  CHECK(nccl.findings[1].message == "NCCL 2.18.5 is built for CUDA 13; the stack's is CUDA 12");
  CHECK(nccl.fix == std::optional<std::string>("sudo gpuprep apply --yes --only nccl"));

  test::Inputs h;  // the stack says nothing about the major, the installed CUDA does
  h.stack.nccl.cuda_major.reset();
  h.stack.cuda.enabled = false;
  h.host.nccl.cuda_major = 13;
  CHECK(layers::CheckNccl(h.in()).findings[1].message ==
        "NCCL 2.18.5 is built for CUDA 13 but the installed CUDA is 12.2.140");

  test::Inputs u;
  u.stack.cudnn.version = {};
  u.stack.cudnn.version.unknown = true;
  u.stack.cudnn.version.reason =
      "cuDNN of nvcr.io/nvidia/pytorch:23.10-py3 is not in NVIDIA's notes available to gpuprep";
  auto skip = layers::CheckCudnn(u.in());
  CHECK(skip.status == Status::kSkip);
  CHECK(skip.detail ==
        "the stack's cuDNN version is unknown: cuDNN of nvcr.io/nvidia/pytorch:23.10-py3 is not in "
        "NVIDIA's notes available to gpuprep");
  CHECK(skip.found == std::optional<std::string>("8.9.7.29"));
}

TEST_CASE("docker: not installed, engine down, --root", "[layers][doctor]") {
  test::Inputs t;
  t.host.docker = {};
  auto none = layers::CheckDocker(t.in());
  CHECK(none.status == Status::kFail);
  CHECK(none.detail == "Docker is not installed");
  CHECK(none.fix ==
        std::optional<std::string>(
            "install Docker Engine (https://docs.docker.com/engine/install/), then: sudo systemctl "
            "enable --now docker"));

  t.host.docker.cli_found = true;
  t.host.docker.detail = "connect /var/run/docker.sock: no such file";
  auto down = layers::CheckDocker(t.in());
  CHECK(down.status == Status::kFail);
  CHECK(down.detail == "the Docker engine does not answer (connect /var/run/docker.sock: no such file)");
  CHECK(down.fix == std::optional<std::string>("sudo systemctl enable --now docker"));

  t.host.live = false;
  CHECK(layers::CheckDocker(t.in()).status == Status::kOk);
}

namespace {
// apply installs the toolkit at the stack's pins and registers it (layers/container_toolkit/plan.cc).
const std::string kToolkitFix = "sudo gpuprep apply --yes --only container_toolkit";
}  // namespace

TEST_CASE("container_toolkit: missing, versions apart, CVEs, runtime", "[layers][doctor]") {
  test::Inputs t;
  t.host.toolkit = {};
  auto none = layers::CheckContainerToolkit(t.in());
  CHECK(none.status == Status::kFail);
  CHECK(none.detail == "NVIDIA Container Toolkit not installed");
  CHECK(none.fix == kToolkitFix);

  test::Inputs a;
  a.host.toolkit.packages["libnvidia-container1"] = "1.17.3-1";
  auto apart = layers::CheckContainerToolkit(a.in());
  CHECK(apart.status == Status::kFail);
  CHECK(apart.findings[0].message ==
        "toolkit packages at different versions (nvidia-container-toolkit 1.17.8-1, "
        "nvidia-container-toolkit-base "
        "1.17.8-1, libnvidia-container-tools 1.17.8-1, libnvidia-container1 1.17.3-1)");

  test::Inputs c;
  for (auto& [name, v] : c.host.toolkit.packages) v = "1.16.1-1";
  auto cve = layers::CheckContainerToolkit(c.in());
  CHECK(cve.status == Status::kFail);
  CHECK(cve.found == std::optional<std::string>("1.16.1"));
  CHECK(cve.findings[0].message == "toolkit 1.16.1 installed, 4 packages at one version");
  CHECK(
      cve.findings[1].message ==
      "toolkit 1.16.1 is affected by CVE-2024-0132, CVE-2024-0133 (fixed in 1.16.2); CVE-2024-0134 (fixed in "
      "1.17.0); CVE-2024-0135, CVE-2024-0136, CVE-2024-0137 (fixed in 1.17.3); CVE-2025-23359 (fixed in "
      "1.17.4)");
  CHECK(cve.findings[1].fix == kToolkitFix);
  CHECK(cve.findings[2].message == "toolkit 1.16.1 is older than the stack's 1.17.8");
  CHECK(cve.findings[2].fix == kToolkitFix);
  CHECK(cve.fix == kToolkitFix);  // two findings, one fix
  // A stack pinning an affected release cannot fix it by applying.
  c.stack.container_toolkit.version.version = Version::Must("1.17.3");
  CHECK(layers::CheckContainerToolkit(c.in()).findings[1].fix ==
        std::optional<std::string>(
            "choose a stack with container toolkit 1.17.4 or later: gpuprep manifest list"));

  test::Inputs r;
  r.host.docker.runtimes = {"runc"};
  auto rt = layers::CheckContainerToolkit(r.in());
  CHECK(rt.status == Status::kFail);
  CHECK(rt.detail ==
        "toolkit 1.17.8 installed, 4 packages at one version; Docker has no nvidia runtime and no CDI spec "
        "for the GPUs");
  CHECK(rt.fix == std::optional<std::string>("sudo gpuprep apply --yes --only container_toolkit"));
  r.host.docker.cdi = true;
  auto cdi = layers::CheckContainerToolkit(r.in());
  CHECK(cdi.status == Status::kOk);
  CHECK(cdi.detail ==
        "toolkit 1.17.8 installed, 4 packages at one version; Docker reaches the GPUs through CDI");
  // An engine up since before the hook was installed: --gpus fails until it restarts.
  test::Inputs late;
  late.host.docker.started_before_hook = true;
  auto before = layers::CheckContainerToolkit(late.in());
  CHECK(before.status == Status::kFail);
  CHECK(before.detail.find("Docker started before nvidia-container-runtime-hook was installed: `docker run "
                           "--gpus` fails (could not select device driver \"\" with capabilities: [[gpu]]) "
                           "until Docker restarts") != std::string::npos);
  CHECK(before.fix == std::optional<std::string>("sudo systemctl restart docker"));
  // Without the engine (--root) daemon.json's runtimes decide.
  r.host.docker.engine_reachable = false;
  r.host.docker.cdi = false;
  r.host.docker.daemon_json_runtimes = {"nvidia"};
  CHECK(layers::CheckContainerToolkit(r.in()).status == Status::kOk);
}

TEST_CASE("image: its CUDA against the GPUs and the driver, forward compatibility", "[layers][doctor]") {
  test::Inputs t;
  auto ok = layers::CheckImage(t.in());
  CHECK(ok.status == Status::kOk);
  CHECK(ok.wanted == "nvcr.io/nvidia/pytorch:23.10-py3");
  CHECK(ok.detail == "driver 535.129.03 runs image CUDA 12.2.2 (needs >= 535.104.05)");

  // The stack leaves the image's CUDA to the compat facts, which list forward-compatible branches.
  test::Inputs f;
  f.stack.image = {};
  f.stack.image.ref = "nvcr.io/nvidia/pytorch:24.06-py3";
  f.host.driver.module.version = f.host.driver.userspace_version = "470.57.02";
  auto fwd = layers::CheckImage(f.in());
  CHECK(fwd.status == Status::kWarn);
  CHECK(fwd.fix == std::optional<std::string>("sudo gpuprep apply --yes --only driver"));
  for (auto& g : f.host.gpus) g.device_id = "0x2684";  // GeForce: no forward compatibility
  CHECK(layers::CheckImage(f.in()).status == Status::kFail);

  test::Inputs b;
  for (auto& g : b.host.gpus) g.device_id = "0x3182";
  auto bw = layers::CheckImage(b.in());
  CHECK(bw.status == Status::kFail);
  CHECK(bw.findings[0].message ==
        "image CUDA 12.2.2 does not support B300 (compute capability 10.3 needs CUDA 12.9 or later)");

  test::Inputs u;
  u.stack.image.cuda = {};
  u.stack.image.cuda.unknown = true;
  u.stack.image.cuda.reason = "not in NVIDIA's notes";
  auto unk = layers::CheckImage(u.in());
  CHECK(unk.status == Status::kSkip);
  CHECK(unk.detail == "the CUDA inside nvcr.io/nvidia/pytorch:23.10-py3 is unknown: not in NVIDIA's notes");
}

TEST_CASE("LayerReport: status is the worst finding; fix joins every warn and fail", "[layers][doctor]") {
  verdict::LayerReport r;
  r.Add(Status::kSkip, "a");
  CHECK(r.status == Status::kSkip);
  r.Add(Status::kOk, "b");
  CHECK(r.status == Status::kOk);
  r.Add(Status::kFail, "c", std::string("fix c"));
  r.Add(Status::kWarn, "d", std::string("fix d"));
  CHECK(r.status == Status::kFail);
  CHECK(r.detail == "a; b; c; d");
  CHECK(r.fix == std::optional<std::string>("fix c; fix d"));
}

TEST_CASE("unknown or disabled stack values skip their layer with the reason", "[layers][doctor]") {
  test::Inputs t;
  t.stack.cuda.version = {};
  t.stack.cuda.version.unknown = true;
  t.stack.cuda.version.reason = "no verified CUDA";
  auto cuda = layers::CheckCuda(t.in());
  CHECK(cuda.status == Status::kSkip);
  CHECK(cuda.detail == "the stack's CUDA version is unknown: no verified CUDA");
  CHECK(cuda.found == std::optional<std::string>("12.2.140"));

  t.stack.container_toolkit.version = {};
  t.stack.container_toolkit.version.unknown = true;
  t.stack.container_toolkit.version.reason = "no verified toolkit";
  CHECK(layers::CheckContainerToolkit(t.in()).detail ==
        "the stack's container toolkit version is unknown: no verified toolkit");

  t.stack.nccl.enabled = false;
  auto nccl = layers::CheckNccl(t.in());
  CHECK(nccl.status == Status::kSkip);
  CHECK(nccl.detail == "NCCL is not part of stack ubuntu22-r535-cuda12.2");

  t.stack.image = {};
  CHECK(layers::CheckImage(t.in()).detail == "stack ubuntu22-r535-cuda12.2 names no image");

  // An unknown CUDA in the stack leaves the driver layer to the host's own facts.
  CHECK(layers::CheckDriver(t.in()).status == Status::kOk);
}
