#include "watch/checks.h"

#include <algorithm>
#include <cmath>

#include "watch/evidence.h"

namespace gp::watch {
namespace {

Condition AtLeast(std::string name, std::optional<double> v, double threshold, const char* tname) {
  return {std::move(name), v, ">=", threshold, tname, v && *v >= threshold};
}
Condition Below(std::string name, std::optional<double> v, double threshold, const char* tname) {
  return {std::move(name), v, "<", threshold, tname, v && *v < threshold};
}
// Below, where an unknown value does not stand in the rule's way.
Condition BelowOrUnknown(std::string name, std::optional<double> v, double threshold, const char* tname) {
  Condition c = Below(std::move(name), v, threshold, tname);
  c.holds = !v || *v < threshold;
  return c;
}
std::optional<double> Share(unsigned ticks, unsigned n) {
  return n ? std::optional<double>(static_cast<double>(ticks) / n) : std::nullopt;
}
bool SustainedTicks(unsigned ticks, unsigned n, const Thresholds& t) {
  return n > 0 && static_cast<double>(ticks) >= t.sustained_ratio * n;
}

}  // namespace

bool RuleCheck::Holds() const {
  return std::all_of(conditions.begin(), conditions.end(), [](const Condition& c) { return c.holds; });
}

unsigned RuleCheck::Failed() const {
  return static_cast<unsigned>(
      std::count_if(conditions.begin(), conditions.end(), [](const Condition& c) { return !c.holds; }));
}

std::vector<CommView> CommViews(const std::vector<GpuWindow>& w, const Thresholds& t) {
  std::vector<CommView> out(w.size());
  std::vector<bool> busy(w.size(), false);
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i].lost) continue;
    out[i].split = SplitPhases(w[i], t.nvlink_high_ratio);
    auto share = out[i].split.HighShare();
    busy[i] = share && *share >= t.comm_phase_ratio;
  }
  for (size_t i = 0; i < w.size(); ++i) {
    if (!busy[i]) continue;
    std::vector<double> corr;
    for (size_t j = 0; j < w.size(); ++j)
      if (j != i && busy[j])
        if (auto c = Correlation(w[i].traffic, w[j].traffic)) corr.push_back(*c);
    if (corr.empty()) continue;
    std::sort(corr.begin(), corr.end());
    out[i].in_phase_correlation = corr[corr.size() / 2];
    out[i].in_phase_gpus = corr.size();
  }
  return out;
}

RuleCheck CheckIdle(const GpuWindow& g, const Thresholds& t) {
  return {VerdictKind::kIdle,
          {BelowOrUnknown("duty_mean_pct", g.duty_pct.Get(), t.idle_duty_pct, "idle_duty_pct"),
           BelowOrUnknown("sm_active_ratio", g.sm_active.Get(), t.idle_sm_active, "idle_sm_active")}};
}

bool InputEvidence(const GpuWindow& g, const Thresholds& t) {
  const HostStats& h = g.host;
  if (h.loaders == 0 && h.attributable) return SustainedTicks(h.main_busy_ticks, h.ticks, t);
  return SustainedTicks(h.saturated_ticks + h.blocked_ticks, h.ticks, t);  // either, or both together
}

RuleCheck CheckInputBound(const GpuWindow& g, const Thresholds& t) {
  const HostStats& h = g.host;
  const bool main_loads = h.loaders == 0 && h.attributable;
  Condition host = main_loads ? AtLeast("main_thread_busy_ratio", Share(h.main_busy_ticks, h.ticks),
                                        t.sustained_ratio, "sustained_ratio")
                              : AtLeast("loaders_saturated_or_blocked_ratio",
                                        Share(h.saturated_ticks + h.blocked_ticks, h.ticks),
                                        t.sustained_ratio, "sustained_ratio");
  host.holds = InputEvidence(g, t);
  return {VerdictKind::kInputBound,
          {AtLeast("duty_zero_ratio", g.DutyZeroRatio(), t.duty_gap_ratio, "duty_gap_ratio"),
           AtLeast("processes", static_cast<double>(g.max_processes), 1, ""), host}};
}

RuleCheck CheckCommunicationBound(const GpuWindow& g, const CommView& c, const Thresholds& t) {
  RuleCheck r{VerdictKind::kCommunicationBound,
              {AtLeast("duty_mean_pct", g.duty_pct.Get(), t.busy_duty_pct, "busy_duty_pct"),
               AtLeast("high_traffic_share", c.split.HighShare(), t.comm_phase_ratio, "comm_phase_ratio")}};
  if (g.HasGpm()) {  // while the link is busy, the GPU waits: neither tensor cores nor SMs at work
    r.conditions.push_back(Below("tensor_active_high_traffic", c.split.tensor_high.Get(), t.low_tensor_active,
                                 "low_tensor_active"));
    r.conditions.push_back(
        Below("sm_active_high_traffic", c.split.sm_high.Get(), t.low_sm_active, "low_sm_active"));
  }
  r.conditions.push_back(AtLeast("in_phase_correlation", c.in_phase_correlation, t.in_phase_correlation,
                                 "in_phase_correlation"));
  return r;
}

