// The shared-library seam: versions and health that only a library call can give (NVML, libcuda,
// cudart, cuDNN, NCCL), loaded with dlopen on the live host. With --root, main hands the probe
// NullNativeLibs: nothing of the live host is loaded (docs/cli.md, "--root").
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gp::sys {

struct LibCall {
  bool loaded = false;        // the library was found and opened
  std::string path;           // the file dlopen resolved (from dlinfo/dladdr), when loaded
  std::optional<long> value;  // the returned number (version code, count), when the call succeeded
  std::string error;          // dlerror() text or the library's own error string
};

// One GPU as NVML names it: what lets a fleet tell boards apart across reboots and re-slotting.
struct NvmlDevice {
  std::string pci;     // "0000:18:00.0" (domain:bus:device.0, lower-case hex, as sysfs writes it)
  std::string uuid;    // nvmlDeviceGetUUID: "GPU-5b1c..."; "" when NVML did not give it
  std::string serial;  // nvmlDeviceGetSerial: the board serial; "" when not available (consumer boards)
  std::optional<unsigned long long> memory_total;  // nvmlDeviceGetMemoryInfo: total framebuffer bytes
  // The GPU's NVLink fabric state: nvmlDeviceGetGpuFabricInfoV (v3 layout, then v2), else the older
  // nvmlDeviceGetGpuFabricInfo. NVML_GPU_FABRIC_STATE_*: 0 not supported, 1 not started, 2 in progress,
  // 3 completed. nullopt when no such symbol exists or the call failed; NOT_SUPPORTED (older GPUs, PCIe
  // boards) reads as state 0. `fabric_status` is the registration's nvmlReturn_t (0 = success).
  std::optional<unsigned> fabric_state;
  std::optional<int> fabric_status;
};

// What NVML says of one GPU's health (probe/driver.cc asks for every NVIDIA GPU function on the PCI bus,
// by its bus id). Each value is nullopt when the call is missing, NOT_SUPPORTED on the board, or failed:
// NOT_SUPPORTED is a skip, never a finding. Layouts and values: sys/nvml_abi.h (NVIDIA's nvml.h).
struct NvmlHealth {
  std::optional<unsigned> pstate;  // nvmlDeviceGetPerformanceState: 0 = P0 (maximum performance)
  // nvmlDeviceGetRemappedRows (A100 and newer): a remap waiting for a GPU reset, a remap that failed.
  std::optional<bool> remap_pending, remap_failure;
  // nvmlDeviceGetRetiredPagesPendingStatus (Kepler through Turing: page retirement); the pages retired
  // for double-bit errors (nvmlDeviceGetRetiredPages_v2, cause
  // NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR).
  std::optional<bool> retire_pending;
  std::optional<unsigned> retired_dbe_pages;
  std::optional<bool> ecc_enabled;  // nvmlDeviceGetEccMode, current mode
  // nvmlDeviceGetTotalEccErrors, NVML_MEMORY_ERROR_TYPE_UNCORRECTED: since the driver loaded / lifetime.
  std::optional<unsigned long long> ecc_volatile_uncorrected, ecc_aggregate_uncorrected;
  std::optional<unsigned> recovery_action;          // field NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
  std::optional<unsigned long long> clock_reasons;  // nvmlDeviceGetCurrentClocksEventReasons (or Throttle)
  std::optional<unsigned> power_limit_mw, power_default_mw;  // enforced limit, the board's default
  std::optional<bool> persistence;                           // nvmlDeviceGetPersistenceMode
  std::optional<unsigned> nvlinks;     // links NVML answered for (nvmlDeviceGetNvLinkState)
  std::vector<unsigned> nvlinks_down;  // of those, the links reported inactive
};

// How NVML answered nvmlDeviceGetHandleByPciBusId_v2 for one bus id, and the health of the GPU it named.
struct NvmlBusAnswer {
  std::string pci;  // "0000:18:00.0", as asked
  int status = 0;   // nvmlReturn_t: 0, NVML_ERROR_NOT_FOUND (6), GPU_IS_LOST (15), RESET_REQUIRED (16)...
  NvmlHealth health;
};

struct NvmlInfo {
  bool loaded = false;
  std::string path;
  std::optional<std::string> driver_version;  // nvmlSystemGetDriverVersion
  std::optional<std::string> nvml_version;    // nvmlSystemGetNVMLVersion
  std::optional<long> device_count;           // nvmlDeviceGetCount_v2
  std::string error;                          // nvmlErrorString of a failed call, e.g.
                                              // "Driver/library version mismatch"
  std::vector<NvmlDevice> devices;            // per device index, when the handle calls succeed
  std::vector<NvmlBusAnswer> buses;           // per bus id asked for (Nvml's argument), in that order
};

struct CudaDriverInfo {
  bool loaded = false;
  std::string path;
  std::optional<long> driver_api_version;  // cuDriverGetVersion, e.g. 12020
  std::optional<long> device_count;        // cuDeviceGetCount after cuInit(0) succeeded
  std::string error;                       // cuGetErrorName/String of the failing call
};

class NativeLibs {
 public:
  virtual ~NativeLibs() = default;
  // Each tries the sonames in order (e.g. libcudart.so.13, .so.12, .so.11, libcudart.so) with the
  // default loader search path plus `extra_dirs` (e.g. the CUDA toolkit's lib64).
  virtual LibCall CudaRuntimeVersion(
      const std::vector<std::string>& extra_dirs) = 0;                           // cudaRuntimeGetVersion
  virtual LibCall CudnnVersion(const std::vector<std::string>& extra_dirs) = 0;  // cudnnGetVersion
  virtual LibCall NcclVersion(const std::vector<std::string>& extra_dirs) = 0;   // ncclGetVersion
  // NVML's versions and devices; each of `bus_ids` ("0000:18:00.0") is also looked up by its PCI bus id
  // and, when NVML answers, its health read (NvmlInfo::buses).
  virtual NvmlInfo Nvml(const std::vector<std::string>& bus_ids) = 0;
  virtual CudaDriverInfo CudaDriver() = 0;
};

class DlopenNativeLibs : public NativeLibs {
 public:
  DlopenNativeLibs() = default;
  // Looks for libnvidia-ml.so.1 in `nvml_dir` first (tests: a stand-in library), then the loader's path.
  explicit DlopenNativeLibs(std::string nvml_dir) : nvml_dir_(std::move(nvml_dir)) {}
  LibCall CudaRuntimeVersion(const std::vector<std::string>& extra_dirs) override;
  LibCall CudnnVersion(const std::vector<std::string>& extra_dirs) override;
  LibCall NcclVersion(const std::vector<std::string>& extra_dirs) override;
  NvmlInfo Nvml(const std::vector<std::string>& bus_ids) override;
  CudaDriverInfo CudaDriver() override;

 private:
  std::string nvml_dir_;
};

// Loads nothing; every answer is "not loaded". Used with --root.
class NullNativeLibs : public NativeLibs {
 public:
  LibCall CudaRuntimeVersion(const std::vector<std::string>&) override { return {}; }
  LibCall CudnnVersion(const std::vector<std::string>&) override { return {}; }
  LibCall NcclVersion(const std::vector<std::string>&) override { return {}; }
  NvmlInfo Nvml(const std::vector<std::string>&) override { return {}; }
  CudaDriverInfo CudaDriver() override { return {}; }
};

}  // namespace gp::sys
