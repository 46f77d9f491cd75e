// What a watched run's GPU time was spent on, and what it cost: GPU-hours paid (the run's wall time x the
// GPUs watched) split by the verdict each GPU had in each window. A window's time goes to its verdict (a
// GPU with several MIG instances splits it evenly between the instances' verdicts); time no window judged
// (the last, partial window; a lost GPU; a gap in the clock) is "unjudged", so the shares add up to 1
// and the amounts to the amount paid. Prices come in per GPU from the caller (src/prices/ via the CLI);
// nothing here knows a price. "SM inactive" (1 - mean SM activity, GPM only) is information against
// DCGM's 0.8 guidance and is not billed.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "watch/verdict.h"

namespace gp::watch {

// The verdicts billed as idle, and those billed as underuse (each reported on its own).
bool IsIdleVerdict(const std::string& name);
bool IsUnderuseVerdict(const std::string& name);

// `price_per_gpu_hour[i]` is the price of s.gpus[i] (unset: no price); empty = none priced.
RunCost CostOfRun(const Summary& s, const std::vector<std::optional<double>>& price_per_gpu_hour,
                  const std::string& currency, double sm_active_guidance);

// One GPU's part of a job's time (watch/jobs.h): its judged time by verdict and its "unjudged" time, ms.
struct CostPart {
  unsigned gpu_index = 0;
  std::optional<double> price;  // per GPU-hour
  std::map<std::string, double> verdict_ms;
};
// The cost of GPU time given in parts: `gpu_hours` is their sum (not wall time x GPUs), `gpus` the parts,
// shares are of that sum. No SM-inactive share.
RunCost CostOfParts(const std::vector<CostPart>& parts, double wall_s, const std::string& currency,
                    double sm_active_guidance);

nlohmann::ordered_json CostJson(const RunCost& c);
// "0.0024 GPU-hours = 0.0060 USD; idle 0.0%, underused 12.5% = 0.0008 USD" (a job's line).
std::string CostPhrase(const RunCost& c);
// "  cost: ..." lines for the text summary (terminal-safe: only numbers and fixed words).
std::string RenderCostText(const RunCost& c);

}  // namespace gp::watch
