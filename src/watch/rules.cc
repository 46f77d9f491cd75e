#include "watch/rules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "watch/window.h"

namespace gp::watch {
namespace {

using J = nlohmann::ordered_json;

double Round(double v, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(v * f) / f;
}
J Num(const std::optional<double>& v, int digits = 3) { return v ? J(Round(*v, digits)) : J(nullptr); }

std::string Pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", v);
  return b;
}
std::string Fixed(double v, int digits) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

bool Sustained(unsigned ticks, unsigned n, const Thresholds& t) {
  return n > 0 && static_cast<double>(ticks) >= t.sustained_ratio * n;
}

// The evidence every verdict carries (null where not known), so scripts read one shape.
J BaseEvidence(const GpuWindow& w) {
  J e = J::object();
  e["samples"] = w.samples;
  e["gaps"] = w.gaps;
  e["duty_mean_pct"] = Num(w.duty_pct.Get(), 1);
  e["duty_zero_ratio"] = Num(w.DutyZeroRatio());
  e["gpu_util_ge_90_ratio"] =
      w.duty_pct.n ? J(Round(static_cast<double>(w.busy_duty_ticks) / w.duty_pct.n, 3)) : J(nullptr);
  e["power_mean_w"] = Num(w.power_w.Get(), 1);
  e["power_limit_enforced_w"] = Num(w.power_limit_w.Get(), 1);
  e["power_limit_default_w"] = Num(w.power_limit_default_w, 1);
  e["power_ratio"] = Num(w.power_ratio.Get());
  e["energy_j"] = w.have_energy ? J(Round(w.energy_j, 1)) : J(nullptr);
  e["sm_clock_mean_mhz"] = Num(w.sm_clock_mhz.Get(), 0);
  e["sm_active_ratio"] = Num(w.sm_active.Get());
  e["sm_occupancy_ratio"] = Num(w.sm_occupancy.Get());
  e["tensor_active_ratio"] = Num(w.tensor_active.Get());
  e["dram_active_ratio"] = Num(w.dram_active.Get());
  e["nvlink_tx_bytes_per_s"] = Num(w.nvlink_tx.Get(), 0);
  e["nvlink_rx_bytes_per_s"] = Num(w.nvlink_rx.Get(), 0);
  e["pcie_tx_bytes_per_s"] = Num(w.pcie_tx.Get(), 0);
  e["pcie_rx_bytes_per_s"] = Num(w.pcie_rx.Get(), 0);
  e["traffic_peak_ratio"] = Num(w.TrafficRatio());
  e["processes"] = w.max_processes;
  e["pids"] = w.pids;
  e["memory_used_bytes"] = w.max_memory_used ? J(*w.max_memory_used) : J(nullptr);
  const HostStats& h = w.host;
  e["host_attributable"] = h.attributable;
  e["loaders"] = h.loaders;
  e["loader_cpu_pct"] = Num(h.loader_cpu_pct.Get(), 1);
  e["loader_cpus_available"] = Num(h.loader_cpus_available.Get(), 2);
  e["loaders_saturated_ratio"] =
      h.ticks ? J(Round(static_cast<double>(h.saturated_ticks) / h.ticks, 3)) : J(nullptr);
  e["loaders_io_blocked_ratio"] =
      h.ticks ? J(Round(static_cast<double>(h.blocked_ticks) / h.ticks, 3)) : J(nullptr);
  e["main_thread_cpu_pct"] = Num(h.main_thread_cpu_pct.Get(), 1);
  e["psi_cpu_some_avg10_pct"] = Num(h.psi_cpu_some.Get(), 2);
  e["psi_io_some_avg10_pct"] = Num(h.psi_io_some.Get(), 2);
  e["host_cpu_busy_pct"] = Num(h.host_cpu_busy_pct.Get(), 1);
  e["cgroup_throttled_ms"] = Num(h.cgroup_throttled_ms, 1);
  return e;
}

Verdict Make(const GpuWindow& w, long long start, long long end, VerdictKind kind, Confidence c,
             std::string detail) {
  Verdict v;
  v.gpu = w.id;
  v.start_ms = start;
  v.end_ms = end;
  v.kind = kind;
  v.confidence = c;
  v.detail = std::move(detail);
  v.evidence = BaseEvidence(w);
  v.fix = FixFor(kind);
  return v;
}

bool InputEvidence(const GpuWindow& w, const Thresholds& t) {
  const HostStats& h = w.host;
  if (h.loaders == 0 && h.attributable)
    return Sustained(h.main_busy_ticks, h.ticks, t);  // loading in the main process
  return Sustained(std::max(h.saturated_ticks, h.blocked_ticks), h.ticks, t) ||
         Sustained(h.saturated_ticks + h.blocked_ticks, h.ticks, t);
}

std::string InputDetail(const GpuWindow& w, const Thresholds& t) {
  const HostStats& h = w.host;
  std::string d = "duty cycle " + Pct(w.duty_pct.Get().value_or(0)) + " with " +
                  Pct(100 * w.DutyZeroRatio().value_or(0)) + " of samples at 0";
  if (!h.attributable)
    return d + "; the GPU processes are not visible here, and the host's CPUs are saturated";
  if (h.loaders == 0)
    return d + "; no pt_data_worker loaders, the main thread at " +
           Pct(h.main_thread_cpu_pct.Get().value_or(0)) + " of a core loads the data itself";
  d += "; " + std::to_string(h.loaders) + " pt_data_worker loaders use " +
       Pct(h.loader_cpu_pct.Get().value_or(0)) + " of a core together, " +
       Fixed(h.loader_cpus_available.Get().value_or(0), 1) + " CPUs available to them";
  if (Sustained(h.blocked_ticks, h.ticks, t) && !Sustained(h.saturated_ticks, h.ticks, t))
    d += ", blocked on I/O";
  return d;
}

// Ranks spinning in a collective: busy duty at idle power with no traffic (and no tensor work where GPM
// shows it). NCCL: a late rank makes "all the other GPUs ... block SMs, waiting for the last rank"
// (github.com/NVIDIA/nccl/issues/403); github.com/Theano/libgpuarray/issues/387: "pegged at 100% except for
// one ... at idle".
bool Spinning(const GpuWindow& w, const Thresholds& t) {
  if (w.lost || w.ok == 0 || !w.duty_pct.Get() || *w.duty_pct.Get() < t.busy_duty_pct) return false;
  if (!w.power_ratio.Get() || *w.power_ratio.Get() >= t.idle_power_ratio) return false;
  if (auto r = w.TrafficRatio(); r && *r >= t.traffic_none_ratio) return false;
  if (w.tensor_active.Get() && *w.tensor_active.Get() >= t.idle_sm_active) return false;
  return w.max_processes > 0 || w.max_memory_used.value_or(0) >= t.held_memory_bytes;
}

std::vector<std::string> ThrottleReasons(const GpuWindow& w, const Thresholds& t) {
  std::vector<std::string> r;
  const unsigned n = w.reasons_ticks;
  auto bit = [&](int b) { return Sustained(w.reason_ticks[b], n, t); };
  auto ns = [&](const Mean& m) { return m.Get() && *m.Get() >= t.sustained_ratio; };
  // Bits of nvmlClocksEventReasons (nvml.h): 0x8 HW slowdown, 0x20 SW thermal, 0x40 HW thermal,
  // 0x80 HW power brake; the nanosecond counters (fields 269-271) where the driver has them.
  if (bit(3)) r.emplace_back("hw_slowdown");
  if (bit(6) || ns(w.hw_thermal_ratio)) r.emplace_back("hw_thermal_slowdown");
  if (bit(7) || ns(w.hw_power_brake_ratio)) r.emplace_back("hw_power_brake_slowdown");
  if (bit(5) || ns(w.sw_thermal_ratio)) r.emplace_back("sw_thermal_slowdown");
  if (w.power_limit_default_w && w.power_limit_w.Get() &&
      *w.power_limit_w.Get() < *w.power_limit_default_w - 1.0)
    r.emplace_back("power_limit_below_default");
  // SW power cap (0x4) is normal at the limit (Azure/azurehpc PR 595 excludes it); it is actionable only
  // while the GPU draws well under the enforced limit.
  if ((bit(2) || ns(w.power_cap_ratio)) && w.power_ratio.Get() &&
      *w.power_ratio.Get() < t.power_cap_below_ratio)
    r.emplace_back("sw_power_cap_below_limit");
  return r;
}

std::optional<Verdict> JudgeMig(const GpuWindow& gw, const MigWindow& m, long long start, long long end,
                                const Thresholds& t) {
  Verdict v;
  v.gpu = gw.id;
  v.gpu_instance_id = m.gpu_instance_id;
  v.start_ms = start;
  v.end_ms = end;
  v.confidence = Confidence::kHigh;
  J e = J::object();
  e["samples"] = m.samples;
  e["sm_active_ratio"] = Num(m.sm_active.Get());
  e["sm_occupancy_ratio"] = Num(m.sm_occupancy.Get());
  e["tensor_active_ratio"] = Num(m.tensor_active.Get());
  e["dram_active_ratio"] = Num(m.dram_active.Get());
  e["processes"] = m.max_processes;
  e["memory_used_bytes"] = m.max_memory_used ? J(*m.max_memory_used) : J(nullptr);
  v.evidence = e;
  auto sm = m.sm_active.Get();
  if (!sm) {  // GPM reaches other instances of this GPU, not this one
    v.kind = VerdictKind::kActivityUnknown;
    v.confidence = Confidence::kLow;
    v.detail =
        "no GPM metrics reach this MIG instance (NVML's utilisation is not supported on MIG-enabled GPUs)";
    v.fix = FixFor(v.kind);
    return v;
  }
  const std::string smtext = "SM activity " + Fixed(*sm, 2);
  if (*sm < t.idle_sm_active) {
    v.kind = m.max_processes ? VerdictKind::kIdleMemoryHeld : VerdictKind::kIdle;
    v.detail = smtext + (m.max_processes ? ", a process holds memory in this instance"
                                         : ", no process in this instance");
  } else if (*sm >= t.healthy_sm_active) {
    v.kind = VerdictKind::kHealthy;
    v.detail = smtext;
  } else if (*sm < t.low_sm_active && m.tensor_active.Get().value_or(0) < t.low_tensor_active &&
             m.max_processes) {
    v.kind = VerdictKind::kLaunchOrSmallBatch;
    v.detail = smtext + ", tensor activity " + Fixed(m.tensor_active.Get().value_or(0), 2);
  } else {
    return std::nullopt;
  }
  v.fix = FixFor(v.kind);
  return v;
}

}  // namespace

