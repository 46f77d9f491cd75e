// The cost of a watched run (cost.h).
#include "watch/cost.h"

#include <algorithm>
#include <cstdio>

namespace gp::watch {
namespace {

constexpr double kMsPerHour = 3600.0 * 1000.0;

const char* const kUnderuse[] = {"input_bound", "launch_or_small_batch", "communication_bound", "throttled",
                                 "hung_collective"};

nlohmann::ordered_json LineJson(const CostLine& l) {
  nlohmann::ordered_json j = {{"share", l.share}, {"gpu_hours", l.gpu_hours}, {"amount", nullptr}};
  if (l.amount) j["amount"] = *l.amount;
  return j;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Percent(double share) { return Fixed(share * 100, 1) + "%"; }

std::string Money(const RunCost& c, const std::optional<double>& amount) {
  if (!amount) return "";
  return " = " + Fixed(*amount, 4) + (c.currency.empty() ? "" : " " + c.currency);
}

void Add(CostLine& into, const CostLine& l) {
  into.share += l.share;
  into.gpu_hours += l.gpu_hours;
  if (l.amount) into.amount = into.amount.value_or(0) + *l.amount;
}

// A cost with every line present and empty.
RunCost Empty(double wall_s, unsigned gpus, const std::string& currency, double sm_active_guidance) {
  RunCost c;
  c.wall_s = wall_s;
  c.gpus = gpus;
  c.currency = currency;
  c.sm_active_guidance = sm_active_guidance;
  for (int k = 0; k < kVerdictKinds; ++k) c.by_verdict[VerdictName(static_cast<VerdictKind>(k))];
  c.by_verdict["unclassified"];
  c.by_verdict["unjudged"];
  return c;
}

// Shares of c.gpu_hours, amounts (when every GPU has a price), and the idle and underuse totals.
void Tally(RunCost& c, std::map<std::string, double>& amount, bool all_priced) {
  for (auto& [name, line] : c.by_verdict) {
    line.share = c.gpu_hours > 0 ? line.gpu_hours / c.gpu_hours : 0;
    if (all_priced) line.amount = amount[name];
    if (IsIdleVerdict(name)) Add(c.idle, line);
    if (IsUnderuseVerdict(name)) Add(c.underuse, line);
  }
  if (!all_priced) c.idle.amount = c.underuse.amount = std::nullopt;
}

}  // namespace

bool IsIdleVerdict(const std::string& name) { return name == "idle" || name == "idle_memory_held"; }

bool IsUnderuseVerdict(const std::string& name) {
  return std::any_of(std::begin(kUnderuse), std::end(kUnderuse), [&](const char* u) { return name == u; });
}

RunCost CostOfRun(const Summary& s, const std::vector<std::optional<double>>& price_per_gpu_hour,
                  const std::string& currency, double sm_active_guidance) {
  RunCost c = Empty(static_cast<double>(std::max(0LL, s.end_ms - s.start_ms)) / 1000.0,
                    static_cast<unsigned>(s.gpus.size()), currency, sm_active_guidance);
  c.gpu_hours = c.wall_s * c.gpus / 3600.0;
  const double wall_ms = c.wall_s * 1000.0;
  bool all_priced = !s.gpus.empty();
  std::vector<double> price(s.gpus.size(), 0);
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    if (i < price_per_gpu_hour.size() && price_per_gpu_hour[i]) {
      price[i] = *price_per_gpu_hour[i];
    } else {
      all_priced = false;
      c.unpriced.push_back(s.gpus[i].gpu.index);
    }
  }
  // Per GPU: the judged time by verdict, the rest unjudged; then shares and amounts.
  std::map<std::string, double> amount;
  double sm_active_sum = 0;
  unsigned sm_active_samples = 0;
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    const GpuSummary& g = s.gpus[i];
    double judged_ms = 0;
    for (const auto& [name, ms] : g.verdict_ms) {
      c.by_verdict[name].gpu_hours += ms / kMsPerHour;
      amount[name] += ms / kMsPerHour * price[i];
      judged_ms += ms;
    }
    const double rest = std::max(0.0, wall_ms - judged_ms);
    c.by_verdict["unjudged"].gpu_hours += rest / kMsPerHour;
    amount["unjudged"] += rest / kMsPerHour * price[i];
    sm_active_sum += g.sm_active_sum;
    sm_active_samples += g.sm_active_samples;
  }
  double paid = 0;
  for (size_t i = 0; i < s.gpus.size(); ++i) paid += c.wall_s / 3600.0 * price[i];
  if (all_priced) c.amount = paid;
  Tally(c, amount, all_priced);
  if (sm_active_samples > 0) c.sm_inactive_share = 1.0 - sm_active_sum / sm_active_samples;
  return c;
}