RuleCheck CheckLaunchOrSmallBatch(const GpuWindow& g, const Thresholds& t) {
  const HostStats& h = g.host;
  Condition host = BelowOrUnknown("loaders_saturated_ratio", Share(h.saturated_ticks, h.ticks),
                                  t.sustained_ratio, "sustained_ratio");
  host.holds = !SustainedTicks(h.saturated_ticks, h.ticks, t);
  RuleCheck r{
      VerdictKind::kLaunchOrSmallBatch,
      {AtLeast("duty_mean_pct", g.duty_pct.Get(), t.busy_duty_pct, "busy_duty_pct"),
       Below("power_ratio", g.power_ratio.Get(), t.far_below_power_ratio, "far_below_power_ratio"), host,
       BelowOrUnknown("traffic_peak_ratio", g.TrafficRatio(), t.nvlink_high_ratio, "nvlink_high_ratio")}};
  if (g.HasGpm()) {
    r.conditions.push_back(Below("sm_active_ratio", g.sm_active.Get(), t.low_sm_active, "low_sm_active"));
    Condition tensor =
        Below("tensor_active_ratio", g.tensor_active.Get(), t.low_tensor_active, "low_tensor_active");
    tensor.holds = g.tensor_active.Get().value_or(0) < t.low_tensor_active;  // unknown: no tensor work seen
    r.conditions.push_back(tensor);
  }
  return r;
}

RuleCheck CheckHealthy(const GpuWindow& g, const Thresholds& t) {
  if (g.HasGpm())
    return {VerdictKind::kHealthy,
            {AtLeast("sm_active_ratio", g.sm_active.Get(), t.healthy_sm_active, "healthy_sm_active")}};
  return {VerdictKind::kHealthy,
          {AtLeast("duty_mean_pct", g.duty_pct.Get(), t.busy_duty_pct, "busy_duty_pct"),
           AtLeast("power_ratio", g.power_ratio.Get(), t.healthy_power_ratio, "healthy_power_ratio")}};
}

std::vector<RuleCheck> CheckMig(const MigWindow& m, const Thresholds& t) {
  const auto sm = m.sm_active.Get();
  return {
      {VerdictKind::kIdle, {Below("sm_active_ratio", sm, t.idle_sm_active, "idle_sm_active")}},
      {VerdictKind::kLaunchOrSmallBatch,
       {Below("sm_active_ratio", sm, t.low_sm_active, "low_sm_active"),
        BelowOrUnknown("tensor_active_ratio", m.tensor_active.Get(), t.low_tensor_active,
                       "low_tensor_active"),
        AtLeast("processes", static_cast<double>(m.max_processes), 1, "")}},
      {VerdictKind::kHealthy, {AtLeast("sm_active_ratio", sm, t.healthy_sm_active, "healthy_sm_active")}}};
}

double RuleCheck::Miss() const {
  double miss = 0;
  for (const Condition& c : conditions) {
    if (c.holds) continue;
    if (!c.value) {
      miss += 1;  // not measured: as far as a value can be
      continue;
    }
    miss += std::min(1.0, std::fabs(*c.value - c.threshold) / std::max(std::fabs(c.threshold), 1e-9));
  }
  return miss;
}

const RuleCheck& Closest(const std::vector<RuleCheck>& checks) {
  const RuleCheck* best = nullptr;
  for (const RuleCheck& c : checks) {
    if (c.Failed() == 0) continue;  // all its conditions hold, but its verdict went to an earlier rule
    if (!best || c.Failed() < best->Failed() || (c.Failed() == best->Failed() && c.Miss() < best->Miss()))
      best = &c;
  }
  return best ? *best : checks.front();
}

nlohmann::ordered_json FailedJson(const RuleCheck& c) {
  auto out = nlohmann::ordered_json::array();
  for (const Condition& x : c.conditions) {
    if (x.holds) continue;
    out.push_back(
        {{"name", x.name},
         {"value", JsonNum(x.value)},
         {"op", x.op},
         {"threshold", x.threshold},
         {"threshold_name", *x.threshold_name ? nlohmann::ordered_json(x.threshold_name) : nullptr}});
  }
  return out;
}

std::string FailedText(const RuleCheck& c) {
  std::string out;
  for (const Condition& x : c.conditions) {
    if (x.holds) continue;
    out += (out.empty() ? "" : "; ") + x.name + " " + x.op + " " + FixedText(x.threshold, 2) + " (is " +
           (x.value ? FixedText(*x.value, 2) : std::string("unknown")) + ")";
  }
  return out;
}

std::string FailedNames(const RuleCheck& c) {
  std::string out;
  for (const Condition& x : c.conditions)
    if (!x.holds) out += (out.empty() ? "" : ", ") + x.name;
  return out;
}

}  // namespace gp::watch
