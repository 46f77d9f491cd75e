// The key <-> member tables shared by the record writer (jsonl.cc) and reader (jsonl_read.cc): one list
// per group of optional numbers, so the two cannot drift apart. Private to src/watch/.
#pragma once
#include <optional>

#include "watch/sample.h"

namespace gp::watch::fields {

struct DoubleField {
  const char* key;
  std::optional<double> GpuSample::*member;
};
inline const DoubleField kDoubles[] = {
    {"duty_pct", &GpuSample::duty_pct},
    {"power_w", &GpuSample::power_w},
    {"power_limit_enforced_w", &GpuSample::power_limit_enforced_w},
    {"power_limit_default_w", &GpuSample::power_limit_default_w},
    {"energy_j", &GpuSample::energy_j},
    {"power_cap_time_ratio", &GpuSample::power_cap_ratio},
    {"sync_boost_time_ratio", &GpuSample::sync_boost_ratio},
    {"sw_thermal_slowdown_time_ratio", &GpuSample::sw_thermal_ratio},
    {"hw_thermal_slowdown_time_ratio", &GpuSample::hw_thermal_ratio},
    {"hw_power_brake_slowdown_time_ratio", &GpuSample::hw_power_brake_ratio},
    {"pcie_tx_bytes_per_s", &GpuSample::pcie_tx_bytes_per_s},
    {"pcie_rx_bytes_per_s", &GpuSample::pcie_rx_bytes_per_s},
    {"nvlink_tx_bytes_per_s", &GpuSample::nvlink_tx_bytes_per_s},
    {"nvlink_rx_bytes_per_s", &GpuSample::nvlink_rx_bytes_per_s},
    {"pcie_peak_bytes_per_s", &GpuSample::pcie_peak_bytes_per_s},
    {"nvlink_peak_bytes_per_s", &GpuSample::nvlink_peak_bytes_per_s},
};
struct GpmField {
  const char* key;
  std::optional<double> Gpm::*member;
};
inline const GpmField kGpm[] = {
    {"sm_active_ratio", &Gpm::sm_active_ratio},
    {"sm_occupancy_ratio", &Gpm::sm_occupancy_ratio},
    {"tensor_active_ratio", &Gpm::tensor_active_ratio},
    {"dram_active_ratio", &Gpm::dram_active_ratio},
};
struct PressureField {
  const char* key;
  std::optional<double> Pressure::*member;
};
inline const PressureField kPressure[] = {
    {"cpu_some_avg10_pct", &Pressure::cpu_some_avg10},
    {"io_some_avg10_pct", &Pressure::io_some_avg10},
    {"io_full_avg10_pct", &Pressure::io_full_avg10},
    {"memory_some_avg10_pct", &Pressure::memory_some_avg10},
    {"memory_full_avg10_pct", &Pressure::memory_full_avg10},
};

}  // namespace gp::watch::fields
