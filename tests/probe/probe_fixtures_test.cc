// ProbeHost over the fixture host trees (tests/fixtures/hosts/<name>, see its README.md): the facts each
// tree models, and the --root rule that nothing of the live host is run, loaded or contacted.
#include <catch2/catch.hpp>

#include "manifest/loader.h"
#include "probe/probe.h"
#include "support/fakes.h"
#include "sys/fs.h"

using namespace gp;
using probe::HostFacts;

namespace {

// Seams that fail the test when the probe touches them (a --root probe must not).
class ForbiddenNative : public sys::NativeLibs {
 public:
  sys::LibCall CudaRuntimeVersion(const std::vector<std::string>&) override { return Fail("cudart"); }
  sys::LibCall CudnnVersion(const std::vector<std::string>&) override { return Fail("cudnn"); }
  sys::LibCall NcclVersion(const std::vector<std::string>&) override { return Fail("nccl"); }
  sys::NvmlInfo Nvml(const std::vector<std::string>&) override {
    Fail("nvml");
    return {};
  }
  sys::CudaDriverInfo CudaDriver() override {
    Fail("libcuda");
    return {};
  }
  int calls = 0;

 private:
  sys::LibCall Fail(const char* what) {
    ++calls;
    FAIL_CHECK("a --root probe loaded " << what);
    return {};
  }
};

class ForbiddenDocker : public sys::UnixHttp {
 public:
  sys::HttpResponse Get(const std::string& socket, const std::string& path,
                        std::chrono::milliseconds) override {
    ++calls;
    FAIL_CHECK("a --root probe contacted " << socket << " " << path);
    return {};
  }
  int calls = 0;
};

struct RootProbe {
  explicit RootProbe(const std::string& name) : fs(std::string(GP_FIXTURES) + "/hosts/" + name) {
    runner.strict = true;
    probe::ProbeEnv env;
    env.fs = &fs;
    env.runner = &runner;
    env.native = &native;
    env.docker = &docker;
    env.compat = &manifest::EmbeddedCompat();
    env.env = {{"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"},
               {"CUDA_HOME", "/usr/local/cuda"},
               {"DOCKER_HOST", "unix:///var/run/docker.sock"}};
    facts = probe::ProbeHost(env);
    CHECK(runner.calls.empty());
    CHECK(native.calls == 0);
    CHECK(docker.calls == 0);
  }
  sys::DiskFs fs;
  test::FakeCommandRunner runner;
  ForbiddenNative native;
  ForbiddenDocker docker;
  HostFacts facts;
};

void CheckUbuntu2204Host(const HostFacts& h) {
  CHECK_FALSE(h.live);
  CHECK(h.os.id == "ubuntu");
  CHECK(h.os.version_id == "22.04");
  CHECK(h.os.pretty_name == "Ubuntu 22.04.4 LTS");
  CHECK(h.os.codename == "jammy");
  CHECK(h.kernel == "5.15.0-105-generic");
  CHECK(h.arch == "x86_64");
  CHECK_FALSE(h.disk_free_bytes);  // a tree's filesystem says nothing about the modelled host
}

void CheckEightGpus(const HostFacts& h, const std::string& device, const std::string& name,
                    const std::string& arch, const std::string& cc, const std::string& driver) {
  REQUIRE(h.gpus.size() == 8);
  const char* addrs[] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                         "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
  for (int i = 0; i < 8; ++i) {
    const auto& g = h.gpus[static_cast<size_t>(i)];
    CHECK(g.index == i);
    CHECK(g.pci == addrs[i]);
    CHECK(g.device_id == device);
    CHECK(g.subsystem_vendor_id == "0x10de");  // every fixture board is one NVIDIA's README lists
    CHECK(g.name == name);
    CHECK(g.architecture == arch);
    CHECK(g.compute_capability == cc);
    CHECK(g.driver == driver);
    CHECK(g.known);
  }
}

}  // namespace

