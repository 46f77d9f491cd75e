// HostFacts: everything the probe learned about a host, as plain values. Serialised into the "host"
// object of `doctor --json` (probe/host_json.cc) and read back by `launch --host`. Every field is
// optional in spirit: a missing component is a fact ("not found"), never an error.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sys/native.h"

namespace gp::probe {

struct OsInfo {
  std::string id;           // "ubuntu" (os-release ID)
  std::string version_id;   // "22.04"
  std::string pretty_name;  // "Ubuntu 22.04.4 LTS"
  std::string codename;     // "jammy" (VERSION_CODENAME)
};

struct PciDevice {
  std::string address;    // "0000:18:00.0"
  std::string vendor_id;  // "0x10de"
  std::string device_id;  // "0x2330"
  std::string class_id;   // "0x030200"
  std::string driver;     // bound driver name ("nvidia", "nouveau", "" when none)
  std::optional<int> numa_node;
  std::string subsystem_vendor_id;  // "0x10de" (sysfs subsystem_vendor; "" when absent)
  std::string subsystem_device_id;  // "0x16c1" (sysfs subsystem_device; "" when absent)
};

// A GPU function's PCIe link as sysfs reports it (current_link_width/max_link_width,
// current_link_speed/max_link_speed, and the max_link_speed of the port above it); nullopt where a file is
// missing or reads "Unknown".
struct PcieLink {
  std::optional<int> width, max_width;     // lanes
  std::optional<double> speed, max_speed;  // GT/s
  std::optional<double> port_max_speed;    // the upstream port's max_link_speed, GT/s
};

struct Gpu {
  int index = 0;                         // order by PCI address (what nvidia-smi and CUDA use by default)
  std::string pci;                       // "0000:18:00.0"
  std::string device_id;                 // "0x2330"
  std::string name;                      // from the catalogue; "unknown NVIDIA GPU 0x1234" otherwise
  std::string architecture;              // "hopper"; "" when unknown
  std::string compute_capability;        // "9.0"; "" when unknown
  std::optional<uint64_t> memory_bytes;  // nvmlDeviceGetMemoryInfo's total, when NVML answers
  std::string driver;                    // bound kernel driver
  bool known = false;                    // found in the compat catalogue
  std::string subsystem_vendor_id;  // "0x10de": with subsystem_device_id, which board (A2 vs A16); "" unknown
  std::string subsystem_device_id;  // "0x157e"
  std::string uuid;                 // NVML's "GPU-..." UUID (live host with a working driver); "" otherwise
  std::string serial;               // NVML's board serial; "" when NVML does not give one
  // NVML's GPU fabric state (nvmlDeviceGetGpuFabricInfoV; live host only): "not-supported", "not-started",
  // "in-progress", "completed"; "" when NVML was not asked or did not answer.
  std::string fabric_state;
  std::optional<int> fabric_status;  // its nvmlReturn_t status (0 = success), meaningful when "completed"
  PcieLink pcie;
  bool config_all_ones = false;  // the first bytes of its sysfs config space read 0xff: off the bus
  // How NVML answered its bus id (live host with a working NVML only): nullopt when not asked, else the
  // nvmlReturn_t of nvmlDeviceGetHandleByPciBusId_v2 (0 found, 6 not found, 15 lost, 16 reset required).
  std::optional<int> nvml_status;
  sys::NvmlHealth health;  // what NVML said of it (found GPUs only)
};

struct KernelModule {
  bool loaded = false;    // /proc/driver/nvidia/version or /sys/module/nvidia exists
  std::string version;    // "535.161.08"
  bool open = false;      // "Open Kernel Module" in the NVRM line
  std::string nvrm_line;  // the raw first line
};

// The apt run that moved a package, as /var/log/apt/history.log (or a rotation) records it
// (probe/apt_history.h): found only by the package's exact name and version, never guessed.
struct AptRun {
  std::string date;          // Start-Date: "2024-06-11  06:38:04" as apt writes it ("" when none found)
  std::string commandline;   // Commandline: as written, at most 200 bytes, terminal-safe
  std::string requested_by;  // Requested-By: "ubuntu (1000)" ("" when the line is absent: root, no sudo)
  bool unattended = false;   // unattended-upgrades ran it (its program is the Commandline's)
  std::string action;        // "Install", "Upgrade", "Downgrade", "Reinstall"
  std::string package;       // the package it moved: "linux-image-6.8.0-62-generic"
  std::string version;       // to this version
  std::string where;         // "/var/log/apt/history.log.1.gz:57": the entry's Start-Date line
  bool found() const { return !date.empty(); }
};

struct DriverInfo {
  KernelModule module;
  std::string userspace_version;  // from libnvidia-ml.so.<version> file name or NVML
  std::string userspace_source;   // "file:/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.161.08" | "nvml"
  std::optional<std::string> nvml_error;  // e.g. "Driver/library version mismatch"
  std::optional<int> nvml_device_count;
  bool nouveau_loaded = false;        // /sys/module/nouveau exists
  bool nouveau_blacklisted = false;   // modprobe.d has "blacklist nouveau"
  std::optional<bool> secure_boot;    // efivars SecureBoot-8be4df61-...; nullopt when not EFI/unknown
  bool kernel_headers = false;        // /lib/modules/<kernel>/build exists
  bool dkms_module = false;           // /var/lib/dkms/nvidia/<ver> exists
  bool dkms_signed = false;           // DKMS/MOK signing key present (/var/lib/shim-signed/mok/MOK.der)
  bool persistenced_enabled = false;  // nvidia-persistenced.service enabled (starts at boot)
  bool persistenced_running = false;  // its process is running now (live host only; perhaps started by hand)
  // The apt run that installed the userspace driver at `userspace_version`, asked only when the loaded
  // module's version differs from it (probe/apt_history.h).
  AptRun userspace_moved_by;
  std::string persistenced_detail;
};

struct InstalledPackage {
  std::string name;
  std::string version;  // dpkg version
  std::string status;   // "install ok installed", ...
  bool held = false;    // "hold" want state (apt-mark hold)
};

struct Component {  // cuda / cudnn / nccl as found on the host
  bool found = false;
  std::string version;  // "13.0.88" (full when nvcc/version.json gives it), "9.19.0", "2.28.9"
  std::string
      source;  // how it was found: "version.json", "nvcc", "header:/usr/include/cudnn_version.h",
               // "dlopen:/usr/local/cuda/lib64/libcudnn.so.9", "dpkg:libcudnn8", "pip:nvidia_cudnn_cu13"
  std::string path;               // install prefix or library path
  std::optional<int> cuda_major;  // the CUDA major it was built for (cuDNN/NCCL), when known
  std::vector<std::string> notes;
};

// The stack's image as the local engine has it (probe/image.cc; live only, one inspect call).
struct ImageInfo {
  std::string ref;          // the reference asked about
  bool inspected = false;   // the engine answered (present or not)
  bool present = false;     // the engine has it
  std::string digest;       // its manifest digest (RepoDigests) for this repository
  std::string cuda;         // CUDA_VERSION from its config, normalised ("12.2.2")
  std::string cuda_raw;     // as declared ("12.2.2.009")
  std::string cuda_driver;  // CUDA_DRIVER_VERSION ("535.104.05")
  // Read from the image's registry instead (doctor/launch --registry, when the engine does not have it):
  // cuda, cuda_raw, cuda_driver and digest then come from the registry's manifest and config.
  bool from_registry = false;
  std::string registry_error;  // why the registry could not be read ("" when it was, or was not asked)
};

struct DockerInfo {
  bool cli_found = false;
  bool engine_reachable = false;
  std::string version;                // server version
  std::string api_version;            // the engine's API version ("1.51"), from the same /version answer
  std::vector<std::string> runtimes;  // "runc", "nvidia"
  std::string default_runtime;
  bool cdi = false;                      // engine has CDI enabled and an nvidia.com/gpu spec exists
  std::vector<std::string> cdi_devices;  // "nvidia.com/gpu=0", "nvidia.com/gpu=all"
  std::string daemon_json_error;         // parse error in /etc/docker/daemon.json
  std::vector<std::string> daemon_json_runtimes;
  std::string detail;           // why the engine was not reached
  std::string socket;           // the socket that answered
  int containers_running = -1;  // running containers (-1: unknown)
  // The engine's process started while nvidia-container-runtime-hook was not installed (live only: its pid
  // file's process start time against dpkg.log's installs and removals of the toolkit; an upgrade keeps the
  // hook's path, so it does not count). dockerd looks for the hook only at start, so `--gpus` fails until it
  // restarts.
  bool started_before_hook = false;
  ImageInfo image;  // the stack's image (ProbeImage)
};

struct ToolkitInfo {
  std::map<std::string, std::string> packages;  // name -> dpkg version for the 4 toolkit packages
  std::string ctk_version;                      // nvidia-ctk --version (live only)
};

struct FabricManagerInfo {
  bool installed = false;
  std::string version;  // package upstream version
  bool enabled = false;
  bool running = false;
};

// One ConnectX-7 function (PCI 15b3:1021) that has a VPD file, and what its VPD said (probe/fabric.cc).
struct ConnectxFunction {
  std::string address;  // "0000:1a:00.0"
  std::string vpd;      // "bridge" (SMDL=SW_MNG), "nic" (valid VPD without it), "unreadable", "invalid"
  std::string detail;   // why invalid ("" otherwise)
};

// NVIDIA's NVLink Subnet Manager (HGX Blackwell: Fabric Manager needs it to bring up the NVLink fabric).
struct NvlsmInfo {
  bool installed = false;
  std::string version;   // package upstream version
  bool enabled = false;  // its own unit enabled (nvlsm.service / nvidia-nvlsm.service)
  bool running = false;  // an nvlsm process (live host only)
};

// The NVLink fabric of HGX Blackwell baseboards (B200/B100/B300), whose NVSwitches are no PCI devices of the
// host: they are managed through ConnectX-7 bridge functions (probe/vpd.h), by Fabric Manager with NVLSM
// over the InfiniBand umad interface.
struct FabricInfo {
  std::vector<ConnectxFunction> connectx;  // 15b3:1021 functions with a VPD file
  int bridges = 0;                         // of those, NVLink switch bridges
  // "hgx-blackwell" (bridges found, or decided from the board when a VPD could not be read),
  // "grace-blackwell" (GB200/GB300 compute tray: its switches are in separate switch trays), "" otherwise.
  std::string platform;
  std::string decided_by;  // "vpd" | "board" | "" (how the platform was decided)
  NvlsmInfo nvlsm;
  bool ib_umad_loaded = false;     // /proc/modules or /sys/module/ib_umad
  bool ib_umad_available = false;  // built in, or in the running kernel's modules tree
  std::string ib_umad_detail;      // where it was found ("" when not)
};

// One installed kernel (a `linux-image-K` dpkg lists as installed, or a /boot/vmlinuz-K) and the nvidia
// module it would load, from cheap sources only (probe/kernels.cc): its modules.dep, the DKMS tree, the
// module package's name. No module is decompressed.
struct InstalledKernel {
  std::string release;         // "6.8.0-60-generic" (validated: a digit, then [a-z0-9.+-])
  std::string source;          // "dpkg" | "boot" (/boot/vmlinuz-K only)
  bool headers = false;        // /lib/modules/K/build exists
  bool modules_dep = false;    // /lib/modules/K/modules.dep could be read
  std::string module_path;     // modules.dep's nvidia.ko path, relative to /lib/modules/K; "" none
  std::string module_version;  // "535.129.03" when the DKMS tree holds a build for K; "" unknown
  int module_branch = 0;       // 535 from the version or "kernel/nvidia-535srv/"; 0 unknown
  std::string dkms_version;    // the DKMS nvidia version that has a K directory ("" none)
  std::string dkms_log;        // its make.log for K, when one exists (path under the root)
  std::string dkms_error;      // the log's last error line, terminal-safe ("" none found)
  AptRun installed_by;         // the apt run that installed linux-image-K; asked only when K has no module
};

// Which kernel GRUB boots next (probe/grub.cc): GRUB_DEFAULT, grubenv's saved_entry and one-shot
// next_entry, resolved against grub.cfg's menu as written.
struct BootInfo {
  bool probed = false;                     // at least one installed kernel was found
  std::vector<InstalledKernel> kernels;    // sorted by release name as listed (not by version)
  std::vector<std::string> dkms_versions;  // the DKMS tree's nvidia versions, newest first
  std::string next_kernel;                 // "" when unknown
  std::string next_detail;                 // how it was decided, or why it is unknown
};

// One Xid event the NVIDIA driver wrote to the kernel log (probe/xid.h).
struct XidEvent {
  int code = 0;
  std::string pci;      // "0000:18:00": the log line's PCI domain:bus:device (it has no function number)
  std::string time;     // when, as the source states it: "1234.567890 s after boot" (kmsg), "Dec  4 15:38:01"
  std::string pid;      // the process id the line names ("" when none or unknown)
  std::string process;  // the process name the line names ("" when none or unknown)
  std::string detail;   // the rest of the line, bounded, non-printable bytes replaced
};

// The Xid history of the boot (probe/xid.cc): the kernel's ring buffer (/dev/kmsg) on the live host, the
// text logs (/var/log/kern.log, else syslog, and their first rotation) under --root.
struct XidLog {
  bool read = false;                 // some source was read
  std::vector<std::string> sources;  // what was read: "/dev/kmsg", "/var/log/kern.log.1", ...
  std::string skip_reason;           // why nothing was read ("" when read)
  bool from_boot = false;            // the boot's first record was among those read
  std::string oldest;                // the oldest record's time (when !from_boot, or a --since window's)
  std::vector<XidEvent> events;      // in log order, at most kMaxXidEvents
  size_t dropped = 0;                // events beyond that bound
  std::vector<std::string> notes;    // what was left out and why (compressed rotations, the journal)
};
inline constexpr size_t kMaxXidEvents = 4096;

// One port of an RDMA device (/sys/class/infiniband/DEV/ports/N, probe/network.cc).
struct RdmaPort {
  int number = 0;
  std::string state;          // "ACTIVE", "DOWN", "INIT" ("4: ACTIVE" without its number); "" unreadable
  std::string phys_state;     // "LinkUp", "Disabled", "Polling" ("5: LinkUp" without its number)
  std::string link_layer;     // "InfiniBand", "Ethernet" (RoCE), "Unspecified" (EFA)
  std::string rate;           // "400 Gb/sec (4X NDR)" as the kernel writes it
  bool roce_v2_ipv4 = false;  // a GID of type "RoCE v2" that is IPv4-mapped (::ffff:a.b.c.d)
  std::string netdev;         // the network device the port belongs to ("" none found)
  std::string netdev_state;   // its operstate: "up", "down", ... ("" unknown)
};

struct RdmaDevice {
  std::string name;              // "mlx5_0", "rdmap16s27"
  std::string pci;               // "0000:1a:00.0" (the device link's target); "" when not a PCI device
  std::string driver;            // the PCI function's driver: "mlx5_core", "efa", "irdma"
  std::string vendor;            // the PCI vendor id: "0x15b3" (Mellanox), "0x1d0f" (Amazon)
  bool efa = false;              // an AWS Elastic Fabric Adapter (driver efa, or vendor 0x1d0f)
  std::optional<int> numa_node;  // the PCI function's numa_node (nullopt: unknown or -1)
  std::vector<RdmaPort> ports;
};

// A physical network device (/sys/class/net/NAME with a device link: not lo, docker0, veth or bridges;
// probe/network_nics.cc).
struct NetDevice {
  std::string name;                   // "ens8f0np0", "ibp26s0"
  std::string pci;                    // its PCI function ("" when the device is not on PCI)
  std::string operstate;              // "up", "down", ... ("" unreadable)
  std::optional<int64_t> speed_mbps;  // /sys/class/net/NAME/speed (nullopt: unreadable, or -1 with no link)
  std::optional<bool> ipv4;           // it has an IPv4 address (nullopt: addresses not known)
  std::optional<bool> ipv6;           // it has a global IPv6 address (nullopt: not known)
};

// A PCIe bridge above a GPU or an RDMA device, with its ACS control register (probe/network_pci.cc).
struct PciBridge {
  std::string address;               // "0000:02:00.0"
  std::optional<uint16_t> acs_ctrl;  // the ACS Control register; nullopt when the bridge has no ACS
};

// The host's inter-node network as NCCL would use it (probe/network.cc): RDMA devices from sysfs, and
// whether GPUDirect RDMA can work (the peer-memory module, at the paths NCCL itself checks).
struct NetworkInfo {
  std::vector<RdmaDevice> rdma;  // sorted by name; at most kMaxRdmaDevices
  bool peermem = false;          // NCCL's check found the peer-memory module loaded
  std::string peermem_path;      // the path that said so ("" none)
  std::vector<NetDevice> nics;   // physical network devices, sorted by name; at most kMaxRdmaDevices
  // Each GPU's and RDMA device's PCIe bridges from the sysfs path, root port first (absent: path unknown).
  std::map<std::string, std::vector<std::string>> upstream;
  std::vector<PciBridge> bridges;  // every bridge of `upstream` once, with ACS (when acs_skip is "")
  std::string acs_skip;            // why ACS was not read ("" when it was)
  std::string vm;                  // what says the host is a virtual machine ("" when nothing does)
};
inline constexpr size_t kMaxRdmaDevices = 64;

struct HostFacts {
  std::string hostname;    // /proc/sys/kernel/hostname (live), else /etc/hostname; "" when unknown
  std::string machine_id;  // /etc/machine-id (32 hex digits); "" when absent or malformed
  OsInfo os;
  std::string kernel;  // "5.15.0-105-generic" (/proc/sys/kernel/osrelease)
  std::string arch;    // "x86_64"
  int cpus = 0;
  uint64_t memory_bytes = 0;                // MemTotal
  uint64_t shm_bytes = 0;                   // /dev/shm size
  std::optional<uint64_t> disk_free_bytes;  // free space under /var (apt, images)
  std::vector<PciDevice> nvidia_pci;        // every NVIDIA function (GPUs, NVSwitches, audio)
  std::vector<Gpu> gpus;
  int nvswitch_count = 0;
  DriverInfo driver;
  Component cuda, cudnn, nccl;
  std::map<std::string, InstalledPackage> packages;  // NVIDIA-related dpkg entries only
  std::vector<std::string> dpkg_interrupted;         // packages half-configured (dpkg --configure -a needed)
  DockerInfo docker;
  ToolkitInfo toolkit;
  FabricManagerInfo fabricmanager;
  FabricInfo fabric;
  BootInfo boot;                           // installed kernels and the next boot (probe/kernels.cc)
  std::vector<std::string> kernel_images;  // K of each installed linux-image-K (dpkg step)
  // Each installed unversioned linux-image-M and linux-headers-M (linux-image-generic-hwe-22.04,
  // linux-headers-aws), in the database's order; names as dpkg lists them (dpkg step)
  std::vector<std::string> kernel_metas;
  bool reboot_required = false;          // /var/run/reboot-required
  bool live = true;                      // probed the live system (false with --root or from a snapshot)
  std::vector<std::string> probe_notes;  // what could not be probed and why (doctor --verbose)
  XidLog xid;                            // the Xid events of this boot (doctor only)
  NetworkInfo network;                   // RDMA devices and GPUDirect RDMA (probe/network.cc)
};

}  // namespace gp::probe
