// The probe's steps, one concern per file; ProbeHost (probe/probe.cc) runs them in this order. Each step
// fills its part of HostFacts, adds probe_notes for what it could not learn, and never throws. Steps that
// would run, load or contact something check `Live(env)` first (docs/cli.md, "--root").
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/probe.h"

namespace gp::probe {

// True when the probe may touch the live host: the Fs is live "/" (not --root).
inline bool Live(const ProbeEnv& env) { return env.fs->IsLive(); }
// The value of an environment variable from ProbeEnv::env, "" when unset.
std::string EnvVar(const ProbeEnv& env, const std::string& name);

void ProbeOs(const ProbeEnv& env, HostFacts& facts);      // os.cc: os, kernel, arch, CPUs, memory, shm, disk
void ProbePci(const ProbeEnv& env, HostFacts& facts);     // pci.cc: NVIDIA functions, GPUs, NVSwitches
void ProbeDpkg(const ProbeEnv& env, HostFacts& facts);    // dpkg.cc: packages, holds, interrupted dpkg
void ProbeDriver(const ProbeEnv& env, HostFacts& facts);  // driver.cc: module, userspace, nouveau, SB, DKMS
// kernels.cc (after dpkg): installed kernels, the nvidia module each would load, the next boot.
void ProbeKernels(const ProbeEnv& env, HostFacts& facts);
void ProbeCuda(const ProbeEnv& env, HostFacts& facts);    // cuda.cc: toolkit version and prefix
void ProbeCudnn(const ProbeEnv& env, HostFacts& facts);   // cudnn.cc (after ProbeCuda and ProbeDpkg)
void ProbeNccl(const ProbeEnv& env, HostFacts& facts);    // nccl.cc (after ProbeCuda and ProbeDpkg)
void ProbeDocker(const ProbeEnv& env, HostFacts& facts);  // docker.cc: engine, daemon.json, CDI, toolkit
void ProbeServices(const ProbeEnv& env,
                   HostFacts& facts);  // services.cc: fabric manager, persistenced, reboot
void ProbeIdentity(const ProbeEnv& env, HostFacts& facts);  // identity.cc: hostname, machine-id
// fabric.cc (after the gpu, dpkg and services steps): NVLink switch bridges, the platform, ib_umad.
void ProbeFabric(const ProbeEnv& env, HostFacts& facts);
// xid.cc (after the gpu step): the Xid events of this boot, from /dev/kmsg (live) or the text logs (--root).
void ProbeXid(const ProbeEnv& env, HostFacts& facts);
// apt_history.cc (after the driver and kernels steps): the apt run that installed each kernel without a
// module, and the userspace driver when the loaded module is another version.
void ProbeAptHistory(const ProbeEnv& env, HostFacts& facts);
// network.cc: RDMA devices, their ports and network devices, the peer-memory module (files only).
void ProbeNetwork(const ProbeEnv& env, HostFacts& facts);
// network_nics.cc (called by ProbeNetwork): the physical network devices, their speed and addresses.
void ProbeNics(const ProbeEnv& env, HostFacts& facts);
// network_pci.cc (called by ProbeNetwork, after the gpu step): the bridges above the GPUs and RDMA devices,
// their ACS, the RDMA devices' NUMA nodes, whether the host is a VM.
void ProbePciPaths(const ProbeEnv& env, HostFacts& facts);
// network_pci.cc: "DDDD:BB:DD.F" in hex.
bool IsPciAddress(std::string_view s);
// network_pci.cc: the ACS Control register from a function's config space (the extended capability 0x000D
// in the list from offset 256); nullopt when the list holds none or is malformed.
std::optional<uint16_t> AcsControl(const std::string& config);
// network_pci.cc: what says the host is a virtual machine (DMI, the CPU's hypervisor flag); "" nothing.
std::string DetectVm(const sys::Fs& fs);
// identity.cc: copies NVML's UUID, serial and memory size onto the GPU with the same PCI address.
void AttachGpuIdentity(const std::vector<sys::NvmlDevice>& devices, std::vector<Gpu>& gpus);
// identity.cc: NVML's answer for each bus id (and the health it read) onto the GPU at that address.
void AttachGpuHealth(const std::vector<sys::NvmlBusAnswer>& buses, std::vector<Gpu>& gpus);

// A library found by headers, dpkg, pip wheels and (live only) a dlopen'ed version call: cuDNN, NCCL.
struct LibrarySpec {
  std::string label;                      // "cudnn" (probe_notes prefix)
  std::vector<std::string> header_names;  // tried in each include dir, in order
  std::function<std::optional<std::string>(std::string_view)> parse_header;
  std::function<bool(const std::string&)> is_runtime_package;  // dpkg package names that carry it
  std::string pip_prefix;                                      // "nvidia_cudnn_cu"
  std::function<sys::LibCall(sys::NativeLibs&, const std::vector<std::string>&)> load;
  std::function<std::string(long)> from_code;  // version code -> "9.19.0"
};
// library.cc: fills `c` from the sources above; the live library's answer wins when it loads.
void ProbeLibrary(const ProbeEnv& env, HostFacts& facts, const LibrarySpec& spec, Component& c);

// cdi.cc: reads the CDI specs in `dirs` (duplicates skipped); appends their nvidia.com/gpu device names to
// `devices` (no duplicates); true when at least one nvidia.com/gpu spec exists.
bool ScanCdiSpecs(const sys::Fs& fs, const std::vector<std::string>& dirs, std::vector<std::string>& devices);

// Shared helpers (probe/probe.cc).
// Directories that may hold pip wheels' dist-info (site-packages / dist-packages of the host's Pythons,
// and <cuda>/dist-info of a toolkit assembled from wheels).
std::vector<std::string> DistInfoDirs(const ProbeEnv& env, const HostFacts& facts);
// The installed dpkg entry for `name`, or nullptr.
const InstalledPackage* FindPackage(const HostFacts& facts, const std::string& name);
// Library directories of the found CUDA toolkit (<prefix>/lib64, <prefix>/lib), for dlopen extra_dirs.
std::vector<std::string> CudaLibDirs(const HostFacts& facts);
// `path` exists; when `path` itself is an absolute symlink, its target is looked up inside the Fs root
// (a --root tree's "/lib/modules/K/build -> /usr/src/linux-headers-K" must not resolve on the live host).
bool ExistsInRoot(const sys::Fs& fs, const std::string& path);
// "/var/run" + rest, following /var/run when it is a symlink (Debian/Ubuntu: /var/run -> /run, absolute,
// which a --root tree must resolve inside the tree, not on the live host).
std::string VarRun(const sys::Fs& fs, const std::string& rest);
// A directory entry's parent-relative symlink target made absolute ("cuda-12.2" under /usr/local ->
// "/usr/local/cuda-12.2"); absolute targets are returned as they are.
std::string ResolveLink(const std::string& link_path, const std::string& target);

}  // namespace gp::probe
