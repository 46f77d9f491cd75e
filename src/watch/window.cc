#include "watch/window.h"

#include <algorithm>
#include <cmath>

namespace gp::watch {
namespace {

bool Has(const std::vector<unsigned>& v, unsigned x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Whether one of the GPU's processes is among the PIDs that name no process here (another pid namespace).
bool HostUnattributed(const HostSample& host, const GpuSample& g) {
  std::vector<unsigned> gpu_pids;
  if (g.processes)
    for (const GpuProcess& p : *g.processes) gpu_pids.push_back(p.pid);
  bool unattributed = false;
  for (unsigned pid : gpu_pids) unattributed = unattributed || Has(host.unattributed_pids, pid);
  return unattributed;
}

// What one GPU's processes showed in one tick: its GPU processes' main threads and its loaders.
struct HostTickTally {
  unsigned gpu_procs = 0, loaders = 0, loaders_running = 0, loaders_blocked = 0, loaders_busy = 0;
  double loader_cpu = 0;
  std::optional<double> main_cpu;
  std::optional<double> available;  // the CPUs the loaders may use
  bool have_loader_cpu = false;
};

// Tallies the processes of one tick that belong to the GPU.
HostTickTally TallyHostProcesses(const HostSample& host, const GpuSample& g, const Thresholds& t) {
  HostTickTally c;
  for (const HostProcess& p : host.processes) {
    if (!Has(p.gpus, g.id.index)) continue;
    if (p.role == ProcessRole::kGpu) {
      ++c.gpu_procs;
      if (p.main_thread_cpu_pct) c.main_cpu = std::max(c.main_cpu.value_or(0), *p.main_thread_cpu_pct);
      continue;
    }
    if (p.role != ProcessRole::kLoader) continue;
    ++c.loaders;
    if (p.state == 'R') ++c.loaders_running;
    if (p.state == 'D') ++c.loaders_blocked;
    if (p.cpu_pct) {
      c.loader_cpu += *p.cpu_pct;
      c.have_loader_cpu = true;
      if (*p.cpu_pct >= t.busy_thread_pct) ++c.loaders_busy;
    }
    // What the loaders may use: their allowed CPUs, the cgroup quota, the CPUs there are.
    double cap = host.cpu_count ? host.cpu_count : 1e9;
    if (p.cpus_allowed) cap = std::min(cap, static_cast<double>(*p.cpus_allowed));
    if (p.cgroup_cpu_limit) cap = std::min(cap, *p.cgroup_cpu_limit);
    c.available = std::max(c.available.value_or(0), cap);
  }
  return c;
}

// The cgroup limit and throttling are read on the GPU process (workers share its cgroup).
void ReduceHostCgroup(const HostSample& host, const GpuSample& g, HostTickTally& c, HostStats& h) {
  for (const HostProcess& p : host.processes) {
    if (p.role != ProcessRole::kGpu || !Has(p.gpus, g.id.index)) continue;
    if (p.cgroup_cpu_limit && c.available) c.available = std::min(*c.available, *p.cgroup_cpu_limit);
    if (p.cgroup_throttled_ms)
      h.cgroup_throttled_ms = h.cgroup_throttled_ms.value_or(0) + *p.cgroup_throttled_ms;
  }
}

// The host's mean CPU busy share over its cores; unset on the first tick.
std::optional<double> MeanHostBusy(const HostSample& host) {
  std::optional<double> host_busy;
  if (!host.cpu_busy_pct.empty()) {
    double sum = 0;
    for (double c : host.cpu_busy_pct) sum += c;
    host_busy = sum / static_cast<double>(host.cpu_busy_pct.size());
  }
  return host_busy;
}

// Counts the tick as blocked (a loader in D state, or IO pressure) and as saturated (the loaders use what
// they may, or, with the GPU processes in another pid namespace, the host as a whole is busy). psi_* are -1
// when absent.
void CountHostSaturation(const HostTickTally& c, bool unattributed, double psi_cpu, double psi_io,
                         const std::optional<double>& host_busy, const Thresholds& t, HostStats& h) {
  bool saturated = false;
  if (c.loaders > 0) {
    if (c.have_loader_cpu && c.available && c.loader_cpu >= t.loader_saturated_ratio * 100.0 * *c.available)
      saturated = true;
    if (c.loaders_busy == c.loaders && c.have_loader_cpu) saturated = true;  // every worker at a full core
    if (psi_cpu >= t.psi_cpu_some_pct && c.loaders_running > 0) saturated = true;
    if (c.loaders_blocked > 0 || psi_io >= t.psi_io_some_pct) ++h.blocked_ticks;
  } else if (unattributed) {
    // The GPU processes are in another pid namespace: only the host as a whole can be seen.
    if (host_busy && *host_busy >= t.loader_saturated_ratio * 100.0) saturated = true;
    if (psi_cpu >= t.psi_cpu_some_pct) saturated = true;
  }
  if (saturated) ++h.saturated_ticks;
}

void ReduceHost(const Sample& s, const GpuSample& g, const Thresholds& t, HostStats& h) {
  const HostSample& host = s.host;
  const bool unattributed = HostUnattributed(host, g);
  if (unattributed) h.attributable = false;
  ++h.ticks;
  HostTickTally c = TallyHostProcesses(host, g, t);
  ReduceHostCgroup(host, g, c, h);
  h.gpu_processes = std::max(h.gpu_processes, c.gpu_procs);
  h.loaders = std::max(h.loaders, c.loaders);
  if (c.have_loader_cpu) h.loader_cpu_pct.Add(c.loader_cpu);
  h.loader_cpus_available.Add(c.available);
  h.main_thread_cpu_pct.Add(c.main_cpu);
  // Plain doubles (-1 = absent): GCC 12 warns spuriously about optionals copied out of optionals here.
  const double psi_cpu = host.pressure ? host.pressure->cpu_some_avg10.value_or(-1) : -1;
  const double psi_io = host.pressure ? host.pressure->io_some_avg10.value_or(-1) : -1;
  if (psi_cpu >= 0) h.psi_cpu_some.Add(psi_cpu);
  if (psi_io >= 0) h.psi_io_some.Add(psi_io);
  const std::optional<double> host_busy = MeanHostBusy(host);
  h.host_cpu_busy_pct.Add(host_busy);
  if (c.main_cpu && *c.main_cpu >= t.busy_thread_pct) ++h.main_busy_ticks;
  CountHostSaturation(c, unattributed, psi_cpu, psi_io, host_busy, t, h);
}

// A sample under the SW power cap: bit 0x4 of the clock-event reasons, or, where the driver gives no
// bitmask, its time counter for most of the interval.
void CountCapped(const GpuSample& g, const Thresholds& t, GpuWindow& w) {
  const bool capped = g.clock_event_reasons ? (*g.clock_event_reasons & 0x4) != 0
                                            : g.power_cap_ratio && *g.power_cap_ratio >= 0.5;
  if (!capped || !g.power_w || !g.power_limit_enforced_w || *g.power_limit_enforced_w <= 0) return;
  ++w.capped_ticks;
  if (*g.power_w / *g.power_limit_enforced_w < t.power_cap_below_ratio) ++w.capped_below_ticks;
}

// One sample's link traffic: NVLink tx+rx where it has any, else PCIe's (bytes/s).
std::optional<double> SampleTraffic(const GpuSample& g) {
  if (g.nvlink_tx_bytes_per_s || g.nvlink_rx_bytes_per_s)
    return g.nvlink_tx_bytes_per_s.value_or(0) + g.nvlink_rx_bytes_per_s.value_or(0);
  if (g.pcie_tx_bytes_per_s || g.pcie_rx_bytes_per_s)
    return g.pcie_tx_bytes_per_s.value_or(0) + g.pcie_rx_bytes_per_s.value_or(0);
  return std::nullopt;
}

// One sample's busier direction over its link's peak: NVLink where it has a peak and a rate, else PCIe.
std::optional<double> SampleTrafficRatio(const GpuSample& g) {
  auto ratio = [](const std::optional<double>& tx, const std::optional<double>& rx,
                  const std::optional<double>& peak) -> std::optional<double> {
    if (!peak || *peak <= 0 || (!tx && !rx)) return std::nullopt;
    return std::max(tx.value_or(0), rx.value_or(0)) / *peak;
  };
  if (auto nv = ratio(g.nvlink_tx_bytes_per_s, g.nvlink_rx_bytes_per_s, g.nvlink_peak_bytes_per_s)) return nv;
  return ratio(g.pcie_tx_bytes_per_s, g.pcie_rx_bytes_per_s, g.pcie_peak_bytes_per_s);
}

// One sample's duty cycle into the window.
void ReduceGpuDuty(const GpuSample& g, const Thresholds& t, GpuWindow& w) {
  if (!g.duty_pct) return;
  w.duty_pct.Add(g.duty_pct);
  w.duty_samples += g.duty_samples;
  w.duty_zero += g.duty_zero_samples;
  if (g.duty_buffer_empty && g.duty_samples == 0) ++w.duty_empty_ticks;
  if (*g.duty_pct >= t.busy_duty_pct) ++w.busy_duty_ticks;
}

// One sample's power, energy, clocks and clock-event reasons and ratios into the window.
void ReduceGpuPower(const GpuSample& g, const Thresholds& t, GpuWindow& w) {
  w.power_w.Add(g.power_w);
  w.power_limit_w.Add(g.power_limit_enforced_w);
  if (g.power_w && g.power_limit_enforced_w && *g.power_limit_enforced_w > 0)
    w.power_ratio.Add(*g.power_w / *g.power_limit_enforced_w);
  if (g.power_limit_default_w) w.power_limit_default_w = g.power_limit_default_w;
  if (g.energy_j) {
    w.energy_j += *g.energy_j;
    w.have_energy = true;
  }
  if (g.sm_clock_mhz) w.sm_clock_mhz.Add(static_cast<double>(*g.sm_clock_mhz));
  if (g.sm_clock_max_mhz) w.sm_clock_max_mhz = g.sm_clock_max_mhz;
  if (g.clock_event_reasons) {
    ++w.reasons_ticks;
    for (int bit = 0; bit < 9; ++bit)
      if (*g.clock_event_reasons & (1ull << bit)) ++w.reason_ticks[bit];
  }
  w.power_cap_ratio.Add(g.power_cap_ratio);
  CountCapped(g, t, w);
  w.sw_thermal_ratio.Add(g.sw_thermal_ratio);
  w.hw_thermal_ratio.Add(g.hw_thermal_ratio);
  w.hw_power_brake_ratio.Add(g.hw_power_brake_ratio);
}

// One sample's link rates and peaks into the window, and its entry in the per-sample series.
void ReduceGpuTraffic(const GpuSample& g, GpuWindow& w) {
  w.pcie_tx.Add(g.pcie_tx_bytes_per_s);
  w.pcie_rx.Add(g.pcie_rx_bytes_per_s);
  w.nvlink_tx.Add(g.nvlink_tx_bytes_per_s);
  w.nvlink_rx.Add(g.nvlink_rx_bytes_per_s);
  if (g.pcie_peak_bytes_per_s) w.pcie_peak = g.pcie_peak_bytes_per_s;
  if (g.nvlink_peak_bytes_per_s) w.nvlink_peak = g.nvlink_peak_bytes_per_s;
  if (g.nvlink_peak_source) w.nvlink_peak_source = g.nvlink_peak_source;
  w.traffic.push_back(SampleTraffic(g));
  w.traffic_ratio.push_back(SampleTrafficRatio(g));
  w.tensor_series.push_back(g.gpm ? g.gpm->tensor_active_ratio : std::nullopt);
  w.sm_series.push_back(g.gpm ? g.gpm->sm_active_ratio : std::nullopt);
}

// One sample's GPM activity, MIG mode, processes and memory into the window.
void ReduceGpuActivity(const GpuSample& g, GpuWindow& w) {
  if (g.gpm) {
    w.sm_active.Add(g.gpm->sm_active_ratio);
    w.sm_occupancy.Add(g.gpm->sm_occupancy_ratio);
    w.tensor_active.Add(g.gpm->tensor_active_ratio);
    w.dram_active.Add(g.gpm->dram_active_ratio);
  }
  if (g.mig_mode) w.mig_mode = g.mig_mode;
  if (g.processes) {
    const unsigned n = static_cast<unsigned>(g.processes->size());
    w.max_processes = std::max(w.max_processes, n);
    if (n > 0) ++w.process_ticks;
    for (const GpuProcess& p : *g.processes)
      if (!Has(w.pids, p.pid)) w.pids.push_back(p.pid);
  }
  if (g.memory_used_bytes) w.max_memory_used = std::max(w.max_memory_used.value_or(0), *g.memory_used_bytes);
}

}  // namespace

std::optional<double> PhaseSplit::HighShare() const {
  if (high + low == 0) return std::nullopt;
  return static_cast<double>(high) / (high + low);
}

PhaseSplit SplitPhases(const GpuWindow& w, double high_ratio) {
  PhaseSplit p;
  for (size_t k = 0; k < w.traffic_ratio.size(); ++k) {
    const std::optional<double>& r = w.traffic_ratio[k];
    if (!r) continue;
    const bool high = *r >= high_ratio;
    ++(high ? p.high : p.low);
    (high ? p.traffic_high : p.traffic_low).Add(r);
    (high ? p.tensor_high : p.tensor_low).Add(w.tensor_series[k]);
    (high ? p.sm_high : p.sm_low).Add(w.sm_series[k]);
  }
  return p;
}

std::optional<double> GpuWindow::DutyZeroRatio() const {
  const unsigned n = duty_samples + duty_empty_ticks;
  if (n == 0) return std::nullopt;
  return static_cast<double>(duty_zero + duty_empty_ticks) / n;
}

const char* GpuWindow::TrafficLink() const {
  if (nvlink_peak && *nvlink_peak > 0 && (nvlink_tx.n || nvlink_rx.n)) return "nvlink";
  if (pcie_peak && *pcie_peak > 0 && (pcie_tx.n || pcie_rx.n)) return "pcie";
  return nullptr;
}

std::optional<double> GpuWindow::TrafficRatio() const {
  auto nv = [&]() -> std::optional<double> {
    if (!nvlink_peak || *nvlink_peak <= 0 || (!nvlink_tx.n && !nvlink_rx.n)) return std::nullopt;
    return std::max(nvlink_tx.Get().value_or(0), nvlink_rx.Get().value_or(0)) / *nvlink_peak;
  }();
  if (nv) return nv;
  if (!pcie_peak || *pcie_peak <= 0 || (!pcie_tx.n && !pcie_rx.n)) return std::nullopt;
  return std::max(pcie_tx.Get().value_or(0), pcie_rx.Get().value_or(0)) / *pcie_peak;
}

GpuWindow ReduceGpu(const std::vector<Sample>& samples, size_t position, const Thresholds& t) {
  GpuWindow w;
  for (const Sample& s : samples) {
    if (position >= s.gpus.size()) continue;
    const GpuSample& g = s.gpus[position];
    w.id = g.id;
    w.name = g.name;
    ++w.samples;
    if (g.state != GpuState::kOk) {
      if (g.state == GpuState::kLost)
        w.lost = true;
      else
        ++w.gaps;
      for (auto* series : {&w.traffic, &w.traffic_ratio, &w.tensor_series, &w.sm_series})
        series->emplace_back();
      continue;
    }
    ++w.ok;
    ReduceGpuDuty(g, t, w);
    ReduceGpuPower(g, t, w);
    ReduceGpuTraffic(g, w);
    ReduceGpuActivity(g, w);
    ReduceHost(s, g, t, w.host);
  }
  std::sort(w.pids.begin(), w.pids.end());
  return w;
}

std::vector<MigWindow> ReduceMig(const std::vector<Sample>& samples, size_t position) {
  std::vector<MigWindow> out;
  auto find = [&](unsigned gi) -> MigWindow& {
    for (MigWindow& m : out)
      if (m.gpu_instance_id == gi) return m;
    out.emplace_back();
    out.back().gpu_instance_id = gi;
    return out.back();
  };
  for (const Sample& s : samples) {
    if (position >= s.gpus.size()) continue;
    const GpuSample& g = s.gpus[position];
    if (g.state != GpuState::kOk) continue;
    for (const MigInstance& m : g.mig_instances) {
      MigWindow& w = find(m.gpu_instance_id);
      w.id = g.id;
      ++w.samples;
      w.sm_active.Add(m.gpm.sm_active_ratio);
      w.tensor_active.Add(m.gpm.tensor_active_ratio);
      w.sm_occupancy.Add(m.gpm.sm_occupancy_ratio);
      w.dram_active.Add(m.gpm.dram_active_ratio);
      unsigned n = 0;
      uint64_t mem = 0;
      if (g.processes)
        for (const GpuProcess& p : *g.processes)
          if (p.gpu_instance_id == m.gpu_instance_id) {
            ++n;
            mem += p.used_memory_bytes.value_or(0);
          }
      w.max_processes = std::max(w.max_processes, n);
      if (n) w.max_memory_used = std::max(w.max_memory_used.value_or(0), mem);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const MigWindow& a, const MigWindow& b) { return a.gpu_instance_id < b.gpu_instance_id; });
  return out;
}

std::optional<double> Correlation(const std::vector<std::optional<double>>& a,
                                  const std::vector<std::optional<double>>& b) {
  std::vector<std::pair<double, double>> xy;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] && b[i]) xy.emplace_back(*a[i], *b[i]);
  if (xy.size() < 4) return std::nullopt;
  double mx = 0, my = 0;
  for (auto [x, y] : xy) {
    mx += x;
    my += y;
  }
  mx /= static_cast<double>(xy.size());
  my /= static_cast<double>(xy.size());
  double sxx = 0, syy = 0, sxy = 0;
  for (auto [x, y] : xy) {
    sxx += (x - mx) * (x - mx);
    syy += (y - my) * (y - my);
    sxy += (x - mx) * (y - my);
  }
  const double n = static_cast<double>(xy.size());
  const bool steady_x = std::sqrt(sxx / n) < 0.05 * std::fabs(mx);
  const bool steady_y = std::sqrt(syy / n) < 0.05 * std::fabs(my);
  if (steady_x && steady_y) return 1.0;
  if (sxx <= 0 || syy <= 0) return 0.0;
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace gp::watch
