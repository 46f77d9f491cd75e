// The probe's pure parsers on every real format they accept (the public sources are named in
// probe/parsers.h) and the host files the probe reads.
#include "probe/parsers.h"

#include <catch2/catch.hpp>

#include "util/version.h"

using namespace gp::probe;

TEST_CASE("os-release: quoted and bare values", "[probe]") {
  auto os = ParseOsRelease(
      "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\n"
      "VERSION=\"22.04.4 LTS (Jammy Jellyfish)\"\nVERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\n");
  CHECK(os.id == "ubuntu");
  CHECK(os.version_id == "22.04");
  CHECK(os.pretty_name == "Ubuntu 22.04.4 LTS");
  CHECK(os.codename == "jammy");

  auto deb = ParseOsRelease(
      "PRETTY_NAME='Debian GNU/Linux 12 (bookworm)'\n# comment\nVERSION_ID=\"12\"\n"
      "VERSION_CODENAME=bookworm\nID=debian\nX=\"say \\\"hi\\\"\"\n");
  CHECK(deb.id == "debian");
  CHECK(deb.version_id == "12");
  CHECK(deb.pretty_name == "Debian GNU/Linux 12 (bookworm)");
  CHECK(deb.codename == "bookworm");
}

TEST_CASE("meminfo, cpuinfo and the CPU online list", "[probe]") {
  CHECK(ParseMemTotal("MemTotal:       2113403452 kB\nMemFree: 1 kB\n") == 2113403452ULL * 1024);
  CHECK_FALSE(ParseMemTotal("MemFree: 1 kB\n"));
  CHECK(CountCpuinfoProcessors("processor\t: 0\nmodel name\t: X\n\nprocessor\t: 1\nprocessor_x: 9\n") == 2);
  CHECK(CountCpuList("0-223\n") == 224);
  CHECK(CountCpuList("0,2-5,7") == 6);
  CHECK(CountCpuList("0") == 1);
  CHECK_FALSE(CountCpuList("5-2"));
  CHECK_FALSE(CountCpuList("a-b"));
  CHECK_FALSE(CountCpuList(""));
}

TEST_CASE("/dev/shm size from /proc/mounts", "[probe]") {
  const uint64_t mem = 1000ULL << 30;
  CHECK(ParseShmSizeFromMounts("shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k,inode64 0 0\n",
                               mem) == 64ULL << 20);
  CHECK(ParseShmSizeFromMounts("tmpfs /dev/shm tmpfs rw,size=16g 0 0\n", mem) == 16ULL << 30);
  CHECK(ParseShmSizeFromMounts("tmpfs /dev/shm tmpfs rw,size=50% 0 0\n", mem) == mem / 2);
  // No size option: the caller applies tmpfs's default (half of RAM).
  CHECK_FALSE(ParseShmSizeFromMounts("tmpfs /dev/shm tmpfs rw,nosuid,nodev,inode64 0 0\n", mem));
  CHECK_FALSE(ParseShmSizeFromMounts("proc /proc proc rw 0 0\n", mem));
  // The last mount on /dev/shm shadows earlier ones.
  CHECK(ParseShmSizeFromMounts("tmpfs /dev/shm tmpfs rw,size=1g 0 0\nshm /dev/shm tmpfs rw,size=2048k 0 0\n",
                               mem) == 2ULL << 20);
}

TEST_CASE("architecture from dpkg's arch file and from an ELF header", "[probe]") {
  CHECK(ArchFromDpkg("amd64\n") == "x86_64");
  CHECK(ArchFromDpkg("arm64") == "aarch64");
  CHECK(ArchFromDpkg("ppc64el") == "ppc64le");
  std::string elf(
      "\x7f"
      "ELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\xb7\x00",
      20);
  CHECK(ArchFromElf(elf) == "aarch64");
  elf[18] = 62;
  CHECK(ArchFromElf(elf) == "x86_64");
  CHECK(ArchFromElf("#!/bin/sh\n echo not an elf file") == "");
}

