#include "watch/sampler.h"

#include <algorithm>
#include <cmath>

namespace gp::watch {
namespace {

constexpr double kMiB = 1048576.0;
constexpr double kMaxPlausibleBytesPerSecond = 1e13;  // 10 TB/s: more than any GPU link carries

std::optional<double> Ratio(const std::optional<double>& pct) {
  if (!pct || !std::isfinite(*pct)) return std::nullopt;
  return std::clamp(*pct / 100.0, 0.0, 1.0);
}

Gpm ToGpm(const sys::NvmlGpm& g) {
  return {Ratio(g.sm_util_pct), Ratio(g.sm_occupancy_pct), Ratio(g.tensor_util_pct),
          Ratio(g.dram_bw_util_pct)};
}

// Seconds between two readings of a counter: NVML's own timestamps where both have one, else the
// readings' times.
double Span(const sys::NvmlCounter& a, const sys::NvmlCounter& b, int64_t ta_us, int64_t tb_us) {
  if (a.time_us > 0 && b.time_us > a.time_us) return static_cast<double>(b.time_us - a.time_us) / 1e6;
  return static_cast<double>(tb_us - ta_us) / 1e6;
}

std::optional<double> Rate(const std::optional<sys::NvmlCounter>& a, const std::optional<sys::NvmlCounter>& b,
                           int64_t ta, int64_t tb, double scale, std::optional<double> peak) {
  if (!a || !b) return std::nullopt;
  const double s = Span(*a, *b, ta, tb);
  if (s <= 0) return std::nullopt;
  const double rate = static_cast<double>(WrapDelta(a->value, b->value, b->bits)) * scale / s;
  const double limit = peak ? std::min(4 * *peak, kMaxPlausibleBytesPerSecond) : kMaxPlausibleBytesPerSecond;
  if (!std::isfinite(rate) || rate > limit) return std::nullopt;  // a reset, not traffic
  return rate;
}

// Nanoseconds spent in a clock-event state over the span, as a share of it.
std::optional<double> TimeRatio(const std::optional<sys::NvmlCounter>& a,
                                const std::optional<sys::NvmlCounter>& b, int64_t ta, int64_t tb) {
  if (!a || !b || b->value < a->value) return std::nullopt;
  const double s = Span(*a, *b, ta, tb);
  if (s <= 0) return std::nullopt;
  return std::clamp(static_cast<double>(b->value - a->value) / 1e9 / s, 0.0, 1.0);
}

std::optional<double> Watts(const std::optional<unsigned>& mw) {
  return mw ? std::optional<double>(*mw / 1000.0) : std::nullopt;
}

// The duty cycle of a reading: the mean of NVML's utilisation samples since the previous one.
void ConvertDuty(const sys::NvmlReading& r, GpuSample& g) {
  g.duty_buffer_empty = r.duty_buffer_empty;
  g.duty_samples = static_cast<unsigned>(r.duty_pct.size());
  double sum = 0;
  for (unsigned v : r.duty_pct) {
    sum += v;
    if (v == 0) ++g.duty_zero_samples;
  }
  g.duty_pct = r.duty_pct.empty() ? 0.0 : sum / static_cast<double>(r.duty_pct.size());
}

// What one reading shows without an earlier one: memory, power, clocks, link peaks, the processes in PID
// order, GPM metrics and MIG instances.
void ConvertReading(const sys::NvmlGpu& info, const sys::NvmlReading& r, GpuSample& g) {
  g.memory_used_bytes = r.memory_used_bytes;
  g.memory_total_bytes = r.memory_total_bytes;
  g.power_w = Watts(r.power_mw);
  g.power_limit_enforced_w = Watts(r.power_limit_enforced_mw);
  g.power_limit_default_w = Watts(info.power_default_limit_mw);
  g.sm_clock_mhz = r.sm_clock_mhz;
  if (r.temperature_c) g.temperature_c = *r.temperature_c;
  g.sm_clock_max_mhz = info.sm_clock_max_mhz;
  g.clock_event_reasons = r.clock_event_reasons;
  if (info.pcie_max_generation && info.pcie_max_width)
    g.pcie_peak_bytes_per_s = PcieLinkPeakBytesPerSecond(*info.pcie_max_generation, *info.pcie_max_width);
  g.nvlink_peak_bytes_per_s = NvlinkPeakBytesPerSecond(info);
  g.nvlink_peak_source = NvlinkPeakSource(info);
  g.mig_mode = info.mig_enabled;
  if (r.processes) {
    std::vector<GpuProcess> ps;
    for (const sys::NvmlProcess& p : *r.processes) ps.push_back({p.pid, p.used_bytes, p.gpu_instance_id});
    std::sort(ps.begin(), ps.end(), [](const GpuProcess& a, const GpuProcess& b) { return a.pid < b.pid; });
    g.processes = std::move(ps);
    g.process_entry_bytes = static_cast<unsigned>(r.process_stride);
  }
  if (r.gpm) g.gpm = ToGpm(*r.gpm);
  // Every MIG GPU instance the session found, with GPM's metrics where they reached it (else nulls): an
  // instance GPM does not reach is "activity unknown", not absent.
  for (unsigned gi : info.gpu_instance_ids) {
    MigInstance m{gi, {}};
    for (const auto& [id, metrics] : r.mig_gpm)
      if (id == gi) m.gpm = ToGpm(metrics);
    g.mig_instances.push_back(m);
  }
}

// Energy, link rates and clock-event ratios between the previous reading (`before`, read at `before_us`)
// and this one.
void ConvertRates(const sys::NvmlReading& before, int64_t before_us, const sys::NvmlReading& r,
                  GpuSample& g) {
  const int64_t ta = before_us, tb = r.time_us;
  if (before.energy_mj && r.energy_mj && *r.energy_mj >= *before.energy_mj)
    g.energy_j = static_cast<double>(*r.energy_mj - *before.energy_mj) / 1000.0;
  g.pcie_tx_bytes_per_s = Rate(before.pcie_tx_bytes, r.pcie_tx_bytes, ta, tb, 1, g.pcie_peak_bytes_per_s);
  g.pcie_rx_bytes_per_s = Rate(before.pcie_rx_bytes, r.pcie_rx_bytes, ta, tb, 1, g.pcie_peak_bytes_per_s);
  g.nvlink_tx_bytes_per_s =
      Rate(before.nvlink_tx_kib, r.nvlink_tx_kib, ta, tb, 1024, g.nvlink_peak_bytes_per_s);
  g.nvlink_rx_bytes_per_s =
      Rate(before.nvlink_rx_kib, r.nvlink_rx_kib, ta, tb, 1024, g.nvlink_peak_bytes_per_s);
  g.power_cap_ratio = TimeRatio(before.power_cap_ns, r.power_cap_ns, ta, tb);
  g.sync_boost_ratio = TimeRatio(before.sync_boost_ns, r.sync_boost_ns, ta, tb);
  g.sw_thermal_ratio = TimeRatio(before.sw_thermal_ns, r.sw_thermal_ns, ta, tb);
  g.hw_thermal_ratio = TimeRatio(before.hw_thermal_ns, r.hw_thermal_ns, ta, tb);
  g.hw_power_brake_ratio = TimeRatio(before.hw_power_brake_ns, r.hw_power_brake_ns, ta, tb);
}

// Without the byte counters (drivers before R555, or no NVLink fields), GPM's rates (MiB/s).
void ConvertGpmTraffic(const sys::NvmlReading& r, GpuSample& g) {
  auto mib = [](const std::optional<double>& v) {
    return v ? std::optional<double>(*v * kMiB) : std::nullopt;
  };
  if (!r.pcie_tx_bytes) g.pcie_tx_bytes_per_s = mib(r.gpm->pcie_tx_mib_s);
  if (!r.pcie_rx_bytes) g.pcie_rx_bytes_per_s = mib(r.gpm->pcie_rx_mib_s);
  if (!r.nvlink_tx_kib) g.nvlink_tx_bytes_per_s = mib(r.gpm->nvlink_tx_mib_s);
  if (!r.nvlink_rx_kib) g.nvlink_rx_bytes_per_s = mib(r.gpm->nvlink_rx_mib_s);
}

}  // namespace

std::optional<double> PcieLinkPeakBytesPerSecond(unsigned generation, unsigned width) {
  static constexpr double kGtPerSecond[] = {0, 2.5, 5, 8, 16, 32};
  if (generation == 0 || generation > 5 || width == 0 || width > 32) return std::nullopt;
  const double efficiency = generation <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
  return kGtPerSecond[generation] * 1e9 * efficiency / 8.0 * width;
}

std::optional<double> NvlinkPeakBytesPerSecond(const sys::NvmlGpu& g) {
  const std::optional<unsigned> links = g.nvlink_active_links ? g.nvlink_active_links : g.nvlink_links;
  if (!links || !g.nvlink_speed_mbps || *links == 0 || *g.nvlink_speed_mbps == 0) return std::nullopt;
  return static_cast<double>(*links) * *g.nvlink_speed_mbps * 1e6;
}

std::optional<std::string> NvlinkPeakSource(const sys::NvmlGpu& g) {
  if (!NvlinkPeakBytesPerSecond(g)) return std::nullopt;
  return std::string(g.nvlink_active_links ? kNvlinkPeakActiveLinks : kNvlinkPeakLinksPresent);
}

uint64_t WrapDelta(uint64_t previous, uint64_t current, unsigned bits) {
  const uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
  return (current - previous) & mask;
}

std::vector<GpuSample> GpuSampler::Convert(const std::vector<sys::NvmlReading>& readings) {
  std::vector<GpuSample> out;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    const sys::NvmlGpu& info = gpus_[i];
    GpuSample g;
    g.id = {info.index, info.uuid, info.pci_bus_id};
    g.name = info.name;
    if (i >= readings.size() || readings[i].state == sys::NvmlReadState::kLost) {
      g.state = GpuState::kLost;
      out.push_back(std::move(g));
      continue;
    }
    const sys::NvmlReading& r = readings[i];
    if (r.state != sys::NvmlReadState::kOk) {
      g.state = GpuState::kGap;
      out.push_back(std::move(g));
      continue;
    }
    Previous& p = prev_[i];
    // The first reading of a GPU only sets the baseline of its duty samples: what it returns covers the
    // moment since the session opened, not an interval.
    if (r.duty_supported && p.have) ConvertDuty(r, g);
    ConvertReading(info, r, g);
    if (p.have) ConvertRates(p.r, p.time_us, r, g);
    if (r.gpm) ConvertGpmTraffic(r, g);
    p.have = true;
    p.time_us = r.time_us;
    p.r = r;
    p.r.duty_pct.clear();
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace gp::watch
