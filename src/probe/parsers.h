// Pure parsers for the host files and tool outputs the probe reads. The formats are the public ones: the NVRM
// line NVIDIA's kernel module writes (NVIDIA/open-gpu-kernel-modules, kernel-open/nvidia/nv-procfs.c), dpkg's
// status file (deb-status(5)), os-release(5), proc(5), the CDI specification (cncf-tags/container-device-
// interface, SPEC.md), the Docker Engine API reference, and the tools' own version lines shown below.
// Each takes text (or a file name) and returns plain values; none touches the system, none throws.
// Implemented beside the probe step that uses them (probe/os.cc, probe/driver.cc, ...).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/host.h"

namespace gp::probe {

// ---------------------------------------------------------------- os.cc
// /etc/os-release: ID, VERSION_ID, PRETTY_NAME, VERSION_CODENAME (quotes and backslash escapes removed).
OsInfo ParseOsRelease(std::string_view text);
// /proc/meminfo "MemTotal: N kB" -> bytes.
std::optional<uint64_t> ParseMemTotal(std::string_view text);
// /proc/cpuinfo: number of "processor" lines.
int CountCpuinfoProcessors(std::string_view text);
// /sys/devices/system/cpu/online: "0-223" or "0,2-5,7" -> CPU count; nullopt when malformed.
std::optional<int> CountCpuList(std::string_view text);
// /proc/mounts: the size of the tmpfs mounted on /dev/shm from its "size=" option (k/m/g suffixes;
// "size=N%" is taken of `mem_total`); nullopt when /dev/shm is absent or has no size option.
std::optional<uint64_t> ParseShmSizeFromMounts(std::string_view mounts, uint64_t mem_total);
// dpkg architecture name -> kernel machine name ("amd64" -> "x86_64", "arm64" -> "aarch64"); unknown: as
// given.
std::string ArchFromDpkg(std::string_view dpkg_arch);
// e_machine of an ELF header (first 20 bytes at least) -> "x86_64" / "aarch64" / "ppc64le"; "" when not ELF.
std::string ArchFromElf(std::string_view header);

// ---------------------------------------------------------------- pci.cc
// A PCI function's current_link_speed / max_link_speed (sysfs) in GT/s: every form the kernel has written,
// "8 GT/s" (before pci_speed_string) and "8.0 GT/s PCIe" (drivers/pci/probe.c, up to "64.0 GT/s PCIe");
// nullopt for "Unknown" and for anything that is not a PCIe speed (AGP, PCI-X).
std::optional<double> ParseLinkSpeed(std::string_view text);

// ---------------------------------------------------------------- driver.cc
// /proc/driver/nvidia/version: both the proprietary ("NVIDIA UNIX x86_64 Kernel Module  550.90.07  ...")
// and the open ("NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build ...") NVRM lines,
// any architecture word, two-part versions (515.76). loaded=true when an NVRM line with a version is found.
KernelModule ParseNvrmVersion(std::string_view text);
// "libnvidia-ml.so.535.129.03" with prefix "libnvidia-ml.so." -> "535.129.03"; nullopt for ".so.1" and
// anything that is not a dotted version of at least two parts.
std::optional<std::string> LibVersionFromName(std::string_view file_name, std::string_view prefix);
// A modprobe.d file has an uncommented "blacklist nouveau" line.
bool BlacklistsNouveau(std::string_view modprobe_conf);
// efivars SecureBoot-8be4df61-... contents: 4 attribute bytes then 1 value byte. nullopt when too short.
std::optional<bool> ParseSecureBootVar(std::string_view bytes);

// ---------------------------------------------------------------- cuda.cc
struct CudaVersionJson {
  std::string version;  // best full version: cuda_nvcc, else cuda_cudart, else "cuda" when not date-style
  std::string field;    // which key gave it: "cuda_nvcc", "cuda_cudart", "cuda"
  std::string sdk;      // the top-level "cuda.version" as written ("12.6.20241114")
  std::string error;    // JSON parse error; empty when fine
};
CudaVersionJson ParseCudaVersionJson(std::string_view text);
// `nvcc --version`: "Cuda compilation tools, release 13.0, V13.0.88" -> "13.0.88" (or "13.0" without V).
std::optional<std::string> ParseNvccVersion(std::string_view text);

// ---------------------------------------------------------------- cudnn.cc / nccl.cc
// Integer value of "#define NAME <number>" in a C header; nullopt when absent or not a plain number.
std::optional<long> HeaderDefine(std::string_view header, std::string_view name);
// cudnn_version.h / cudnn_version_v9.h / (v7) cudnn.h -> "9.19.0"; nullopt when the macros are absent.
std::optional<std::string> ParseCudnnHeader(std::string_view header);
// nccl.h -> "2.28.9"; nullopt when NCCL_MAJOR/MINOR/PATCH are absent.
std::optional<std::string> ParseNcclHeader(std::string_view header);

// A Python wheel's dist-info directory name: "nvidia_cudnn_cu13-9.19.0.56.dist-info" ->
// {project "nvidia_cudnn_cu13", version "9.19.0.56", cuda_major 13 (from a "_cuNN" suffix)}.
struct DistInfo {
  std::string project;
  std::string version;
  std::optional<int> cuda_major;
};
std::optional<DistInfo> ParseDistInfoName(std::string_view dir_name);
// CUDA major from a Debian version's "+cudaX.Y" revision ("8.9.7.29-1+cuda12.2" -> 12) or from a package
// name's "-cuda-NN" ("libcudnn9-cuda-12" -> 12); nullopt otherwise.
std::optional<int> CudaMajorFromDebVersion(std::string_view version);
std::optional<int> CudaMajorFromPackageName(std::string_view name);

// ---------------------------------------------------------------- dpkg.cc
struct DpkgEntry {
  std::string package;
  std::string status;  // "install ok installed", "hold ok installed", "install ok half-configured"
  std::string version;
};
// /var/lib/dpkg/status (or an updates/ file): every stanza, in file order.
std::vector<DpkgEntry> ParseDpkgStatus(std::string_view text);
// Packages the probe keeps: nvidia-*, libnvidia-*, cuda-*, libcudnn*, cudnn*, libnccl*, docker*, containerd*,
// and nvlsm (NVIDIA's NVLink Subnet Manager).
bool IsNvidiaRelatedPackage(std::string_view name);
// The package is installed (config-files and not-installed are not).
bool DpkgInstalled(std::string_view status);
// The state needs `dpkg --configure -a` (half-configured, half-installed, unpacked,
// triggers-awaited/pending).
bool DpkgInterrupted(std::string_view status);

// ---------------------------------------------------------------- docker.cc
// `nvidia-ctk --version`: "NVIDIA Container Toolkit CLI version 1.17.8" -> "1.17.8".
std::optional<std::string> ParseCtkVersion(std::string_view text);
// The package that ships nvidia-container-runtime-hook. dockerd registers its GPU device driver (what
// `--gpus` asks for) only if that hook is on PATH when the engine starts (moby daemon/nvidia_linux.go).
inline constexpr const char kHookPackage[] = "nvidia-container-toolkit";
// Whether kHookPackage was absent at time WHEN
// (seconds since the epoch), from dpkg.log's text: the last install, upgrade, remove or purge at or before
// WHEN, else the first after it (an install from "<none>" means it was absent). false when the log names it
// nowhere (installed before the log begins).
bool HookAbsentAt(std::string_view dpkg_log, int64_t when);
struct DaemonJson {
  std::vector<std::string> runtimes;       // keys of "runtimes"
  std::string default_runtime;             // "default-runtime"
  std::vector<std::string> cdi_spec_dirs;  // "cdi-spec-dirs"
  std::optional<bool> cdi_feature;         // "features": {"cdi": bool}
  std::string error;                       // parse error text; empty when fine
};
DaemonJson ParseDaemonJson(std::string_view text);
// Docker Engine API GET /version -> "Version" (and, when `api_version` is given, "ApiVersion" when it is
// digits and dots, else ""); GET /info -> runtimes, default runtime, CDI.
std::optional<std::string> ParseDockerVersionBody(std::string_view body, std::string* api_version = nullptr);
struct DockerInfoBody {
  std::vector<std::string> runtimes;       // keys of "Runtimes", sorted
  std::string default_runtime;             // "DefaultRuntime"
  std::vector<std::string> cdi_spec_dirs;  // "CDISpecDirs" (Engine >= 27)
  std::vector<std::string> cdi_devices;    // "DiscoveredDevices" of source "cdi": their IDs
  int containers_running = -1;             // "ContainersRunning"
  bool ok = false;                         // the body was a JSON object
};
DockerInfoBody ParseDockerInfoBody(std::string_view body);
// ---------------------------------------------------------------- cdi.cc
// A CDI spec (YAML as nvidia-ctk writes it, or JSON): kind and the fully-qualified device names
// ("nvidia.com/gpu=0", ...). Empty kind when the text is not a spec.
struct CdiSpec {
  std::string kind;
  std::vector<std::string> devices;
};
CdiSpec ParseCdiSpec(std::string_view text, bool json);

// ---------------------------------------------------------------- fabric.cc
// A kernel module in the files of /lib/modules/<kernel>/ (modules.builtin: one module path a line;
// modules.dep: "path: dependencies" a line, as depmod(8) writes them): true when a line's path ends with
// "/<name>.ko", optionally compressed (.ko.xz, .ko.zst, .ko.gz). `name` as the kernel spells it ("ib_umad").
bool ModulesFileLists(std::string_view text, std::string_view name);
// /proc/modules (proc(5)): true when a line's first field is `name`.
bool ProcModulesHas(std::string_view text, std::string_view name);

}  // namespace gp::probe