TEST_CASE("NVRM line: proprietary, open, aarch64 and two-part versions", "[probe]") {
  auto prop = ParseNvrmVersion(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024\n"
      "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n");
  CHECK(prop.loaded);
  CHECK(prop.version == "550.90.07");
  CHECK_FALSE(prop.open);
  CHECK(prop.nvrm_line ==
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024");

  auto open = ParseNvrmVersion(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  "
      "(dvs-builder@U16-A24-9-2)  Thu Oct 10 12:15:00 UTC 2024\nGCC version:  gcc version 13.3.0\n");
  CHECK(open.loaded);
  CHECK(open.version == "565.57.01");
  CHECK(open.open);

  auto arch = ParseNvrmVersion(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  525.60.11  Release Build  "
      "(archlinux-builder@localhost)\n");
  CHECK(arch.version == "525.60.11");
  auto two = ParseNvrmVersion(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  515.76  Mon Sep 12 19:21:56 UTC 2022\n");
  CHECK(two.version == "515.76");
  auto arm = ParseNvrmVersion(
      "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  560.35.03  Release Build  "
      "(dvs-builder@U16-I3-B03-4-3)\n");
  CHECK(arm.version == "560.35.03");
  CHECK(arm.open);
  auto arm_prop =
      ParseNvrmVersion("NVRM version: NVIDIA UNIX aarch64 Kernel Module  555.58  Tue Jun 25 2024\n");
  CHECK(arm_prop.version == "555.58");

  CHECK_FALSE(ParseNvrmVersion("").loaded);
  CHECK_FALSE(ParseNvrmVersion("GCC version:  gcc version 12\n").loaded);
}

TEST_CASE("userspace driver version from library file names", "[probe]") {
  CHECK(LibVersionFromName("libnvidia-ml.so.535.129.03", "libnvidia-ml.so.") == "535.129.03");
  CHECK(LibVersionFromName("libnvidia-ml.so.515.76", "libnvidia-ml.so.") == "515.76");
  CHECK_FALSE(LibVersionFromName("libnvidia-ml.so.1", "libnvidia-ml.so."));
  CHECK_FALSE(LibVersionFromName("libnvidia-ml.so", "libnvidia-ml.so."));
  CHECK_FALSE(LibVersionFromName("libcuda.so.535.129.03", "libnvidia-ml.so."));
}

TEST_CASE("nouveau blacklist and the Secure Boot variable", "[probe]") {
  CHECK(BlacklistsNouveau("blacklist nouveau\noptions nouveau modeset=0\n"));
  CHECK(BlacklistsNouveau("  blacklist   nouveau  \n"));
  CHECK_FALSE(BlacklistsNouveau("# blacklist nouveau\n"));
  CHECK_FALSE(BlacklistsNouveau("blacklist nouveaufb\nalias nouveau off\n"));
  CHECK(ParseSecureBootVar(std::string("\x06\x00\x00\x00\x01", 5)) == true);
  CHECK(ParseSecureBootVar(std::string("\x06\x00\x00\x00\x00", 5)) == false);
  CHECK_FALSE(ParseSecureBootVar(std::string("\x06\x00\x00\x00", 4)));
}

TEST_CASE("CUDA version.json: component versions preferred, date-style cuda.version", "[probe]") {
  // 11.5.2: no cuda_nvcc in the excerpt, cudart gives the build.
  auto v115 = ParseCudaVersionJson(R"J({"cuda":{"name":"CUDA SDK","version":"11.5.2"},
      "cuda_cudart":{"name":"CUDA Runtime (cudart)","version":"11.5.117"},
      "cuda_cuobjdump":{"name":"cuobjdump","version":"11.5.119"}})J");
  CHECK(v115.version == "11.5.117");
  CHECK(v115.field == "cuda_cudart");
  CHECK(v115.sdk == "11.5.2");
  // Date-style top level with nvcc: nvcc's build, as `nvcc --version` would print it.
  auto v118 = ParseCudaVersionJson(R"({"cuda":{"name":"CUDA SDK","version":"11.8.20220929"},
      "cuda_nvcc":{"name":"CUDA NVCC","version":"11.8.89"},
      "nvidia_driver":{"name":"NVIDIA Linux Driver","version":"520.61.05"}})");
  CHECK(v118.version == "11.8.89");
  CHECK(v118.field == "cuda_nvcc");
  CHECK(v118.sdk == "11.8.20220929");
  // Only a date-style top level: MAJOR.MINOR, never the date as a patch level.
  auto date_only = ParseCudaVersionJson(R"({"cuda":{"name":"CUDA SDK","version":"12.1.20230222"}})");
  CHECK(date_only.version == "12.1");
  CHECK(date_only.field == "cuda");
  auto plain = ParseCudaVersionJson(
      R"({"cuda":{"name":"CUDA SDK","version":"13.3.1"},"cuda_crt":{"version":"13.3.1"}})");
  CHECK(plain.version == "13.3.1");
  auto bad = ParseCudaVersionJson("{\"cuda\": ");
  CHECK(bad.version.empty());
  CHECK(bad.error == "not a JSON object");
}