RunCost CostOfParts(const std::vector<CostPart>& parts, double wall_s, const std::string& currency,
                    double sm_active_guidance) {
  RunCost c = Empty(wall_s, static_cast<unsigned>(parts.size()), currency, sm_active_guidance);
  bool all_priced = !parts.empty();
  std::map<std::string, double> amount;
  double paid = 0;
  for (const CostPart& p : parts) {
    if (!p.price) {
      all_priced = false;
      c.unpriced.push_back(p.gpu_index);
    }
    for (const auto& [name, ms] : p.verdict_ms) {
      c.by_verdict[name].gpu_hours += ms / kMsPerHour;
      c.gpu_hours += ms / kMsPerHour;
      amount[name] += ms / kMsPerHour * p.price.value_or(0);
      paid += ms / kMsPerHour * p.price.value_or(0);
    }
  }
  if (all_priced) c.amount = paid;
  Tally(c, amount, all_priced);
  return c;
}

nlohmann::ordered_json CostJson(const RunCost& c) {
  nlohmann::ordered_json by = nlohmann::ordered_json::object();
  for (const auto& [name, line] : c.by_verdict) by[name] = LineJson(line);
  nlohmann::ordered_json j = {{"wall_s", c.wall_s},
                              {"gpus", c.gpus},
                              {"gpu_hours", c.gpu_hours},
                              {"currency", nullptr},
                              {"amount", nullptr},
                              {"unpriced_gpus", c.unpriced},
                              {"idle", LineJson(c.idle)},
                              {"underuse", LineJson(c.underuse)},
                              {"by_verdict", by},
                              {"sm_inactive_share", nullptr},
                              {"sm_active_guidance", c.sm_active_guidance}};
  if (!c.currency.empty()) j["currency"] = c.currency;
  if (c.amount) j["amount"] = *c.amount;
  if (c.sm_inactive_share) j["sm_inactive_share"] = *c.sm_inactive_share;
  return j;
}

std::string CostPhrase(const RunCost& c) {
  return Fixed(c.gpu_hours, 4) + " GPU-hours" + Money(c, c.amount) + "; idle " + Percent(c.idle.share) +
         Money(c, c.idle.amount) + ", underused " + Percent(c.underuse.share) + Money(c, c.underuse.amount);
}

std::string RenderCostText(const RunCost& c) {
  std::string out = "  cost: " + Fixed(c.gpu_hours, 4) + " GPU-hours paid (" + Fixed(c.wall_s, 1) + " s x " +
                    std::to_string(c.gpus) + " GPUs)" + Money(c, c.amount) + "\n";
  out += "    idle " + Percent(c.idle.share) + Money(c, c.idle.amount) + ", underused " +
         Percent(c.underuse.share) + Money(c, c.underuse.amount) + "\n";
  for (const auto& [name, line] : c.by_verdict) {
    if (line.gpu_hours <= 0 || IsIdleVerdict(name) || IsUnderuseVerdict(name)) continue;
    out += "    " + name + " " + Percent(line.share) + Money(c, line.amount) + "\n";
  }
  for (const char* u : kUnderuse) {
    const CostLine& line = c.by_verdict.at(u);
    if (line.gpu_hours > 0)
      out += "    underused, " + std::string(u) + " " + Percent(line.share) + Money(c, line.amount) + "\n";
  }
  if (!c.unpriced.empty()) {
    std::string list;
    for (unsigned i : c.unpriced) list += (list.empty() ? "" : ", ") + std::to_string(i);
    out += "    no price for GPU " + list + " (--prices FILE or --price-per-gpu-hour): amounts not given\n";
  }
  if (c.sm_inactive_share)
    out += "    SM inactive " + Percent(*c.sm_inactive_share) +
           " of the sampled time (information, not billed: SM " + "activity of " +
           Fixed(c.sm_active_guidance, 2) + " or more is DCGM's guidance for effective use)\n";
  return out;
}

}  // namespace gp::watch
