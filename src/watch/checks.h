// The verdict rules that compare a GPU's window with thresholds, each as its list of conditions: the rule
// holds when every condition does. The same lists say, for a window no rule fits, which rule came closest
// (the fewest failed conditions, then the least Miss, then the earlier rule) and what it failed, with the
// numbers.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "watch/thresholds.h"
#include "watch/verdict.h"
#include "watch/window.h"

namespace gp::watch {

struct Condition {
  std::string name;             // the number compared (an evidence key where there is one)
  std::optional<double> value;  // unset: not measured in this window
  const char* op = ">=";        // ">=" or "<"
  double threshold = 0;
  const char* threshold_name = "";  // the --threshold that sets it ("" for a fixed bound)
  bool holds = false;
};

struct RuleCheck {
  VerdictKind kind = VerdictKind::kHealthy;
  std::vector<Condition> conditions;
  bool Holds() const;
  unsigned Failed() const;
  // How far its failed conditions are from their thresholds: each |value - threshold| / threshold, at most
  // 1 (1 for a value not measured), summed.
  double Miss() const;
};

// The communication rule's view of one GPU: its phase split and how its per-sample traffic correlates
// with the other GPUs whose links are busy (the median; unset with none to compare).
struct CommView {
  PhaseSplit split;
  std::optional<double> in_phase_correlation;
  size_t in_phase_gpus = 0;
};
// For every GPU of the window (lost ones included, empty).
std::vector<CommView> CommViews(const std::vector<GpuWindow>& w, const Thresholds& t);

// The host side of input-bound: the loaders saturated or blocked on I/O (without loaders, the main thread
// loading the data) in at least sustained_ratio of the samples.
bool InputEvidence(const GpuWindow& g, const Thresholds& t);

RuleCheck CheckIdle(const GpuWindow& g, const Thresholds& t);  // no kernel work (held or not)
RuleCheck CheckInputBound(const GpuWindow& g, const Thresholds& t);
RuleCheck CheckCommunicationBound(const GpuWindow& g, const CommView& c, const Thresholds& t);
RuleCheck CheckLaunchOrSmallBatch(const GpuWindow& g, const Thresholds& t);
RuleCheck CheckHealthy(const GpuWindow& g, const Thresholds& t);
// A MIG instance's rules (GPM's activity only).
std::vector<RuleCheck> CheckMig(const MigWindow& m, const Thresholds& t);

// The rule among `checks` that came closest; its failed conditions as JSON and as a sentence.
const RuleCheck& Closest(const std::vector<RuleCheck>& checks);
nlohmann::ordered_json FailedJson(const RuleCheck& c);
std::string FailedText(const RuleCheck& c);
std::string FailedNames(const RuleCheck& c);  // "a, b"

}  // namespace gp::watch