TEST_CASE("nvcc --version", "[probe]") {
  CHECK(ParseNvccVersion("nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n"
                         "Built on Wed_Aug_20_01:58:59_PM_PDT_2025\n"
                         "Cuda compilation tools, release 13.0, V13.0.88\n"
                         "Build cuda_13.0.r13.0/compiler.36424714_0\n") == "13.0.88");
  CHECK(ParseNvccVersion("Cuda compilation tools, release 10.1\n") == "10.1");
  CHECK_FALSE(ParseNvccVersion("nvcc: command not found\n"));
}

TEST_CASE("cuDNN headers: v9 and v8 layouts, v7 cudnn.h", "[probe]") {
  const char* v9 =
      "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 0\n\n"
      "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"
      "#define CUDNN_MAX_SM_MAJOR_NUMBER 9\n";
  CHECK(ParseCudnnHeader(v9) == "9.6.0");
  CHECK_FALSE(HeaderDefine(v9, "CUDNN_VERSION"));  // an expression, not a number
  const char* v8 =
      "#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n"
      "#define CUDNN_PATCHLEVEL 7\n\n#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + "
      "CUDNN_PATCHLEVEL)\n";
  CHECK(ParseCudnnHeader(v8) == "8.9.7");
  const char* v7 =
      "/* cudnn.h */\n#if !defined(CUDNN_H_)\n#define CUDNN_H_\n\n#define CUDNN_MAJOR 7\n"
      "#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 5\n";
  CHECK(ParseCudnnHeader(v7) == "7.6.5");
  CHECK_FALSE(ParseCudnnHeader("#include \"cudnn_version.h\"\n"));
  // The library's codes use the same two multipliers.
  CHECK(gp::CudnnVersionFromCode(8907) == "8.9.7");
  CHECK(gp::CudnnVersionFromCode(90600) == "9.6.0");
}

TEST_CASE("nccl.h and NCCL version codes, including the <= 2.8 form", "[probe]") {
  const char* h =
      "#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 9\n#define NCCL_SUFFIX \"\"\n\n"
      "#define NCCL_VERSION_CODE 22809\n"
      "#define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + "
      "(Y) * 100 + (Z))\n";
  CHECK(ParseNcclHeader(h) == "2.28.9");
  CHECK(HeaderDefine(h, "NCCL_VERSION_CODE") == 22809);
  CHECK(ParseNcclHeader("#define NCCL_MAJOR 2\n#define NCCL_MINOR 7\n#define NCCL_PATCH 8\n") == "2.7.8");
  CHECK_FALSE(ParseNcclHeader("#define NCCL_MAJOR 2\n"));
  CHECK(gp::NcclVersionFromCode(2708) == "2.7.8");
  CHECK(gp::NcclVersionFromCode(21803) == "2.18.3");
}

