// One tick of `gpuprep watch` as plain values: what every GPU and the host showed. This is exactly what a
// `sample` record of `--json` holds (watch/jsonl.h writes and reads it back losslessly), and the only input
// the verdict rules (watch/rules.h) read, so a recorded run is judged the same anywhere (`--replay`).
// Units are in the names; an unset optional is a counter that was not supported or not yet known (the
// first tick has no rates) and prints as null.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gp::watch {

struct GpuId {
  unsigned index = 0;
  std::string uuid;
  std::string pci_bus_id;
};

// GPM metrics (Hopper and newer) mapped once from NVML's 0-100 to the 0-1 ratios DCGM's guidance uses
// (DCGM_FI_PROF_SM_ACTIVE and friends); gpuprep's mapping: ratio = percent / 100.
struct Gpm {
  std::optional<double> sm_active_ratio, sm_occupancy_ratio, tensor_active_ratio, dram_active_ratio;
};

struct MigInstance {
  unsigned gpu_instance_id = 0;
  Gpm gpm;
};

// The job a GPU process belongs to, named from its cgroup (watch/job.h reads /proc/PID/cgroup). Every
// string is bounded and free of control characters and ill-formed UTF-8 (it reaches terminals and JSON).
struct Job {
  std::string kind;    // slurm, kubernetes_pod, docker, containerd, cri-o, podman, systemd, cgroup, unknown
  std::string id;      // the job number, pod UID, container id, unit name or cgroup path; "" for unknown
  std::string cgroup;  // the cgroup path it was named from; "" when none was read
  std::string reason;  // unknown: why no cgroup names it
  // The grouping key: "kind:id", or the kind alone when it has no id ("unknown").
  std::string Key() const { return id.empty() ? kind : kind + ":" + id; }
};

struct GpuProcess {
  unsigned pid = 0;  // host PID as NVML reports it
  std::optional<uint64_t> used_memory_bytes;
  std::optional<unsigned> gpu_instance_id;
  std::optional<Job> job;  // unset in recordings made before per-job grouping
};

enum class GpuState { kOk, kGap, kLost };

// An Xid event NVIDIA's driver logged to the kernel log for a GPU during a tick (watch/xid.h): its code and
// what the line names. The health finding's code is the catalogue's (util/xid_catalogue.h: XidHealthCode),
// derived, never read back from a recording. Strings are bounded and printable ASCII.
struct GpuXid {
  int xid = 0;
  std::string pid;      // "" when the line names none
  std::string process;  // "" when the line names none
  std::string detail;   // the rest of the line
};

struct GpuSample {
  GpuId id;
  std::string name;
  GpuState state = GpuState::kOk;
  // Duty cycle: NVML's utilisation samples since the previous tick. `duty_pct` is their mean, 0 with an
  // empty buffer (NOT_FOUND: no kernel ran), unset where NVML has none (MIG, not supported).
  std::optional<double> duty_pct;
  unsigned duty_samples = 0;       // how many samples NVML returned
  unsigned duty_zero_samples = 0;  // how many of them were 0
  bool duty_buffer_empty = false;  // NOT_FOUND / nothing newer than the last one seen
  std::optional<uint64_t> memory_used_bytes, memory_total_bytes;
  std::optional<double> power_w, power_limit_enforced_w, power_limit_default_w;
  std::optional<double> energy_j;  // since the previous tick
  std::optional<unsigned> sm_clock_mhz, sm_clock_max_mhz;
  // The GPU die, degrees C (unset where NVML gives none, and in recordings made before it was read).
  std::optional<double> temperature_c;
  std::optional<uint64_t> clock_event_reasons;  // NVML's bitmask at this tick
  // Share of the interval spent in each clock-event state, from NVML's nanosecond counters.
  std::optional<double> power_cap_ratio, sync_boost_ratio, sw_thermal_ratio, hw_thermal_ratio,
      hw_power_brake_ratio;
  std::optional<double> pcie_tx_bytes_per_s, pcie_rx_bytes_per_s, nvlink_tx_bytes_per_s,
      nvlink_rx_bytes_per_s;
  std::optional<double> pcie_peak_bytes_per_s, nvlink_peak_bytes_per_s;  // one direction, all lanes/links
  // Where the NVLink peak came from (kNvlinkPeakSources); unset in recordings made before it was said.
  std::optional<std::string> nvlink_peak_source;
  std::optional<Gpm> gpm;  // the whole GPU
  std::optional<bool> mig_mode;
  std::vector<MigInstance>
      mig_instances;  // per MIG GPU instance; its GPM values null where GPM does not reach it
  std::optional<std::vector<GpuProcess>> processes;
  unsigned process_entry_bytes = 0;  // the process-list stride NVML's answer was read with
  std::vector<GpuXid> xids;          // the Xid events logged for it since the previous tick
};

// The NVLink peak's sources: NVML's per-link speed for active links (field 90) times the links whose state
// (field 165) is active; or, where the driver gives no link states, times the links present (field 91).
inline constexpr const char* kNvlinkPeakActiveLinks = "nvml_active_links";
inline constexpr const char* kNvlinkPeakLinksPresent = "nvml_links_present";

struct Pressure {  // /proc/pressure/*: "some"/"full" avg10, percent
  std::optional<double> cpu_some_avg10, io_some_avg10, io_full_avg10, memory_some_avg10, memory_full_avg10;
};

enum class ProcessRole { kGpu, kLoader, kChild };

struct HostThread {
  unsigned tid = 0;
  std::string comm;
  char state = '?';
  std::optional<double> cpu_pct;  // of one core, since the previous thread reading
};

struct HostProcess {
  unsigned pid = 0;
  unsigned ppid = 0;
  std::string comm;
  ProcessRole role = ProcessRole::kChild;
  std::vector<unsigned> gpus;                   // the GPU indexes of the GPU process it is (or descends from)
  char state = '?';                             // /proc/PID/stat field 3: R, S, D, ...
  std::optional<double> cpu_pct;                // of one core, since the previous tick
  std::optional<double> main_thread_cpu_pct;    // GPU processes: the thread whose id is the PID
  std::optional<unsigned> cpus_allowed;         // Cpus_allowed_list in /proc/PID/status
  std::optional<double> cgroup_cpu_limit;       // cpu.max or cfs_quota/cfs_period, in CPUs; unset = none
  std::optional<uint64_t> cgroup_nr_throttled;  // throttled periods since the previous tick
  std::optional<double> cgroup_throttled_ms;    // time throttled since the previous tick
  std::vector<HostThread> threads;              // GPU processes, every few seconds: all threads
};

struct HostSample {
  unsigned cpu_count = 0;
  std::vector<double> cpu_busy_pct;         // per core, since the previous tick (empty on the first)
  std::optional<unsigned> procs_blocked;    // /proc/stat: tasks in uninterruptible sleep (D) host-wide
  std::optional<Pressure> pressure;         // unset: /proc/pressure absent (kernel without PSI)
  std::vector<unsigned> unattributed_pids;  // NVML PIDs that name no process here (a container)
  std::vector<HostProcess> processes;       // GPU processes and their descendants
};

struct Sample {
  long long time_ms = 0;      // wall clock, ms since 1970 (printed RFC 3339 UTC)
  long long interval_ms = 0;  // the configured interval
  long long window_ms = 0;    // the configured window (a replay judges with it unless told otherwise)
  std::vector<GpuSample> gpus;
  HostSample host;
};

}  // namespace gp::watch