TEST_CASE("fixture bare-nouveau: H100s on nouveau, nothing NVIDIA installed", "[probe]") {
  RootProbe p("bare-nouveau");
  const HostFacts& h = p.facts;
  CheckUbuntu2204Host(h);
  CHECK(h.cpus == 224);
  CHECK(h.memory_bytes == 2113403452ULL * 1024);
  CHECK(h.shm_bytes == h.memory_bytes / 2);  // tmpfs without size=: half of RAM
  CheckEightGpus(h, "0x2330", "H100 80GB HBM3", "hopper", "9.0", "nouveau");
  CHECK(h.nvidia_pci.size() == 8);  // the Mellanox NIC is not NVIDIA's
  CHECK(h.nvidia_pci[0].vendor_id == "0x10de");
  CHECK(h.nvidia_pci[0].class_id == "0x030200");
  CHECK(h.nvidia_pci[0].numa_node == 0);
  CHECK(h.nvidia_pci[7].numa_node == 1);
  CHECK(h.nvswitch_count == 0);
  CHECK_FALSE(h.driver.module.loaded);
  CHECK(h.driver.userspace_version.empty());
  CHECK(h.driver.nouveau_loaded);
  CHECK_FALSE(h.driver.nouveau_blacklisted);
  CHECK(h.driver.secure_boot == false);
  CHECK_FALSE(h.driver.kernel_headers);
  CHECK_FALSE(h.driver.dkms_module);
  CHECK(h.packages.empty());
  CHECK(h.dpkg_interrupted.empty());
  CHECK_FALSE(h.cuda.found);
  CHECK_FALSE(h.cudnn.found);
  CHECK_FALSE(h.nccl.found);
  CHECK_FALSE(h.docker.cli_found);
  CHECK_FALSE(h.docker.engine_reachable);
  CHECK(h.docker.detail == "not contacted (--root)");
  CHECK(h.toolkit.packages.empty());
  CHECK_FALSE(h.fabricmanager.installed);
  CHECK_FALSE(h.reboot_required);
  CHECK(std::find(h.probe_notes.begin(), h.probe_notes.end(), "driver: no NVIDIA driver found") !=
        h.probe_notes.end());
}