TEST_CASE("pip dist-info names and the CUDA major of dpkg packages", "[probe]") {
  auto cudnn = ParseDistInfoName("nvidia_cudnn_cu13-9.19.0.56.dist-info");
  REQUIRE(cudnn);
  CHECK(cudnn->project == "nvidia_cudnn_cu13");
  CHECK(cudnn->version == "9.19.0.56");
  CHECK(cudnn->cuda_major == 13);
  auto nvcc = ParseDistInfoName("nvidia_cuda_nvcc-13.0.88.dist-info");
  REQUIRE(nvcc);
  CHECK(nvcc->version == "13.0.88");
  CHECK_FALSE(nvcc->cuda_major);
  CHECK(ParseDistInfoName("nvidia_nccl_cu12-2.21.5.dist-info")->cuda_major == 12);
  CHECK_FALSE(ParseDistInfoName("nvidia_nccl_cu12-2.21.5.egg-info"));
  CHECK_FALSE(ParseDistInfoName("broken.dist-info"));

  CHECK(CudaMajorFromDebVersion("8.9.7.29-1+cuda12.2") == 12);
  CHECK(CudaMajorFromDebVersion("2.16.5-1+cuda11.8") == 11);
  CHECK_FALSE(CudaMajorFromDebVersion("9.1.0.70-1"));
  CHECK(CudaMajorFromPackageName("libcudnn9-cuda-12") == 12);
  CHECK_FALSE(CudaMajorFromPackageName("libcudnn8"));
}

TEST_CASE("dpkg status stanzas, NVIDIA package filter and interrupted states", "[probe]") {
  auto entries = ParseDpkgStatus(
      "Package: libcudnn8\nStatus: hold ok installed\nPriority: optional\nVersion: 8.9.7.29-1+cuda12.2\n"
      "Description: cuDNN runtime libraries\n Version: 1.0 (continuation lines are not fields)\n\n"
      "Package: nvidia-dkms-535\nStatus: install ok half-configured\nVersion: 535.129.03-0ubuntu1\n\n\n"
      "Package: old-thing\nStatus: deinstall ok config-files\nVersion: 1\n");
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].package == "libcudnn8");
  CHECK(entries[0].status == "hold ok installed");
  CHECK(entries[0].version == "8.9.7.29-1+cuda12.2");
  CHECK(entries[1].status == "install ok half-configured");
  CHECK(DpkgInterrupted(entries[1].status));
  CHECK_FALSE(DpkgInterrupted(entries[0].status));
  CHECK(DpkgInterrupted("install ok unpacked"));
  CHECK(DpkgInterrupted("install ok triggers-awaited"));
  CHECK(DpkgInstalled("install ok installed"));
  CHECK_FALSE(DpkgInstalled(entries[2].status));
  CHECK_FALSE(DpkgInstalled("install ok not-installed"));

  for (const char* n :
       {"nvidia-driver-535", "libnvidia-compute-535", "cuda-toolkit-12-2", "libcudnn9-cuda-12",
        "cudnn9-cuda-12", "libnccl2", "nvidia-container-toolkit", "docker-ce", "containerd.io"}) {
    CHECK(IsNvidiaRelatedPackage(n));
  }
  for (const char* n : {"base-files", "libc6", "linux-image-generic", "python3-nvidia-thing"}) {
    CHECK_FALSE(IsNvidiaRelatedPackage(n));
  }
}

TEST_CASE("nvidia-ctk --version", "[probe]") {
  CHECK(ParseCtkVersion("NVIDIA Container Toolkit CLI version 1.17.8\n"
                        "commit: f202b80a9b9d0db00d9b1d73c0128c8962c55f4d\n") == "1.17.8");
  CHECK(ParseCtkVersion("NVIDIA Container Toolkit CLI version 1.20.1") == "1.20.1");
  CHECK_FALSE(ParseCtkVersion("nvidia-ctk: command not found\n"));
}

