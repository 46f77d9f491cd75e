#include "watch/thresholds.h"

#include <cmath>
#include <cstdlib>

#include "util/strings.h"

namespace gp::watch {
namespace {

struct Entry {
  const char* name;
  double Thresholds::*field;
  enum Kind { kRatio, kPercent, kBytes, kCorrelation } kind;
};

const Entry kEntries[] = {
    {"idle_duty_pct", &Thresholds::idle_duty_pct, Entry::kPercent},
    {"held_memory_bytes", &Thresholds::held_memory_bytes, Entry::kBytes},
    {"busy_duty_pct", &Thresholds::busy_duty_pct, Entry::kPercent},
    {"duty_gap_ratio", &Thresholds::duty_gap_ratio, Entry::kRatio},
    {"sustained_ratio", &Thresholds::sustained_ratio, Entry::kRatio},
    {"gap_ratio", &Thresholds::gap_ratio, Entry::kRatio},
    {"far_below_power_ratio", &Thresholds::far_below_power_ratio, Entry::kRatio},
    {"idle_power_ratio", &Thresholds::idle_power_ratio, Entry::kRatio},
    {"healthy_power_ratio", &Thresholds::healthy_power_ratio, Entry::kRatio},
    {"healthy_sm_active", &Thresholds::healthy_sm_active, Entry::kRatio},
    {"low_sm_active", &Thresholds::low_sm_active, Entry::kRatio},
    {"low_tensor_active", &Thresholds::low_tensor_active, Entry::kRatio},
    {"idle_sm_active", &Thresholds::idle_sm_active, Entry::kRatio},
    {"nvlink_high_ratio", &Thresholds::nvlink_high_ratio, Entry::kRatio},
    {"traffic_none_ratio", &Thresholds::traffic_none_ratio, Entry::kRatio},
    {"in_phase_correlation", &Thresholds::in_phase_correlation, Entry::kCorrelation},
    {"comm_phase_ratio", &Thresholds::comm_phase_ratio, Entry::kRatio},
    {"loader_saturated_ratio", &Thresholds::loader_saturated_ratio, Entry::kRatio},
    {"psi_cpu_some_pct", &Thresholds::psi_cpu_some_pct, Entry::kPercent},
    {"psi_io_some_pct", &Thresholds::psi_io_some_pct, Entry::kPercent},
    {"busy_thread_pct", &Thresholds::busy_thread_pct, Entry::kPercent},
    {"straggler_duty_gap_pct", &Thresholds::straggler_duty_gap_pct, Entry::kPercent},
    {"power_cap_below_ratio", &Thresholds::power_cap_below_ratio, Entry::kRatio},
};

}  // namespace

std::vector<ThresholdInfo> ListThresholds(const Thresholds& t) {
  std::vector<ThresholdInfo> out;
  for (const Entry& e : kEntries) out.push_back({e.name, t.*(e.field)});
  return out;
}

std::string SetThreshold(Thresholds& t, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) return "\"" + assignment + "\": expected NAME=VALUE";
  const std::string name = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  std::vector<std::string> names;
  for (const Entry& e : kEntries) {
    names.emplace_back(e.name);
    if (name != e.name) continue;
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(v) || v < 0)
      return name + ": \"" + value + "\" is not a number >= 0";
    if ((e.kind == Entry::kRatio || e.kind == Entry::kCorrelation) && v > 1)
      return name + ": a ratio from 0 to 1, not " + value;
    if (e.kind == Entry::kPercent && v > 100) return name + ": a percentage from 0 to 100, not " + value;
    t.*(e.field) = v;
    return "";
  }
  auto guess = DidYouMean(name, names);
  return "unknown threshold \"" + name + "\"" +
         (guess ? " (did you mean \"" + *guess + "\"?)" : " (--list-thresholds prints them)");
}

}  // namespace gp::watch