TEST_CASE("fixture healthy-h100: every layer present and consistent", "[probe]") {
  RootProbe p("healthy-h100");
  const HostFacts& h = p.facts;
  CheckUbuntu2204Host(h);
  CheckEightGpus(h, "0x2330", "H100 80GB HBM3", "hopper", "9.0", "nvidia");
  CHECK(h.nvswitch_count == 4);
  CHECK(h.nvidia_pci.size() == 12);
  CHECK(h.nvidia_pci[0].address == "0000:05:00.0");
  CHECK(h.nvidia_pci[0].driver == "nvidia-nvswitch");

  const auto& d = h.driver;
  CHECK(d.module.loaded);
  CHECK(d.module.version == "535.129.03");
  CHECK_FALSE(d.module.open);
  CHECK(d.module.nvrm_line ==
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023");
  CHECK(d.userspace_version == "535.129.03");
  CHECK(d.userspace_source == "file:/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.129.03");
  CHECK_FALSE(d.nvml_error);
  CHECK_FALSE(d.nvml_device_count);
  CHECK_FALSE(d.nouveau_loaded);
  CHECK(d.nouveau_blacklisted);
  CHECK(d.secure_boot == false);
  CHECK(d.kernel_headers);
  CHECK(d.dkms_module);
  CHECK_FALSE(d.dkms_signed);
  CHECK(d.persistenced_enabled);

  CHECK(h.cuda.found);
  CHECK(h.cuda.version == "12.2.140");  // cuda_nvcc of version.json; the top level is 12.2.20230823
  CHECK(h.cuda.source == "version.json");
  CHECK(h.cuda.path == "/usr/local/cuda-12.2");
  CHECK(h.cuda.cuda_major == 12);
  CHECK(h.cudnn.found);
  CHECK(h.cudnn.version == "8.9.7.29");
  CHECK(h.cudnn.source == "dpkg:libcudnn8");
  CHECK(h.cudnn.cuda_major == 12);
  CHECK(h.nccl.found);
  CHECK(h.nccl.version == "2.18.5");
  CHECK(h.nccl.source == "dpkg:libnccl2");
  CHECK(h.nccl.cuda_major == 12);

  REQUIRE(h.packages.count("nvidia-driver-535"));
  CHECK(h.packages.at("nvidia-driver-535").version == "535.129.03-0ubuntu1");
  CHECK(h.packages.at("nvidia-driver-535").held);
  CHECK(h.packages.at("libcudnn8").status == "hold ok installed");
  CHECK_FALSE(h.packages.at("cuda-toolkit-12-2").held);
  CHECK_FALSE(h.packages.count("base-files"));
  CHECK(h.dpkg_interrupted.empty());

  CHECK(h.toolkit.packages ==
        std::map<std::string, std::string>{{"libnvidia-container-tools", "1.19.1-1"},
                                           {"libnvidia-container1", "1.19.1-1"},
                                           {"nvidia-container-toolkit", "1.19.1-1"},
                                           {"nvidia-container-toolkit-base", "1.19.1-1"}});
  CHECK(h.toolkit.ctk_version.empty());  // only `nvidia-ctk --version` on a live host gives it
  CHECK(h.docker.cli_found);
  CHECK_FALSE(h.docker.engine_reachable);
  CHECK(h.docker.daemon_json_error.empty());
  CHECK(h.docker.daemon_json_runtimes == std::vector<std::string>{"nvidia"});
  CHECK(h.docker.default_runtime.empty());
  CHECK_FALSE(h.docker.cdi);
  CHECK(h.fabricmanager.installed);
  CHECK(h.fabricmanager.version == "535.129.03");
  CHECK(h.fabricmanager.enabled);
  CHECK_FALSE(h.fabricmanager.running);
  CHECK_FALSE(h.reboot_required);
}

TEST_CASE("fixture mismatch: module 535.104.05 under 535.129.03 libraries, reboot pending", "[probe]") {
  RootProbe p("mismatch");
  const HostFacts& h = p.facts;
  CHECK(h.driver.module.loaded);
  CHECK(h.driver.module.version == "535.104.05");
  CHECK(h.driver.userspace_version == "535.129.03");
  CHECK(h.reboot_required);
  CHECK(h.packages.at("libnvidia-compute-535").version == "535.129.03-0ubuntu1");
}

TEST_CASE("fixture nvswitch-no-fm: NVSwitches without a fabric manager", "[probe]") {
  RootProbe p("nvswitch-no-fm");
  const HostFacts& h = p.facts;
  CHECK(h.gpus.size() == 8);
  CHECK(h.nvswitch_count == 4);
  CHECK_FALSE(h.fabricmanager.installed);
  CHECK_FALSE(h.fabricmanager.enabled);
  CHECK(h.driver.module.version == "535.129.03");
}

TEST_CASE("fixture blackwell-old-driver: B200s unbound under R535", "[probe]") {
  RootProbe p("blackwell-old-driver");
  const HostFacts& h = p.facts;
  CheckEightGpus(h, "0x2901", "B200", "blackwell", "10.0", "");
  CHECK(h.driver.module.version == "535.129.03");
  CHECK(h.driver.userspace_version == "535.129.03");
  CHECK(h.fabricmanager.version == "535.129.03");
}

TEST_CASE("fixture open-module: open NVRM line, cuDNN 9 header, NCCL wheel, CDI spec", "[probe]") {
  RootProbe p("open-module");
  const HostFacts& h = p.facts;
  CHECK(h.os.version_id == "24.04");
  CHECK(h.os.codename == "noble");
  CHECK(h.kernel == "6.8.0-48-generic");
  CHECK(h.cpus == 128);
  CHECK(h.shm_bytes == 512ULL << 30);
  REQUIRE(h.gpus.size() == 4);
  CHECK(h.gpus[3].name == "H200");
  CHECK(h.gpus[3].subsystem_device_id == "0x18be");
  CHECK(h.driver.module.open);
  CHECK(h.driver.module.version == "565.57.01");
  CHECK(h.driver.userspace_version == "565.57.01");
  CHECK(h.driver.secure_boot == true);
  CHECK(h.driver.dkms_signed);
  CHECK(h.driver.kernel_headers);
  CHECK_FALSE(h.cuda.found);
  CHECK(h.cudnn.version == "9.1.0");
  CHECK(h.cudnn.source == "header:/usr/include/x86_64-linux-gnu/cudnn_version.h");
  CHECK(h.cudnn.cuda_major == 12);  // from libcudnn9-cuda-12
  CHECK(h.nccl.version == "2.21.5");
  CHECK(h.nccl.source == "pip:nvidia_nccl_cu12");
  CHECK(h.nccl.path == "/usr/local/lib/python3.12/dist-packages");
  CHECK(h.nccl.cuda_major == 12);
  CHECK(h.docker.default_runtime == "nvidia");
  CHECK(h.docker.daemon_json_runtimes == std::vector<std::string>{"nvidia"});
  CHECK(h.docker.cdi_devices ==
        std::vector<std::string>{"nvidia.com/gpu=0", "nvidia.com/gpu=1", "nvidia.com/gpu=all",
                                 "nvidia.com/gpu=GPU-3a23c669-1f69-c64e-cf85-44e9b07e7a2a"});
  CHECK_FALSE(h.docker.cdi);  // docker-ce 24 has no CDI unless daemon.json enables it
  CHECK(h.toolkit.packages.at("nvidia-container-toolkit") == "1.17.3-1");
}

TEST_CASE("fixture v100-new-driver: CPUs from /proc/cpuinfo, V100 past R580", "[probe]") {
  RootProbe p("v100-new-driver");
  const HostFacts& h = p.facts;
  CHECK(h.cpus == 40);
  REQUIRE(h.gpus.size() == 4);
  CHECK(h.gpus[0].name == "Tesla V100 SXM2 32GB");
  CHECK(h.gpus[0].subsystem_vendor_id.empty());  // the tree has no subsystem files: any board of 0x1db5
  CHECK(h.gpus[0].known);
  CHECK(h.gpus[0].architecture == "volta");
  CHECK(h.gpus[0].compute_capability == "7.0");
  CHECK(h.driver.module.version == "590.44.01");
  CHECK(h.driver.userspace_version == "590.44.01");
}

TEST_CASE("fixture secure-boot-unsigned: unsigned DKMS module, interrupted dpkg", "[probe]") {
  RootProbe p("secure-boot-unsigned");
  const HostFacts& h = p.facts;
  REQUIRE(h.gpus.size() == 1);
  CHECK(h.gpus[0].name == "L40S");
  CHECK(h.gpus[0].driver.empty());
  CHECK_FALSE(h.driver.module.loaded);
  CHECK(h.driver.userspace_version == "535.129.03");
  CHECK(h.driver.secure_boot == true);
  CHECK(h.driver.dkms_module);
  CHECK_FALSE(h.driver.dkms_signed);
  CHECK(h.dpkg_interrupted == std::vector<std::string>{"nvidia-dkms-535"});
  CHECK(h.packages.at("nvidia-dkms-535").status == "install ok half-configured");
  CHECK(h.cpus == 32);
  CHECK(h.memory_bytes == 263808000ULL * 1024);
}

TEST_CASE("an empty --root: every component missing, notes instead of errors", "[probe]") {
  RootProbe p("does-not-exist");
  const HostFacts& h = p.facts;
  CHECK(h.os.id.empty());
  CHECK(h.gpus.empty());
  CHECK_FALSE(h.driver.module.loaded);
  CHECK_FALSE(h.cuda.found);
  CHECK(std::find(h.probe_notes.begin(), h.probe_notes.end(), "os: /etc/os-release not found") !=
        h.probe_notes.end());
  CHECK(std::find(h.probe_notes.begin(), h.probe_notes.end(),
                  "dpkg: /var/lib/dpkg/status not found (not a Debian/Ubuntu host?)") != h.probe_notes.end());
}