TEST_CASE("daemon.json: runtimes, default runtime, CDI, parse errors", "[probe]") {
  auto d = ParseDaemonJson(R"({"default-runtime": "nvidia", "runtimes": {"nvidia": {"args": [],
      "path": "nvidia-container-runtime"}, "crun": {"path": "/usr/bin/crun"}},
      "features": {"cdi": true}, "cdi-spec-dirs": ["/opt/cdi"]})");
  CHECK(d.error.empty());
  CHECK(d.runtimes == std::vector<std::string>{"crun", "nvidia"});
  CHECK(d.default_runtime == "nvidia");
  CHECK(d.cdi_feature == true);
  CHECK(d.cdi_spec_dirs == std::vector<std::string>{"/opt/cdi"});

  auto broken = ParseDaemonJson("{\n    \"runtimes\": {\n        \"nvidia\": {\n    }\n");
  CHECK(broken.error ==
        "parse error at line 5, column 1: syntax error while parsing object - unexpected end of input; "
        "expected '}'");
  CHECK(ParseDaemonJson("[1]").error == "not a JSON object");
  CHECK(ParseDaemonJson("{}").runtimes.empty());
}

TEST_CASE("Docker Engine API bodies: /version and /info", "[probe]") {
  CHECK(ParseDockerVersionBody(R"({"Platform":{"Name":"Docker Engine - Community"},"Version":"28.3.2",
      "ApiVersion":"1.51","MinAPIVersion":"1.24"})") == "28.3.2");
  CHECK_FALSE(ParseDockerVersionBody("not json"));
  auto info = ParseDockerInfoBody(R"({"ID":"x","Runtimes":{"io.containerd.runc.v2":{"path":"runc"},
      "nvidia":{"path":"nvidia-container-runtime"},"runc":{"path":"runc"}},"DefaultRuntime":"runc",
      "CDISpecDirs":["/etc/cdi","/var/run/cdi"],
      "DiscoveredDevices":[{"Source":"cdi","ID":"nvidia.com/gpu=0"},{"Source":"cdi","ID":"nvidia.com/gpu=all"}]})");
  CHECK(info.ok);
  CHECK(info.runtimes == std::vector<std::string>{"io.containerd.runc.v2", "nvidia", "runc"});
  CHECK(info.default_runtime == "runc");
  CHECK(info.cdi_spec_dirs == std::vector<std::string>{"/etc/cdi", "/var/run/cdi"});
  CHECK(info.cdi_devices == std::vector<std::string>{"nvidia.com/gpu=0", "nvidia.com/gpu=all"});
  CHECK_FALSE(ParseDockerInfoBody("<html>").ok);
}

TEST_CASE("CDI specs: nvidia-ctk YAML and JSON", "[probe]") {
  auto yaml = ParseCdiSpec(
      "---\ncdiVersion: 0.5.0\ncontainerEdits:\n  deviceNodes:\n  - path: /dev/nvidiactl\n  hooks:\n  - "
      "args:\n"
      "    - nvidia-cdi-hook\n    hookName: createContainer\n    path: /usr/bin/nvidia-cdi-hook\n"
      "devices:\n- containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n  name: \"0\"\n"
      "- containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia1\n  name: all\n- name: '1'\n"
      "kind: nvidia.com/gpu\n",
      false);
  CHECK(yaml.kind == "nvidia.com/gpu");
  CHECK(yaml.devices ==
        std::vector<std::string>{"nvidia.com/gpu=0", "nvidia.com/gpu=all", "nvidia.com/gpu=1"});
  auto indented =
      ParseCdiSpec("kind: \"nvidia.com/gpu\"\ndevices:\n  - name: gpu0\n    containerEdits: {}\n", false);
  CHECK(indented.devices == std::vector<std::string>{"nvidia.com/gpu=gpu0"});
  auto from_json = ParseCdiSpec(
      R"({"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[{"name":"0"},{"name":"all"}]})", true);
  CHECK(from_json.devices == std::vector<std::string>{"nvidia.com/gpu=0", "nvidia.com/gpu=all"});
  CHECK(ParseCdiSpec("hello: world\n", false).kind.empty());
}
