// The numbers the verdict rules compare against, each settable with `--threshold NAME=VALUE`. Defaults
// and where each comes from are in docs/watch.md; where no source gives a number the default is
// gpuprep's inference, said so there.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gp::watch {

struct Thresholds {
  double idle_duty_pct = 5;               // below: no real kernel work (KempnerPulse's idle class, < 5 %)
  double held_memory_bytes = 1073741824;  // 1 GiB used with no process listed still counts as held
  double busy_duty_pct = 90;              // "busy duty"; also the GPU-Util >= 90 % that is reported
  double duty_gap_ratio = 0.2;            // duty gaps: at least this share of duty samples at 0
  double sustained_ratio = 0.6;           // a condition holding in at least this share of the window
  double gap_ratio = 0.5;                 // more samples missing than this: activity unknown
  double far_below_power_ratio = 0.5;     // power "far below the limit": < 50 % of the enforced limit
  double idle_power_ratio = 0.3;          // "idle power": < 30 % of the enforced limit
  double healthy_power_ratio = 0.7;       // healthy without GPM: power >= 70 % of the limit
  double healthy_sm_active = 0.8;         // DCGM: SM activity >= 0.8 is "necessary" for effective use
  double low_sm_active = 0.5;             // DCGM: below 0.5 "likely" ineffective
  double low_tensor_active = 0.2;         // tensor activity "low"
  double idle_sm_active = 0.05;           // SM activity that confirms idle / a spin-wait with no math
  double nvlink_high_ratio = 0.25;        // NVLink (or PCIe) traffic "high": >= 25 % of the link's peak
  double traffic_none_ratio = 0.01;       // "no traffic": < 1 % of peak
  double in_phase_correlation = 0.7;      // per-sample traffic correlating across GPUs
  double comm_phase_ratio = 0.2;          // the high-traffic phase: at least this share of the samples
  double loader_saturated_ratio = 0.9;    // loaders using >= 90 % of the CPUs available to them
  double psi_cpu_some_pct = 20;           // PSI cpu some avg10 while loaders are runnable
  double psi_io_some_pct = 20;            // PSI io some avg10 while loaders exist
  double busy_thread_pct = 90;            // one thread at >= 90 % of a core
  double straggler_duty_gap_pct = 50;     // a rank whose duty is this far below the waiting group's
  double power_cap_below_ratio = 0.9;     // SW power cap while power < 90 % of the limit is actionable
};

// One line per threshold: name, default and meaning (for --help and docs).
struct ThresholdInfo {
  std::string name;
  double value;
};
std::vector<ThresholdInfo> ListThresholds(const Thresholds& t);

// Applies "NAME=VALUE"; returns "" or the error (unknown name with a suggestion, a value that is not a
// finite number >= 0, a ratio above 1 or a percentage above 100).
std::string SetThreshold(Thresholds& t, const std::string& assignment);

}  // namespace gp::watch
