// The NVML session seam for `gpuprep watch`: one nvmlInit_v2 for the whole run, device handles and the
// per-GPU facts that do not change read once, then one Read per tick. Every symbol is looked up by its
// versioned name through sys/dl.h; a missing one (FUNCTION_NOT_FOUND) or a call answering NOT_SUPPORTED
// leaves that value unset, never the whole reading. Each GPU is read on its own worker thread with a
// deadline (sys/deadline_worker.h): a GPU whose call misses it reads as a gap, and gets no further call
// until the stuck one returns. A GPU answering GPU_IS_LOST is lost for the rest of the session.
// NVML's documentation: "NVML is thread-safe so it is safe to make simultaneous NVML calls from multiple
// threads" (NVML API Reference, https://docs.nvidia.com/deploy/nvml-api/nvml-api-reference.html).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gp::sys {

// What does not change during a run, read once per GPU when the session opens.
struct NvmlGpu {
  unsigned index = 0;                    // NVML's device index
  std::string uuid;                      // nvmlDeviceGetUUID ("GPU-..."), "" when not given
  std::string pci_bus_id;                // "0000:18:00.0" (lower-case, 4-digit domain), "" when not given
  std::string name;                      // nvmlDeviceGetName
  std::optional<unsigned> architecture;  // nvmlDeviceGetArchitecture: NVML_DEVICE_ARCH_* (9 = Hopper)
  std::optional<unsigned> power_default_limit_mw;  // nvmlDeviceGetPowerManagementDefaultLimit
  std::optional<unsigned> sm_clock_max_mhz;        // nvmlDeviceGetMaxClockInfo(SM)
  std::optional<unsigned> nvlink_links;            // field 91
  std::optional<unsigned> nvlink_speed_mbps;       // field 90: per link, MB/s (read as one direction)
  std::optional<unsigned> nvlink_active_links;     // links whose state (field 165) is active; unset: unknown
  std::optional<unsigned> pcie_max_generation;     // nvmlDeviceGetMaxPcieLinkGeneration
  std::optional<unsigned> pcie_max_width;          // nvmlDeviceGetMaxPcieLinkWidth
  bool gpm_supported = false;                      // nvmlGpmQueryDeviceSupport: isSupportedDevice
  std::optional<bool> mig_enabled;                 // nvmlDeviceGetMigMode: current mode
  std::vector<unsigned> gpu_instance_ids;          // MIG GPU instances (nvmlDeviceGetGpuInstanceId)
};

// A cumulative counter as NVML returned it: the value, NVML's timestamp for it (µs since 1970, 0 when
// not given) and the width it wraps at (32 or 64 bits, from the value type).
struct NvmlCounter {
  uint64_t value = 0;
  int64_t time_us = 0;
  unsigned bits = 64;
};

// GPM metrics over the span between two GPM samples (Hopper and newer): percentages 0-100 and MiB/s,
// each unset when its per-metric nvmlReturn was not SUCCESS.
struct NvmlGpm {
  std::optional<double> sm_util_pct, sm_occupancy_pct, tensor_util_pct, dram_bw_util_pct;
  std::optional<double> pcie_tx_mib_s, pcie_rx_mib_s, nvlink_tx_mib_s, nvlink_rx_mib_s;
};

struct NvmlProcess {
  unsigned pid = 0;                         // a host PID (NVML does not translate pid namespaces)
  std::optional<uint64_t> used_bytes;       // unset for NVML_VALUE_NOT_AVAILABLE
  std::optional<unsigned> gpu_instance_id;  // MIG GPU instance; unset without MIG
};

enum class NvmlReadState {
  kOk,     // read (individual values may still be unset: not supported)
  kLate,   // a call missed the deadline: no values; the GPU gets no call until it returns
  kStuck,  // an earlier late call has not returned yet: nothing was asked
  kLost,   // NVML answered GPU_IS_LOST (now or earlier): nothing more is asked
};

// One tick of one GPU: raw answers, each unset where NVML had none.
struct NvmlReading {
  NvmlReadState state = NvmlReadState::kOk;
  int64_t time_us = 0;  // wall clock when the read started (µs since 1970)
  // nvmlDeviceGetSamples(GPU_UTILIZATION_SAMPLES) since the previous read. `duty_supported` false:
  // NOT_SUPPORTED (MIG) or missing; `duty_buffer_empty`: NOT_FOUND, no sample since the previous read.
  bool duty_supported = false;
  bool duty_buffer_empty = false;
  std::vector<unsigned> duty_pct;
  std::optional<uint64_t> memory_used_bytes, memory_total_bytes;  // _v2 "used" (allocated), else v1
  std::optional<unsigned> power_mw, power_limit_enforced_mw;
  std::optional<uint64_t> energy_mj;  // nvmlDeviceGetTotalEnergyConsumption (since driver load)
  std::optional<unsigned> sm_clock_mhz;
  std::optional<unsigned> temperature_c;  // nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU), degrees C
  std::optional<uint64_t>
      clock_event_reasons;  // nvmlDeviceGetCurrentClocksEventReasons, else the deprecated ...Throttle...
  std::optional<NvmlCounter> pcie_tx_bytes, pcie_rx_bytes;                     // fields 197/198
  std::optional<NvmlCounter> nvlink_tx_kib, nvlink_rx_kib;                     // fields 138/139, all links
  std::optional<NvmlCounter> power_cap_ns, sync_boost_ns;                      // fields 74/76
  std::optional<NvmlCounter> sw_thermal_ns, hw_thermal_ns, hw_power_brake_ns;  // fields 269/270/271
  std::optional<std::vector<NvmlProcess>> processes;  // nvmlDeviceGetComputeRunningProcesses_v3
  size_t process_stride = 0;                          // the entry size the answer was decoded with
  std::optional<NvmlGpm> gpm;                         // the whole GPU (not MIG), Hopper and newer
  std::vector<std::pair<unsigned, NvmlGpm>> mig_gpm;  // per MIG GPU instance id (nvmlGpmMigSampleGet)
};

class NvmlSession {
 public:
  virtual ~NvmlSession() = default;
  virtual const std::vector<NvmlGpu>& Gpus() const = 0;
  // Reads the GPUs at `positions` (indexes into Gpus()) in parallel, each on its worker; returns one
  // reading per position, in order, no later than `deadline` (plus the time to collect the results).
  virtual std::vector<NvmlReading> Read(const std::vector<size_t>& positions,
                                        std::chrono::steady_clock::time_point deadline) = 0;
  // Ends the session: nvmlShutdown when no call is stuck; with a stuck call, no shutdown and no join (the
  // stuck thread is left to the process exit).
  virtual void Close() = 0;
};

struct NvmlSessionOptions {
  // Whether a PID is visible in this pid namespace (/proc/PID exists). The process list's entry size is
  // chosen with it (sys/nvml_processes.h). Called from the worker threads.
  std::function<bool(unsigned pid)> pid_visible;
  std::chrono::milliseconds open_deadline{15000};  // nvmlInit can take seconds with persistence mode off
};

struct NvmlOpenResult {
  std::unique_ptr<NvmlSession> session;  // null on failure
  std::string error;  // "cannot load libnvidia-ml.so.1: ...", "nvmlInit_v2: Driver Not Loaded"
};

// dlopen libnvidia-ml.so.1, nvmlInit_v2, the device count and every handle, and each GPU's fixed facts;
// GPM samples are allocated for the GPUs that support it. Fails when NVML cannot be loaded or initialised,
// or does not answer within the open deadline. Never closes the library.
NvmlOpenResult OpenNvmlSession(const NvmlSessionOptions& options);

}  // namespace gp::sys