std::vector<Verdict> JudgeWindow(const std::vector<Sample>& samples, long long start_ms, long long end_ms,
                                 const Thresholds& t) {
  std::vector<Verdict> out;
  if (samples.empty()) return out;
  const size_t n = samples.front().gpus.size();
  std::vector<GpuWindow> w;
  for (size_t i = 0; i < n; ++i) w.push_back(ReduceGpu(samples, i, t));

  // A group of ranks spinning together, and the rank that is different.
  std::vector<size_t> spinning;
  for (size_t i = 0; i < n; ++i)
    if (Spinning(w[i], t)) spinning.push_back(i);
  std::optional<size_t> straggler;
  if (spinning.size() >= 2) {
    double group = 0;
    for (size_t i : spinning) group += *w[i].duty_pct.Get();
    group /= static_cast<double>(spinning.size());
    for (size_t i = 0; i < n; ++i) {
      if (std::find(spinning.begin(), spinning.end(), i) != spinning.end() || w[i].lost || w[i].ok == 0)
        continue;
      if (w[i].max_processes == 0) continue;
      const double duty = w[i].duty_pct.Get().value_or(0);
      if (duty <= group - t.straggler_duty_gap_pct &&
          (!straggler || duty < w[*straggler].duty_pct.Get().value_or(0)))
        straggler = i;
    }
  }

  for (size_t i = 0; i < n; ++i) {
    const GpuWindow& g = w[i];
    if (g.lost) continue;  // the summary's lost_gpus says when
    const bool gpm = g.HasGpm();
    auto verdict = [&](VerdictKind k, Confidence c, const std::string& detail) {
      out.push_back(Make(g, start_ms, end_ms, k, c, detail));
      return &out.back();
    };
    if (g.samples == 0 || g.gaps > t.gap_ratio * g.samples) {
      verdict(VerdictKind::kActivityUnknown, Confidence::kLow,
              "NVML did not answer in time for " + std::to_string(g.gaps) + " of " +
                  std::to_string(g.samples) + " samples");
      continue;
    }
    if (g.mig_mode.value_or(false)) {
      std::vector<MigWindow> mig = ReduceMig(samples, i);
      const bool any =
          std::any_of(mig.begin(), mig.end(), [](const MigWindow& m) { return m.sm_active.n > 0; });
      if (any)
        for (const MigWindow& m : mig)
          if (auto v = JudgeMig(g, m, start_ms, end_ms, t)) out.push_back(std::move(*v));
      if (!any)
        verdict(
            VerdictKind::kActivityUnknown, Confidence::kLow,
            "MIG is enabled and no GPM metrics reach its instances: NVML's utilisation is not supported on "
            "MIG-enabled GPUs; memory only (" +
                std::to_string(g.max_processes) + " processes)");
      continue;
    }
    const auto duty = g.duty_pct.Get();
    if (!duty && !gpm) {
      verdict(VerdictKind::kActivityUnknown, Confidence::kLow,
              "NVML gives no duty cycle and no GPM metrics for this GPU");
      continue;
    }
    const auto power_ratio = g.power_ratio.Get();
    const auto sm = g.sm_active.Get();
    const auto tensor = g.tensor_active.Get();
    const auto traffic = g.TrafficRatio();

    // Hung collective: the group spins; the straggler is the one they wait for.
    const bool spins =
        std::find(spinning.begin(), spinning.end(), i) != spinning.end() && spinning.size() >= 2;
    if (spins || (straggler && *straggler == i)) {
      Verdict* v = verdict(VerdictKind::kHungCollective, gpm ? Confidence::kHigh : Confidence::kMedium,
                           spins ? std::to_string(spinning.size()) + " GPUs at duty " +
                                       Pct(duty.value_or(0)) + " draw " + Pct(100 * power_ratio.value_or(0)) +
                                       " of their limit with no link traffic: spinning in a collective"
                                 : "the other " + std::to_string(spinning.size()) +
                                       " GPUs spin in a collective while this one, at duty " +
                                       Pct(duty.value_or(0)) + ", does not join");
      if (straggler) v->straggler_gpu = w[*straggler].id;
      v->evidence["spinning_gpus"] = spinning.size();
      continue;
    }
    // Idle: no kernel work at all.
    const bool no_work = (!duty || *duty < t.idle_duty_pct) && (!sm || *sm < t.idle_sm_active);
    if (no_work) {
      const bool held = g.max_processes > 0 || g.max_memory_used.value_or(0) >= t.held_memory_bytes;
      if (!held) {
        verdict(VerdictKind::kIdle, gpm ? Confidence::kHigh : Confidence::kMedium,
                "duty cycle " + Pct(duty.value_or(0)) + ", no process on the GPU");
        continue;
      }
      if (!(g.max_processes > 0 && InputEvidence(g, t) && g.host.ticks)) {
        verdict(VerdictKind::kIdleMemoryHeld, gpm ? Confidence::kHigh : Confidence::kMedium,
                "duty cycle " + Pct(duty.value_or(0)) + " while " +
                    (g.max_processes ? std::to_string(g.max_processes) + " process(es) hold "
                                     : std::string("something holds ")) +
                    Fixed(static_cast<double>(g.max_memory_used.value_or(0)) / 1073741824.0, 1) + " GiB");
        continue;
      }
    }
    // Throttled: actionable reasons only, on a GPU that works.
    if (auto reasons = ThrottleReasons(g, t); !reasons.empty() && !no_work) {
      const bool ns = g.hw_thermal_ratio.n || g.hw_power_brake_ratio.n;
      Verdict* v = verdict(VerdictKind::kThrottled, ns ? Confidence::kHigh : Confidence::kMedium, "");
      v->reasons = reasons;
      v->fix = FixFor(VerdictKind::kThrottled, reasons);
      std::string d;
      for (const auto& r : reasons) d += (d.empty() ? "" : ", ") + r;
      v->detail = d + " over the window; SM clock " + Fixed(g.sm_clock_mhz.Get().value_or(0), 0) + " of " +
                  std::to_string(g.sm_clock_max_mhz.value_or(0)) + " MHz";
      J ratios = J::object();
      const char* names[9] = {
          "gpu_idle",     "applications_clocks", "sw_power_cap",        "hw_slowdown",
          "sync_boost",   "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown",
          "display_clock"};
      for (int b = 0; b < 9; ++b)
        ratios[names[b]] = g.reasons_ticks
                               ? J(Round(static_cast<double>(g.reason_ticks[b]) / g.reasons_ticks, 3))
                               : J(nullptr);
      v->evidence["clock_event_ratios"] = ratios;
      v->evidence["hw_thermal_slowdown_time_ratio"] = Num(g.hw_thermal_ratio.Get());
      v->evidence["hw_power_brake_slowdown_time_ratio"] = Num(g.hw_power_brake_ratio.Get());
      v->evidence["sw_thermal_slowdown_time_ratio"] = Num(g.sw_thermal_ratio.Get());
      continue;
    }
    // Input-bound: gaps in the duty cycle while the loaders are saturated or blocked on I/O.
    const auto zero = g.DutyZeroRatio();
    if (zero && *zero >= t.duty_gap_ratio && g.max_processes > 0 && g.host.ticks && InputEvidence(g, t)) {
      const Confidence c = !g.host.attributable ? Confidence::kLow
                           : gpm                ? Confidence::kHigh
                                                : Confidence::kMedium;
      verdict(VerdictKind::kInputBound, c, InputDetail(g, t));
      continue;
    }
    // Communication-bound: high link traffic in phase across GPUs while tensor work is low.
    if (duty && *duty >= t.busy_duty_pct && traffic && *traffic >= t.nvlink_high_ratio &&
        (!tensor || *tensor < t.low_tensor_active)) {
      std::vector<double> corr;
      for (size_t j = 0; j < n; ++j) {
        if (j == i || w[j].lost) continue;
        auto other = w[j].TrafficRatio();
        if (!other || *other < t.nvlink_high_ratio) continue;
        if (auto c = Correlation(g.traffic, w[j].traffic)) corr.push_back(*c);
      }
      if (!corr.empty()) {
        std::sort(corr.begin(), corr.end());
        const double median = corr[corr.size() / 2];
        if (median >= t.in_phase_correlation) {
          Verdict* v =
              verdict(VerdictKind::kCommunicationBound, gpm ? Confidence::kHigh : Confidence::kMedium,
                      "link traffic at " + Pct(100 * *traffic) + " of peak, in phase with " +
                          std::to_string(corr.size()) + " other GPU(s) (correlation " + Fixed(median, 2) +
                          "), tensor activity " + (tensor ? Fixed(*tensor, 2) : std::string("unknown")));
          v->evidence["in_phase_correlation"] = Round(median, 3);
          v->evidence["in_phase_gpus"] = corr.size();
          continue;
        }
      }
    }
    // Launch-bound or a batch too small: busy duty, low SM and tensor activity, power far below the limit,
    // the host not saturated.
    const bool host_free = !Sustained(g.host.saturated_ticks, g.host.ticks, t);
    const bool traffic_low = !traffic || *traffic < t.nvlink_high_ratio;
    if (duty && *duty >= t.busy_duty_pct && power_ratio && *power_ratio < t.far_below_power_ratio &&
        host_free && traffic_low &&
        (!gpm || (sm && *sm < t.low_sm_active && tensor.value_or(0) < t.low_tensor_active))) {
      std::string d = "duty cycle " + Pct(*duty) + " but power " + Pct(100 * *power_ratio) + " of the limit";
      if (gpm) d += ", SM activity " + Fixed(*sm, 2) + ", tensor activity " + Fixed(tensor.value_or(0), 2);
      if (g.host.main_thread_cpu_pct.Get())
        d += "; main thread at " + Pct(*g.host.main_thread_cpu_pct.Get()) + " of a core";
      verdict(VerdictKind::kLaunchOrSmallBatch, gpm ? Confidence::kHigh : Confidence::kLow, d);
      continue;
    }
    // Healthy: SM activity agrees where GPM exists; else duty and power together.
    if (gpm && sm && *sm >= t.healthy_sm_active) {
      verdict(VerdictKind::kHealthy, Confidence::kHigh,
              "SM activity " + Fixed(*sm, 2) + ", duty cycle " + Pct(duty.value_or(0)) + ", power " +
                  Pct(100 * power_ratio.value_or(0)) + " of the limit");
      continue;
    }
    if (!gpm && duty && *duty >= t.busy_duty_pct && power_ratio && *power_ratio >= t.healthy_power_ratio) {
      verdict(VerdictKind::kHealthy, Confidence::kLow,
              "duty cycle " + Pct(*duty) + " and power " + Pct(100 * *power_ratio) +
                  " of the limit (no GPM: SM activity unknown)");
      continue;
    }
  }
  return out;
}

}  // namespace gp::watch
