// Hand-built samples for the rule tests: one window of `n` samples at 1 s, each GPU shaped by a
// function of (sample index, gpu index).
#pragma once
#include <functional>
#include <vector>

#include "watch/sample.h"

namespace gp::test {

// A busy H100 at its power cap with GPM: what every test starts from and changes.
inline watch::GpuSample BusyH100(unsigned index) {
  watch::GpuSample g;
  g.id = {index, "GPU-" + std::to_string(index), "0000:1" + std::to_string(index) + ":00.0"};
  g.name = "NVIDIA H100 80GB HBM3";
  g.duty_pct = 100;
  g.duty_samples = 6;
  g.memory_used_bytes = 70ull << 30;
  g.memory_total_bytes = 80ull << 30;
  g.power_w = 695;
  g.power_limit_enforced_w = 700;
  g.power_limit_default_w = 700;
  g.energy_j = 695;
  g.sm_clock_mhz = 1755;
  g.sm_clock_max_mhz = 1980;
  g.clock_event_reasons = 0x4;
  g.nvlink_tx_bytes_per_s = 5e10;
  g.nvlink_rx_bytes_per_s = 5e10;
  g.nvlink_peak_bytes_per_s = 478e9;
  g.pcie_peak_bytes_per_s = 63e9;
  g.gpm = watch::Gpm{0.88, 0.4, 0.55, 0.5};
  g.mig_mode = false;
  g.processes = std::vector<watch::GpuProcess>{{1000 + index, 69ull << 30, std::nullopt}};
  return g;
}

inline std::vector<watch::Sample> Window(unsigned gpus, int n,
                                         const std::function<void(watch::GpuSample&, int, unsigned)>& shape,
                                         const std::function<void(watch::HostSample&, int)>& host = nullptr) {
  std::vector<watch::Sample> out;
  for (int i = 0; i < n; ++i) {
    watch::Sample s;
    s.time_ms = 1700000000000LL + i * 1000;
    s.interval_ms = 1000;
    s.window_ms = 1000LL * n;
    for (unsigned g = 0; g < gpus; ++g) {
      watch::GpuSample x = BusyH100(g);
      if (shape) shape(x, i, g);
      s.gpus.push_back(x);
    }
    s.host.cpu_count = 16;
    s.host.cpu_busy_pct.assign(16, 10.0);
    s.host.pressure = watch::Pressure{1.0, 0.5, 0.1, 0.0, 0.0};
    for (unsigned g = 0; g < gpus; ++g) {
      watch::HostProcess p;
      p.pid = 1000 + g;
      p.ppid = 1;
      p.comm = "python3";
      p.role = watch::ProcessRole::kGpu;
      p.gpus = {g};
      p.state = 'S';
      p.cpu_pct = 40;
      p.main_thread_cpu_pct = 30;
      p.cpus_allowed = 16;
      s.host.processes.push_back(p);
    }
    if (host) host(s.host, i);
    out.push_back(s);
  }
  return out;
}

}  // namespace gp::test
