#include "watch/evidence.h"

#include <cmath>
#include <cstdio>

namespace gp::watch {

using J = nlohmann::ordered_json;

double RoundTo(double v, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(v * f) / f;
}

J JsonNum(const std::optional<double>& v, int digits) { return v ? J(RoundTo(*v, digits)) : J(nullptr); }

std::string PctText(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", v);
  return b;
}

std::string FixedText(double v, int digits) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

namespace {

// Where the peak the traffic ratio divides by came from: NVML's NVLink fields (as the sample says; a
// recording that does not say multiplied by the links present), or the PCIe generation and width.
J PeakSource(const GpuWindow& w, const char* link) {
  if (!link) return nullptr;
  if (std::string(link) == "pcie") return "pcie_generation_width";
  return w.nvlink_peak_source.value_or(kNvlinkPeakLinksPresent);
}

}  // namespace

J BaseEvidence(const GpuWindow& w) {
  J e = J::object();
  e["samples"] = w.samples;
  e["gaps"] = w.gaps;
  e["duty_mean_pct"] = JsonNum(w.duty_pct.Get(), 1);
  e["duty_zero_ratio"] = JsonNum(w.DutyZeroRatio());
  e["gpu_util_ge_90_ratio"] =
      w.duty_pct.n ? J(RoundTo(static_cast<double>(w.busy_duty_ticks) / w.duty_pct.n, 3)) : J(nullptr);
  e["power_mean_w"] = JsonNum(w.power_w.Get(), 1);
  e["power_limit_enforced_w"] = JsonNum(w.power_limit_w.Get(), 1);
  e["power_limit_default_w"] = JsonNum(w.power_limit_default_w, 1);
  e["power_ratio"] = JsonNum(w.power_ratio.Get());
  e["energy_j"] = w.have_energy ? J(RoundTo(w.energy_j, 1)) : J(nullptr);
  e["sm_clock_mean_mhz"] = JsonNum(w.sm_clock_mhz.Get(), 0);
  e["sm_active_ratio"] = JsonNum(w.sm_active.Get());
  e["sm_occupancy_ratio"] = JsonNum(w.sm_occupancy.Get());
  e["tensor_active_ratio"] = JsonNum(w.tensor_active.Get());
  e["dram_active_ratio"] = JsonNum(w.dram_active.Get());
  e["nvlink_tx_bytes_per_s"] = JsonNum(w.nvlink_tx.Get(), 0);
  e["nvlink_rx_bytes_per_s"] = JsonNum(w.nvlink_rx.Get(), 0);
  e["pcie_tx_bytes_per_s"] = JsonNum(w.pcie_tx.Get(), 0);
  e["pcie_rx_bytes_per_s"] = JsonNum(w.pcie_rx.Get(), 0);
  e["traffic_peak_ratio"] = JsonNum(w.TrafficRatio());
  const char* link = w.TrafficLink();
  e["traffic_link"] = link ? J(link) : J(nullptr);
  e["traffic_peak_bytes_per_s"] =
      !link ? J(nullptr) : JsonNum(std::string(link) == "nvlink" ? w.nvlink_peak : w.pcie_peak, 0);
  e["traffic_peak_source"] = PeakSource(w, link);
  e["processes"] = w.max_processes;
  e["pids"] = w.pids;
  e["memory_used_bytes"] = w.max_memory_used ? J(*w.max_memory_used) : J(nullptr);
  const HostStats& h = w.host;
  e["host_attributable"] = h.attributable;
  e["loaders"] = h.loaders;
  e["loader_cpu_pct"] = JsonNum(h.loader_cpu_pct.Get(), 1);
  e["loader_cpus_available"] = JsonNum(h.loader_cpus_available.Get(), 2);
  e["loaders_saturated_ratio"] =
      h.ticks ? J(RoundTo(static_cast<double>(h.saturated_ticks) / h.ticks, 3)) : J(nullptr);
  e["loaders_io_blocked_ratio"] =
      h.ticks ? J(RoundTo(static_cast<double>(h.blocked_ticks) / h.ticks, 3)) : J(nullptr);
  e["main_thread_cpu_pct"] = JsonNum(h.main_thread_cpu_pct.Get(), 1);
  e["psi_cpu_some_avg10_pct"] = JsonNum(h.psi_cpu_some.Get(), 2);
  e["psi_io_some_avg10_pct"] = JsonNum(h.psi_io_some.Get(), 2);
  e["host_cpu_busy_pct"] = JsonNum(h.host_cpu_busy_pct.Get(), 1);
  e["cgroup_throttled_ms"] = JsonNum(h.cgroup_throttled_ms, 1);
  return e;
}

J PhaseSplitJson(const PhaseSplit& p) {
  return {{"high_traffic_samples", p.high},
          {"low_traffic_samples", p.low},
          {"high_traffic_share", JsonNum(p.HighShare())},
          {"traffic_peak_ratio_high_traffic", JsonNum(p.traffic_high.Get())},
          {"traffic_peak_ratio_low_traffic", JsonNum(p.traffic_low.Get())},
          {"tensor_active_high_traffic", JsonNum(p.tensor_high.Get())},
          {"tensor_active_low_traffic", JsonNum(p.tensor_low.Get())},
          {"sm_active_high_traffic", JsonNum(p.sm_high.Get())},
          {"sm_active_low_traffic", JsonNum(p.sm_low.Get())}};
}

}  // namespace gp::watch
