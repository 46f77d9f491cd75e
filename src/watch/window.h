// One GPU's samples over one window, reduced to the figures the rules compare (watch/rules.h). Pure.
#pragma once
#include <optional>
#include <vector>

#include "watch/sample.h"
#include "watch/thresholds.h"

namespace gp::watch {

// A running mean that knows how many values it saw.
struct Mean {
  double sum = 0;
  unsigned n = 0;
  void Add(const std::optional<double>& v) {
    if (v) {
      sum += *v;
      ++n;
    }
  }
  std::optional<double> Get() const { return n ? std::optional<double>(sum / n) : std::nullopt; }
};

struct HostStats {                            // the host side as it concerns one GPU's processes
  bool attributable = true;                   // its GPU processes are visible in this pid namespace
  unsigned gpu_processes = 0;                 // most seen in one sample
  unsigned loaders = 0;                       // most pt_data_worker descendants seen in one sample
  Mean loader_cpu_pct;                        // their CPU together, percent of one core
  Mean loader_cpus_available;                 // CPUs they may use (affinity, cgroup quota)
  Mean main_thread_cpu_pct;                   // busiest main thread among its GPU processes
  Mean psi_cpu_some, psi_io_some;             // host-wide PSI avg10
  Mean host_cpu_busy_pct;                     // mean over cores
  unsigned ticks = 0;                         // samples with host data
  unsigned saturated_ticks = 0;               // loaders saturated (or, unattributable, the host's CPUs)
  unsigned blocked_ticks = 0;                 // a loader in D state, or PSI io high while loaders exist
  unsigned main_busy_ticks = 0;               // the main thread at >= busy_thread_pct
  std::optional<double> cgroup_throttled_ms;  // summed over the window
};

struct GpuWindow {
  GpuId id;
  std::string name;
  unsigned samples = 0, ok = 0, gaps = 0;
  bool lost = false;
  Mean duty_pct;
  unsigned duty_samples = 0, duty_zero = 0, duty_empty_ticks = 0;
  unsigned busy_duty_ticks = 0;  // ticks with duty >= busy_duty_pct (the GPU-Util >= 90 % figure)
  Mean power_w, power_limit_w, power_ratio;
  std::optional<double> power_limit_default_w;
  double energy_j = 0;
  bool have_energy = false;
  Mean sm_clock_mhz;
  std::optional<unsigned> sm_clock_max_mhz;
  unsigned reasons_ticks = 0;     // ticks with a clock-event bitmask
  unsigned reason_ticks[9] = {};  // per bit 0..8
  Mean power_cap_ratio, sw_thermal_ratio, hw_thermal_ratio, hw_power_brake_ratio;
  // Samples taken while the SW power cap held the clocks, and those of them drawing under
  // power_cap_below_ratio of the enforced limit: the cap is judged on its own samples, not on a window
  // mean that idle samples before a job's start pull down.
  unsigned capped_ticks = 0, capped_below_ticks = 0;
  Mean pcie_tx, pcie_rx, nvlink_tx, nvlink_rx;
  std::optional<double> pcie_peak, nvlink_peak;
  std::optional<std::string> nvlink_peak_source;  // how the sampler had the NVLink peak (sample.h)
  // Per sample (gaps and lost samples unset), for the phase split and the correlation across GPUs:
  std::vector<std::optional<double>> traffic;        // NVLink tx+rx (else PCIe), bytes/s
  std::vector<std::optional<double>> traffic_ratio;  // NVLink max(tx, rx) over its peak (else PCIe's)
  std::vector<std::optional<double>> tensor_series, sm_series;  // GPM tensor and SM activity
  Mean sm_active, sm_occupancy, tensor_active, dram_active;
  std::optional<bool> mig_mode;
  unsigned max_processes = 0, process_ticks = 0;
  std::vector<unsigned> pids;  // every PID seen
  std::optional<uint64_t> max_memory_used;
  HostStats host;

  std::optional<double> DutyZeroRatio() const;
  std::optional<double> TrafficRatio() const;  // mean traffic over peak (NVLink, else PCIe)
  const char* TrafficLink() const;             // the link TrafficRatio reads: "nvlink", "pcie" or nullptr
  // GPM is there when it answered for at least a quarter of the answered samples (its first sample of a
  // run, and one too soon after the previous, give no metrics).
  bool HasGpm() const { return sm_active.n > 0 && sm_active.n * 4 >= ok; }
};

struct MigWindow {
  GpuId id;
  unsigned gpu_instance_id = 0;
  unsigned samples = 0;
  Mean sm_active, tensor_active, sm_occupancy, dram_active;
  unsigned max_processes = 0;
  std::optional<uint64_t> max_memory_used;
};

// One GPU's window split by its link traffic: the samples where traffic is at or above `high_ratio` of the
// peak (a collective running) and those below it, with the activity of each phase. A job waiting on its
// link shows low tensor and SM activity in the high phase; one overlapping communication with compute
// does not.
struct PhaseSplit {
  unsigned high = 0, low = 0;  // samples with a traffic ratio in each phase
  Mean traffic_high, traffic_low, tensor_high, tensor_low, sm_high, sm_low;
  std::optional<double> HighShare() const;  // high / (high + low); unset without a traffic ratio
};
PhaseSplit SplitPhases(const GpuWindow& w, double high_ratio);

// Reduces samples[begin, end) for GPU `index` (a position in each sample's gpus).
GpuWindow ReduceGpu(const std::vector<Sample>& samples, size_t position, const Thresholds& t);
std::vector<MigWindow> ReduceMig(const std::vector<Sample>& samples, size_t position);

// Pearson correlation of two series over the samples where both are set; nullopt with fewer than 4 such
// samples. Two steady series (spread under 5 % of their mean) count as in phase: 1.
std::optional<double> Correlation(const std::vector<std::optional<double>>& a,
                                  const std::vector<std::optional<double>>& b);

}  // namespace gp::watch
