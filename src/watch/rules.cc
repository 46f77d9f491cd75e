#include "watch/rules.h"

#include <algorithm>

#include "watch/checks.h"
#include "watch/evidence.h"
#include "watch/window.h"

namespace gp::watch {
namespace {

using J = nlohmann::ordered_json;

bool Sustained(unsigned ticks, unsigned n, const Thresholds& t) {
  return n > 0 && static_cast<double>(ticks) >= t.sustained_ratio * n;
}

// What every rule of one GPU's window reads: the window, the other GPUs', and the group facts.
struct RuleInput {
  const GpuWindow& g;
  const CommView& comm;
  long long start, end;
  const Thresholds& t;
  bool gpm;
};

Verdict Make(const RuleInput& in, VerdictKind kind, Confidence c, std::string detail) {
  Verdict v;
  v.gpu = in.g.id;
  v.start_ms = in.start;
  v.end_ms = in.end;
  v.kind = kind;
  v.confidence = c;
  v.detail = std::move(detail);
  v.evidence = BaseEvidence(in.g);
  v.fix = FixFor(kind);
  return v;
}

std::string InputDetail(const GpuWindow& w, const Thresholds& t) {
  const HostStats& h = w.host;
  std::string d = "duty cycle " + PctText(w.duty_pct.Get().value_or(0)) + " with " +
                  PctText(100 * w.DutyZeroRatio().value_or(0)) + " of samples at 0";
  if (!h.attributable)
    return d + "; the GPU processes are not visible here, and the host's CPUs are saturated";
  if (h.loaders == 0)
    return d + "; no pt_data_worker loaders, the main thread at " +
           PctText(h.main_thread_cpu_pct.Get().value_or(0)) + " of a core loads the data itself";
  d += "; " + std::to_string(h.loaders) + " pt_data_worker loaders use " +
       PctText(h.loader_cpu_pct.Get().value_or(0)) + " of a core together, " +
       FixedText(h.loader_cpus_available.Get().value_or(0), 1) + " CPUs available to them";
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

// The group of ranks spinning together (two or more), and the rank with a process whose duty is far below
// theirs: the one they wait for.
struct SpinGroup {
  std::vector<size_t> members;
  std::optional<size_t> straggler;
  bool Has(size_t i) const {
    return members.size() >= 2 && std::find(members.begin(), members.end(), i) != members.end();
  }
};

SpinGroup FindSpinGroup(const std::vector<GpuWindow>& w, const Thresholds& t) {
  SpinGroup s;
  for (size_t i = 0; i < w.size(); ++i)
    if (Spinning(w[i], t)) s.members.push_back(i);
  if (s.members.size() < 2) return s;
  double group = 0;
  for (size_t i : s.members) group += *w[i].duty_pct.Get();
  group /= static_cast<double>(s.members.size());
  for (size_t i = 0; i < w.size(); ++i) {
    if (s.Has(i) || w[i].lost || w[i].ok == 0 || w[i].max_processes == 0) continue;
    const double duty = w[i].duty_pct.Get().value_or(0);
    if (duty <= group - t.straggler_duty_gap_pct &&
        (!s.straggler || duty < w[*s.straggler].duty_pct.Get().value_or(0)))
      s.straggler = i;
  }
  return s;
}

std::optional<Verdict> JudgeActivityUnknown(const RuleInput& in) {
  const GpuWindow& g = in.g;
  if (g.samples == 0 || g.gaps > in.t.gap_ratio * g.samples)
    return Make(in, VerdictKind::kActivityUnknown, Confidence::kLow,
                "NVML did not answer in time for " + std::to_string(g.gaps) + " of " +
                    std::to_string(g.samples) + " samples");
  if (!g.duty_pct.Get() && !in.gpm)
    return Make(in, VerdictKind::kActivityUnknown, Confidence::kLow,
                "NVML gives no duty cycle and no GPM metrics for this GPU");
  return std::nullopt;
}

std::optional<Verdict> JudgeHung(const RuleInput& in, size_t i, const SpinGroup& s,
                                 const std::vector<GpuWindow>& w) {
  const bool spins = s.Has(i);
  if (!spins && !(s.straggler && *s.straggler == i)) return std::nullopt;
  const double duty = in.g.duty_pct.Get().value_or(0);
  Verdict v = Make(in, VerdictKind::kHungCollective, in.gpm ? Confidence::kHigh : Confidence::kMedium,
                   spins ? std::to_string(s.members.size()) + " GPUs at duty " + PctText(duty) + " draw " +
                               PctText(100 * in.g.power_ratio.Get().value_or(0)) +
                               " of their limit with no link traffic: spinning in a collective"
                         : "the other " + std::to_string(s.members.size()) +
                               " GPUs spin in a collective while this one, at duty " + PctText(duty) +
                               ", does not join");
  if (s.straggler) v.straggler_gpu = w[*s.straggler].id;
  v.evidence["spinning_gpus"] = s.members.size();
  return v;
}

// Idle: no kernel work at all; idle_memory_held when something holds the GPU and the host shows no loader
// at work (with one at work the window goes on to input-bound).
std::optional<Verdict> JudgeIdle(const RuleInput& in) {
  const GpuWindow& g = in.g;
  if (!CheckIdle(g, in.t).Holds()) return std::nullopt;
  const std::string duty = PctText(g.duty_pct.Get().value_or(0));
  const Confidence c = in.gpm ? Confidence::kHigh : Confidence::kMedium;
  const bool held = g.max_processes > 0 || g.max_memory_used.value_or(0) >= in.t.held_memory_bytes;
  if (!held) return Make(in, VerdictKind::kIdle, c, "duty cycle " + duty + ", no process on the GPU");
  if (g.max_processes > 0 && InputEvidence(g, in.t) && g.host.ticks) return std::nullopt;
  return Make(in, VerdictKind::kIdleMemoryHeld, c,
              "duty cycle " + duty + " while " +
                  (g.max_processes ? std::to_string(g.max_processes) + " process(es) hold "
                                   : std::string("something holds ")) +
                  FixedText(static_cast<double>(g.max_memory_used.value_or(0)) / 1073741824.0, 1) + " GiB");
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
  // while the GPU draws well under the enforced limit in most of the samples the cap held. (A window's
  // mean power is no guide: on a real H200 the idle seconds before a matmul started pulled it to 75 %
  // while every capped sample drew 98 % of the limit.)
  if ((bit(2) || ns(w.power_cap_ratio)) && w.capped_ticks && 2 * w.capped_below_ticks > w.capped_ticks)
    r.emplace_back("sw_power_cap_below_limit");
  return r;
}

// Throttled: actionable reasons only, on a GPU that works.
std::optional<Verdict> JudgeThrottled(const RuleInput& in) {
  const GpuWindow& g = in.g;
  auto reasons = ThrottleReasons(g, in.t);
  if (reasons.empty() || CheckIdle(g, in.t).Holds()) return std::nullopt;
  const bool ns = g.hw_thermal_ratio.n || g.hw_power_brake_ratio.n;
  Verdict v = Make(in, VerdictKind::kThrottled, ns ? Confidence::kHigh : Confidence::kMedium, "");
  v.reasons = reasons;
  v.health_codes = HealthCodesOf(reasons);
  v.fix = FixFor(VerdictKind::kThrottled, reasons);
  std::string d;
  for (const auto& r : reasons) d += (d.empty() ? "" : ", ") + r;
  v.detail = d + " over the window; SM clock " + FixedText(g.sm_clock_mhz.Get().value_or(0), 0) + " of " +
             std::to_string(g.sm_clock_max_mhz.value_or(0)) + " MHz";
  J ratios = J::object();
  const char* names[9] = {
      "gpu_idle",     "applications_clocks", "sw_power_cap",        "hw_slowdown",
      "sync_boost",   "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown",
      "display_clock"};
  for (int b = 0; b < 9; ++b)
    ratios[names[b]] = g.reasons_ticks
                           ? J(RoundTo(static_cast<double>(g.reason_ticks[b]) / g.reasons_ticks, 3))
                           : J(nullptr);
  v.evidence["clock_event_ratios"] = ratios;
  v.evidence["hw_thermal_slowdown_time_ratio"] = JsonNum(g.hw_thermal_ratio.Get());
  v.evidence["hw_power_brake_slowdown_time_ratio"] = JsonNum(g.hw_power_brake_ratio.Get());
  v.evidence["sw_thermal_slowdown_time_ratio"] = JsonNum(g.sw_thermal_ratio.Get());
  return v;
}

// Input-bound: gaps in the duty cycle while the loaders are saturated or blocked on I/O.
std::optional<Verdict> JudgeInputBound(const RuleInput& in) {
  if (!CheckInputBound(in.g, in.t).Holds()) return std::nullopt;
  const Confidence c = !in.g.host.attributable ? Confidence::kLow
                       : in.gpm                ? Confidence::kHigh
                                               : Confidence::kMedium;
  return Make(in, VerdictKind::kInputBound, c, InputDetail(in.g, in.t));
}

// Communication-bound: in the samples where the link is busy, in phase with the other GPUs, the GPU
// waits (tensor and SM activity low); an all-reduce overlapped with compute is not.
std::optional<Verdict> JudgeCommunicationBound(const RuleInput& in) {
  if (!CheckCommunicationBound(in.g, in.comm, in.t).Holds()) return std::nullopt;
  const PhaseSplit& p = in.comm.split;
  std::string d = "link traffic at " + PctText(100 * p.traffic_high.Get().value_or(0)) + " of peak in " +
                  PctText(100 * p.HighShare().value_or(0)) + " of the samples, in phase with " +
                  std::to_string(in.comm.in_phase_gpus) + " other GPU(s) (correlation " +
                  FixedText(in.comm.in_phase_correlation.value_or(0), 2) + ")";
  if (in.gpm)
    d += "; tensor activity " + FixedText(p.tensor_high.Get().value_or(0), 2) + " while the link is busy, " +
         FixedText(p.tensor_low.Get().value_or(0), 2) + " while it is not";
  Verdict v = Make(in, VerdictKind::kCommunicationBound, in.gpm ? Confidence::kHigh : Confidence::kMedium, d);
  v.evidence["in_phase_correlation"] = RoundTo(*in.comm.in_phase_correlation, 3);
  v.evidence["in_phase_gpus"] = in.comm.in_phase_gpus;
  v.evidence["phase_split"] = PhaseSplitJson(p);
  return v;
}

// Launch-bound or a batch too small: busy duty, low SM and tensor activity, power far below the limit,
// the host not saturated, the link not busy.
std::optional<Verdict> JudgeLaunchOrSmallBatch(const RuleInput& in) {
  const GpuWindow& g = in.g;
  if (!CheckLaunchOrSmallBatch(g, in.t).Holds()) return std::nullopt;
  std::string d = "duty cycle " + PctText(*g.duty_pct.Get()) + " but power " +
                  PctText(100 * *g.power_ratio.Get()) + " of the limit";
  if (in.gpm)
    d += ", SM activity " + FixedText(*g.sm_active.Get(), 2) + ", tensor activity " +
         FixedText(g.tensor_active.Get().value_or(0), 2);
  if (g.host.main_thread_cpu_pct.Get())
    d += "; main thread at " + PctText(*g.host.main_thread_cpu_pct.Get()) + " of a core";
  return Make(in, VerdictKind::kLaunchOrSmallBatch, in.gpm ? Confidence::kHigh : Confidence::kLow, d);
}

// Healthy: SM activity agrees where GPM exists; else duty and power together (confidence low).
std::optional<Verdict> JudgeHealthy(const RuleInput& in) {
  const GpuWindow& g = in.g;
  if (!CheckHealthy(g, in.t).Holds()) return std::nullopt;
  const std::string power = PctText(100 * g.power_ratio.Get().value_or(0)) + " of the limit";
  if (in.gpm)
    return Make(in, VerdictKind::kHealthy, Confidence::kHigh,
                "SM activity " + FixedText(*g.sm_active.Get(), 2) + ", duty cycle " +
                    PctText(g.duty_pct.Get().value_or(0)) + ", power " + power);
  return Make(
      in, VerdictKind::kHealthy, Confidence::kLow,
      "duty cycle " + PctText(*g.duty_pct.Get()) + " and power " + power + " (no GPM: SM activity unknown)");
}

// No rule fits: the record says which came closest and what it failed, with the numbers.
void SayClosest(Verdict& v, const std::vector<RuleCheck>& checks) {
  const RuleCheck& c = Closest(checks);
  v.detail =
      std::string("no rule fits; closest rule ") + VerdictName(c.kind) + ", which needs " + FailedText(c);
  v.evidence["closest_rule"] = VerdictName(c.kind);
  v.evidence["failed_conditions"] = FailedJson(c);
}

Verdict JudgeUnclassified(const RuleInput& in) {
  Verdict v = Make(in, VerdictKind::kUnclassified, in.gpm ? Confidence::kHigh : Confidence::kLow, "");
  SayClosest(
      v, {CheckIdle(in.g, in.t), CheckInputBound(in.g, in.t), CheckCommunicationBound(in.g, in.comm, in.t),
          CheckLaunchOrSmallBatch(in.g, in.t), CheckHealthy(in.g, in.t)});
  return v;
}

Verdict JudgeMig(const GpuWindow& gw, const MigWindow& m, long long start, long long end,
                 const Thresholds& t) {
  Verdict v;
  v.gpu = gw.id;
  v.gpu_instance_id = m.gpu_instance_id;
  v.start_ms = start;
  v.end_ms = end;
  v.confidence = Confidence::kHigh;
  J e = J::object();
  e["samples"] = m.samples;
  e["sm_active_ratio"] = JsonNum(m.sm_active.Get());
  e["sm_occupancy_ratio"] = JsonNum(m.sm_occupancy.Get());
  e["tensor_active_ratio"] = JsonNum(m.tensor_active.Get());
  e["dram_active_ratio"] = JsonNum(m.dram_active.Get());
  e["processes"] = m.max_processes;
  e["memory_used_bytes"] = m.max_memory_used ? J(*m.max_memory_used) : J(nullptr);
  v.evidence = e;
  auto sm = m.sm_active.Get();
  if (!sm) {  // GPM reaches other instances of this GPU, not this one
    v.kind = VerdictKind::kActivityUnknown;
    v.confidence = Confidence::kLow;
    v.detail =
        "no GPM metrics reach this MIG instance (NVML's utilisation is not supported on MIG-enabled GPUs)";
  } else if (*sm < t.idle_sm_active) {
    v.kind = m.max_processes ? VerdictKind::kIdleMemoryHeld : VerdictKind::kIdle;
    v.detail =
        "SM activity " + FixedText(*sm, 2) +
        (m.max_processes ? ", a process holds memory in this instance" : ", no process in this instance");
  } else if (*sm >= t.healthy_sm_active) {
    v.kind = VerdictKind::kHealthy;
    v.detail = "SM activity " + FixedText(*sm, 2);
  } else if (*sm < t.low_sm_active && m.tensor_active.Get().value_or(0) < t.low_tensor_active &&
             m.max_processes) {
    v.kind = VerdictKind::kLaunchOrSmallBatch;
    v.detail = "SM activity " + FixedText(*sm, 2) + ", tensor activity " +
               FixedText(m.tensor_active.Get().value_or(0), 2);
  } else {
    v.kind = VerdictKind::kUnclassified;
    SayClosest(v, CheckMig(m, t));
  }
  v.fix = FixFor(v.kind);
  return v;
}

// A MIG GPU: one verdict per instance where GPM reaches any of them, else one for the GPU.
void JudgeMigGpu(const RuleInput& in, const std::vector<Sample>& samples, size_t i,
                 std::vector<Verdict>& out) {
  std::vector<MigWindow> mig = ReduceMig(samples, i);
  const bool any = std::any_of(mig.begin(), mig.end(), [](const MigWindow& m) { return m.sm_active.n > 0; });
  if (any) {
    for (const MigWindow& m : mig) out.push_back(JudgeMig(in.g, m, in.start, in.end, in.t));
    return;
  }
  out.push_back(Make(in, VerdictKind::kActivityUnknown, Confidence::kLow,
                     "MIG is enabled and no GPM metrics reach its instances: NVML's utilisation is not "
                     "supported on MIG-enabled GPUs; memory only (" +
                         std::to_string(in.g.max_processes) + " processes)"));
}

}  // namespace

std::vector<Verdict> JudgeWindow(const std::vector<Sample>& samples, long long start_ms, long long end_ms,
                                 const Thresholds& t) {
  std::vector<Verdict> out;
  if (samples.empty()) return out;
  const size_t n = samples.front().gpus.size();
  std::vector<GpuWindow> w;
  for (size_t i = 0; i < n; ++i) w.push_back(ReduceGpu(samples, i, t));
  const SpinGroup spin = FindSpinGroup(w, t);
  const std::vector<CommView> comm = CommViews(w, t);

  for (size_t i = 0; i < n; ++i) {
    if (w[i].lost) continue;  // the summary's lost_gpus says when
    const RuleInput in{w[i], comm[i], start_ms, end_ms, t, w[i].HasGpm()};
    if (w[i].samples > 0 && w[i].gaps <= t.gap_ratio * w[i].samples && w[i].mig_mode.value_or(false)) {
      JudgeMigGpu(in, samples, i, out);
      continue;
    }
    // The rules in their order (docs/watch.md, "Verdicts"): the first that holds gives the verdict.
    std::optional<Verdict> v = JudgeActivityUnknown(in);
    if (!v) v = JudgeHung(in, i, spin, w);
    if (!v) v = JudgeIdle(in);
    if (!v) v = JudgeThrottled(in);
    if (!v) v = JudgeInputBound(in);
    if (!v) v = JudgeCommunicationBound(in);
    if (!v) v = JudgeLaunchOrSmallBatch(in);
    if (!v) v = JudgeHealthy(in);
    out.push_back(v ? std::move(*v) : JudgeUnclassified(in));
  }
  return out;
}

}  // namespace gp::watch
